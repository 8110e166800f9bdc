"""The identity corpus: a file written with device='gpu' is byte for byte the file the CPU backend writes, across
types, encodings, fallbacks, page and row-group cuts, codecs and options. Its `test_*` functions are collected by
gpu/test_simulator_identity.py (numba.cuda kernels under the simulator) and backends/test_standin_identity.py (the
stand-in device) through `identity_tests()`: one corpus, two pytest runs (the simulator needs a process of its
own)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus import corpus_file
from nested_tables import nested_table
from readback_tables import _big, _extremes
from view_tables import view_cases

import gpuwrite
from gpuwrite.backends import resolve_device

D = decimal.Decimal


def identity_tests() -> dict[str, Callable[..., None]]:
    """The corpus's test functions by name, for a test module to take as its own (`globals().update`)."""
    return {name: value for name, value in globals().items() if name.startswith("test_") and callable(value)}


def _both(tmp_path: Path, table: pa.Table, **options) -> tuple[bytes, bytes]:
    """The CPU and the GPU backend's files for the same table and options."""
    cpu, gpu = tmp_path / "cpu.parquet", tmp_path / "gpu.parquet"
    gpuwrite.write_table(table, cpu, device="cpu", **options)
    gpuwrite.write_table(table, gpu, device="gpu", **options)
    return cpu.read_bytes(), gpu.read_bytes()


def _assert_identical(tmp_path: Path, table: pa.Table, **options) -> bytes:
    cpu, gpu = _both(tmp_path, table, **options)
    assert len(gpu) == len(cpu)
    assert gpu == cpu
    assert pq.read_table(tmp_path / "gpu.parquet").num_rows == table.num_rows
    return gpu


def test_simulator_is_the_gpu_here():
    assert resolve_device("gpu") == "gpu"
    assert resolve_device("auto") == "cpu"  # the simulator is for tests only, never picked by 'auto'


@pytest.mark.parametrize("timestamp_type", ["INT96", "TIMESTAMP_MICROS", "TIMESTAMP_MILLIS"])
def test_every_type_with_extremes(tmp_path, timestamp_type):
    table = _extremes()
    if timestamp_type == "TIMESTAMP_MILLIS":
        table = table.drop(["ts", "ts_ntz"])
    _assert_identical(tmp_path, table, timestamp_type=timestamp_type)


@pytest.mark.parametrize("codec", ["uncompressed", "snappy", "zstd", "gzip", "lz4_raw"])
def test_pages_row_groups_and_codecs(tmp_path, codec):
    """Many pages and 3+ row groups: the replayed row-group cuts land where the CPU path cuts."""
    table = _big(1200, seed=3)
    data = _assert_identical(tmp_path, table, compression=codec, page_size=1024, block_size=16 * 1024)
    assert pq.ParquetFile(pa.BufferReader(data)).metadata.num_row_groups >= 3


