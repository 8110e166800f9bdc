"""The core writer end to end: page layout, encodings and fallbacks, row groups, streaming, inputs, footer."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pages import data_pages, pages_of

import gpuwrite
from gpuwrite.format.footer_reader import read_footer


def _write(table, path, **kw):
    """Write with gpuwrite and return (result, table read back by pyarrow)."""
    result = gpuwrite.write_table(table, path, **kw)
    return result, pq.read_table(path)


def test_every_data_page_is_v2_with_20000_rows(tmp_path):
    """With default sizes, narrow columns are cut into 20,000-row pages, all DATA_PAGE_V2."""
    n = 65_000
    rng = np.random.default_rng(1)
    table = pa.table({"k": pa.array(rng.integers(0, 50, n), pa.int32()),
                      "v": pa.array(rng.random(n)),
                      "b": pa.array(rng.random(n) > 0.5)})
    path = str(tmp_path / "p.parquet")
    result, back = _write(table, path)
    assert back.equals(table)
    for col in pages_of(path)[0]:
        types = [p["type"] for p in col]
        assert set(types) <= {"DICTIONARY_PAGE", "DATA_PAGE_V2"}
        assert types.count("DICTIONARY_PAGE") <= 1 and (types[0] == "DICTIONARY_PAGE" or "DICTIONARY_PAGE" not in types)
        rows = [p["data_page_header_v2"]["num_rows"] for p in col if p["type"] == "DATA_PAGE_V2"]
        assert rows == [20_000, 20_000, 20_000, 5_000]
    assert [c.page_count for c in result.footer.row_groups[0].columns] == [4, 4, 4]


def test_encodings_as_parquet_java_v2(tmp_path):
    """Low-cardinality columns keep the dictionary; all-distinct first pages fall back; booleans are PLAIN."""
    n = 30_000
    table = pa.table({
        "low_int": pa.array(np.arange(n) % 7, pa.int32()),
        "distinct_int": pa.array(np.arange(n), pa.int64()),
        "distinct_double": pa.array(np.arange(n) * 0.5),
        "distinct_str": pa.array([f"value-{i}" for i in range(n)]),
        "low_str": pa.array([f"v{i % 3}" for i in range(n)]),
        "flag": pa.array(np.arange(n) % 2 == 0),
    })
    path = str(tmp_path / "e.parquet")
    result, back = _write(table, path)
    assert back.equals(table)
    enc = {c.path: set(c.encodings) for c in result.footer.row_groups[0].columns}
    assert enc == {
        "low_int": {"PLAIN", "RLE_DICTIONARY"},
        "distinct_int": {"DELTA_BINARY_PACKED"},
        "distinct_double": {"PLAIN"},
        "distinct_str": {"DELTA_BYTE_ARRAY"},
        "low_str": {"PLAIN", "RLE_DICTIONARY"},
        "flag": {"PLAIN"},
    }
    meta = pq.ParquetFile(path).metadata.row_group(0)
    assert meta.column(0).has_dictionary_page and not meta.column(1).has_dictionary_page


def test_mid_chunk_dictionary_fallback_keeps_written_pages(tmp_path):
    """A dictionary that overflows after some pages: earlier pages stay RLE_DICTIONARY, the rest fall back,
    and the dictionary page holds only the entries of the dictionary pages."""
    n = 100_000
    values = np.concatenate([np.arange(n // 2) % 100, np.arange(n // 2) + 1000])
    table = pa.table({"x": pa.array(values, pa.int64())})
    path = str(tmp_path / "f.parquet")
    result, back = _write(table, path, options={"parquet.dictionary.page.size": "8192"})
    assert back.equals(table)
    pages = pages_of(path)[0][0]
    assert pages[0]["type"] == "DICTIONARY_PAGE"
    encodings = [p["data_page_header_v2"]["encoding"] for p in pages[1:]]
    assert encodings[:2] == ["RLE_DICTIONARY", "RLE_DICTIONARY"]
    assert encodings[2:] == ["DELTA_BINARY_PACKED"] * 3
    assert pages[0]["dictionary_page_header"]["num_values"] == 100
    assert set(result.footer.row_groups[0].columns[0].encodings) == {"PLAIN", "RLE_DICTIONARY",
                                                                       "DELTA_BINARY_PACKED"}


def test_all_null_first_page_falls_back(tmp_path):
    """A first page holding only nulls fails the keep-or-drop test: no dictionary for the chunk."""
    vals = [None] * 20_000 + [1, 2, 1, 2] * 100
    table = pa.table({"x": pa.array(vals, pa.int32())})
    path = str(tmp_path / "n.parquet")
    _, back = _write(table, path)
    assert back.equals(table)
    pages = pages_of(path)[0][0]
    assert all(p["type"] == "DATA_PAGE_V2" for p in pages)
    assert pages[0]["data_page_header_v2"]["num_nulls"] == 20_000


def test_small_page_size_and_row_limit(tmp_path):
    """parquet.page.size and parquet.page.row.count.limit cut pages; pages never split a row."""
    n = 50_000
    table = pa.table({"s": pa.array([f"{i:010d}-{'x' * (i % 30)}" for i in range(n)])})
    path = str(tmp_path / "s.parquet")
    _, back = _write(table, path, options={"parquet.page.size": "65536", "parquet.enable.dictionary": "false"})
    assert back.equals(table)
    rows = [p["num_rows"] for p in data_pages(path, 0, 0)]
    assert sum(rows) == n and len(rows) > 10 and max(rows) < 20_000
    path2 = str(tmp_path / "r.parquet")
    _, back2 = _write(table, path2, options={"parquet.page.row.count.limit": "1000"})
    rows2 = [p["num_rows"] for p in data_pages(path2, 0, 0)]
    assert back2.equals(table) and sum(rows2) == n and max(rows2) <= 1000


def test_several_row_groups_under_small_block_size(tmp_path):
    """A small parquet.block.size gives several row groups, each read back in order."""
    n = 200_000
    rng = np.random.default_rng(3)
    table = pa.table({"a": pa.array(rng.integers(0, 1 << 40, n), pa.int64()),
                      "b": pa.array(rng.random(n))})
    path = str(tmp_path / "g.parquet")
    result, back = _write(table, path, block_size=512 * 1024)
    assert back.equals(table)
    groups = result.footer.row_groups
    assert len(groups) >= 3
    assert sum(g.num_rows for g in groups) == n
    assert pq.ParquetFile(path).metadata.num_row_groups == len(groups)


def test_block_row_count_limit(tmp_path):
    """parquet.block.row.count.limit caps rows per row group."""
    table = pa.table({"a": pa.array(range(25_000), pa.int64())})
    result, back = _write(table, str(tmp_path / "l.parquet"), options={"parquet.block.row.count.limit": "10000"})
    assert back.equals(table)
    assert [g.num_rows for g in result.footer.row_groups] == [10_000, 10_000, 5_000]


def test_streaming_batches_give_the_same_bytes(tmp_path):
    """Many small batches, chunked columns or one table: identical files (boundaries depend on rows only)."""
    n = 120_000
    rng = np.random.default_rng(7)
    table = pa.table({"k": pa.array(rng.integers(0, 300, n), pa.int32()),
                      "s": pa.array([f"s{i % 977}" for i in range(n)]),
                      "f": pa.array(np.where(rng.random(n) < 0.1, np.nan, rng.random(n)))})
    one = tmp_path / "one.parquet"
    gpuwrite.write_table(table, one, block_size=256 * 1024)
    streamed = tmp_path / "streamed.parquet"
    schema = table.schema
    with gpuwrite.ParquetWriter(streamed, schema, block_size=256 * 1024) as w:
        start = 0
        for size in [1, 999, 20_000, 7, 50_000, 33]:
            w.write(table.slice(start, size))
            start += size
        w.write(table.slice(start))
    chunked = tmp_path / "chunked.parquet"
    batches = table.to_batches(max_chunksize=3_333)
    gpuwrite.write_table(pa.Table.from_batches(batches), chunked, block_size=256 * 1024)
    assert one.read_bytes() == streamed.read_bytes() == chunked.read_bytes()
    assert w.result is not None and w.result.num_rows == n


def test_empty_table_and_one_row(tmp_path):
    """An empty table writes a footer-only file; one row works."""
    empty = pa.table({"a": pa.array([], pa.int32()), "s": pa.array([], pa.string())})
    result, back = _write(empty, str(tmp_path / "e.parquet"))
    assert result.num_rows == 0 and back.num_rows == 0 and back.schema.equals(empty.schema)
    assert pq.ParquetFile(str(tmp_path / "e.parquet")).metadata.num_row_groups == 0
    one = pa.table({"a": pa.array([42], pa.int32()), "s": pa.array(["x"])})
    _, back1 = _write(one, str(tmp_path / "o.parquet"))
    assert back1.equals(one)


def test_all_null_columns(tmp_path):
    """Columns holding only nulls, of every physical kind, read back as nulls with null_count statistics."""
    n = 30_000
    table = pa.table({
        "i": pa.array([None] * n, pa.int32()), "l": pa.array([None] * n, pa.int64()),
        "d": pa.array([None] * n, pa.float64()), "s": pa.array([None] * n, pa.string()),
        "b": pa.array([None] * n, pa.bool_()), "dec": pa.array([None] * n, pa.decimal128(20, 3)),
        "t": pa.array([None] * n, pa.timestamp("us", "UTC")),
    })
    path = str(tmp_path / "n.parquet")
    result, _ = _write(table, path)
    back = pq.read_table(path, coerce_int96_timestamp_unit="us")
    back = back.set_column(6, "t", back.column("t").cast(pa.timestamp("us", "UTC")))  # INT96 carries no zone
    assert back.equals(table)
    for col in result.footer.row_groups[0].columns:
        assert col.null_count == n and col.min is None and col.max is None


def test_inputs_pandas_polars_duckdb_reader(tmp_path):
    """pandas (with a categorical), polars, DuckDB and RecordBatchReader inputs."""
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    df = pd.DataFrame({"a": [1, 2, 3], "c": pd.Categorical(["x", "y", "x"])})
    _, back = _write(df, str(tmp_path / "pd.parquet"))
    assert back.column("a").to_pylist() == [1, 2, 3] and back.column("c").to_pylist() == ["x", "y", "x"]
    pdf = pl.DataFrame({"a": [1, 2, None], "s": ["p", None, "q"]})
    _, back = _write(pdf, str(tmp_path / "pl.parquet"))
    assert back.column("a").to_pylist() == [1, 2, None] and back.column("s").to_pylist() == ["p", None, "q"]
    rel = duckdb.sql("SELECT range AS i, range::VARCHAR AS s FROM range(5)")
    _, back = _write(rel, str(tmp_path / "dk.parquet"))
    assert back.column("i").to_pylist() == list(range(5))
    table = pa.table({"z": pa.array(range(10), pa.int64())})
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=3))
    _, back = _write(reader, str(tmp_path / "rb.parquet"))
    assert back.equals(table)


def test_footer_keys_and_schema(tmp_path):
    """Root spark_schema, Spark's version and row-metadata keys, parseable created_by, required/optional."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                        pa.field("amount", pa.decimal128(7, 2)), pa.field("ts", pa.timestamp("us", "UTC")),
                        pa.field("ntz", pa.timestamp("us")), pa.field("b", pa.int8())])
    table = pa.table({"id": [1], "name": ["a"], "amount": [None], "ts": [None], "ntz": [None], "b": [1]},
                     schema=schema)
    path = str(tmp_path / "m.parquet")
    result = gpuwrite.write_table(table, path)
    meta = pq.ParquetFile(path).metadata
    assert meta.schema.to_arrow_schema().names == schema.names
    kv = meta.metadata
    assert kv[b"org.apache.spark.version"] == b"4.3.0"
    row = json.loads(kv[b"org.apache.spark.sql.parquet.row.metadata"])
    assert row == {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": False, "metadata": {}},
        {"name": "name", "type": "string", "nullable": True, "metadata": {}},
        {"name": "amount", "type": "decimal(7,2)", "nullable": True, "metadata": {}},
        {"name": "ts", "type": "timestamp", "nullable": True, "metadata": {}},
        {"name": "ntz", "type": "timestamp_ntz", "nullable": True, "metadata": {}},
        {"name": "b", "type": "byte", "nullable": True, "metadata": {}}]}
    assert meta.created_by.startswith("gpuwrite version ")
    assert meta.format_version in ("1.0", "2.6") or meta.format_version
    parquet_schema = str(meta.schema)
    assert "group field_id=-1 spark_schema" in parquet_schema
    assert "required int64 field_id=-1 id" in parquet_schema
    assert "optional int96 field_id=-1 ts" in parquet_schema
    assert "optional int32 field_id=-1 amount (Decimal(precision=7, scale=2))" in parquet_schema
    assert result.footer.key_value_metadata["org.apache.spark.version"] == "4.3.0"


