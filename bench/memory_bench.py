"""Peak memory (RSS high-water mark) of Parquet writes through gpuwrite and pyarrow, each in a fresh process.

Two inputs:
- `stream`: a store_sales-shaped stream (`gpuwrite.tools.demo_data.store_sales_table`), `--rows` rows (default
  28.8 M, TPC-DS SF10) generated batch by batch (`--batch-rows`, a new seed per batch) behind a
  `pyarrow.RecordBatchReader` and written through a streaming writer (`gpuwrite.ParquetWriter`,
  `pyarrow.parquet.ParquetWriter`), so only the writer holds rows across batches. The third tool `none`
  reads the same stream and writes nothing: the floor the generator alone costs. Each writer's peak is checked
  against a bound: RSS before the stream + three row groups' raw size (Arrow bytes of the rows of its largest
  row group) + one input batch + the generator's own extra (the floor's peak over its start);
- `groups`: a long stream of small row groups: `--groups-rows` int64 rows (default 40 M, one value repeated, or
  random with `--groups-random`) in batches of `--batch-rows`, written with `row_group_size=--group-rows` (1 M),
  the child's RSS sampled every `--groups-every` row groups' worth of rows. The samples after the first few
  (the first quarter) must stay within 10 % + 32 MB of the peak before them: a writer whose memory grows
  with the rows written fails the run (exit status 1; gpuwrite's used to reach 1.9 GB at 120 M rows);
- `large`: one Arrow chunk of `--values` large_binary values of `--value-mb` MB each (random bytes), written
  in one call, at most `--page-rows` values per page (gpuwrite's page_row_count_limit and
  page_size_check_min, pyarrow's write_batch_size): a page holds at most 2 GiB, so 20 values of 110 MB cannot share one.

Each (tool, input) runs in its own child process (`--child`), which reports its VmHWM from /proc/self/status
after the write, its RSS just before the write (imports, and for `large` the input itself), the seconds the
write took and the file size. Linux only (/proc).

    .venv/bin/python bench/memory_bench.py --cases stream            # 28.8 M-row stream (SF10)
    .venv/bin/python bench/memory_bench.py --rows 2000000 --cases stream --tools gpuwrite
    .venv/bin/python bench/memory_bench.py --cases groups --tools gpuwrite    # 40 M rows, 1 M-row groups
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("gpuwrite", "pyarrow", "none")
SF10_ROWS = 28_800_991  # store_sales rows at TPC-DS scale factor 10
CASES = ("stream", "groups", "large")
GROWTH_SLACK = (1.10, 32 << 20)  # groups: later samples within 10 % + 32 MB of the first quarter's peak


def _status_bytes(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _stream_batches(rows: int, batch_rows: int) -> Iterator[Any]:
    """store_sales-shaped record batches, generated one at a time (a new seed per batch)."""
    from gpuwrite.tools.demo_data import store_sales_table

    done, seed = 0, 1
    while done < rows:
        n = min(batch_rows, rows - done)
        yield from store_sales_table(n, seed=seed).combine_chunks().to_batches()
        done += n
        seed += 1


def stream_reader(rows: int, batch_rows: int) -> Any:
    """A `pyarrow.RecordBatchReader` over the generated batches: nothing is generated before it is read."""
    import pyarrow as pa

    from gpuwrite.tools.demo_data import STORE_SALES_SCHEMA

    return pa.RecordBatchReader.from_batches(STORE_SALES_SCHEMA, _stream_batches(rows, batch_rows))


def _large_table(values: int, value_bytes: int) -> object:
    """One chunk of `values` large_binary values of `value_bytes` random bytes each (no copy into Arrow)."""
    import numpy as np
    import pyarrow as pa

    data = np.random.default_rng(7).integers(0, 256, size=values * value_bytes, dtype=np.uint8)
    offsets = np.arange(values + 1, dtype=np.int64) * value_bytes
    arr = pa.Array.from_buffers(pa.large_binary(), values, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pa.table({"blob": arr})


def _write_stream(tool: str, path: str, args: argparse.Namespace) -> tuple[float, int]:
    """Stream the batches through the tool's streaming writer; (seconds, RSS before the first batch)."""
    import pyarrow.parquet as pq

    from gpuwrite.tools.demo_data import STORE_SALES_SCHEMA

    reader = stream_reader(args.rows, args.batch_rows)
    before = _status_bytes("VmRSS")
    start = time.perf_counter()
    if tool == "gpuwrite":
        import gpuwrite

        with gpuwrite.ParquetWriter(path, STORE_SALES_SCHEMA, device="cpu") as writer:
            for batch in reader:
                writer.write(batch)
    elif tool == "none":
        rows = sum(batch.num_rows for batch in reader)
        if rows != args.rows:
            raise RuntimeError(f"the stream gave {rows} rows, not {args.rows}")
    else:
        with pq.ParquetWriter(path, STORE_SALES_SCHEMA, data_page_version="2.0", compression="snappy") as writer:
            for batch in reader:
                writer.write_batch(batch)
    return time.perf_counter() - start, before


