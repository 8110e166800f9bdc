"""Page-by-page parity with parquet-java 1.17 (PARQUET_2_0): gpuwrite's file, re-written by RefWriter.

Each case writes a table with gpuwrite, then feeds that file to RefWriter with the same options, so
parquet-java decodes our values independently and encodes them its own way. The two files' layouts are
compared one aspect at a time, so that a known difference in one aspect leaves the others checked.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from reference import chunk_layout, file_layout, write_with_parquet_java

import gpuwrite

Layout = list[dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """One table and the parquet.* keys given to both writers. `chunk_ndv`: gpuwrite sizes a filter given no
    NDV for its chunk's non-null values, where parquet-java allocates max.bytes (docs/compatibility.md); so
    parquet-java gets that count as the expected NDV of each filtered column the case gives none, which makes
    its file the one gpuwrite's rule must equal (one row group per such case)."""

    table: Callable[[], pa.Table]
    options: dict[str, str]
    chunk_ndv: bool = False


def _rng(seed: int) -> np.random.Generator:
    """A deterministic random generator per case."""
    return np.random.default_rng(seed)


def _nulls(rng: np.random.Generator, n: int, p: float = 0.1) -> np.ndarray:
    """A null mask with about p of the rows null."""
    return rng.random(n) < p


def _listed(values: list[Any], mask: np.ndarray) -> list[Any]:
    """values with None where mask is set."""
    return [None if m else v for v, m in zip(values, mask, strict=True)]


def _decimals(ints: np.ndarray, mul: int, add: int, mask: np.ndarray, precision: int, scale: int) -> pa.Array:
    """A decimal128(precision, scale) array of unscaled values int * mul + add, null where mask is set."""
    values = [Decimal(int(v) * mul + add).scaleb(-scale) for v in ints]
    return pa.array(_listed(values, mask), pa.decimal128(precision, scale))


def _typed(rng: np.random.Generator, ints: np.ndarray, mask: np.ndarray) -> dict[str, pa.Array]:
    """Every flat type gpuwrite writes, derived from one integer column (small ints give repeats)."""
    big = ints.astype(np.int64)
    return {
        "bool": pa.array(_listed([bool(v & 1) for v in ints], mask), pa.bool_()),
        "int8": pa.array((ints % 100 - 50).astype(np.int8), mask=mask),
        "int16": pa.array((ints * 37 % 30_000 - 15_000).astype(np.int16), mask=mask),
        "int32": pa.array((ints * 7919 - 1_000_000).astype(np.int32), mask=mask),
        "int64": pa.array(big * 1_000_003 - 2**40, mask=mask),
        "float": pa.array((ints / 4 - 10).astype(np.float32), mask=mask),
        "double": pa.array(ints / 8 - 100.5, mask=mask),
        "dec7_2": _decimals(ints, 37, -50_000, mask, 7, 2),
        "dec18_3": _decimals(ints, 1_000_000_007, -10**12, mask, 18, 3),
        "dec30_5": _decimals(ints, 10**20, -10**23, mask, 30, 5),
        "date": pa.array((ints * 3 - 1000).astype(np.int32), pa.date32(), mask=mask),
        "ts_int96": pa.array(big * 1_000_000_123 + 1_600_000_000_000_000, pa.timestamp("us", "UTC"), mask=mask),
        "ts_ntz": pa.array(big * 60_000_017 - 10**12, pa.timestamp("us"), mask=mask),
        "string": pa.array(_listed([f"s{v:06d}-é" for v in ints], mask), pa.string()),
        "binary": pa.array(_listed([bytes([v % 256, 255 - v % 256]) * (1 + v % 3) for v in ints], mask),
                           pa.binary()),
    }


def all_types() -> pa.Table:
    """Every flat type with ~10% nulls and repeated values (dictionaries kept), 3 pages per chunk."""
    rng = _rng(1)
    n = 3000
    return pa.table(_typed(rng, rng.integers(0, 60, n), _nulls(rng, n)))


def all_types_distinct() -> pa.Table:
    """Every flat type, ascending and all distinct: each chunk's first page fails the keep-or-drop test."""
    rng = _rng(2)
    n = 2000
    return pa.table(_typed(rng, np.arange(n), _nulls(rng, n)))