@pytest.mark.parametrize("codec", ["snappy", "zstd", "gzip", "lz4_raw", "uncompressed"])
def test_codecs_and_page_crcs(tmp_path, codec):
    """Every codec reads back; pyarrow verifies every page CRC."""
    n = 50_000
    table = pa.table({"a": pa.array(np.arange(n) % 1000, pa.int64()),
                      "s": pa.array([f"row {i}" for i in range(n)])})
    path = str(tmp_path / f"{codec}.parquet")
    gpuwrite.write_table(table, path, compression=codec)
    assert pq.read_table(path, page_checksum_verification=True).equals(table)
    codec_ids = {"uncompressed": 0, "snappy": 1, "gzip": 2, "zstd": 6, "lz4_raw": 7}
    assert read_footer(path)[4][0][1][0][3][4] == codec_ids[codec]


def test_statistics_as_parquet_java(tmp_path):
    """Chunk statistics: signed ints, Java float order (NaN max, -0.0 < 0.0), unsigned strings, decimals."""
    table = pa.table({
        "i": pa.array([5, -3, None, 7], pa.int32()),
        "f": pa.array([1.0, float("nan"), -0.0, 0.0]),
        "z": pa.array([0.0, -0.0, None, 0.0]),
        "s": pa.array(["b", "é", "a", None]),
        "d": pa.array([1, -2, 3, None], pa.decimal128(5, 0)),
    })
    result = gpuwrite.write_table(table, tmp_path / "st.parquet")
    cols = {c.path: c for c in result.footer.row_groups[0].columns}
    assert (cols["i"].min, cols["i"].max, cols["i"].null_count) == (-3, 7, 1)
    assert cols["f"].min == 0.0 and np.signbit(cols["f"].min) and np.isnan(cols["f"].max)
    assert np.signbit(cols["z"].min) and not np.signbit(cols["z"].max)
    assert cols["s"].min == b"a" and cols["s"].max == "é".encode()
    assert int(cols["d"].min) == -2 and int(cols["d"].max) == 3
    stats = pq.ParquetFile(str(tmp_path / "st.parquet")).metadata.row_group(0).column(0).statistics
    assert (stats.min, stats.max, stats.null_count) == (-3, 7, 1)