def _group_batches(rows: int, batch_rows: int, random: bool) -> Iterator[Any]:
    """int64 record batches of one column, each a fresh array: one value repeated, or random values."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(11)
    for start in range(0, rows, batch_rows):
        n = min(batch_rows, rows - start)
        values = rng.integers(0, 1 << 62, n) if random else np.full(n, 7, dtype=np.int64)
        yield pa.record_batch([pa.array(values)], names=["x"])


def _write_groups(tool: str, path: str, args: argparse.Namespace) -> tuple[float, int, list[list[int]]]:
    """Stream the int64 batches into row groups of `--group-rows` rows; (seconds, RSS before the first batch,
    [rows written, RSS] every `--groups-every` row groups' worth of rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("x", pa.int64())])
    every = args.group_rows * args.groups_every
    samples: list[list[int]] = []
    before = _status_bytes("VmRSS")
    start = time.perf_counter()
    if tool == "gpuwrite":
        import gpuwrite

        writer: Any = gpuwrite.ParquetWriter(path, schema, device="cpu", row_group_size=args.group_rows)
    else:
        writer = pq.ParquetWriter(path, schema, data_page_version="2.0", compression="snappy")
    with writer:
        done = 0
        for batch in _group_batches(args.groups_rows, args.batch_rows, args.groups_random):
            if tool == "gpuwrite":
                writer.write(batch)
            else:
                writer.write_batch(batch, row_group_size=args.group_rows)
            if (done + batch.num_rows) // every > done // every:
                samples.append([done + batch.num_rows, _status_bytes("VmRSS")])
            done += batch.num_rows
    return time.perf_counter() - start, before, samples


def growth(samples: list[list[int]]) -> dict[str, Any]:
    """Whether RSS stays flat after the first quarter of the samples (at least two): the peak before, the peak
    after, and whether the later one is within GROWTH_SLACK of the earlier."""
    settle = max(2, len(samples) // 4)
    if len(samples) <= settle:
        return {"flat": True, "settled_rss": None, "later_rss": None}
    early = max(rss for _, rss in samples[:settle])
    later = max(rss for _, rss in samples[settle:])
    return {"flat": later <= early * GROWTH_SLACK[0] + GROWTH_SLACK[1], "settled_rss": early, "later_rss": later}


def _write_large(tool: str, path: str, args: argparse.Namespace) -> tuple[float, int]:
    """Write the large-value chunk in one call; (seconds, RSS with the input built)."""
    import pyarrow.parquet as pq

    table = _large_table(args.values, int(args.value_mb * 1_000_000))
    before = _status_bytes("VmRSS")
    start = time.perf_counter()
    if tool == "gpuwrite":
        import gpuwrite

        gpuwrite.write_table(table, path, device="cpu", page_row_count_limit=args.page_rows,
                             page_size_check_min=min(args.page_rows, 100))
    else:
        pq.write_table(table, path, data_page_version="2.0", compression="snappy", write_batch_size=args.page_rows)
    return time.perf_counter() - start, before


def child(tool: str, case: str, args: argparse.Namespace) -> dict[str, object]:
    """Run one write in this process and report its memory figures."""
    import pyarrow  # noqa: F401 - imported before the baseline so both tools start alike

    import gpuwrite  # noqa: F401

    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        path = os.path.join(tmp, "out.parquet")
        samples: list[list[int]] | None = None
        try:
            if case == "groups":
                seconds, before, samples = _write_groups(tool, path, args)
            else:
                seconds, before = (_write_stream if case == "stream" else _write_large)(tool, path, args)
        except Exception as e:  # reported, not raised: the table shows which writes failed
            return {"tool": tool, "case": case, "error": f"{type(e).__name__}: {str(e)[:300]}",
                    "peak_rss": _status_bytes("VmHWM")}
        peak = _status_bytes("VmHWM")
        if not os.path.exists(path):  # tool "none": nothing written
            return {"tool": tool, "case": case, "seconds": round(seconds, 2), "rss_before": before,
                    "peak_rss": peak, "file_size": 0}
        size = os.path.getsize(path)
        row = {"tool": tool, "case": case, "seconds": round(seconds, 2), "rss_before": before, "peak_rss": peak,
               "file_size": size}
        if case == "stream":
            row.update(_row_group_sizes(path, args.batch_rows))
        if samples is not None:
            row.update(samples=samples, group_rows=args.group_rows, row_groups=_row_groups(path), **growth(samples))
    return row


def _row_groups(path: str) -> int:
    """Row groups of the written file."""
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_row_groups)


def _row_group_sizes(path: str, batch_rows: int) -> dict[str, int]:
    """The written file's row groups: count, rows of the largest, and the raw (Arrow) bytes of that many rows
    and of one input batch, from the bytes per row of a generated batch."""
    import pyarrow.parquet as pq

    from gpuwrite.tools.demo_data import store_sales_table

    meta = pq.ParquetFile(path).metadata
    largest = max(meta.row_group(i).num_rows for i in range(meta.num_row_groups))
    sample = store_sales_table(min(batch_rows, 100_000), seed=1)
    per_row = sample.nbytes / max(1, sample.num_rows)
    return {"row_groups": meta.num_row_groups, "row_group_rows": largest,
            "row_group_raw_bytes": int(largest * per_row), "batch_raw_bytes": int(batch_rows * per_row)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=SF10_ROWS, help="rows of the store_sales stream")
    parser.add_argument("--batch-rows", type=int, default=500_000, help="rows per streamed batch")
    parser.add_argument("--groups-rows", type=int, default=40_000_000, help="groups: rows of the int64 stream")
    parser.add_argument("--group-rows", type=int, default=1_000_000, help="groups: row_group_size (rows)")
    parser.add_argument("--groups-every", type=int, default=4, help="groups: sample RSS every this many row groups")
    parser.add_argument("--groups-random", action="store_true", help="groups: random values, not one repeated")
    parser.add_argument("--values", type=int, default=20, help="values in the large chunk")
    parser.add_argument("--value-mb", type=float, default=110.0, help="MB (10^6 bytes) per large value")
    parser.add_argument("--page-rows", type=int, default=10,
                        help="large: values per page (a Parquet page holds at most 2 GiB, so 20 x 110 MB needs two)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated: stream, large")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help="comma-separated: gpuwrite, pyarrow, none (the stream alone, stream case only)")
    parser.add_argument("--tmp", default=None, help="directory for the output files")
    parser.add_argument("--out", default=None, help="also save the results as JSON here")
    parser.add_argument("--child", nargs=2, metavar=("TOOL", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args)))
        return 0
    results = []
    forwarded = [f"--rows={args.rows}", f"--batch-rows={args.batch_rows}", f"--values={args.values}",
                 f"--value-mb={args.value_mb}", f"--page-rows={args.page_rows}", f"--groups-rows={args.groups_rows}",
                 f"--group-rows={args.group_rows}", f"--groups-every={args.groups_every}",
                 *(["--groups-random"] if args.groups_random else [])] + ([f"--tmp={args.tmp}"] if args.tmp else [])
    for case in args.cases.split(","):
        for tool in args.tools.split(","):
            if tool == "none" and case != "stream":
                continue
            proc = subprocess.run([sys.executable, __file__, "--child", tool, case, *forwarded],
                                  capture_output=True, text=True, cwd=REPO_ROOT)
            lines = proc.stdout.strip().splitlines()
            row = json.loads(lines[-1]) if proc.returncode == 0 and lines else {
                "tool": tool, "case": case, "error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
            results.append(row)
            _print_row(row)
    _check_bounds(results)
    if args.out:
        Path(args.out).write_text(json.dumps({"args": {k: v for k, v in vars(args).items() if k != "child"},
                                              "results": results}, indent=2))
    grows = [r["tool"] for r in results if r.get("case") == "groups" and r.get("flat") is False]
    if grows:
        print(f"groups: RSS grows with the rows written: {', '.join(grows)}", flush=True)
    return 1 if grows else 0


def _check_bounds(results: list[dict[str, Any]]) -> None:
    """Give each streamed writer its bound (start + 3 row groups' raw size + a batch + the generator's extra)
    and whether its peak kept within it; print both."""
    floor = next((r for r in results if r.get("tool") == "none" and "peak_rss" in r and "error" not in r), None)
    generator_extra = int(floor["peak_rss"]) - int(floor["rss_before"]) if floor else 0
    for row in results:
        if row.get("case") != "stream" or "row_group_raw_bytes" not in row:
            continue
        bound = (int(row["rss_before"]) + 3 * int(row["row_group_raw_bytes"]) + int(row["batch_raw_bytes"])
                 + generator_extra)
        row["bound"] = bound
        row["generator_extra"] = generator_extra
        row["within_bound"] = int(row["peak_rss"]) <= bound
        print(f"stream  {row['tool']:9} bound {bound / 1e9:6.2f} GB = before {int(row['rss_before']) / 1e9:.2f}"
              f" + 3 x {int(row['row_group_raw_bytes']) / 1e9:.3f} GB raw row group ({row['row_group_rows']:,} rows,"
              f" {row['row_groups']} groups) + batch {int(row['batch_raw_bytes']) / 1e9:.3f} GB + generator"
              f" {generator_extra / 1e9:.2f} GB: peak {'within' if row['within_bound'] else 'OVER'}", flush=True)


def _print_row(row: dict[str, object]) -> None:
    """One result as a line of the report."""
    gb = 1e9
    if "error" in row:
        print(f"{row['case']:7} {row['tool']:9} ERROR {row['error']}", flush=True)
        return
    peak, before = int(row["peak_rss"]), int(row["rss_before"])  # type: ignore[call-overload]
    if row["case"] == "groups":
        _print_samples(row)
    print(f"{row['case']:7} {row['tool']:9} peak {peak / gb:6.2f} GB  before write {before / gb:6.2f} GB  "
          f"added {(peak - before) / gb:6.2f} GB  {row['seconds']:7.1f} s  file {int(row['file_size']) / 1e6:8.1f} MB",  # type: ignore[call-overload]
          flush=True)



def _print_samples(row: dict[str, Any]) -> None:
    """The groups case's RSS samples, one line per sample, and whether it stayed flat."""
    mb = 1e6
    for rows, rss in row["samples"]:
        print(f"groups  {row['tool']:9} after {rows / 1e6:7.1f} M rows ({rows // row['group_rows']:4} row groups' rows)"
              f"  RSS {rss / mb:8.0f} MB", flush=True)
    if row["settled_rss"] is not None:
        print(f"groups  {row['tool']:9} {row['row_groups']} row groups: peak {row['later_rss'] / mb:.0f} MB after the"
              f" first quarter, {row['settled_rss'] / mb:.0f} MB within it: {'flat' if row['flat'] else 'GROWS'}",
              flush=True)

if __name__ == "__main__":
    sys.exit(main())
