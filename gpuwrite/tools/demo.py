"""`gpuwrite demo`: generate TPC-DS store_sales, write it with gpuwrite and check every value read back, then
time gpuwrite against pyarrow, polars and DuckDB writing the same table (those installed)."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from typing import TypeVar

import pyarrow as pa

from .._version import __version__
from ..api import write_table
from ..backends import kernel_cache
from ..options.model import WriteOptions
from ..result import FileResult
from .demo_compare import PEERS, Contender, prepare, results_table, run_rounds, settings
from .demo_data import store_sales_table

ROUNDS = 3
"""Timed rounds; each writer writes once per round."""

EXIT_OK, EXIT_FAILED = 0, 1
T = TypeVar("T")


def run(rows: int, compression: str | None, out: str | None, keep: bool) -> int:
    """Write `rows` of store_sales with gpuwrite (to `out`, else a temp file, kept with `keep`), verify it, time
    it against the other writers installed, and print the report; the exit status."""
    codec = WriteOptions.from_conf(None, compression=compression).compression
    tmpdir = tempfile.mkdtemp(prefix="gpuwrite-demo-")
    path = os.path.abspath(out) if out else os.path.join(tmpdir, "store_sales.gpuwrite.parquet")
    keep_tmpdir = keep and not out
    peers: list[Contender] = []
    try:
        gen_s, table = _timed(lambda: store_sales_table(rows))
        print(f"gpuwrite demo: TPC-DS store_sales, {table.num_rows:,} rows x {table.num_columns} columns, "
              f"{_mb(table.nbytes)} as Arrow (generated in {gen_s:.1f} s), compression {codec}")
        print()
        ours = _first_write(table, path, codec)
        if ours is None:
            return EXIT_FAILED
        print()
        print(f"The writers each write this table to a Parquet file, compression {codec}. Each writer's first "
              "file is read back\nby pyarrow and checked value by value, then each is timed in "
              f"{ROUNDS} interleaved rounds (median shown;\n{os.cpu_count()} CPU cores here; MB/s counts Arrow "
              "input bytes):")
        for name in PEERS:
            peer = prepare(name, table, codec, os.path.join(tmpdir, f"store_sales.{name}.parquet"))
            if isinstance(peer, str):
                print(f"  {peer}")
                continue
            print(f"  {f'{peer.name} {peer.version}':<16} {settings(name, codec)}")
            peers.append(peer)
        contenders = [Contender("gpuwrite", __version__, lambda p: write_table(table, p, compression=codec), path,
                                warmed=True), *peers]
        run_rounds(contenders, table, ROUNDS)
        print()
        for line in results_table(contenders, table.nbytes):
            print(line)
        print()
        if contenders[0].error is not None:
            return EXIT_FAILED
        pyarrow = next((p for p in peers if p.name == "pyarrow" and p.error is None), None)
        if pyarrow is not None:
            print("per column (bytes are compressed column chunk sizes):")
            for line in _chunk_table(ours, pyarrow.path):
                print(line)
            print()
        print(f"gpuwrite's file is kept at {path}" if out or keep_tmpdir else "temporary files removed")
        return EXIT_OK
    finally:
        for peer in peers:
            if peer.close is not None:
                peer.close()
        if keep_tmpdir:
            for peer in peers:
                if os.path.exists(peer.path):
                    os.remove(peer.path)
        else:
            shutil.rmtree(tmpdir, ignore_errors=True)


def _first_write(table: pa.Table, path: str, codec: str) -> FileResult | None:
    """gpuwrite's first (cold) write, what numba compiled for it, and the file read back by pyarrow and compared
    with the input; the result, or None (reported) when the file does not read back as the input."""
    import pyarrow.parquet as pq

    hits0, misses0 = kernel_cache.cache_counts()
    cold_s, result = _timed(lambda: write_table(table, path, compression=codec))
    hits1, misses1 = kernel_cache.cache_counts()
    compiled, loaded = misses1 - misses0, hits1 - hits0
    if compiled:
        jit_note = (f"numba compiled {compiled} kernel signature(s) on first use"
                    + (f" and loaded {loaded} from its disk cache" if loaded else "")
                    + "; they are cached on disk, so later runs skip the compile")
    elif loaded:
        jit_note = f"numba loaded {loaded} compiled kernel signature(s) from its disk cache (compiled earlier)"
    else:
        jit_note = "numba compiles kernels on first use and caches them on disk"
    data_pages = sum(c.page_count for rg in result.footer.row_groups for c in rg.columns)
    print(f"gpuwrite {__version__} (numba kernels on the CPU)")
    _row("first write (cold)", f"{cold_s:.2f} s   {jit_note}")
    _row("file", f"{_mb(result.size)} ({result.size:,} bytes), {len(result.footer.row_groups)} row group(s), "
                 f"{data_pages:,} data pages")
    back = pq.read_table(path)
    if not back.equals(table):
        bad = [name for name in table.column_names
               if name not in back.column_names or not back.column(name).equals(table.column(name))]
        _row("verified", f"NO: pyarrow reads back {back.num_rows:,} rows that differ from the input "
                         f"(schema equal: {back.schema.equals(table.schema)}; columns differing: "
                         f"{', '.join(bad) or 'none'})")
        return None
    _row("verified", f"yes: pyarrow read back all {back.num_rows:,} rows x {back.num_columns} columns and "
                     "every value equals the input (Table.equals)")
    return result


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Run fn once after a garbage collection; return (seconds, its result)."""
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _mb(n: float) -> str:
    """Bytes as decimal megabytes."""
    return f"{n / 1e6:,.1f} MB"


def _row(label: str, text: str) -> None:
    """Print one aligned line of the demo report."""
    print(f"  {label:<20} {text}")


def _chunk_table(result: FileResult, pyarrow_path: str) -> list[str]:
    """Per column: type, gpuwrite's encodings, pages and bytes, next to pyarrow's type, encodings and bytes."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(pyarrow_path).metadata
    rows = [["column", "type", "gpuwrite encodings", "data pages", "bytes", "pyarrow type", "pyarrow encodings",
             "bytes"]]
    groups = result.footer.row_groups
    for j, first in enumerate(groups[0].columns if groups else ()):
        encodings: dict[str, None] = {}
        pages = size = 0
        for rg in groups:
            chunk = rg.columns[j]
            encodings.update(dict.fromkeys(chunk.encodings))
            pages += chunk.page_count
            size += chunk.compressed_size
        pa_encodings: dict[str, None] = {}
        pa_size = 0
        for i in range(meta.num_row_groups):
            col = meta.row_group(i).column(j)
            pa_encodings.update(dict.fromkeys(col.encodings))
            pa_size += col.total_compressed_size
        pa_type = meta.row_group(0).column(j).physical_type if meta.num_row_groups else "-"
        rows.append([first.path, first.physical_type, ", ".join(encodings), f"{pages:,}", f"{size:,}", pa_type,
                     ", ".join(pa_encodings), f"{pa_size:,}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {3, 4, 7}
    return ["  " + "  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i])
                             for i, c in enumerate(r)).rstrip() for r in rows]
