"""Time Parquet writes of five tables through gpuwrite, pyarrow, polars, DuckDB and Spark, interleaved.

The tables (bench/tables.py): TPC-DS store_sales, a string-heavy table, a wide table (doubles and int64
counters), a nested table (lists of structs, a map) and a sensor timeseries. Each writer gets a table in its own in-memory format before any timing (a
polars DataFrame, a native DuckDB table, a cached Spark DataFrame); only the write to a file is timed. For
each table the writers alternate within every round, in an order that rotates from round to round (after one
untimed warm-up round), so drift in a shared machine's state hits every writer alike; the report gives the
median of the timed rounds with their spread (min, max, and max over median: how steady a writer is), GB/s
of Arrow input, the file size, and speed and size as ratios to each peer.
The JSON (every sample) goes to --out, and a bar chart (bench/report.py) to the same name with .png.

    .venv/bin/python bench/write_bench.py                                   # scale 1, 3 rounds, snappy
    .venv/bin/python bench/write_bench.py --scale 0.1 --shapes strings,nested --writers gpuwrite,pyarrow
    .venv/bin/python bench/write_bench.py --writers gpuwrite,pyarrow,polars --repeats 7     # a few minutes
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "write_bench.json"
BASELINE = "pyarrow"
SUBJECT = "gpuwrite"
WRITERS = ("gpuwrite", "pyarrow", "polars", "duckdb", "spark")
CODECS = {
    "snappy": {"pyarrow": "snappy", "polars": "snappy", "duckdb": "snappy", "spark": "snappy"},
    "zstd": {"pyarrow": "zstd", "polars": "zstd", "duckdb": "zstd", "spark": "zstd"},
    "gzip": {"pyarrow": "gzip", "polars": "gzip", "duckdb": "gzip", "spark": "gzip"},
    "lz4": {"pyarrow": "lz4", "polars": "lz4", "duckdb": "lz4_raw", "spark": "lz4_raw"},
    "none": {"pyarrow": "none", "polars": "uncompressed", "duckdb": "uncompressed", "spark": "none"},
}


def _bench_module(name: str) -> ModuleType:
    """A sibling script of bench/ as a module (bench/ is not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH_DIR / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"bench/{name}.py not found")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tables = _bench_module("tables")


@dataclass
class Writer:
    """One tool under test: a name, a prepared write(path) callable or the error that kept it from running."""

    name: str
    write: Callable[[str], object] | None = None
    error: str | None = None
    samples: list[float] = field(default_factory=list)
    cpu_samples: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    close: Callable[[], object] | None = None


def _error_text(exc: BaseException) -> str:
    """Squash an exception into one short line for the report."""
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text if len(text) <= 200 else text[:197] + "..."


class SparkHolder:
    """One local Spark session for the whole run, started on first use (parquet-java through Spark)."""

    def __init__(self) -> None:
        self.session: Any = None
        self.error: str | None = None

    def get(self) -> Any:
        """The session, or raise why there is none (no Java, no pyspark)."""
        if self.error:
            raise RuntimeError(self.error)
        if self.session is None:
            if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
                self.error = "no Java on this machine"
                raise RuntimeError(self.error)
            from pyspark.sql import SparkSession

            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
            self.session = (
                SparkSession.builder.master(f"local[{cores}]").appName("write_bench")
                .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.memory", os.environ.get("WRITE_BENCH_SPARK_MEMORY", "4g"))
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                # parquet-java's v2 data pages: the format gpuwrite and the other writers here write
                .config("spark.hadoop.parquet.writer.version", "v2")
                .getOrCreate())
            self.session.sparkContext.setLogLevel("ERROR")
        return self.session

    def stop(self) -> None:
        """Stop the session if one was started."""
        if self.session is not None:
            self.session.stop()
            self.session = None


def make_writers(table: pa.Table, codec: str, names: list[str], spark: SparkHolder | None = None) -> list[Writer]:
    """Prepare the named writers, converting the table into each tool's own format outside any timing."""
    codecs = CODECS[codec]
    writers: list[Writer] = []
    for name in names:
        writer = Writer(name)
        try:
            _prepare(writer, table, codec, codecs, spark)
        except Exception as exc:
            writer.error = _error_text(exc)
            writer.write = None
        writers.append(writer)
    return writers


