"""Time Parquet writes of one in-memory table through gpuwrite, pyarrow, polars and DuckDB, interleaved.

Each writer gets the table in its own in-memory format before any timing; only the write to a file is timed.
Rounds run round-robin in a rotating order (after one untimed warm-up round) so drift in the machine's state
hits every writer alike; the report gives the median of the timed rounds.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "write_bench.json"
BASELINE = "pyarrow"
CODECS = {
    "snappy": {"pyarrow": "snappy", "polars": "snappy", "duckdb": "snappy"},
    "zstd": {"pyarrow": "zstd", "polars": "zstd", "duckdb": "zstd"},
    "gzip": {"pyarrow": "gzip", "polars": "gzip", "duckdb": "gzip"},
    "lz4": {"pyarrow": "lz4", "polars": "lz4", "duckdb": "lz4_raw"},
    "none": {"pyarrow": "none", "polars": "uncompressed", "duckdb": "uncompressed"},
}


@dataclass
class Writer:
    """One tool under test: a name, a prepared write(path) callable or the error that kept it from running."""

    name: str
    write: Callable[[str], object] | None = None
    error: str | None = None
    samples: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


def load_demo_data() -> ModuleType:
    """Import gpuwrite.demo_data, or load the file alone when the gpuwrite package itself fails to import."""
    try:
        return importlib.import_module("gpuwrite.demo_data")
    except Exception:
        path = REPO_ROOT / "gpuwrite" / "demo_data.py"
        spec = importlib.util.spec_from_file_location("_bench_demo_data", path)
        if spec is None or spec.loader is None:
            raise
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def _error_text(exc: BaseException) -> str:
    """Squash an exception into one short line for the report."""
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text if len(text) <= 200 else text[:197] + "..."


def make_writers(table: pa.Table, codec: str) -> list[Writer]:
    """Prepare every writer, converting the table into each tool's own format outside any timing."""
    codecs = CODECS[codec]
    writers: list[Writer] = []

    gpu = Writer("gpuwrite")
    try:
        import gpuwrite

        write_table = gpuwrite.write_table
        gpu.write = lambda path: write_table(table, path, compression=codec)
    except Exception as exc:
        gpu.error = _error_text(exc)
    writers.append(gpu)

    writers.append(
        Writer(
            "pyarrow",
            lambda path: pq.write_table(table, path, data_page_version="2.0", compression=codecs["pyarrow"]),
        )
    )

    pl_writer = Writer("polars")
    try:
        import polars as pl

        frame = pl.from_arrow(table)
        pl_writer.write = lambda path: frame.write_parquet(path, compression=codecs["polars"])
    except Exception as exc:
        pl_writer.error = _error_text(exc)
    writers.append(pl_writer)

    duck = Writer("duckdb")
    try:
        import duckdb

        con = duckdb.connect()
        con.register("arrow_input", table)
        con.execute("CREATE TABLE tbl AS SELECT * FROM arrow_input")
        con.unregister("arrow_input")
        options = f"FORMAT parquet, COMPRESSION {codecs['duckdb']}, PARQUET_VERSION v2"

        def duck_write(path: str) -> None:
            con.execute(f"COPY (SELECT * FROM tbl) TO '{path}' ({options})")

        duck.write = duck_write
    except Exception as exc:
        duck.error = _error_text(exc)
    writers.append(duck)
    return writers


def timed_write(write: Callable[[str], object], path: str) -> float:
    """Write once to a fresh path, after a garbage collection, and return the seconds the write took."""
    if os.path.exists(path):
        os.remove(path)
    gc.collect()
    start = time.perf_counter()
    write(path)
    return time.perf_counter() - start


def check_output(path: str, num_rows: int, full: bool) -> None:
    """Check a written file holds num_rows rows; full=True decodes every column with pyarrow as well."""
    rows = pq.read_table(path).num_rows if full else pq.ParquetFile(path).metadata.num_rows
    if rows != num_rows:
        raise ValueError(f"read back {rows} rows, wrote {num_rows}")


def run_rounds(writers: list[Writer], table: pa.Table, repeats: int, tmp: str) -> None:
    """Run one warm-up round then repeats timed rounds, rotating the writers' order each round."""
    for round_index in range(repeats + 1):
        warm_up = round_index == 0
        shift = round_index % len(writers)
        for writer in writers[shift:] + writers[:shift]:
            if writer.write is None:
                continue
            path = os.path.join(tmp, f"{writer.name}.parquet")
            try:
                seconds = timed_write(writer.write, path)
                size = os.path.getsize(path)
                check_output(path, table.num_rows, full=warm_up)
            except Exception as exc:
                writer.error = _error_text(exc)
                writer.write = None
                continue
            finally:
                if os.path.exists(path):
                    os.remove(path)
            if not warm_up:
                writer.samples.append(seconds)
                writer.sizes.append(size)


