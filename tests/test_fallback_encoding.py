"""fallback_encoding="plain": pages that are not dictionary-encoded are PLAIN for every type (no DELTA_*), for
readers without DELTA_* decoders (Iceberg's vectorized reader before 1.11); pages end where they do by default,
the values read back equal, and the default ("delta") is untouched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pages import pages_of
from readback_tables import _big, _extremes
from readers import assert_tables_equal, read_duckdb, read_polars, read_pyarrow

import gpuwrite
from gpuwrite.errors import OptionError
from gpuwrite.format.footer_reader import named, read_footer

DELTA = {"DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY"}


def _nested(n: int) -> pa.Table:
    """A list of strings and a struct of an int and a string, with nulls at every level."""
    return pa.table({
        "tags": pa.array([None if k % 7 == 0 else [f"t{k * 31 % 997}", None][: k % 3] for k in range(n)],
                         pa.list_(pa.string())),
        "st": pa.array([None if k % 5 == 0 else {"a": k * 7919, "s": f"s{k}"} for k in range(n)],
                       pa.struct([("a", pa.int64()), ("s", pa.string())])),
    })


def _table(n: int, seed: int) -> pa.Table:
    """`_big`'s types, nested columns, and columns whose dictionary overflows a small limit half-way."""
    table = _big(n, seed)
    table = table.append_column("grow", pa.array(np.arange(n) // 2, pa.int64()))
    table = table.append_column("s_grow", pa.array([f"value-{k // 3}" for k in range(n)]))
    for name, column in zip(_nested(n).column_names, _nested(n).columns, strict=True):
        table = table.append_column(name, column)
    return table


def _encodings(path: Path) -> tuple[set[str], set[str], list[list[list[tuple[str, int]]]]]:
    """(ColumnMetaData.encodings and encoding_stats over all chunks, data page encodings, and per row group and
    column each data page's (encoding, value count))."""
    chunk_encodings, page_encodings = set(), set()
    for rg in read_footer(str(path))[4]:
        for cc in rg[1]:
            meta = named("ColumnMetaData", cc[3], enum_names=True)
            chunk_encodings |= set(meta["encodings"])
            chunk_encodings |= {s["encoding"] for s in meta.get("encoding_stats", [])}
    layout = []
    for rg in pages_of(str(path)):
        cols = []
        for chunk in rg:
            v2 = [p["data_page_header_v2"] for p in chunk if p["type"] == "DATA_PAGE_V2"]
            page_encodings |= {h["encoding"] for h in v2}
            cols.append([(h["encoding"], h["num_values"]) for h in v2])
        layout.append(cols)
    return chunk_encodings, page_encodings, layout


def _write(path: Path, table: pa.Table, **options) -> Path:
    gpuwrite.write_table(table, path, device="cpu", **options)
    return path


@pytest.mark.parametrize("dictionary", ["mid-chunk fallback", "off"])
def test_plain_fallback_has_no_delta_and_reads_back(tmp_path: Path, dictionary: str) -> None:
    table = _table(3000, seed=11)
    options = {"page_size": 2048, "block_size": 64 * 1024, "timestamp_type": "TIMESTAMP_MICROS"}
    options |= {"dictionary_page_size": 4000} if dictionary != "off" else {"enable_dictionary": False}
    delta = _write(tmp_path / "delta.parquet", table, **options)
    plain = _write(tmp_path / "plain.parquet", table, fallback_encoding="plain", **options)
    d_chunks, d_pages, _ = _encodings(delta)
    p_chunks, p_pages, layout = _encodings(plain)
    assert DELTA & d_pages and DELTA & d_chunks  # the same write without the option falls back to DELTA_*
    assert not DELTA & (p_chunks | p_pages)
    assert "PLAIN" in p_pages
    if dictionary != "off":
        # some chunk starts dictionary-encoded and falls back to PLAIN half-way
        assert any(c and c[0][0] == "RLE_DICTIONARY" and c[-1][0] == "PLAIN" for rg in layout for c in rg)
    for reader in (read_pyarrow, read_duckdb, read_polars):
        assert_tables_equal(reader(plain), table, reader.__name__)


def test_plain_fallback_pages_end_where_delta_pages_end(tmp_path: Path) -> None:
    """Pages are sized by PLAIN-equivalent bytes either way, so one row group's pages hold the same values."""
    table = _table(2500, seed=4)
    options = {"page_size": 1024, "dictionary_page_size": 500}
    _, _, delta = _encodings(_write(tmp_path / "delta.parquet", table, **options))
    _, _, plain = _encodings(_write(tmp_path / "plain.parquet", table, fallback_encoding="plain", **options))
    assert len(delta) == len(plain) == 1
    assert [[n for _, n in c] for c in plain[0]] == [[n for _, n in c] for c in delta[0]]
    assert sum(len(c) for c in plain[0]) > 3 * len(table.columns)


def test_every_type_plain(tmp_path: Path) -> None:
    """Extremes of every type (INT96, FIXED_LEN_BYTE_ARRAY decimals, NaN, empty strings) with no dictionary."""
    table = _extremes()
    path = _write(tmp_path / "x.parquet", table, fallback_encoding="plain", enable_dictionary=False)
    chunks, pages, _ = _encodings(path)
    assert chunks == pages == {"PLAIN"}
    assert_tables_equal(read_pyarrow(path), table, "pyarrow", ignore_tz=["ts"])  # INT96 carries no zone


def test_default_is_delta_and_unchanged(tmp_path: Path) -> None:
    table = _table(800, seed=2)
    default = _write(tmp_path / "a.parquet", table, enable_dictionary=False).read_bytes()
    assert _write(tmp_path / "b.parquet", table, enable_dictionary=False,
                  fallback_encoding="delta").read_bytes() == default
    assert gpuwrite.WriteOptions().fallback_encoding == "delta"


def test_bad_value_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="fallback_encoding='rle'"):
        gpuwrite.write_table(pa.table({"a": [1]}), tmp_path / "x.parquet", fallback_encoding="rle")
    assert not list(tmp_path.iterdir())


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)), max_size=300),
       st.lists(st.one_of(st.none(), st.binary(max_size=30)), max_size=300), st.sampled_from([0, 64, 1 << 20]))
def test_plain_values_round_trip(tmp_path: Path, ints: list[int | None], blobs: list[bytes | None],
                                 dict_size: int) -> None:
    n = min(len(ints), len(blobs))
    table = pa.table({"i64": pa.array(ints[:n], pa.int64()),
                      "i32": pa.array([None if v is None else int(np.int32(v & 0x7FFFFFFF)) for v in ints[:n]],
                                      pa.int32()),
                      "b": pa.array(blobs[:n], pa.binary())})
    path = _write(tmp_path / "h.parquet", table, fallback_encoding="plain", dictionary_page_size=dict_size,
                  page_size=256)
    assert not DELTA & (_encodings(path)[0] | _encodings(path)[1])
    assert pq.read_table(path).equals(table)