def _prepare(writer: Writer, table: pa.Table, codec: str, codecs: dict[str, str],
             spark: SparkHolder | None) -> None:
    """Set writer.write (and .close) for one tool."""
    if writer.name == "gpuwrite":
        import gpuwrite

        write_table = gpuwrite.write_table
        writer.write = lambda path: write_table(table, path, compression=codec)
    elif writer.name == "pyarrow":
        writer.write = lambda path: pq.write_table(table, path, data_page_version="2.0",
                                                   compression=codecs["pyarrow"])
    elif writer.name == "polars":
        import polars as pl

        frame = pl.from_arrow(table)
        writer.write = lambda path: frame.write_parquet(path, compression=codecs["polars"])  # type: ignore[union-attr,arg-type]
    elif writer.name == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.register("arrow_input", table)
        con.execute("CREATE TABLE tbl AS SELECT * FROM arrow_input")
        con.unregister("arrow_input")
        options = f"FORMAT parquet, COMPRESSION {codecs['duckdb']}, PARQUET_VERSION v2"
        writer.write = lambda path: con.execute(f"COPY (SELECT * FROM tbl) TO '{path}' ({options})")
        writer.close = con.close
    elif writer.name == "spark":
        session = (spark or SparkHolder()).get()
        cores = session.sparkContext.defaultParallelism
        frame = session.createDataFrame(table).repartition(cores).cache()
        frame.count()
        writer.write = lambda path: frame.write.option("compression", codecs["spark"]).parquet(path)
        writer.close = frame.unpersist
    else:
        raise ValueError(f"unknown writer {writer.name!r} (known: {', '.join(WRITERS)})")


def parquet_files(path: str) -> list[str]:
    """The Parquet files a write made: the file itself, or the part files of a directory (Spark)."""
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".parquet"))
    return [path]


def _remove(path: str) -> None:
    """Delete a written file or directory."""
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def timed_write(write: Callable[[str], object], path: str) -> tuple[float, float]:
    """Write once to a fresh path, after a garbage collection; (wall seconds, CPU seconds of this process, all
    threads: Spark's JVM is another process, so its CPU is not counted)."""
    _remove(path)
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
    write(path)
    return time.perf_counter() - start, time.process_time() - start_cpu


def check_output(path: str, num_rows: int, full: bool) -> int:
    """Check a write holds num_rows rows (full=True decodes every column with pyarrow too); return its bytes."""
    files = parquet_files(path)
    if full:
        rows = sum(pq.read_table(f).num_rows for f in files)
    else:
        rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    if rows != num_rows:
        raise ValueError(f"read back {rows} rows, wrote {num_rows}")
    return sum(os.path.getsize(f) for f in files)


def run_rounds(writers: list[Writer], table: pa.Table, repeats: int, tmp: str) -> None:
    """Run one warm-up round then repeats timed rounds, rotating the writers' order each round; every file's
    row count is checked as it is written, and each writer's last file is decoded in full once every round is
    timed. (Decoded after the warm-up round instead, the checks left the writers idle for seconds, over 10 s
    with store_sales, before their first timed round and never between two others: a gap no other round had.)"""
    kept: list[tuple[Writer, str]] = []  # each writer's file of the last round, decoded at the end
    for round_index in range(repeats + 1):
        warm_up, last = round_index == 0, round_index == repeats
        shift = round_index % len(writers)
        for writer in writers[shift:] + writers[:shift]:
            if writer.write is None:
                continue
            path = os.path.join(tmp, f"{writer.name}.parquet")
            keep = False
            try:
                seconds, cpu = timed_write(writer.write, path)
                size = check_output(path, table.num_rows, full=False)
                keep = last
            except Exception as exc:
                writer.error = _error_text(exc)
                writer.write = None
                continue
            finally:
                if not keep:
                    _remove(path)
            if keep:
                kept.append((writer, path))
            if not warm_up:
                writer.samples.append(seconds)
                writer.cpu_samples.append(cpu)
                writer.sizes.append(size)
    for writer, path in kept:
        try:
            check_output(path, table.num_rows, full=True)
        except Exception as exc:  # the writer's files do not read back: no timings for it
            writer.error = _error_text(exc)
            writer.samples, writer.cpu_samples, writer.sizes = [], [], []
        finally:
            _remove(path)