def test_dictionary_overflow_mid_chunk_and_first_page_test(tmp_path):
    rng = np.random.default_rng(7)
    n = 1500
    table = pa.table({
        "grow": pa.array(np.arange(n) // 2, pa.int64()),  # overflows a small dictionary half-way
        "distinct": pa.array(rng.integers(-2**40, 2**40, n)),  # fails the first-page test
        "few": pa.array(rng.integers(0, 3, n), pa.int32()),  # stays dictionary-encoded
        "s_grow": pa.array([f"value-{k // 3}" for k in range(n)]),
        "f": pa.array(rng.random(n).astype(np.float32)),
    })
    _assert_identical(tmp_path, table, dictionary_page_size=600, page_size=2048)


def test_page_row_limit_and_block_row_limit(tmp_path):
    table = _big(900, seed=5)
    _assert_identical(tmp_path, table, page_row_count_limit=64, block_row_count_limit=300)


def test_columns_of_many_chunks(tmp_path, monkeypatch):
    """Conversion chunks of 8 rows and dictionary chunks of 16 values: a column's chunks outnumber a block's
    threads, so the block scans over them (convert_scan, dict_bases) split them into runs, as do the page
    offsets' scan (many pages)."""
    from gpuwrite.backends.device import convert, dictionary

    monkeypatch.setitem(convert.build_window.__kwdefaults__, "chunk_rows", 8)
    monkeypatch.setattr(dictionary, "CHUNK", 16)
    table = _big(300, seed=11).select(["i32", "date", "ts", "s"])
    _assert_identical(tmp_path, table, page_row_count_limit=20)


def test_no_dictionary_no_checksum_and_bloom_filters(tmp_path):
    table = _big(700, seed=9)
    _assert_identical(tmp_path, table, enable_dictionary=False, page_checksum=False, page_size=4096)
    _assert_identical(tmp_path, table, bloom_filter_enabled=True, column_dictionary={"s": False},
                      page_size=4096)


def test_plain_fallback(tmp_path):
    """fallback_encoding='plain': PLAIN INT32 / INT64, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY pages on the device,
    after dictionary overflows and with no dictionary."""
    table = _big(500, seed=8)
    data = _assert_identical(tmp_path, table, fallback_encoding="plain", dictionary_page_size=600, page_size=2048)
    meta = pq.ParquetFile(pa.BufferReader(data)).metadata
    encodings = {e for rg in range(meta.num_row_groups) for c in range(meta.num_columns)
                 for e in meta.row_group(rg).column(c).encodings}
    assert "PLAIN" in encodings and not {e for e in encodings if e.startswith("DELTA")}
    _assert_identical(tmp_path, table, fallback_encoding="plain", enable_dictionary=False, page_size=4096)


@pytest.mark.parametrize("timestamp_type", ["INT96", "TIMESTAMP_MICROS"])
def test_bloom_filters_of_every_type_built_on_the_device(tmp_path, timestamp_type):
    """Every type's hashing (INT96 and FLBA decimals included), fixed sizes, sized by NDV, and adaptive candidates
    chosen by the distinct count the device finds, with dictionary-only chunks left without a filter."""
    table = _extremes()
    data = _assert_identical(tmp_path, table, timestamp_type=timestamp_type, bloom_filter_enabled=True,
                             enable_dictionary=False, bloom_filter_ndv={"i32": 3, "s": 100})
    md = pq.ParquetFile(pa.BufferReader(data)).metadata.row_group(0)
    assert all(md.column(i).to_dict().get("bloom_filter_offset") for i in range(md.num_columns))
    _assert_identical(tmp_path, table, bloom_filter_enabled=True, bloom_filter_adaptive=True,
                      bloom_filter_max_bytes=256, bloom_filter_candidates=3, column_dictionary={"i64": False})


def test_empty_all_null_and_single_row(tmp_path):
    schema = pa.schema([("a", pa.int32()), ("s", pa.string()), ("f", pa.float64())])
    _assert_identical(tmp_path, schema.empty_table())
    nulls = pa.table({"a": pa.nulls(300, pa.int32()), "s": pa.nulls(300, pa.string()),
                      "f": pa.nulls(300, pa.float64())})
    _assert_identical(tmp_path, nulls, page_size=256)
    _assert_identical(tmp_path, pa.table({"a": pa.array([7], pa.int32()), "s": ["x"], "f": [1.5]}))


def _streamed(tmp_path: Path, table: pa.Table, chunk: int, **options) -> dict[str, bytes]:
    """Both backends' files for `table` written through ParquetWriter in batches of `chunk` rows."""
    out = {}
    for device in ("cpu", "gpu"):
        path = tmp_path / f"{device}.parquet"
        with gpuwrite.ParquetWriter(path, table.schema, device=device, **options) as writer:
            for batch in table.to_batches(max_chunksize=chunk):
                writer.write(batch)
        out[device] = path.read_bytes()
    return out


def test_streaming_writer_many_small_batches(tmp_path):
    files = _streamed(tmp_path, _big(800, seed=11), 97, page_size=2048, block_size=20_000)
    assert files["gpu"] == files["cpu"]


def test_legacy_rebase_and_dates(tmp_path):
    table = pa.table({"d": pa.array([dt.date(1000, 1, 1), dt.date(1582, 10, 4), None, dt.date(2000, 1, 1)]),
                      "t": pa.array([dt.datetime(1000, 1, 1), None, dt.datetime(1900, 1, 1),
                                     dt.datetime(2020, 5, 5)], pa.timestamp("us", "UTC"))})
    _assert_identical(tmp_path, table, datetime_rebase="LEGACY", int96_rebase="LEGACY",
                      time_zone="America/Los_Angeles")


@pytest.mark.parametrize("name", ["alltypes_plain.parquet", "datapage_v2.snappy.parquet",
                                  "int32_with_null_pages.parquet", "delta_byte_array.parquet",
                                  "byte_array_decimal.parquet"])
def test_parquet_testing_files_rewritten(tmp_path, name):
    """Real files from other writers, read with pyarrow and rewritten by both backends."""
    table = pq.read_table(corpus_file(name))
    keep = [f.name for f in table.schema if not pa.types.is_nested(f.type)]
    _assert_identical(tmp_path, table.select(keep), page_size=512)


def test_nested_columns(tmp_path):
    """Structs, lists and maps (levels of any width, rows != entries) through the GPU backend."""
    table = nested_table()
    for legacy in (False, True):
        _assert_identical(tmp_path, table, legacy_format=legacy)
    rng = np.random.default_rng(2)
    n = 700
    big = pa.table({"l": pa.array([None if k == 0 else [int(v) for v in rng.integers(0, 9, k)]
                                   for k in rng.integers(0, 5, n)], pa.list_(pa.int32())),
                    "m": pa.array([[(f"k{j}", f"v{j * k}") for j in range(k)] for k in rng.integers(0, 4, n)],
                                  pa.map_(pa.string(), pa.string()))})
    data = _assert_identical(tmp_path, big, page_size=512, block_size=3 * 1024)
    assert pq.ParquetFile(pa.BufferReader(data)).metadata.num_row_groups >= 2


def test_view_types_flat_and_nested(tmp_path):
    """string_view / binary_view flat (converted on the device from their gathered values) and nested (on the
    host): the CPU backend's file, which is the file of the same rows as string / binary; a polars-style
    dictionary of views too."""
    cases = view_cases()
    names = [name for name, (views, _) in cases.items() if views.num_rows == 240]
    views = pa.table({name: cases[name][0].column(0) for name in names})
    words = pa.DictionaryArray.from_arrays(pa.array([k % 3 if k % 5 else None for k in range(240)], pa.uint32()),
                                           pa.array(["p", "q" * 20, "r"], pa.string_view()))
    views = views.append_column("dict", words)
    same = pa.table({name: cases[name][1].column(0) for name in names}).append_column("dict", pa.array(words.to_pylist()))
    data = _assert_identical(tmp_path, views, page_size=2048)
    gpuwrite.write_table(same, tmp_path / "plain.parquet", page_size=2048)
    assert data == (tmp_path / "plain.parquet").read_bytes()


def test_window_that_grows_inside_a_row_group(tmp_path, monkeypatch):
    """Well-compressed rows: no row group ends inside the GPU backend's first window, so the writer grows it
    and the device plans the larger window afresh; the CPU backend converts in small steps."""
    from gpuwrite.pipeline.window import ArrowWindow, RowWindow

    init = RowWindow.__init__

    def small_steps(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.convert_bytes = 4096

    monkeypatch.setattr(RowWindow, "__init__", small_steps)
    grown = []
    grow = ArrowWindow.grow
    monkeypatch.setattr(ArrowWindow, "grow", lambda self: grown.append(self.target) or grow(self))
    n = 6000
    table = pa.table({"a": pa.array(np.arange(n) % 3, pa.int64()),
                      "s": pa.array([None if k % 5 == 0 else f"v{k % 4}" for k in range(n)]),
                      "f": pa.array((np.arange(n) % 2).astype(np.float32))})
    files = _streamed(tmp_path, table, 500, page_row_count_limit=100, block_size=2048)
    assert grown, "the window never grew: this test no longer covers window growth"
    assert files["gpu"] == files["cpu"]