def dictionary_overflow() -> pa.Table:
    """Repeats for 2500 rows, then all new values: the dictionary overflows in the chunk's third page."""
    rng = _rng(3)
    n = 6000
    i = np.arange(n)
    ints = np.where(i < 2500, i % 40, i)
    cols = _typed(rng, ints, _nulls(rng, n, 0.05))
    return pa.table({k: cols[k] for k in ("int32", "int64", "double", "dec30_5", "ts_int96", "string")})


def small_pages() -> pa.Table:
    """Random values cut into pages by a small parquet.page.size."""
    rng = _rng(4)
    n = 5000
    mask = _nulls(rng, n)
    return pa.table({
        "int32": pa.array(rng.integers(0, 500, n).astype(np.int32), mask=mask),
        "int64": pa.array(np.cumsum(rng.integers(0, 1000, n)), mask=mask),
        "double": pa.array(rng.random(n), mask=mask),
        "string": pa.array(_listed(["x" * int(k) for k in rng.integers(0, 40, n)], mask)),
    })


def booleans() -> pa.Table:
    """Booleans only, many rows, nulls and runs."""
    rng = _rng(5)
    n = 30_000
    runs = np.repeat(rng.random(n // 50) < 0.5, 50)
    return pa.table({
        "runs": pa.array(runs, mask=_nulls(rng, n, 0.02)),
        "random": pa.array(rng.random(n) < 0.5, mask=_nulls(rng, n, 0.3)),
    })


def row_groups() -> pa.Table:
    """Enough rows for several row groups under a small parquet.block.size."""
    rng = _rng(6)
    n = 40_000
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "small": pa.array(rng.integers(0, 100, n).astype(np.int32), mask=_nulls(rng, n)),
        "double": pa.array(rng.random(n)),
        "string": pa.array([f"name-{k}" for k in rng.integers(0, 5000, n)]),
    })


def empty() -> pa.Table:
    """No rows at all: parquet-java writes no row group."""
    return all_types().slice(0, 0)


def all_null() -> pa.Table:
    """Every flat type, every value null."""
    rng = _rng(7)
    n = 700
    return pa.table(_typed(rng, rng.integers(0, 60, n), np.ones(n, dtype=bool)))


def null_first_page() -> pa.Table:
    """A first page of nulls only (the dictionary is dropped for the chunk), then repeated values."""
    rng = _rng(8)
    n = 1000
    mask = np.arange(n) < 150
    cols = _typed(rng, rng.integers(0, 10, n), mask)
    return pa.table({k: cols[k] for k in ("int32", "double", "string", "dec30_5", "bool")})


def floats_nan() -> pa.Table:
    """NaN, infinities and both zeros, in dictionary and plain chunks, per page and whole-chunk."""
    rng = _rng(9)
    n = 1000
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.25])
    repeated = special[rng.integers(0, len(special), n)]
    repeated[:200] = rng.integers(0, 5, 200)
    distinct = rng.random(n)
    distinct[rng.integers(0, n, 10)] = np.nan
    zeros = np.where(rng.random(n) < 0.5, 0.0, -0.0)
    mask = _nulls(rng, n)
    return pa.table({
        "d_repeated": pa.array(repeated, mask=mask),
        "f_repeated": pa.array(repeated.astype(np.float32), mask=mask),
        "d_distinct": pa.array(distinct),
        "f_distinct": pa.array(distinct.astype(np.float32)),
        "d_all_nan": pa.array(np.full(n, np.nan), mask=mask),
        "f_zeros": pa.array(zeros.astype(np.float32)),
        "d_zeros": pa.array(zeros, mask=mask),
    })


def _long_strings(rng: np.random.Generator, n: int) -> list[str]:
    """Strings over 64 bytes whose 64th byte falls inside a multi-byte UTF-8 character."""
    heads = ["a" * 63 + "é", "b" * 62 + "€", "c" * 61 + "😀", "d" * 63 + "\U0010ffff", "\U0010ffff" * 20,
             "z" * 63 + "ÿ", "é" * 40]
    return [heads[k % len(heads)] + "tail" * int(t) for k, t in zip(rng.integers(0, 7, n), rng.integers(0, 9, n),
                                                                      strict=True)]


