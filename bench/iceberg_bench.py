"""Append the store_sales table to Iceberg tables (SQLite catalog, local warehouse): gpuwrite.iceberg against
pyiceberg's own `Table.append`, in one run, interleaved rounds, medians reported.

    python bench/iceberg_bench.py [--rows N] [--rounds R] [--device cpu|gpu] [--json OUT]

Each round appends the same rows to a fresh table with each writer (the order alternates); the time covers the
whole append: partitioning (none here), encoding, writing the files, metrics and the commit; wall and process
CPU seconds (all threads) are both reported, since wall time is noisy on a shared machine. Both tables use the
table defaults (zstd, 128 MiB row groups, 512 MiB target files).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

import gpuwrite.iceberg as gi
from gpuwrite.tools.demo_data import store_sales_table


def _append(writer: str, table: Table, rows: pa.Table, device: str) -> None:
    if writer == "gpuwrite":
        gi.append(table, rows, device=device)
    else:
        table.append(rows)


def _files(table: Table) -> tuple[int, int]:
    files = [t.file for t in table.scan().plan_files()]
    return len(files), sum(f.file_size_in_bytes for f in files)


def run(rows: int, rounds: int, device: str) -> dict[str, Any]:
    data = store_sales_table(rows)
    work = Path(tempfile.mkdtemp(prefix="iceberg-bench-"))
    catalog = SqlCatalog("bench", uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}/warehouse")
    catalog.create_namespace("bench")
    writers = ("gpuwrite", "pyiceberg")
    times: dict[str, list[float]] = {w: [] for w in writers}
    cpu: dict[str, list[float]] = {w: [] for w in writers}  # process CPU seconds, all threads (a shared machine)
    sizes: dict[str, tuple[int, int]] = {}
    for r in range(rounds + 1):  # round 0 warms up (numba compilation, imports) and is not timed
        for writer in (writers if r % 2 else writers[::-1]):
            table = catalog.create_table(f"bench.{writer}_{r}", data.schema)
            start, cpu_start = time.perf_counter(), time.process_time()
            _append(writer, table, data, device)
            elapsed, cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
            if r == 0:
                assert table.scan().to_arrow().num_rows == rows, writer
            if r:
                times[writer].append(elapsed)
                cpu[writer].append(cpu_s)
            sizes[writer] = _files(table)
    report: dict[str, Any] = {"rows": rows, "columns": data.num_columns, "arrow_bytes": data.nbytes,
                              "rounds": rounds, "device": device, "writers": {}}
    for w in writers:
        med = statistics.median(times[w])
        report["writers"][w] = {"median_s": round(med, 3), "median_cpu_s": round(statistics.median(cpu[w]), 3),
                                "rows_per_s": round(rows / med),
                                "times_s": [round(t, 3) for t in times[w]], "files": sizes[w][0],
                                "bytes": sizes[w][1]}
    report["speedup_vs_pyiceberg"] = round(report["writers"]["pyiceberg"]["median_s"]
                                           / report["writers"]["gpuwrite"]["median_s"], 2)
    report["cpu_ratio_vs_pyiceberg"] = round(report["writers"]["pyiceberg"]["median_cpu_s"]
                                             / report["writers"]["gpuwrite"]["median_cpu_s"], 2)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_880_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu", choices=("cpu", "gpu", "auto"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    report = run(args.rows, args.rounds, args.device)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
