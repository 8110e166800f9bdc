"""End-to-end Spark writes of the store_sales-shaped table in local mode: gpuwrite.spark.write_parquet against
df.write.parquet with Spark's default (v1 pages) and with parquet.writer.version=v2.

The DataFrame is built once and cached, so every writer reads the same cached rows; runs are interleaved in a
rotating order after a warm-up round, and the report gives medians and ratios (machines here are noisy).

    python bench/spark_bench.py --rows 1000000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.parquet"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results" / "spark_bench.json")
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import gpuwrite.spark
    from gpuwrite.demo_data import store_sales_table

    spark = (SparkSession.builder.master(args.master).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "6g")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    table = store_sales_table(args.rows)
    df = spark.createDataFrame(table).repartition(args.partitions).cache()
    df.count()

    def gpuwrite_write(path: Path) -> None:
        gpuwrite.spark.write_parquet(df, str(path), mode="overwrite")

    def spark_v1(path: Path) -> None:
        df.write.mode("overwrite").parquet(str(path))

    def spark_v2(path: Path) -> None:
        df.write.mode("overwrite").option("parquet.writer.version", "v2").parquet(str(path))

    writers: dict[str, Any] = {"gpuwrite.spark": gpuwrite_write, "spark v1 (default)": spark_v1,
                               "spark v2": spark_v2}
    times: dict[str, list[float]] = {name: [] for name in writers}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        names = list(writers)
        for round_ in range(args.repeats + 1):
            order = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in order:
                out = Path(tmp) / name.replace(" ", "_").replace("(", "").replace(")", "")
                start = time.perf_counter()
                writers[name](out)
                elapsed = time.perf_counter() - start
                if round_ > 0:
                    times[name].append(elapsed)
                sizes[name] = _size(out)
                shutil.rmtree(out, ignore_errors=True)
    med = {name: statistics.median(t) for name, t in times.items()}
    base = med["gpuwrite.spark"]
    print(f"store_sales {args.rows:,} rows x {table.num_columns} columns, {args.partitions} tasks, {args.master}, "
          f"median of {args.repeats}")
    for name in writers:
        print(f"  {name:20s} {med[name]:8.3f} s   {sizes[name] / 1e6:8.1f} MB   "
              f"gpuwrite.spark is {med[name] / base:5.2f}x as fast")
    report = {"rows": args.rows, "partitions": args.partitions, "master": args.master, "median_seconds": med,
              "bytes": sizes, "speedup_vs": {n: med[n] / base for n in writers}, "runs": times}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