def long_strings() -> pa.Table:
    """Strings and binaries longer than 64 bytes, cut by the column-index truncator at awkward places."""
    rng = _rng(10)
    n = 600
    binaries = [b"\xff" * 70, b"\x00" + b"\xff" * 70, b"\x7f" * 65 + b"\x80", bytes(range(256))]
    return pa.table({
        "string": pa.array(_long_strings(rng, n), mask=_nulls(rng, n)),
        "distinct": pa.array([f"{i:05d}" + "é" * 40 + "x" * int(k) for i, k in enumerate(rng.integers(0, 30, n))]),
        "binary": pa.array([binaries[k] for k in rng.integers(0, 4, n)], pa.binary(), mask=_nulls(rng, n)),
    })


def huge_strings() -> pa.Table:
    """Values over 2 KiB: min + max >= 4096 bytes drops the chunk statistics."""
    rng = _rng(11)
    n = 40
    return pa.table({"s": pa.array([chr(97 + int(k)) * (2100 + 10 * i) for i, k in
                                    enumerate(rng.integers(0, 26, n))])})


def default_sized() -> pa.Table:
    """50,000 rows under default options: 100-byte strings cut by the 1 MiB page size, the rest by row count."""
    rng = _rng(13)
    n = 50_000
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "small": pa.array(rng.integers(0, 1000, n).astype(np.int32), mask=_nulls(rng, n)),
        "text": pa.array([f"{k:08d}" + "x" * 92 for k in rng.integers(0, 10**8, n)]),
    })


def distinct_ids() -> pa.Table:
    """Distinct int64 ids in a shuffled order, and their strings."""
    rng = _rng(14)
    ids = rng.permutation(12_900).astype(np.int64) * 7 - 30_000
    return pa.table({"id": pa.array(ids), "name": pa.array([f"id-{v}" for v in ids])})


def mixed_small() -> pa.Table:
    """A few columns of each kind for option variants (codecs, dictionary switches, checksums)."""
    rng = _rng(12)
    n = 1500
    cols = _typed(rng, rng.integers(0, 30, n), _nulls(rng, n))
    return pa.table({k: cols[k] for k in ("int32", "int64", "double", "string", "dec18_3", "ts_int96")})


def nested() -> pa.Table:
    """Structs, lists and maps with nulls at every level, empty containers and a list of lists of structs."""
    rng = _rng(21)
    n = 3000
    lengths = rng.integers(0, 5, n)

    def maybe(v: Any, p: float = 0.08) -> Any:
        return None if rng.random() < p else v

    point = pa.struct([("x", pa.int32()), ("tag", pa.string())])
    return pa.table({
        "id": pa.array(np.arange(n)),
        "ints": pa.array([maybe([maybe(int(v)) for v in rng.integers(0, 40, k)]) for k in lengths],
                         pa.list_(pa.int32())),
        "strict": pa.array([maybe([float(v) for v in rng.integers(0, 9, k)]) for k in lengths[::-1]],
                           pa.list_(pa.field("element", pa.float64(), nullable=False))),
        "attrs": pa.array([maybe([(f"k{int(v)}", maybe(f"v{int(v) % 13}")) for v in rng.choice(30, k, replace=False)])
                           for k in lengths], pa.map_(pa.string(), pa.string())),
        "pt": pa.array([maybe({"x": maybe(int(i % 97)), "tag": maybe(f"t{i % 31}")}) for i in range(n)], point),
        "deep": pa.array([maybe([maybe([maybe({"x": int(v), "tag": None}) for v in rng.integers(0, 5, k % 3)])
                                 for _ in range(k)]) for k in lengths], pa.list_(pa.list_(point))),
    })