def summarise(writers: list[Writer], input_bytes: int) -> list[dict]:
    """Each writer's median seconds, GB/s and size, with speed and size ratios to pyarrow and to every peer."""
    rows: list[dict] = []
    for writer in writers:
        if writer.samples:
            median = statistics.median(writer.samples)
            rows.append({
                "writer": writer.name,
                "median_s": median,
                "min_s": min(writer.samples),
                "max_s": max(writer.samples),
                "spread": max(writer.samples) / median,
                "gb_per_s": input_bytes / median / 1e9,
                "size_bytes": writer.sizes[-1],
                "samples_s": writer.samples,
                "median_cpu_s": statistics.median(writer.cpu_samples),
                "cpu_samples_s": writer.cpu_samples,
                "sizes_bytes": writer.sizes,
                "error": writer.error,
            })
        else:
            rows.append({"writer": writer.name, "error": writer.error or "no samples"})
    timed = [r for r in rows if "median_s" in r]
    for row in timed:
        # speed > 1: this writer is faster than the peer; size < 1: its file is smaller
        row["vs"] = {peer["writer"]: {"speed": peer["median_s"] / row["median_s"],
                                      "size": row["size_bytes"] / peer["size_bytes"]}
                     for peer in timed if peer is not row}
        base = row["vs"].get(BASELINE) if row["writer"] != BASELINE else {"speed": 1.0, "size": 1.0}
        if base is not None:
            row["speed_vs_pyarrow"] = base["speed"]
            row["size_vs_pyarrow"] = base["size"]
    return rows


