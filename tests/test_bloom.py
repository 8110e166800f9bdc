"""Bloom filters: sizing against parquet-java's own classes, options, file placement, an independent decoder,
and Spark skipping row groups with them."""

from __future__ import annotations

import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from gpuwrite.kernels.hashing.bloom import xxhash64

import gpuwrite
from gpuwrite.encode.bloom import (
    BloomBuilder,
    adaptive_candidates,
    expected_ndv,
    filter_bytes,
    filter_size,
    optimal_num_of_bits,
)
from gpuwrite.errors import BloomFilterSizeWarning, OptionError
from gpuwrite.format.footer_reader import named, read_footer
from gpuwrite.format.thrift import read_struct
from gpuwrite.options.model import BloomSpec, WriteOptions

SALTS = (0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31)


# -- an independent reader ----------------------------------------------------------------------------------


def _xxh(data: bytes) -> int:
    """XXH64, seed 0 (the kernel, itself checked against published vectors and parquet-java)."""
    return int(xxhash64(np.frombuffer(data, dtype=np.uint8), 0, len(data), np.uint64(0)))


def contains(bitset: bytes, value: bytes) -> bool:
    """Split-block lookup written from the Parquet spec: the hash of the value's bytes has all 8 bits set."""
    h = _xxh(value)
    block = ((h >> 32) * (len(bitset) // 32)) >> 32
    key = h & 0xFFFFFFFF
    for i, salt in enumerate(SALTS):
        word = int.from_bytes(bitset[block * 32 + 4 * i:block * 32 + 4 * i + 4], "little")
        if not word >> (((key * salt) & 0xFFFFFFFF) >> 27) & 1:
            return False
    return True


def read_filters(path: Path) -> list[dict[str, tuple[dict[str, Any], bytes, int, int] | None]]:
    """Per row group: column path -> (header, bitset, offset, length) or None, decoded from the file."""
    data = path.read_bytes()
    footer = read_footer(data)
    out = []
    for rg in footer[4]:
        cols: dict[str, tuple[dict[str, Any], bytes, int, int] | None] = {}
        for cc in rg[1]:
            md = named("ColumnMetaData", cc[3])
            column = ".".join(p.decode() for p in md["path_in_schema"])
            if "bloom_filter_offset" not in md:
                assert "bloom_filter_length" not in md
                cols[column] = None
                continue
            start = md["bloom_filter_offset"]
            raw, end = read_struct(data, start)
            header = named("BloomFilterHeader", raw, enum_names=True)
            bitset = data[end:end + header["numBytes"]]
            assert md["bloom_filter_length"] == end - start + len(bitset)
            cols[column] = (header, bitset, start, md["bloom_filter_length"])
        out.append(cols)
    return out


# -- parquet-java sizing ------------------------------------------------------------------------------------




FPPS = (1e-9, 0.0001, 0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9, 0.999)
NDVS = (1, 2, 10, 26, 27, 100, 500, 777, 1000, 5000, 12345, 100_000, 1_000_000, 10**8, 10**9, 2**31, 10**12,
        2**60, 2**61 + 3, 2**63 - 1)


def test_optimal_num_of_bits_matches(probe) -> None:
    """optimalNumOfBits over a grid of NDVs (up to Long.MAX_VALUE, where -8n wraps) and FPPs."""
    grid = [(n, p) for n in NDVS for p in FPPS]
    answers = probe([f"bits {n} {p!r}" for n, p in grid])
    assert [optimal_num_of_bits(n, p) for n, p in grid] == [int(a) for a in answers]


def test_ndv_sized_filters_match(probe) -> None:
    """Bitset size for an expected NDV under several max.bytes (bounds apply only inside (32, 128 MiB))."""
    grid = [(n, p, m) for n in (1, 100, 777, 5000, 10**6, 10**12) for p in (0.001, 0.01, 0.2, 0.9)
            for m in (32, 33, 1000, 4096, 1 << 20, 1 << 27, 2**31 - 1)]
    answers = probe([f"ndvsize {n} {p!r} {m}" for n, p, m in grid])
    ours = [filter_size(BloomSpec(ndv=n, fpp=p, max_bytes=m, adaptive=False, candidates=5), 10)
            for n, p, m in grid]
    assert ours == [int(a) for a in answers]


def test_filters_without_ndv_are_sized_for_their_chunk(probe) -> None:
    """With no NDV a filter is sized for the chunk's non-null values as its NDV: the filter parquet-java builds
    when given that count (parquet-java itself would allocate max.bytes, whatever the chunk: docs/compatibility.md).
    0 values give the 32-byte minimum; max.bytes still caps it."""
    grid = [(n, p, m) for n in (1, 100, 2500, 10**6) for p in (0.001, 0.01, 0.5) for m in (64, 1000, 1 << 20)]
    answers = probe([f"ndvsize {n} {p!r} {m}" for n, p, m in grid])
    ours = [filter_size(BloomSpec(ndv=None, fpp=p, max_bytes=m, adaptive=False, candidates=5), n) for n, p, m in grid]
    assert ours == [int(a) for a in answers]
    default = BloomSpec(ndv=None, fpp=0.01, max_bytes=1 << 20, adaptive=False, candidates=5)
    assert [filter_size(default, n) for n in (0, 1, 26, 27, 2500, 10**5, 10**6)] == [
        32, 32, 32, 64, 4096, 131072, 1 << 20]


@pytest.mark.parametrize(("max_bytes", "candidates", "fpp", "count"), [
    (1 << 20, 5, 0.01, 3000),
    (16384, 5, 0.01, 3100),  # more than the 4096-byte candidate's 3000: it is dropped
    (2048, 5, 0.9, 4300),  # dense largest candidate undercounts: the 1024-byte one (capacity 4000) survives
    (2048, 5, 0.5, 2000),
    (64, 5, 0.01, 50),  # no candidate fits: one 32-byte filter of capacity 16
    (1000, 3, 0.05, 800),  # max.bytes rounded down to a power of two
    (32768, 1, 0.01, 100),
    (16384, 30, 0.3, 10),
])
def test_adaptive_matches(probe, max_bytes: int, candidates: int, fpp: float, count: int) -> None:
    """AdaptiveBlockSplitBloomFilter: the written bitset (size and bits) after the same hashes, in order."""
    rng = np.random.default_rng(max_bytes + count)
    distinct = rng.integers(0, 2**63, count, dtype=np.int64).view(np.uint64)
    hashes = np.concatenate([distinct, distinct[: count // 3]])  # repeats do not count as distinct
    (answer,) = probe([f"adaptive {max_bytes} {candidates} {fpp!r} " + ",".join(f"{int(h):x}" for h in hashes)])
    builder = BloomBuilder(None, BloomSpec(ndv=None, fpp=fpp, max_bytes=max_bytes, adaptive=True,
                                           candidates=candidates), len(hashes))
    for chunk in np.array_split(hashes, 7):  # pages
        builder.add_hashes(chunk)
    assert builder.bitset().hex() == answer


def test_sizing_quirks() -> None:
    """Sizing rules spelled out: bit 8 cleared rather than rounding up, 256-bit floor, power-of-two rounding,
    a maximum that is neither, and the adaptive NDV scan equal to parquet-java's naive loop."""
    assert optimal_num_of_bits(100, 0.2) == 724  # m = 469.9: (469 + 255) & ~256 keeps 724 (bit 8 clear)
    assert optimal_num_of_bits(1600, 0.01) == 15489  # m = 15490.4: (15490 + 255) & ~256 = 15745 - 256
    assert optimal_num_of_bits(1000, 0.01) == 9936  # (9681 + 255) = 9936, bit 8 clear
    assert optimal_num_of_bits(1, 0.01) == 256
    assert filter_bytes(1000, 32, 1000) == 1000 and filter_bytes(5000, 32, 1 << 20) == 8192
    assert filter_bytes(10, 32, 32) == 32 and filter_bytes(100_000, 32, 32) == 131072  # max 32 is no bound
    assert adaptive_candidates(1 << 20, 5, 0.01) == [(1 << 20, 866000), (1 << 19, 433000), (1 << 18, 216500),
                                                    (1 << 17, 108000), (1 << 16, 54000)]
    assert adaptive_candidates(64, 5, 0.01) == [(32, 16)]

    def naive(num_bytes: int, fpp: float) -> int:
        ndv = optimal = 0
        while optimal < num_bytes:
            ndv += 500
            optimal = optimal_num_of_bits(ndv, fpp) // 8
        return max(ndv - 500, 0)

    for num_bytes in (32, 64, 256, 1024, 4096, 65536, 1 << 20):
        for fpp in (0.001, 0.01, 0.1, 0.5, 0.9):
            assert expected_ndv(num_bytes, fpp) == naive(num_bytes, fpp), (num_bytes, fpp)


# -- options ------------------------------------------------------------------------------------------------


def test_options_from_keys() -> None:
    """Global and #column keys as ParquetOutputFormat reads them; NDV enables its column."""
    o = WriteOptions.from_conf({
        "parquet.bloom.filter.enabled#a": "true", "parquet.bloom.filter.expected.ndv#b.c": "1000",
        "parquet.bloom.filter.fpp#a": "0.05", "parquet.bloom.filter.max.bytes": "4096",
        "parquet.bloom.filter.adaptive.enabled": "TRUE", "parquet.bloom.filter.candidates.number#a": "3"})
    assert o.bloom_filter("a") == BloomSpec(ndv=None, fpp=0.05, max_bytes=4096, adaptive=True, candidates=3)
    assert o.bloom_filter("b.c") == BloomSpec(ndv=1000, fpp=0.01, max_bytes=4096, adaptive=True, candidates=3)
    assert o.bloom_filter("d") is None
    g = WriteOptions.from_conf({"parquet.bloom.filter.enabled": "true", "parquet.bloom.filter.enabled#x": "false"})
    assert g.bloom_filter("y") is not None and g.bloom_filter("x") is None
    assert WriteOptions().bloom_filter("a") is None


def test_options_keywords() -> None:
    """Python keywords: a list of columns, or mappings; keywords win over keys."""
    o = WriteOptions.from_conf({"parquet.bloom.filter.enabled#a": "true"}, bloom_filter_columns=["b"],
                               bloom_filter_fpp={"b": 0.1}, bloom_filter_ndv={"c": 10})
    assert o.bloom_filter("a") is None
    assert o.bloom_filter("b") == BloomSpec(ndv=None, fpp=0.1, max_bytes=1 << 20, adaptive=False, candidates=5)
    assert o.bloom_filter("c") is not None and o.bloom_filter("c").ndv == 10
    assert WriteOptions(bloom_filter_enabled=True).bloom_filter("z") is not None


@pytest.mark.parametrize(("conf", "needle"), [
    ({"parquet.bloom.filter.fpp#a": "2"}, r"parquet\.bloom\.filter\.fpp#a"),
    ({"parquet.bloom.filter.fpp#a": "0"}, "between 0 and 1"),
    ({"parquet.bloom.filter.fpp#a": "1.0"}, "between 0 and 1"),
    ({"parquet.bloom.filter.fpp#a": "nan"}, "between 0 and 1"),
    ({"parquet.bloom.filter.fpp#a": "low"}, "must be a number"),
    ({"parquet.bloom.filter.expected.ndv#a": "-5"}, r"expected\.ndv#a"),
    ({"parquet.bloom.filter.expected.ndv#a": "0"}, "positive"),
    ({"parquet.bloom.filter.expected.ndv#a": "many"}, "integer"),
    ({"parquet.bloom.filter.max.bytes": "16"}, r"max\.bytes"),
    ({"parquet.bloom.filter.max.bytes": "3000000000"}, r"max\.bytes"),
    ({"parquet.bloom.filter.enabled": "yes"}, r"parquet\.bloom\.filter\.enabled"),
    ({"parquet.bloom.filter.candidates.number#a": "0"}, "candidates"),
    ({"parquet.bloom.filter.candidates.number#a": "3", "parquet.bloom.filter.candidates.number#b": "4"},
     "must agree"),
    ({"parquet.bloom.filter.fpp": "0.1"}, "per column only"),
    ({"parquet.bloom.filter.expected.ndv": "10"}, "per column only"),
    ({"parquet.bloom.filter.max.bytes#a": "4096"}, "applies to all columns"),
    ({"parquet.bloom.filter.adaptive.enabled#a": "true"}, "applies to all columns"),
    ({"parquet.bloom.filter.enabled#": "true"}, "no column"),
    ({"parquet.bloom.filter.size": "1"}, r"parquet\.bloom\.filter\.size"),
    ({"parquet.bloom.filter.expected.ndv#a": "10", "parquet.bloom.filter.enabled#a": "false"}, "contradict"),
])
def test_bad_keys(conf: dict[str, str], needle: str) -> None:
    """Bad bloom keys and values raise OptionError naming the key or the problem."""
    with pytest.raises(OptionError, match=needle):
        WriteOptions.from_conf(conf)


@pytest.mark.parametrize("keywords", [
    {"bloom_filter_fpp": {"a": 1.5}}, {"bloom_filter_ndv": {"a": 0}}, {"bloom_filter_columns": {"a": "yes"}},
    {"bloom_filter_max_bytes": 8}, {"bloom_filter_candidates": 0}, {"bloom_filter_columns": 3},
    {"bloom_filter_ndv": {"a": 5}, "bloom_filter_columns": {"a": False}},
])
def test_bad_keywords(keywords: dict[str, Any]) -> None:
    """Bad keyword values raise OptionError naming the option."""
    with pytest.raises(OptionError, match="bloom"):
        WriteOptions.from_conf(None, **keywords)


# -- files --------------------------------------------------------------------------------------------------


def _table(n: int = 6000) -> pa.Table:
    """Distinct values of every filterable kind (dictionaries dropped), a repeated column and booleans."""
    i = np.arange(n)
    return pa.table({
        "i32": pa.array((i * 7 - 20_000).astype(np.int32)),
        "i64": pa.array(i.astype(np.int64) * 1_000_003 - 2**40, mask=i % 11 == 0),
        "f32": pa.array((i / 3 - 7).astype(np.float32)),
        "f64": pa.array(i / 7 - 100.5),
        "s": pa.array([f"key-{k:06d}" for k in i]),
        "dec": pa.array([Decimal(int(k) * 10**15 + 1).scaleb(-5) for k in i], pa.decimal128(30, 5)),
        "ts": pa.array(i.astype(np.int64) * 1_000_000_123 + 1_600_000_000_000_000, pa.timestamp("us", "UTC")),
        "rep": pa.array((i % 5).astype(np.int32)),
        "b": pa.array(i % 3 == 0),
    })


ENCODERS = {
    "i32": lambda v: struct.pack("<i", v),
    "i64": lambda v: struct.pack("<q", v),
    "f32": lambda v: struct.pack("<f", v),
    "f64": lambda v: struct.pack("<d", v),
    "s": lambda v: v.encode(),
    "dec": lambda v: int(v.scaleb(5)).to_bytes(13, "big", signed=True),
}


def test_filters_hold_every_value(tmp_path: Path) -> None:
    """Every non-null value is found in its chunk's filter, most absent values are not; the all-dictionary
    chunk has no filter and the boolean chunk an empty one; filters sit after the offset indexes, in row group
    and column order, right before the footer, and the result summary points at them."""
    table = _table()
    path = tmp_path / "b.parquet"
    result = gpuwrite.write_table(table, path, options={"parquet.bloom.filter.enabled": "true",
                                                        "parquet.bloom.filter.max.bytes": "8192",
                                                        "parquet.block.row.count.limit": "2500",
                                                        "parquet.enable.dictionary#dec": "false",
                                                        "parquet.enable.dictionary#ts": "false"})
    groups = read_filters(path)
    assert len(groups) == 3
    start = 0
    for g, cols in enumerate(groups):
        rows = table.slice(start, 2500)
        start += 2500
        assert cols["rep"] is None
        header, bitset, _, _ = cols["b"]
        size = (4096, 4096, 2048)[g]  # sized for the chunk's 2500 / 1000 values (no NDV), under the 8192 maximum
        assert bitset == bytes(size)
        assert header == {"numBytes": size, "algorithm": {"BLOCK": {}}, "hash": {"XXHASH": {}},
                          "compression": {"UNCOMPRESSED": {}}}
        for name, enc in ENCODERS.items():
            _, bitset, _, _ = cols[name]
            values = [v for v in rows.column(name).to_pylist() if v is not None]
            assert all(contains(bitset, enc(v)) for v in values), (g, name)
        _, bitset, _, _ = cols["i32"]
        absent = [contains(bitset, struct.pack("<i", v)) for v in range(10**6, 10**6 + 2000)]
        assert len(bitset) == len(cols["i64"][1]) == size  # 2500 values (i64: 2272 non-null), then 1000
        assert sum(absent) < 100  # sized for 2500 values at the default fpp 0.01: ~1% false positives
        # INT96: 8-byte nanos of day then 4-byte Julian day
        _, bitset, _, _ = cols["ts"]
        micros = rows.column("ts").cast(pa.int64()).to_pylist()
        for m in micros[:50]:
            days, rem = divmod(m + 2_440_588 * 86_400_000_000, 86_400_000_000)
            assert contains(bitset, struct.pack("<qi", rem * 1000, days))
    # placement: after the last offset index, contiguous, then the footer
    footer = read_footer(path)
    ends = [cc[4] + cc[5] for rg in footer[4] for cc in rg[1]]
    spans = sorted((off, off + length) for cols in groups for v in cols.values() if v is not None
                   for _, _, off, length in [v])
    data = path.read_bytes()
    footer_len = struct.unpack("<I", data[-8:-4])[0]
    assert spans[0][0] == max(ends)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert spans[-1][1] == len(data) - 8 - footer_len
    offsets = [off for cols in groups for v in cols.values() if v is not None for _, _, off, _ in [v]]
    assert offsets == sorted(offsets)  # row group by row group, columns in schema order
    summary = {c.path: c.bloom_filter_offset for c in result.footer.row_groups[1].columns}
    assert summary["rep"] is None and summary["s"] == groups[1]["s"][2]


def test_float_bits_are_raw(tmp_path: Path) -> None:
    """FLOAT/DOUBLE hash their raw IEEE bits: a NaN payload is hashed as given (pages hold the canonical NaN),
    and -0.0 differs from +0.0."""
    odd_nan = np.array([0x7FF8000000000123], dtype=np.uint64).view(np.float64)[0]
    values = np.concatenate([np.arange(1, 500) / 3, [odd_nan, -0.0]])
    path = tmp_path / "f.parquet"
    gpuwrite.write_table(pa.table({"d": pa.array(values)}), path, options={"parquet.bloom.filter.enabled": "true",
                                                                            "parquet.bloom.filter.max.bytes": "4096"})
    (cols,) = read_filters(path)
    _, bitset, _, _ = cols["d"]
    assert contains(bitset, struct.pack("<Q", 0x7FF8000000000123))
    assert not contains(bitset, struct.pack("<Q", 0x7FF8000000000000))
    assert contains(bitset, struct.pack("<d", -0.0)) and not contains(bitset, struct.pack("<d", 0.0))


def test_same_bytes_for_any_batching(tmp_path: Path) -> None:
    """Filters depend on the rows only: one table or many small batches give the same file."""
    table = _table(3000)
    opts = {"parquet.bloom.filter.enabled": "true", "parquet.bloom.filter.adaptive.enabled": "true",
            "parquet.bloom.filter.max.bytes": "65536", "parquet.page.row.count.limit": "700"}
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    gpuwrite.write_table(table, a, options=opts)
    with gpuwrite.ParquetWriter(b, table.schema, options=opts) as w:
        for batch in table.to_batches(max_chunksize=333):
            w.write(batch)
    assert a.read_bytes() == b.read_bytes()


def test_no_filters_by_default(tmp_path: Path) -> None:
    """Without bloom keys no chunk has a filter (and the file is unchanged by the feature)."""
    path = tmp_path / "n.parquet"
    gpuwrite.write_table(_table(500), path)
    assert all(v is None for cols in read_filters(path) for v in cols.values())


def test_many_small_row_groups_get_small_filters(tmp_path: Path) -> None:
    """Reproducer (issue 33): 1-row row groups with filters on 9 columns got a 1 MiB filter per chunk (5,000
    rows were killed at 24 GB). Without an NDV each filter is now sized for its chunk (32 bytes for one value),
    so the filters, held until the footer, stay within a few times the data; every value is still found, and
    the write warns once, naming the filtered columns, that its filters outweigh its data."""
    n = 300
    i = np.arange(n)
    table = pa.table({f"c{k}": pa.array(i.astype(np.int64) * (k + 1) + 7) for k in range(9)})
    path = tmp_path / "tiny_groups.parquet"
    with pytest.warns(BloomFilterSizeWarning, match=r"'c0', 'c1'.*'c8'") as caught:
        result = gpuwrite.write_table(table, path, row_group_size=1, bloom_filter_enabled=True)
    assert len([w for w in caught if w.category is BloomFilterSizeWarning]) == 1
    groups = read_filters(path)
    assert len(groups) == n
    assert {len(v[1]) for cols in groups for v in cols.values() if v is not None} == {32}
    assert all(contains(groups[r][f"c{k}"][1], struct.pack("<q", r * (k + 1) + 7)) for r in (0, 150, 299)
               for k in range(9))
    filter_bytes_written = sum(v[3] for cols in groups for v in cols.values() if v is not None)
    assert filter_bytes_written <= 9 * n * 50  # 32-byte bitsets and their headers
    assert result.size < 1_000_000  # 2,700 filters of 1 MiB before: 2.8 GB


def test_duckdb_finds_values_in_chunk_sized_filters(tmp_path: Path) -> None:
    """DuckDB reads the chunk-sized filters (no NDV): a value's own row group is never excluded, the others
    mostly are, for integers and strings alike."""
    duckdb = pytest.importorskip("duckdb")
    n, group = 3000, 500
    table = pa.table({"id": pa.array(np.arange(n, dtype=np.int64) * 7), "s": pa.array([f"k{i}" for i in range(n)])})
    path = tmp_path / "duck.parquet"
    gpuwrite.write_table(table, path, row_group_size=group, bloom_filter_enabled=True)
    assert {len(v[1]) for cols in read_filters(path) for v in cols.values() if v is not None} == {1024}
    con = duckdb.connect()
    try:
        for row in (0, 1234, 2999):
            for column, value in (("id", row * 7), ("s", f"k{row}")):
                probed = con.execute("select row_group_id, bloom_filter_excludes from parquet_bloom_probe(?, ?, ?)",
                                     [str(path), column, value]).fetchall()
                excluded = {rg for rg, excludes in probed if excludes}
                assert row // group not in excluded and len(excluded) >= 4, (column, row, probed)
        assert con.execute("select count(*) from read_parquet(?) where id = 8638 or s = 'k17'",
                           [str(path)]).fetchone() == (2,)
    finally:
        con.close()


def test_no_warning_when_filters_are_smaller_than_the_data(tmp_path: Path) -> None:
    """Filters sized for their chunks stay below the data they index, and a tiny write's 32-byte filters may
    outweigh its few bytes of data unremarked: no warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", BloomFilterSizeWarning)
        gpuwrite.write_table(_table(3000), tmp_path / "w.parquet", bloom_filter_enabled=True)
        gpuwrite.write_table(_table(3), tmp_path / "tiny.parquet", bloom_filter_enabled=True)


def test_a_dataset_write_warns_once_for_all_its_files(tmp_path: Path) -> None:
    """A dataset write's files are judged together: one warning for the write, not one per file."""
    n = 4000  # 2,000 chunks of 2 values: 94 KB of 32-byte filters, over the 64 KiB below which no one is told
    table = pa.table({"p": pa.array(np.arange(n) % 4), "v": pa.array(np.arange(n, dtype=np.int64))})
    with pytest.warns(BloomFilterSizeWarning, match=r"this dataset write \(4 files\).*'v'") as caught:
        gpuwrite.write_dataset(table, tmp_path / "ds", partition_by="p", row_group_size=2,
                               bloom_filter_columns=["v"])
    assert len([w for w in caught if w.category is BloomFilterSizeWarning]) == 1


@pytest.mark.spark
def test_spark_skips_row_groups_with_filters(spark: Any, tmp_path: Path) -> None:
    """Spark (filter pushdown on) uses the filters: an absent value inside every row group's min/max reads no
    rows, a present one is found; without filters the same query reads the row group its statistics allow."""
    table = _table(8000)
    with_bf, without = tmp_path / "bf.parquet", tmp_path / "plain.parquet"
    opts = {"parquet.block.row.count.limit": "2000"}
    gpuwrite.write_table(table, with_bf, options={**opts, "parquet.bloom.filter.enabled": "true",
                                                  "parquet.enable.dictionary#dec": "false"})
    gpuwrite.write_table(table, without, options={**opts, "parquet.enable.dictionary#dec": "false"})
    spark.conf.set("spark.sql.parquet.filterPushdown", "true")

    def run(path: Path, condition: str) -> tuple[int, int]:
        df = spark.read.parquet(str(path)).filter(condition)
        found = len(df.collect())
        leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
        scanned = 0
        for k in range(leaves.size()):
            metrics = leaves.apply(k).metrics()
            if metrics.contains("numOutputRows"):
                scanned += metrics.apply("numOutputRows").value()
        return found, scanned

    absent = ["i32 = 7001", "i64 = -1099510627772", "s = 'key-004000x'", "f64 = 1.0001", "f32 = 0.5",
              "dec = 40000000000000.00002"]
    present = ["i32 = 8000", "i64 = -1095510615773", "s = 'key-004000'", "f64 = 0.5",
               "dec = 40000000000000.00001", "f32 = -6"]
    for condition in absent:
        assert run(with_bf, condition) == (0, 0), condition
        assert run(without, condition)[1] > 0, condition
    for condition in present:
        found, scanned = run(with_bf, condition)
        assert found == 1 and scanned == 2000, condition
