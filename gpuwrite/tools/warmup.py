"""`gpuwrite warmup`: compile (or load) every CPU kernel a write uses, so no later write waits for numba.

numba compiles a kernel per argument-type signature on first use and caches it on disk (see
`kernel_cache`). Warm-up writes a small table of every supported type, nested and with nulls, through each
path that picks different kernels: dictionary and fallback encodings, a mid-chunk dictionary fallback, a
column's pages encoded in one call (with and without nulls), INT64 timestamps, calendar rebase, bloom filters,
Spark's legacy nested layout, a partitioned, bucketed dataset (Murmur3 and HiveHash), and a streamed row group
whose pages are encoded over several steps. Each runs twice: on buffers pyarrow allocated (writable NumPy
views) and on the same table read through Arrow's C stream, as polars, DuckDB and pandas' Arrow-backed frames hand it over
(read-only views): numba compiles a signature for each. Run it once per install (a Docker image, a Spark executor's image) with the
same `NUMBA_CACHE_DIR` the writes will see.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ..backends import kernel_cache

SAMPLE_ROWS = 3_000


@dataclass(frozen=True)
class WarmupResult:
    """What warm-up did: signatures compiled and loaded from the cache, seconds, and the cache directory."""

    compiled: int
    loaded: int
    seconds: float
    cache_dir: str | None
    steps: int


def sample_table(rows: int = SAMPLE_ROWS, nulls: bool = True) -> pa.Table:
    """A table with a column of every type gpuwrite writes (flat and nested), with nulls or without any.

    Both matter: Arrow columns without nulls convert to read-only NumPy views, with nulls to fresh arrays,
    and numba compiles a signature for each.
    """
    valid = [i % 7 != 3 or not nulls for i in range(rows)]

    def nullable(values: list[Any], type_: pa.DataType) -> pa.Array:
        return pa.array([v if ok else None for v, ok in zip(values, valid, strict=True)], type_)

    ints = [(i * 7919) % 1000 - 500 for i in range(rows)]
    micros = [dt.datetime(1500 + i % 600, 1 + i % 12, 1 + i % 28, i % 24, 0, 0, i) for i in range(rows)]
    days = [dt.date(1400 + i % 700, 1 + i % 12, 1 + i % 28) for i in range(rows)]
    text = [f"value {i % 97} " + "x" * (i % 13) for i in range(rows)]
    columns: dict[str, pa.Array] = {
        "part": pa.array([f"p{i % 3}" for i in range(rows)]),
        "flag": nullable([i % 3 == 0 for i in range(rows)], pa.bool_()),
        "i8": nullable([v % 100 for v in ints], pa.int8()),
        "i16": nullable(ints, pa.int16()),
        "i32": nullable([v * 1000 for v in ints], pa.int32()),
        "i64": nullable([v * 10**12 + i for i, v in enumerate(ints)], pa.int64()),
        "f32": nullable([v / 3 for v in ints], pa.float32()),
        "f64": nullable([v / 7 for v in ints], pa.float64()),
        "dec9": nullable([decimal.Decimal(v).scaleb(-2) for v in ints], pa.decimal128(7, 2)),
        "dec18": nullable([decimal.Decimal(v * 10**9).scaleb(-4) for v in ints], pa.decimal128(18, 4)),
        "dec38": nullable([decimal.Decimal(v * 10**20).scaleb(-6) for v in ints], pa.decimal128(38, 6)),
        "day": nullable(days, pa.date32()),
        "ts_ntz": nullable(micros, pa.timestamp("us")),
        "ts_utc": nullable(micros, pa.timestamp("us", tz="UTC")),
        "ts_ms": nullable(micros, pa.timestamp("ms", tz="UTC")),
        "text": nullable(text, pa.string()),
        "big_text": nullable(text, pa.large_string()),
        "blob": nullable([t.encode() for t in text], pa.binary()),
        "category": pa.array([f"c{i % 5}" for i in range(rows)]).dictionary_encode(),
        "ints": nullable([[v, v + 1][: i % 3] for i, v in enumerate(ints)], pa.list_(pa.int32())),
        "words": nullable([[t, None][: i % 3] for i, t in enumerate(text)], pa.large_list(pa.string())),
        "pair": nullable([[v, v * 2] for v in ints], pa.list_(pa.int64(), 2)),
        "item": nullable([{"id": v, "name": t} for v, t in zip(ints, text, strict=True)],
                         pa.struct([("id", pa.int64()), ("name", pa.string())])),
        "tags": nullable([[(t[:7], v)] * (i % 3) for i, (v, t) in enumerate(zip(ints, text, strict=True))],
                         pa.map_(pa.string(), pa.int64())),
        "view_text": nullable(text, pa.string_view()),  # polars' strings: flat and nested
        "view_words": nullable([[t, None][: i % 3] for i, t in enumerate(text)], pa.list_(pa.string_view())),
        "short_view": nullable([t[:12] for t in text], pa.string_view()),  # inline only: no data buffer
    }
    return pa.table(columns)


FLAT_BUCKET_COLUMNS = ["flag", "i8", "i16", "i32", "i64", "f32", "f64", "dec9", "dec18", "dec38", "day",
                       "ts_ntz", "ts_utc", "text", "blob"]


def foreign(table: pa.Table) -> pa.Table:
    """`table` read back through Arrow's C stream interface: its buffers are then immutable, as those of a
    polars frame, a DuckDB relation or any other `__arrow_c_stream__` producer are, and NumPy views of them
    read-only (another numba signature than pyarrow's own writable buffers)."""
    return pa.RecordBatchReader.from_stream(table).read_all()


def steps(table: pa.Table, folder: str) -> list[tuple[str, Callable[[], Any]]]:
    """The warm-up writes, each (what it covers, how to run it), into `folder`: every write on pyarrow's own
    buffers, then on the same tables imported through the C stream interface (`foreign`)."""
    own = _steps(table, sample_table(table.num_rows, nulls=False), os.path.join(folder, "own"))
    imported = _steps(foreign(table), foreign(sample_table(table.num_rows, nulls=False)),
                      os.path.join(folder, "foreign"))
    streamed = ("a row group encoded over several steps",
                functools.partial(write_in_steps, table, os.path.join(folder, "steps.parquet")))
    # the GPU backend's steps run by their compiled CPU twins (kernels/plan/planner.py, convert/arenas.py...):
    # the stand-in device of the cost model (`bench/gpu_model.py`, tests) compiled 92 signatures in every fresh
    # process of a new install, none of them shipped
    standin = [(f"{label}, stand-in device", functools.partial(_on_standin, run))
               for label, run in gpu_steps(table, folder)]
    return own + [(f"{label}, imported buffers", run) for label, run in imported] + [streamed] + standin


def _on_standin(run: Callable[[], Any]) -> None:
    """Run a GPU warm-up write on the stand-in device (`ops.standin`): no GPU needed, the CPU twins compiled."""
    from ..backends.device.ops import standin

    with standin():
        run()


def write_in_steps(table: pa.Table, path: str) -> None:
    """Write the flat columns of `table`, repeated, in two batches to a streaming ParquetWriter: each batch is
    a conversion step (`window.STREAM_CONVERT_ROWS` rows) and the row group spans both, so every column's pages
    are encoded in two steps and its dictionary is re-read (`Dictionary.warm`) before the second. A large
    `write_table` (the demo's 700 MB) converts its rows in steps the same way; the sample's one-call writes end
    within one step and never reach it."""
    import numpy as np

    from ..api import ParquetWriter
    from ..pipeline.window import STREAM_CONVERT_ROWS

    flat = table.select(FLAT_BUCKET_COLUMNS + ["category"])
    batch = flat.take(np.arange(STREAM_CONVERT_ROWS) % flat.num_rows)
    with ParquetWriter(path, flat.schema, streaming=True) as writer:
        writer.write(batch)
        writer.write(batch)


def _steps(table: pa.Table, dense: pa.Table, folder: str) -> list[tuple[str, Callable[[], Any]]]:
    """The warm-up writes of `table` (nulls) and `dense` (none) into `folder`."""
    from ..api import write_table
    from ..dataset.write import write_dataset

    def file(name: str, **options: Any) -> Callable[[], Any]:
        return lambda: write_table(table, os.path.join(folder, f"{name}.parquet"), **options)

    os.makedirs(folder, exist_ok=True)
    flat = table.select(FLAT_BUCKET_COLUMNS + ["part", "category"])
    return [
        ("dictionary encodings", file("dictionary")),
        ("columns without nulls", lambda: write_table(dense, os.path.join(folder, "dense.parquet"))),
        ("columns without nulls, fallback encodings", lambda: write_table(
            dense, os.path.join(folder, "dense_plain.parquet"), enable_dictionary=False)),
        ("fallback encodings", file("plain", enable_dictionary=False)),
        ("PLAIN fallback encodings (Iceberg)", file("iceberg", enable_dictionary=False, fallback_encoding="plain")),
        ("mid-chunk dictionary fallback", file("fallback", dictionary_page_size=512, page_row_count_limit=500)),
        ("a column's pages in one call", file("pages", page_row_count_limit=500)),
        ("a column's pages in one call, without nulls", lambda: write_table(
            dense, os.path.join(folder, "dense_pages.parquet"), page_row_count_limit=500)),
        ("INT64 timestamps", file("micros", timestamp_type="TIMESTAMP_MICROS")),
        ("INT64 millisecond timestamps", file("millis", timestamp_type="TIMESTAMP_MILLIS")),
        ("calendar rebase", file("rebase", datetime_rebase="LEGACY", int96_rebase="LEGACY")),
        ("bloom filters", file("bloom", bloom_filter_enabled=True)),
        ("adaptive bloom filters", file("adaptive", bloom_filter_enabled=True, bloom_filter_adaptive=True)),
        ("legacy nested layout", file("legacy", legacy_format=True)),
        ("Spark buckets (Murmur3)", lambda: write_dataset(flat, os.path.join(folder, "buckets"), partition_by=["part"],
                                                          bucket_by=(4, FLAT_BUCKET_COLUMNS))),
        ("Hive buckets (HiveHash)", lambda: write_dataset(flat, os.path.join(folder, "hive"), bucket_by=(
            4, FLAT_BUCKET_COLUMNS), hive_compatible_buckets=True)),
    ]


def warmup(report: Callable[[int, int, str], None] | None = None) -> WarmupResult:
    """Compile or load every CPU kernel; `report(step, of, label)` is called before each step."""
    from ..errors import BloomFilterSizeWarning
    from ..pipeline.int96_zones import held_back

    kernel_cache.install()
    start = time.perf_counter()
    hits0, misses0 = kernel_cache.cache_counts()
    with tempfile.TemporaryDirectory(prefix="gpuwrite-warmup-") as folder:
        todo = steps(sample_table(), folder)
        with held_back(), warnings.catch_warnings():  # the sample's zoned INT96 column and tiny bloom-filtered
            warnings.simplefilter("ignore", BloomFilterSizeWarning)  # chunks are ours: nothing to tell the user
            for i, (label, run) in enumerate(todo):
                if report is not None:
                    report(i, len(todo), label)
                run()
    hits1, misses1 = kernel_cache.cache_counts()
    return WarmupResult(compiled=misses1 - misses0, loaded=hits1 - hits0, seconds=time.perf_counter() - start,
                        cache_dir=kernel_cache.cache_dir(), steps=len(todo))


GPU_CODECS = ("snappy", "zstd", "gzip", "lz4_raw", "none")


def gpu_steps(table: pa.Table, folder: str) -> list[tuple[str, Callable[[], Any]]]:
    """The GPU warm-up writes: the sample with and without nulls, dictionary and fallback encodings, each codec."""
    from ..api import write_table

    dense = sample_table(table.num_rows, nulls=False)
    out: list[tuple[str, Callable[[], Any]]] = []
    for name, data in (("nulls", table), ("dense", dense)):
        for codec in GPU_CODECS:
            out.append((f"GPU {name}, {codec}", functools.partial(
                write_table, data, os.path.join(folder, f"gpu_{name}_{codec}.parquet"), device="gpu",
                compression=codec)))
        out.append((f"GPU {name}, fallback encodings", functools.partial(
            write_table, data, os.path.join(folder, f"gpu_{name}_plain.parquet"), device="gpu",
            enable_dictionary=False)))
    return out


def warmup_gpu(report: Callable[[int, int, str], None] | None = None) -> WarmupResult:
    """Compile or load every CUDA kernel a GPU write launches into numba-cuda's on-disk cache (and the CPU kernels
    the GPU path shares). Raises GpuwriteError, saying a GPU is needed, when the GPU backend cannot run here."""
    from ..backends import resolve_device
    from ..errors import BloomFilterSizeWarning
    from ..pipeline.int96_zones import held_back

    resolve_device("gpu")  # no GPU (or no numba-cuda / CuPy): a GpuwriteError naming what is missing
    kernel_cache.install()
    start = time.perf_counter()
    hits0, misses0 = kernel_cache.cuda_cache_counts()
    with tempfile.TemporaryDirectory(prefix="gpuwrite-warmup-gpu-") as folder:
        todo = gpu_steps(sample_table(), folder)
        with held_back(), warnings.catch_warnings():
            warnings.simplefilter("ignore", BloomFilterSizeWarning)
            for i, (label, run) in enumerate(todo):
                if report is not None:
                    report(i, len(todo), label)
                run()
    hits1, misses1 = kernel_cache.cuda_cache_counts()
    cuda_dirs = {str(getattr(getattr(d, "stats", None), "cache_path", "") or "") for d in kernel_cache.cuda_dispatchers()}
    cuda_dirs.discard("")
    return WarmupResult(compiled=misses1 - misses0, loaded=hits1 - hits0, seconds=time.perf_counter() - start,
                        cache_dir=os.path.commonpath(sorted(cuda_dirs)) if cuda_dirs else None, steps=len(todo))