CASES: dict[str, Case] = {
    "nested": Case(nested, {"parquet.page.row.count.limit": "400"}),
    "nested_small_pages": Case(nested, {"parquet.page.size": "1024", "parquet.block.size": "32768"}),
    "nested_legacy": Case(nested, {"spark.sql.parquet.writeLegacyFormat": "true",
                                   "parquet.page.row.count.limit": "700"}),
    "nested_bloom": Case(nested, {"parquet.bloom.filter.enabled": "true", "parquet.page.row.count.limit": "900"},
                         chunk_ndv=True),
    "all_types": Case(all_types, {"parquet.page.row.count.limit": "1000"}),
    "all_types_distinct": Case(all_types_distinct, {"parquet.page.row.count.limit": "500"}),
    "dictionary_overflow": Case(dictionary_overflow, {"parquet.page.row.count.limit": "1000",
                                                      "parquet.dictionary.page.size": "2048"}),
    "small_page_size": Case(small_pages, {"parquet.page.size": "2048"}),
    "page_row_count_limit": Case(small_pages, {"parquet.page.row.count.limit": "300", "parquet.page.size": "8192"}),
    "booleans": Case(booleans, {"parquet.page.row.count.limit": "4000"}),
    "page_size_check_bounds": Case(small_pages, {"parquet.page.size": "4096", "parquet.page.size.row.check.min": "10",
                                                 "parquet.page.size.row.check.max": "50"}),
    "default_options": Case(default_sized, {}),
    "row_groups_uncompressed": Case(row_groups, {"parquet.block.size": "65536",
                                                 "parquet.compression": "UNCOMPRESSED"}),
    "row_groups_snappy": Case(row_groups, {"parquet.block.size": "65536"}),
    "row_group_row_count_limit": Case(mixed_small, {"parquet.block.row.count.limit": "400"}),
    "empty": Case(empty, {}),
    "all_null": Case(all_null, {"parquet.page.row.count.limit": "300"}),
    "null_first_page": Case(null_first_page, {"parquet.page.row.count.limit": "150"}),
    "floats_nan": Case(floats_nan, {"parquet.page.row.count.limit": "200"}),
    "long_strings": Case(long_strings, {"parquet.page.row.count.limit": "100"}),
    "long_strings_truncated": Case(long_strings, {"parquet.page.row.count.limit": "100",
                                                  "parquet.statistics.truncate.length": "40",
                                                  "parquet.columnindex.truncate.length": "16"}),
    "huge_strings": Case(huge_strings, {"parquet.page.row.count.limit": "10"}),
    "dictionary_switches": Case(mixed_small, {"parquet.enable.dictionary": "false",
                                              "parquet.enable.dictionary#string": "true"}),
    "zstd_no_checksum": Case(mixed_small, {"parquet.compression": "ZSTD",
                                           "parquet.page.write-checksum.enabled": "false"}),
    "gzip": Case(mixed_small, {"parquet.compression": "GZIP"}),
    "timestamp_micros": Case(mixed_small, {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}),
    "timestamp_millis": Case(mixed_small, {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS"}),
    "legacy_format": Case(all_types, {"spark.sql.parquet.writeLegacyFormat": "true",
                                      "parquet.page.row.count.limit": "1000"}),
    # Bloom filters: header and bitset bytes of every chunk's filter, and which chunks have one.
    "bloom_dictionary_only": Case(all_types, {"parquet.page.row.count.limit": "1000",
                                              "parquet.bloom.filter.enabled": "true",
                                              "parquet.bloom.filter.max.bytes": "8192"}, chunk_ndv=True),
    "bloom_default_size": Case(all_types_distinct, {"parquet.page.row.count.limit": "500",
                                                    "parquet.bloom.filter.enabled": "true"}, chunk_ndv=True),
    "bloom_ndv_fpp": Case(all_types_distinct, {
        "parquet.page.row.count.limit": "500", "parquet.bloom.filter.max.bytes": "65536",
        "parquet.bloom.filter.expected.ndv#int8": "2000", "parquet.bloom.filter.expected.ndv#int16": "100",
        "parquet.bloom.filter.fpp#int16": "0.2", "parquet.bloom.filter.expected.ndv#int32": "1",
        "parquet.bloom.filter.expected.ndv#int64": "2000", "parquet.bloom.filter.fpp#int64": "0.001",
        "parquet.bloom.filter.expected.ndv#float": "777", "parquet.bloom.filter.fpp#float": "0.5",
        "parquet.bloom.filter.expected.ndv#double": "5000", "parquet.bloom.filter.fpp#double": "0.0001",
        "parquet.bloom.filter.expected.ndv#dec7_2": "1500", "parquet.bloom.filter.fpp#dec7_2": "0.05",
        "parquet.bloom.filter.expected.ndv#dec18_3": "3000",
        "parquet.bloom.filter.expected.ndv#dec30_5": "2500", "parquet.bloom.filter.fpp#dec30_5": "0.3",
        "parquet.bloom.filter.expected.ndv#ts_int96": "300",
        "parquet.bloom.filter.expected.ndv#ts_ntz": "1000000000000", "parquet.bloom.filter.fpp#ts_ntz": "0.1",
        "parquet.bloom.filter.expected.ndv#string": "12345", "parquet.bloom.filter.fpp#string": "0.02",
        "parquet.bloom.filter.enabled#binary": "true", "parquet.bloom.filter.fpp#binary": "0.9",
        "parquet.bloom.filter.enabled#bool": "true"}, chunk_ndv=True),
    "bloom_no_dictionary": Case(all_types, {"parquet.page.row.count.limit": "1000",
                                            "parquet.enable.dictionary": "false",
                                            "parquet.bloom.filter.enabled": "true",
                                            "parquet.bloom.filter.max.bytes": "16384"}, chunk_ndv=True),
    "bloom_max_bytes_odd": Case(small_pages, {"parquet.page.size": "2048", "parquet.bloom.filter.enabled": "true",
                                              "parquet.bloom.filter.max.bytes": "1000",
                                              "parquet.bloom.filter.expected.ndv#int64": "5000"}, chunk_ndv=True),
    "bloom_per_column": Case(dictionary_overflow, {"parquet.page.row.count.limit": "1000",
                                                   "parquet.dictionary.page.size": "2048",
                                                   "parquet.bloom.filter.enabled": "true",
                                                   "parquet.bloom.filter.enabled#int64": "false",
                                                   "parquet.bloom.filter.max.bytes": "32768"}, chunk_ndv=True),
    "bloom_adaptive": Case(distinct_ids, {"parquet.block.row.count.limit": "1800",
                                          "parquet.bloom.filter.enabled": "true",
                                          "parquet.bloom.filter.adaptive.enabled": "true",
                                          "parquet.bloom.filter.max.bytes": "16384",
                                          "parquet.bloom.filter.fpp#name": "0.05"}),
    "bloom_adaptive_candidates": Case(default_sized, {"parquet.bloom.filter.enabled#id": "true",
                                                      "parquet.bloom.filter.enabled#text": "true",
                                                      "parquet.enable.dictionary#small": "false",
                                                      "parquet.bloom.filter.adaptive.enabled": "true",
                                                      "parquet.bloom.filter.candidates.number#id": "3",
                                                      "parquet.bloom.filter.expected.ndv#small": "900"}),
    # fpp 0.9 makes the largest candidate dense, so its distinct count (a findHash miss count) falls short
    # of the true count and a candidate smaller than the true NDV survives.
    "bloom_adaptive_undercount": Case(distinct_ids, {"parquet.block.row.count.limit": "4300",
                                                     "parquet.bloom.filter.enabled#id": "true",
                                                     "parquet.bloom.filter.adaptive.enabled": "true",
                                                     "parquet.bloom.filter.fpp#id": "0.9",
                                                     "parquet.bloom.filter.max.bytes": "2048"}),
    "bloom_floats": Case(floats_nan, {"parquet.page.row.count.limit": "200", "parquet.bloom.filter.enabled": "true",
                                      "parquet.bloom.filter.max.bytes": "2048"}, chunk_ndv=True),
    "bloom_booleans_nulls": Case(all_null, {"parquet.page.row.count.limit": "300",
                                            "parquet.bloom.filter.enabled": "true",
                                            "parquet.bloom.filter.max.bytes": "64"}, chunk_ndv=True),
}

DOCUMENTED_CASES: dict[str, Case] = {
    "booleans_small_pages": Case(booleans, {"parquet.page.size": "1024"}),
}

ASPECTS: dict[str, tuple[str, ...]] = {
    "encodings": ("type", "codec", "encodings", "encoding_stats"),
    "dictionary": ("has_dictionary_page", "dictionary_page_offset_set", "dictionary_num_values", "dictionary_page"),
    "pages": ("data_pages",),
    "statistics": ("statistics", "num_values"),
    "column_index": ("column_index",),
    "offset_index": ("offset_index",),
    "size_statistics_byte_array": ("size_statistics",),
    "size_statistics_other_types": ("size_statistics",),
    "bloom_filter": ("bloom_filter",),
}

ASPECT_CHUNKS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "size_statistics_byte_array": lambda chunk: chunk["type"] == "BYTE_ARRAY",
    "size_statistics_other_types": lambda chunk: chunk["type"] != "BYTE_ARRAY",
}

KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


def _documented(chunk: dict[str, Any]) -> dict[str, Any]:
    """Apply the differences docs/compatibility.md accepts; applied to both sides alike.

    BOOLEAN: gpuwrite writes PLAIN values where parquet-java writes RLE, so RLE is read as PLAIN in the
    encodings, encoding stats and page encodings, and uncompressed page sizes (value bytes) are not compared.
    """
    if chunk["type"] != "BOOLEAN":
        return chunk
    out = copy.deepcopy(chunk)
    out["encodings"] = frozenset("PLAIN" if e == "RLE" else e for e in out["encodings"])
    out["encoding_stats"] = [(t, "PLAIN" if e == "RLE" else e, c) for t, e, c in out["encoding_stats"]]
    for page in out["data_pages"]:
        page["encoding"] = "PLAIN" if page["encoding"] == "RLE" else page["encoding"]
        page.pop("uncompressed_page_size")
    return out


def _differences(ours: Layout, theirs: Layout, fields: tuple[str, ...],
                 applies: Callable[[dict[str, Any]], bool] = lambda chunk: True) -> list[str]:
    """Every field that differs, per row group and column chunk (those `applies` selects), as readable lines."""
    if [rg["num_rows"] for rg in ours] != [rg["num_rows"] for rg in theirs]:
        return [f"row groups (num_rows): ours={[rg['num_rows'] for rg in ours]} "
                f"parquet-java={[rg['num_rows'] for rg in theirs]}"]
    lines = []
    for g, (rg_ours, rg_theirs) in enumerate(zip(ours, theirs, strict=True)):
        for a, b in zip(rg_ours["columns"], rg_theirs["columns"], strict=True):
            if not applies(b):
                continue
            a, b = _documented(a), _documented(b)
            for name in fields:
                if a[name] != b[name]:
                    lines.append(f"row group {g} column {a['path']} {name}:\n  ours         = {a[name]!r}\n"
                                 f"  parquet-java = {b[name]!r}")
    return lines


def _parquet_keys(options: dict[str, str]) -> dict[str, str]:
    """The options RefWriter takes: Spark's keys only shape our schema, and RefWriter copies that schema."""
    return {k: v for k, v in options.items() if k.startswith("parquet.")}


def _chunk_ndv_keys(path: Path, options: dict[str, str]) -> dict[str, str]:
    """`parquet.bloom.filter.expected.ndv#<column>` = the chunk's non-null values, for each column of the
    file's single row group that has a filter and no NDV in `options` (the counts are the statistics, which
    the statistics aspect checks against parquet-java's own)."""
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 1, "chunk_ndv cases must have one row group"
    rg = meta.row_group(0)
    keys = {}
    for j in range(rg.num_columns):
        column = rg.column(j)
        key = f"parquet.bloom.filter.expected.ndv#{column.path_in_schema}"
        if column.bloom_filter_offset is not None and key not in options:
            # parquet-java refuses an NDV of 0; 1 gives the same 32-byte minimum filter
            keys[key] = str(max(1, column.num_values - column.statistics.null_count))
    return keys


@pytest.fixture(scope="session")
def layouts(ref_writer_classes: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> Callable[[str], tuple[Path, Path]]:
    """case name -> (our file, parquet-java's re-write of it), each written once per session."""
    done: dict[str, tuple[Path, Path]] = {}

    def get(name: str) -> tuple[Path, Path]:
        if name not in done:
            case = CASES.get(name) or DOCUMENTED_CASES[name]
            folder = tmp_path_factory.mktemp(f"parity-{name}")
            ours = folder / "gpuwrite.parquet"
            gpuwrite.write_table(case.table(), ours, options=case.options)
            keys = {**_parquet_keys(case.options), **(_chunk_ndv_keys(ours, case.options) if case.chunk_ndv else {})}
            theirs = write_with_parquet_java(ours, folder / "parquet-java.parquet", keys, ref_writer_classes)
            done[name] = (ours, theirs)
        return done[name]

    return get


def _values(path: Path) -> dict[str, list[Any]]:
    """Every column's values as read by pyarrow, NaN made comparable."""
    table = pq.read_table(path)
    return {name: ["NaN" if isinstance(v, float) and v != v else v for v in table.column(name).to_pylist()]
            for name in table.column_names}


def _params() -> Iterator[Any]:
    """(case, aspect) pairs, the known differences marked strict xfail."""
    for name in CASES:
        for aspect in ("row_groups", "file", "values", *ASPECTS):
            reason = KNOWN_DIFFERENCES.get((name, aspect))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, aspect, id=f"{name}-{aspect}", marks=marks)


@pytest.mark.parametrize(("case", "aspect"), list(_params()))
def test_parity(layouts: Callable[[str], tuple[Path, Path]], case: str, aspect: str) -> None:
    """One aspect of gpuwrite's file equals parquet-java's re-write of the same records."""
    ours_path, theirs_path = layouts(case)
    if aspect == "file":
        assert file_layout(ours_path) == file_layout(theirs_path)
        return
    if aspect == "values":
        assert _values(ours_path) == _values(theirs_path)
        return
    ours, theirs = chunk_layout(ours_path), chunk_layout(theirs_path)
    if aspect == "row_groups":
        assert [rg["num_rows"] for rg in ours] == [rg["num_rows"] for rg in theirs]
        assert [[c["path"] for c in rg["columns"]] for rg in ours] == [[c["path"] for c in rg["columns"]]
                                                                      for rg in theirs]
        return
    lines = _differences(ours, theirs, ASPECTS[aspect], ASPECT_CHUNKS.get(aspect, lambda chunk: True))
    assert not lines, f"{len(lines)} difference(s):\n" + "\n".join(lines[:20])


def test_boolean_page_cutting_documented(layouts: Callable[[str], tuple[Path, Path]]) -> None:
    """Documented: boolean pages are cut counting PLAIN bytes (n/8), parquet-java counts emitted RLE bytes.

    Under a small parquet.page.size the page boundaries of BOOLEAN chunks therefore differ; the rows, nulls,
    values (statistics), encodings and row groups must still agree.
    """
    ours, theirs = (chunk_layout(p) for p in layouts("booleans_small_pages"))
    assert [rg["num_rows"] for rg in ours] == [rg["num_rows"] for rg in theirs]
    for rg_ours, rg_theirs in zip(ours, theirs, strict=True):
        for a, b in zip(rg_ours["columns"], rg_theirs["columns"], strict=True):
            a, b = _documented(a), _documented(b)
            for name in ("type", "codec", "encodings", "has_dictionary_page", "statistics", "num_values"):
                assert a[name] == b[name], (a["path"], name)
            for field in ("num_values", "num_nulls", "num_rows"):
                assert sum(p[field] for p in a["data_pages"]) == sum(p[field] for p in b["data_pages"])
            assert {p["encoding"] for p in a["data_pages"]} == {p["encoding"] for p in b["data_pages"]} == {"PLAIN"}
            assert len(a["data_pages"]) > 1 and len(b["data_pages"]) > 1


def test_cases_have_rows_where_expected(layouts: Callable[[str], tuple[Path, Path]]) -> None:
    """The harness itself: the cases produce the shapes they are about (several groups, pages, no group)."""
    assert chunk_layout(layouts("empty")[1]) == []
    assert len(chunk_layout(layouts("row_groups_uncompressed")[1])) > 2
    assert len(chunk_layout(layouts("row_group_row_count_limit")[1])) == 4
    overflow = {c["path"]: c for c in chunk_layout(layouts("dictionary_overflow")[1])[0]["columns"]}
    for column in ("int32", "int64", "string"):
        encodings = [p["encoding"] for p in overflow[column]["data_pages"]]
        assert encodings[0] == "RLE_DICTIONARY" and encodings[-1] != "RLE_DICTIONARY", column
        assert overflow[column]["has_dictionary_page"], column
    distinct = {c["path"]: c for c in chunk_layout(layouts("all_types_distinct")[1])[0]["columns"]}
    for column in ("int32", "int64", "float", "double", "date", "ts_ntz", "string", "dec18_3"):
        assert not distinct[column]["has_dictionary_page"], column


def _filters(layout: Layout) -> list[dict[str, Any]]:
    """Per row group: column path -> bloom filter layout (None when the chunk has none)."""
    return [{c["path"]: c["bloom_filter"] for c in rg["columns"]} for rg in layout]


def test_bloom_cases_have_the_shapes_they_test(layouts: Callable[[str], tuple[Path, Path]]) -> None:
    """The bloom cases exercise what they are named for, on parquet-java's side: no filter for chunks whose
    pages are all dictionary-encoded, empty filters for booleans, sizes from NDV/FPP or, with none, from the
    chunk's values (given to parquet-java as its NDV: `Case.chunk_ndv`), odd max.bytes, and adaptive candidates
    of several sizes."""
    (dict_only,) = _filters(chunk_layout(layouts("bloom_dictionary_only")[1]))
    assert dict_only["int32"] is None and dict_only["string"] is None
    assert dict_only["bool"] is not None and dict_only["bool"]["bitset_set_bits"] == 0
    assert dict_only["bool"]["bitset_bytes"] == 4096  # ~2700 values, under the 8192 maximum
    (default,) = _filters(chunk_layout(layouts("bloom_default_size")[1]))
    # ~1800 values per chunk: 4 KiB each, where parquet-java without an NDV allocates 1 MiB (the maximum)
    assert {f["bitset_bytes"] for f in default.values() if f is not None} == {4096}
    assert sum(f is not None for f in default.values()) >= 12
    (sized,) = _filters(chunk_layout(layouts("bloom_ndv_fpp")[1]))
    assert sized["date"] is None
    assert sized["int32"]["bitset_bytes"] == 32 and sized["ts_ntz"]["bitset_bytes"] == 65536
    assert sized["int16"]["bitset_bytes"] == 128  # (469 + 255) & ~256 = 724 bits -> 90 bytes -> 128
    assert len({f["bitset_bytes"] for f in sized.values() if f is not None}) >= 5
    (odd,) = _filters(chunk_layout(layouts("bloom_max_bytes_odd")[1]))
    assert odd["double"]["bitset_bytes"] == 1000 and odd["int64"]["bitset_bytes"] == 1000
    (no_dictionary,) = _filters(chunk_layout(layouts("bloom_no_dictionary")[1]))
    assert all(f is not None and f["bitset_bytes"] == 4096 for f in no_dictionary.values())  # under 16384
    (all_null,) = _filters(chunk_layout(layouts("bloom_booleans_nulls")[1]))
    assert {f["bitset_bytes"] for f in all_null.values()} == {32}  # no values: the minimum, not max.bytes 64
    per_column = _filters(chunk_layout(layouts("bloom_per_column")[1]))[0]
    assert per_column["int64"] is None and per_column["string"] is not None
    assert per_column["dec30_5"] is not None and per_column["ts_int96"] is not None  # FLBA, INT96
    adaptive = _filters(chunk_layout(layouts("bloom_adaptive")[1]))
    assert len(adaptive) > 2
    assert len({f["bitset_bytes"] for rg in adaptive for f in rg.values() if f is not None}) >= 2
    (candidates,) = _filters(chunk_layout(layouts("bloom_adaptive_candidates")[1]))
    assert candidates["id"]["bitset_bytes"] == 262144 and candidates["small"] is not None
    undercount = _filters(chunk_layout(layouts("bloom_adaptive_undercount")[1]))
    assert [rg["id"]["bitset_bytes"] for rg in undercount] == [1024, 1024, 1024]  # 4300 ids > capacity 4000