def test_statistics_size_limit_and_truncation(tmp_path):
    """min+max >= 4096 bytes drops the statistics; parquet.statistics.truncate.length rescues them,
    cutting UTF-8 at a character boundary and bumping the max so it still bounds the values."""
    long_a, long_z = "a" * 3000, "é" * 1500 + "z"
    table = pa.table({"s": pa.array([long_a, long_z, None])})
    dropped = gpuwrite.write_table(table, tmp_path / "d.parquet").metadata.row_groups[0].columns[0]
    st = dropped.meta_data.statistics
    assert st.null_count is None and st.min_value is None and st.max_value is None
    cut = gpuwrite.write_table(table, tmp_path / "t.parquet",
                               options={"parquet.statistics.truncate.length": "5"}).metadata
    st = cut.row_groups[0].columns[0].meta_data.statistics
    assert st.null_count == 1
    assert st.min_value == b"aaaaa"
    assert st.max_value == "éê".encode()  # 'é' (2 bytes) fits twice in 5 bytes; the last one is bumped
    assert st.min_value <= long_a.encode() and st.max_value >= long_z.encode()
    assert pq.read_table(tmp_path / "t.parquet").equals(table)


def test_truncate_max_of_non_utf8_and_all_ff():
    """Byte strings that are not UTF-8 are bumped bytewise; all-0xFF prefixes keep the full value."""
    from gpuwrite.encode.truncate import truncate_max, truncate_min
    assert truncate_max(b"\xff\xfe\x80\x01", 2) == b"\xff\xff"
    assert truncate_max(b"\xff\xff\x01", 2) == b"\xff\xff\x01"
    assert truncate_min(b"\xc3\x28abc", 2) == b"\xc3\x28"
    assert truncate_max("a\U0010ffff\U0010ffffb".encode(), 9) == b"b"