def summarise(writers: list[Writer], input_bytes: int) -> list[dict]:
    """Turn each writer's samples into median seconds, GB/s and size, with ratios to the baseline."""
    rows: list[dict] = []
    for writer in writers:
        if writer.samples:
            median = statistics.median(writer.samples)
            rows.append(
                {
                    "writer": writer.name,
                    "median_s": median,
                    "gb_per_s": input_bytes / median / 1e9,
                    "size_bytes": writer.sizes[-1],
                    "samples_s": writer.samples,
                    "sizes_bytes": writer.sizes,
                    "error": writer.error,
                }
            )
        else:
            rows.append({"writer": writer.name, "error": writer.error or "no samples"})
    base = next((r for r in rows if r["writer"] == BASELINE and "median_s" in r), None)
    for row in rows:
        if base is not None and "median_s" in row:
            row["speed_vs_pyarrow"] = base["median_s"] / row["median_s"]
            row["size_vs_pyarrow"] = row["size_bytes"] / base["size_bytes"]
    return rows


def format_table(rows: list[dict]) -> str:
    """Render the summary as an aligned text table, errors in place of numbers."""
    header = ["writer", "median s", "GB/s", "size MB", "speed/pa", "size/pa", "samples s"]
    lines = [header]
    for row in rows:
        if "median_s" not in row:
            lines.append([row["writer"], f"ERROR: {row['error']}"])
            continue
        lines.append(
            [
                row["writer"],
                f"{row['median_s']:.3f}",
                f"{row['gb_per_s']:.2f}",
                f"{row['size_bytes'] / 1e6:.1f}",
                f"{row.get('speed_vs_pyarrow', float('nan')):.2f}x",
                f"{row.get('size_vs_pyarrow', float('nan')):.3f}",
                " ".join(f"{s:.3f}" for s in row["samples_s"]),
            ]
        )
    full = [line for line in lines if len(line) == len(header)]
    widths = [max(len(line[i]) for line in full) for i in range(len(header))]
    out = []
    for line in lines:
        if len(line) == len(header):
            cells = [line[0].ljust(widths[0])] + [
                cell.rjust(w) for cell, w in zip(line[1:], widths[1:], strict=True)
            ]
            out.append("  ".join(cells).rstrip())
        else:
            out.append(f"{line[0].ljust(widths[0])}  {line[1]}")
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
            cpu_model = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None
            )
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable,
        "cpu_model": cpu_model,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "versions": {m: _version(m) for m in ("gpuwrite", "numpy", "pyarrow", "polars", "duckdb")},
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(
        description="Time Parquet writes through gpuwrite, pyarrow, polars, DuckDB."
    )
    parser.add_argument("--rows", type=int, default=None, help="rows of store_sales (default: TPC-DS SF1)")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds after one warm-up round")
    parser.add_argument("--codec", default="snappy", choices=sorted(CODECS))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to save the JSON results")
    parser.add_argument("--tmpdir", default=None, help="folder for the temporary output files")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Build the table, run the interleaved rounds, print the summary and save it as JSON."""
    args = parse_args(argv)
    demo_data = load_demo_data()
    rows_wanted = demo_data.DEMO_ROWS if args.rows is None else args.rows
    start = time.perf_counter()
    table = demo_data.store_sales_table(rows_wanted, seed=args.seed)
    generate_s = time.perf_counter() - start
    input_bytes = table.nbytes
    print(
        f"store_sales: {table.num_rows:,} rows, {table.num_columns} columns, {input_bytes / 1e6:.1f} MB in memory"
        f" (generated in {generate_s:.2f} s); codec {args.codec}; {args.repeats} timed rounds + 1 warm-up"
    )
    writers = make_writers(table, args.codec)
    with tempfile.TemporaryDirectory(prefix="write_bench_", dir=args.tmpdir) as tmp:
        run_rounds(writers, table, args.repeats, tmp)
    rows = summarise(writers, input_bytes)
    print(format_table(rows))

    result = {
        "rows": table.num_rows,
        "columns": table.num_columns,
        "input_bytes": input_bytes,
        "codec": args.codec,
        "seed": args.seed,
        "repeats": args.repeats,
        "warm_up_rounds": 1,
        "baseline": BASELINE,
        "writers": [w.name for w in writers],
        "results": rows,
        "machine": machine_info(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
