"""Column index and offset index: layout at the end of the file, contents per page, and use by Spark."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.format.footer_reader import named, read_footer
from gpuwrite.format.thrift import read_struct


def _indexes(path):
    """(column index dict or None, offset index dict) per chunk, decoded by name, plus the footer."""
    footer = read_footer(path)
    data = open(path, "rb").read()
    out = []
    for rg in footer[4]:
        for cc in rg[1]:
            ci = named("ColumnIndex", read_struct(data, cc[6])[0], enum_names=True) if 6 in cc else None
            oi = named("OffsetIndex", read_struct(data, cc[4])[0])
            out.append((ci, oi))
    return out, footer


def test_indexes_per_page(tmp_path):
    """Per-page bounds, null pages, boundary order, page locations that point at page headers."""
    n = 50_000
    vals = np.arange(n, dtype=np.int64)
    table = pa.table({
        "asc": pa.array(vals),
        "desc": pa.array(-vals),
        "nulls": pa.array([None] * 20_000 + list(range(30_000)), pa.int32()),
        "s": pa.array(["x" * 100 + f"{i:06d}" for i in range(n)]),
        "f": pa.array(np.where(vals < 20_000, 0.0, 1.0)),
        "ts": pa.array(vals, pa.timestamp("us", "UTC")),
    })
    path = tmp_path / "i.parquet"
    result = gpuwrite.write_table(table, path)
    (asc, desc, nulls, s, f, ts), footer = _indexes(path)
    assert asc[0]["boundary_order"] == "ASCENDING" and desc[0]["boundary_order"] == "DESCENDING"
    assert [struct.unpack("<q", v)[0] for v in asc[0]["min_values"]] == [0, 20_000, 40_000]
    assert [struct.unpack("<q", v)[0] for v in asc[0]["max_values"]] == [19_999, 39_999, 49_999]
    assert nulls[0]["null_pages"] == [True, False, False] and nulls[0]["null_counts"] == [20_000, 0, 0]
    assert nulls[0]["min_values"][0] == b"" and nulls[0]["max_values"][0] == b""
    assert all(len(v) <= 64 for v in s[0]["min_values"] + s[0]["max_values"])
    assert s[0]["max_values"][0] > ("x" * 100 + "019999").encode()[:64]
    assert f[0]["min_values"][0] == struct.pack("<d", -0.0)  # +0.0 minimum normalised to -0.0
    assert ts[0] is None  # INT96 never has a column index
    data = open(path, "rb").read()
    assert [loc["first_row_index"] for loc in asc[1]["page_locations"]] == [0, 20_000, 40_000]
    for _, oi in [asc, desc, nulls, s, f, ts]:
        first_row = 0
        for loc in oi["page_locations"]:
            header, end = read_struct(data, loc["offset"])
            assert header[1] == 3 and end - loc["offset"] + header[3] == loc["compressed_page_size"]
            assert loc["first_row_index"] == first_row
            first_row += header[8][3]
        assert first_row == n
    s_rows = [c.page_count for c in result.footer.row_groups[0].columns][3]
    assert s_rows > 3  # ~1 MiB pages of 110-byte strings
    assert sum(s[1]["unencoded_byte_array_data_bytes"]) == n * 106
    # all column indexes come before all offset indexes, all after the last page
    cols = footer[4][0][1]
    last_page_end = max(loc["offset"] + loc["compressed_page_size"] for _, oi in [asc, desc, nulls, s, f, ts]
                        for loc in oi["page_locations"])
    ci_offsets = [c[6] for c in cols if 6 in c]
    oi_offsets = [c[4] for c in cols]
    assert last_page_end <= min(ci_offsets) and max(ci_offsets) < min(oi_offsets)
    assert result.num_rows == n


def test_nan_page_drops_float_column_index(tmp_path):
    """A page whose max is NaN invalidates the column index of a float chunk (parquet-java <= 1.17)."""
    table = pa.table({"f": pa.array([1.0, float("nan"), 2.0])})
    (only,), _ = _indexes_after_write(table, tmp_path)
    assert only[0] is None and only[1] is not None


def _indexes_after_write(table, tmp_path):
    """Write and decode the indexes."""
    path = tmp_path / "n.parquet"
    gpuwrite.write_table(table, path)
    return _indexes(path)


@pytest.mark.spark
def test_spark_filters_through_the_page_index(tmp_path, spark):
    """Spark's column-index filtering (parquet-java's reader) returns the right rows."""
    n = 100_000
    table = pa.table({"a": pa.array(np.arange(n), pa.int64()), "b": pa.array(np.arange(n) % 97, pa.int32())})
    path = tmp_path / "sp.parquet"
    gpuwrite.write_table(table, path, page_row_count_limit=5_000)
    df = spark.read.parquet(str(path))
    assert df.filter("a >= 95000").count() == 5_000
    assert df.filter("a between 12345 and 12355 and b = 0").count() == 0 + sum(
        1 for v in range(12345, 12356) if v % 97 == 0)
    for vectorized in ("true", "false"):
        spark.conf.set("spark.sql.parquet.enableVectorizedReader", vectorized)
        assert df.filter("a < 10").agg({"a": "sum"}).collect()[0][0] == 45
    spark.conf.set("spark.sql.parquet.enableVectorizedReader", "true")
