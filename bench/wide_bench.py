"""Time a write of a wide table (many int64 columns, few rows) through gpuwrite and pyarrow.

Every per-column step of a write (schema, options, conversion, planning, encoding, chunk metadata, indexes,
footer, the result's summary) must cost the same for each column however many there are, so a table of
20,000 columns takes about twice what one of 10,000 does (issue 33, item 6). For each column count in
`--columns`, a table of `--rows` rows (values 0..rows-1 in each column) is written `--repeats` times by
`gpuwrite.write_table` (CPU) and by `pyarrow.parquet.write_table` (v2 data pages, snappy: the file gpuwrite
writes), alternating, in this process; the fastest of each is reported, with its time per column and the
ratio of the two. The goal: gpuwrite within 3x pyarrow at 20,000 columns.

    .venv/bin/python bench/wide_bench.py                              # 10k, 20k, 100k columns, one row
    .venv/bin/python bench/wide_bench.py --columns 5000,20000 --rows 10 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL_COLUMNS = 20_000
GOAL_RATIO = 3.0  # gpuwrite's time over pyarrow's at GOAL_COLUMNS


def wide_table(columns: int, rows: int) -> Any:
    """`columns` int64 columns c0, c1, ... of `rows` rows each (one shared array: the input costs nothing)."""
    import numpy as np
    import pyarrow as pa

    values = pa.array(np.arange(rows, dtype=np.int64))
    return pa.Table.from_arrays([values] * columns, names=[f"c{i}" for i in range(columns)])


def time_writes(table: Any, repeats: int, tmp: str) -> dict[str, float]:
    """The fastest of `repeats` writes of `table` by each tool (alternating), in seconds."""
    import pyarrow.parquet as pq

    import gpuwrite

    writers = {
        "gpuwrite": lambda path: gpuwrite.write_table(table, path, device="cpu"),
        "pyarrow": lambda path: pq.write_table(table, path, data_page_version="2.0", compression="snappy"),
    }
    best = {name: float("inf") for name in writers}
    for _ in range(repeats):
        for name, write in writers.items():
            path = os.path.join(tmp, f"{name}.parquet")
            start = time.perf_counter()
            write(path)
            best[name] = min(best[name], time.perf_counter() - start)
            os.remove(path)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", default="10000,20000,100000", help="comma-separated column counts")
    parser.add_argument("--rows", type=int, default=1, help="rows of each table")
    parser.add_argument("--repeats", type=int, default=3, help="writes per tool and count (the fastest is kept)")
    parser.add_argument("--out", default=None, help="also save the results as JSON here")
    args = parser.parse_args(argv)
    import gpuwrite

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        gpuwrite.write_table(wide_table(2, args.rows), os.path.join(tmp, "warm.parquet"), device="cpu")  # kernels
        for columns in (int(c) for c in args.columns.split(",")):
            best = time_writes(wide_table(columns, args.rows), args.repeats, tmp)
            row = {"columns": columns, "rows": args.rows, **{f"{k}_s": round(v, 6) for k, v in best.items()},
                   "ratio": round(best["gpuwrite"] / best["pyarrow"], 2),
                   "gpuwrite_us_per_column": round(1e6 * best["gpuwrite"] / columns, 1)}
            results.append(row)
            print(f"{columns:7,} columns x {args.rows} rows: gpuwrite {best['gpuwrite']:7.3f} s"
                  f" ({row['gpuwrite_us_per_column']:6.1f} us/column), pyarrow {best['pyarrow']:7.3f} s,"
                  f" ratio {row['ratio']:5.2f}", flush=True)
    goal = next((r for r in results if r["columns"] == GOAL_COLUMNS), None)
    if goal is not None:
        met = goal["ratio"] <= GOAL_RATIO
        print(f"goal: gpuwrite within {GOAL_RATIO:g}x pyarrow at {GOAL_COLUMNS:,} columns: "
              f"{goal['ratio']:.2f}x, {'met' if met else 'MISSED'}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