def test_last_row_group_chunks_are_written_ahead_and_rewritten_when_the_cut_changes_them(tmp_path, monkeypatch):
    """write_table's last batch is encoded knowing the input ends: each chunk reaches the file as soon as its
    pages are done (staged), before the row group's end is confirmed; where the cut then ends the row group
    earlier, the chunks that changed are taken back (the sink rewinds) and written again. Either way the
    bytes are those of a sink that cannot rewind (nothing staged)."""
    from gpuwrite.assemble import file as assemble_file
    from gpuwrite.assemble import sink as sink_module

    counts = {"stage": 0, "rewind": 0}
    stage, rewind = assemble_file.FileAssembler.stage, sink_module.FileSink.rewind

    def counting_stage(self, column, chunk):
        counts["stage"] += 1
        stage(self, column, chunk)

    def counting_rewind(self, pos):
        counts["rewind"] += 1
        rewind(self, pos)

    monkeypatch.setattr(assemble_file.FileAssembler, "stage", counting_stage)
    monkeypatch.setattr(sink_module.FileSink, "rewind", counting_rewind)
    rng = np.random.default_rng(1)
    table = pa.table({"a": rng.integers(0, 1 << 20, 10000), "b": rng.random(10000),
                      "s": pa.array([f"v{v}" for v in rng.integers(0, 300, 10000)])})
    seen = []
    for block_size in (16 << 10, 100 << 10, 64 << 20):
        counts.update(stage=0, rewind=0)
        staged = gpuwrite.write_table(table, tmp_path / "staged.parquet", block_size=block_size, page_size=4096)
        seen.append(dict(counts, row_groups=staged.footer.row_groups.__len__()))
        monkeypatch.setattr(sink_module.FileSink, "can_rewind", False)
        gpuwrite.write_table(table, tmp_path / "plain.parquet", block_size=block_size, page_size=4096)
        monkeypatch.setattr(sink_module.FileSink, "can_rewind", True)
        assert (tmp_path / "staged.parquet").read_bytes() == (tmp_path / "plain.parquet").read_bytes(), block_size
    assert seen[-1] == {"stage": 3, "rewind": 0, "row_groups": 1}  # one row group: staged once, kept
    assert all(s["stage"] >= 3 for s in seen) and any(s["rewind"] > 0 for s in seen[:-1]), seen


def test_more_false_only_defers_encoding(tmp_path):
    """write(..., more=False) leaves the rows for close() (the input's end known when they are encoded); a
    write after it still works; the bytes are those of plain writes."""
    rng = np.random.default_rng(2)
    table = pa.table({"a": rng.integers(0, 1000, 30000), "s": pa.array([f"k{v}" for v in rng.integers(0, 50, 30000)])})
    batches = table.to_batches(max_chunksize=7000)
    paths = []
    for name, flags in (("plain", [True] * len(batches)), ("hinted", [True, False, True, True, False])):
        path = tmp_path / f"{name}.parquet"
        with gpuwrite.ParquetWriter(path, table.schema, block_size=64 << 10) as writer:
            for batch, more in zip(batches, flags, strict=True):
                writer.write(batch, more=more)
                assert writer.rows_encoded <= writer._rows_in
        paths.append(path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert pq.read_table(paths[1]).equals(table)