def format_table(rows: list[dict]) -> str:
    """Render the summary as an aligned text table, errors in place of numbers, gpuwrite against each peer."""
    header = ["writer", "median s", "min s", "max s", "max/med", "CPU s", "GB/s", "size MB", "speed/pa", "size/pa",
              "samples s"]
    lines = [header]
    for row in rows:
        if "median_s" not in row:
            lines.append([row["writer"], f"ERROR: {row['error']}"])
            continue
        lines.append([
            row["writer"],
            f"{row['median_s']:.3f}",
            f"{row['min_s']:.3f}",
            f"{row['max_s']:.3f}",
            f"{row['spread']:.2f}",
            f"{row['median_cpu_s']:.3f}",
            f"{row['gb_per_s']:.3f}",
            f"{row['size_bytes'] / 1e6:.1f}",
            f"{row.get('speed_vs_pyarrow', float('nan')):.2f}x",
            f"{row.get('size_vs_pyarrow', float('nan')):.3f}",
            " ".join(f"{s:.3f}" for s in row["samples_s"]),
        ])
    full = [line for line in lines if len(line) == len(header)]
    widths = [max(len(line[i]) for line in full) for i in range(len(header))]
    out = []
    for line in lines:
        if len(line) == len(header):
            cells = [line[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(line[1:], widths[1:], strict=True)]
            out.append("  ".join(cells).rstrip())
        else:
            out.append(f"{line[0].ljust(widths[0])}  {line[1]}")
    ours = next((r for r in rows if r["writer"] == SUBJECT and "vs" in r), None)
    if ours is not None and ours["vs"]:
        peers = ", ".join(f"{p} {v['speed']:.2f}x speed / {v['size']:.2f}x size" for p, v in ours["vs"].items())
        out.append(f"{SUBJECT} vs {peers}")
    return "\n".join(out)


def _version(distribution: str) -> str | None:
    """Return an installed distribution's version, or None when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_info() -> dict:
    """Describe the machine and library versions the numbers came from."""
    cpu_model = None
    try:
        with open("/proc/cpuinfo") as f:
            cpu_model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "cpu_model": cpu_model,
        "load_average_1m": load,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "versions": {m: _version(m) for m in ("gpuwrite", "numpy", "pyarrow", "polars", "duckdb", "pyspark")},
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description="Time Parquet writes through gpuwrite, pyarrow, polars, "
                                                 "DuckDB and Spark on five tables.")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="fraction of each table's rows at scale 1 (" + ", ".join(
                            f"{k} {v:,}" for k, v in tables.ROWS.items()) + ")")
    parser.add_argument("--rows", type=int, default=None, help="rows of every table (overrides --scale)")
    parser.add_argument("--tables", "--shapes", dest="tables", default=",".join(tables.BUILDERS),
                        help="comma-separated tables (shapes) to write")
    parser.add_argument("--writers", default=",".join(WRITERS),
                        help="comma-separated writers (spark runs only where Java and pyspark are present)")
    parser.add_argument("--store-sales", choices=("generator", "dsdgen"), default="generator",
                        help="store_sales from gpuwrite.tools.demo_data (default) or DuckDB's dsdgen "
                             "(needs duckdb-extension-tpcds)")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds after one warm-up round")
    parser.add_argument("--codec", default="snappy", choices=sorted(CODECS))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the JSON results (the chart beside: .png)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the chart")
    parser.add_argument("--tmpdir", default=None, help="folder for the temporary output files")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.scale <= 0:
        parser.error("--scale must be positive")
    args.tables = [t for t in args.tables.split(",") if t]
    args.writers = [w for w in args.writers.split(",") if w]
    for name in args.tables:
        if name not in tables.BUILDERS:
            parser.error(f"unknown table {name!r} (known: {', '.join(tables.BUILDERS)})")
    for name in args.writers:
        if name not in WRITERS:
            parser.error(f"unknown writer {name!r} (known: {', '.join(WRITERS)})")
    return args


def bench_table(name: str, args: argparse.Namespace, spark: SparkHolder) -> dict:
    """Build one table, time every writer on it, print and return its run (report.py's shape)."""
    rows_wanted = args.rows if args.rows is not None else max(1, round(tables.ROWS[name] * args.scale))
    build = tables.store_sales_dsdgen if name == "store_sales" and args.store_sales == "dsdgen" \
        else tables.BUILDERS[name]
    start = time.perf_counter()
    table = build(rows_wanted, args.seed)
    generate_s = time.perf_counter() - start
    input_bytes = table.nbytes
    print(f"\n{name}: {table.num_rows:,} rows, {table.num_columns} columns, {input_bytes / 1e6:.1f} MB in memory "
          f"(built in {generate_s:.1f} s); codec {args.codec}; {args.repeats} timed rounds + 1 warm-up", flush=True)
    writers = make_writers(table, args.codec, args.writers, spark)
    try:
        with tempfile.TemporaryDirectory(prefix="write_bench_", dir=args.tmpdir) as tmp:
            run_rounds(writers, table, args.repeats, tmp)
    finally:
        for writer in writers:
            if writer.close is not None:
                writer.close()
    results = summarise(writers, input_bytes)
    print(format_table(results), flush=True)
    return {
        "dataset": name,
        "source": args.store_sales if name == "store_sales" else "bench/tables.py",
        "rows": table.num_rows,
        "columns": table.num_columns,
        "input_bytes": input_bytes,
        "codec": args.codec,
        "seed": args.seed,
        "repeats": args.repeats,
        "warm_up_rounds": 1,
        "baseline": BASELINE,
        "writers": [w.name for w in writers],
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    """Time every table, print the summaries, save the JSON and draw the chart."""
    args = parse_args(argv)
    spark = SparkHolder()
    machine = machine_info()
    runs = []
    try:
        for name in args.tables:
            run = bench_table(name, args, spark)
            run["machine"] = machine
            runs.append(run)
    finally:
        spark.stop()
    machine["load_average_1m_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    result = {"command": "bench/write_bench.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "machine": machine, "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nsaved {args.out}")
    if not args.no_plot:
        png = args.out.with_suffix(".png")
        _bench_module("report").plot(runs, png)
        print(f"saved {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
