"""Tests of the peer-reader harness itself, on Parquet v2 files written by pyarrow."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from readers import (
    ALL_READERS,
    assert_readers_agree,
    assert_tables_equal,
    fastparquet_can_read,
    fastparquet_unsupported_columns,
    read_fastparquet,
    run_fastparquet,
)

NON_SPARK = ("pyarrow", "duckdb", "polars", "fastparquet")
DATES = [dt.date(1, 1, 1), dt.date(9999, 12, 31), None, dt.date(1970, 1, 1), dt.date(1969, 12, 31),
         dt.date(1582, 10, 4), dt.date(2024, 2, 29), dt.date(2000, 1, 1)]
TIMES = [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None, dt.datetime(1970, 1, 1),
         dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1582, 10, 4, 12, 30),
         dt.datetime(2024, 2, 29, 12, 0, 0, 1), dt.datetime(2262, 4, 12)]


def all_types_table() -> pa.Table:
    """Eight rows of every type the writer supports, a null in every column, edge values included."""
    nan, inf = float("nan"), float("inf")
    return pa.table({
        "b": pa.array([True, False, None, True, False, True, False, True]),
        "i8": pa.array([-128, 127, None, 0, 1, -1, 42, -42], pa.int8()),
        "i16": pa.array([-32768, 32767, None, 0, 1, -1, 256, -256], pa.int16()),
        "i32": pa.array([-2**31, 2**31 - 1, None, 0, 1, -1, 65536, -65536], pa.int32()),
        "i64": pa.array([-2**63, 2**63 - 1, None, 0, 1, -1, 2**32, -2**32], pa.int64()),
        "f32": pa.array([nan, -0.0, None, 0.0, inf, -inf, 1.5, -3.4028234663852886e38], pa.float32()),
        "f64": pa.array([nan, -0.0, None, 0.0, inf, -inf, 5e-324, 1.7976931348623157e308], pa.float64()),
        "d7": pa.array([Decimal("12345.67"), Decimal("-99999.99"), None, Decimal("0.00"), Decimal("2.56"),
                        Decimal("-2.56"), Decimal("99999.99"), Decimal("0.01")], pa.decimal128(7, 2)),
        "d18": pa.array([Decimal("12345678901234.5678"), Decimal("-99999999999999.9999"), None, Decimal("0.0000"),
                         Decimal("0.0256"), Decimal("-1.0001"), Decimal("99999999999999.9999"), Decimal("0.0001")],
                        pa.decimal128(18, 4)),
        "d38": pa.array([Decimal("1234567890123456789012345678.0123456789"),
                         Decimal("-9999999999999999999999999999.9999999999"), None, Decimal(0),
                         Decimal(2**64).scaleb(-10), Decimal(-(2**64)).scaleb(-10),
                         Decimal("9999999999999999999999999999.9999999999"), Decimal("1E-10")],
                        pa.decimal128(38, 10)),
        "date": pa.array(DATES, pa.date32()),
        "ts_utc": pa.array(TIMES, pa.timestamp("us", tz="UTC")),
        "ts_ntz": pa.array(TIMES, pa.timestamp("us")),
        "s": pa.array(["héllo", "", None, "日本語", "🎉 emoji", "a" * 100, "tab\tnew\nline", "\u0000nul"]),
        "bin": pa.array([b"\x00\xff", b"", None, b"abc", b"\x00", b"x" * 50, b"\x80\x00", b"\xff" * 3]),
    })


def write_v2(table: pa.Table, path: Path, **kwargs: Any) -> Path:
    """Write table as a Parquet file with v2 data pages."""
    pq.write_table(table, path, data_page_version="2.0", **kwargs)
    return path


@pytest.mark.parametrize("store_schema", [True, False])
def test_all_types_default_encodings(tmp_parquet: Path, store_schema: bool) -> None:
    """pyarrow's default v2 file (dictionaries, RLE booleans) reads back equal in every non-Spark reader."""
    expected = all_types_table()
    write_v2(expected, tmp_parquet, store_schema=store_schema)
    results = assert_readers_agree(tmp_parquet, expected, readers=NON_SPARK)
    assert results["pyarrow"] == results["duckdb"] == results["polars"] == "ok"
    assert fastparquet_unsupported_columns(tmp_parquet) == {
        "b": "RLE-encoded BOOLEAN values (misread in v1 pages, crash in v2 pages with nulls)"}
    assert results["fastparquet"].startswith("partial: compared 14 of 15 columns; b: ")


def test_all_types_fastparquet_required(tmp_parquet: Path) -> None:
    """With PLAIN booleans every column is in fastparquet's reach, so it must read the whole file."""
    expected = all_types_table()
    write_v2(expected, tmp_parquet, use_dictionary=False, column_encoding={"b": "PLAIN"}, store_schema=False)
    assert fastparquet_can_read(tmp_parquet)
    assert assert_readers_agree(tmp_parquet, expected, readers=NON_SPARK) == dict.fromkeys(NON_SPARK, "ok")


def test_delta_encodings_skip_fastparquet_only(tmp_parquet: Path) -> None:
    """DELTA_* columns keep fastparquet out (recorded), while the other readers must still agree."""
    expected = all_types_table().select(["i32", "i64", "s", "bin"])
    write_v2(expected, tmp_parquet, use_dictionary=False, column_encoding={
        "i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED", "s": "DELTA_BYTE_ARRAY",
        "bin": "DELTA_LENGTH_BYTE_ARRAY"})
    assert not fastparquet_can_read(tmp_parquet)
    results = assert_readers_agree(tmp_parquet, expected, readers=NON_SPARK)
    assert results["fastparquet"].startswith("skipped: i32: DELTA_BINARY_PACKED encoding")
    assert [results[r] for r in ("pyarrow", "duckdb", "polars")] == ["ok"] * 3


def test_polars_skips_only_delta_flba_columns(tmp_parquet: Path) -> None:
    """polars cannot decode DELTA_BYTE_ARRAY on FIXED_LEN_BYTE_ARRAY: that column is skipped and recorded."""
    expected = all_types_table().select(["d38", "i32", "s"])
    write_v2(expected, tmp_parquet, use_dictionary=False, column_encoding={"d38": "DELTA_BYTE_ARRAY"})
    results = assert_readers_agree(tmp_parquet, expected, readers=NON_SPARK)
    assert results["polars"].startswith("partial: compared 2 of 3 columns; d38: DELTA_BYTE_ARRAY on FIXED_LEN")
    assert results["pyarrow"] == results["duckdb"] == "ok"


def test_fastparquet_failure_gives_none_and_reason(tmp_parquet: Path) -> None:
    """fastparquet dies on nullable DELTA_BINARY_PACKED; the subprocess turns that into None plus a reason."""
    table = pa.table({"i": pa.array([1, None, 3, 4], pa.int64())})
    write_v2(table, tmp_parquet, use_dictionary=False, column_encoding={"i": "DELTA_BINARY_PACKED"})
    got, reason = run_fastparquet(tmp_parquet)
    assert got is None and reason.startswith("fastparquet crashed")
    with pytest.warns(UserWarning, match="fastparquet could not read"):
        assert read_fastparquet(tmp_parquet) is None


def test_int96_timestamps(tmp_parquet: Path) -> None:
    """INT96 timestamps over years 1..9999 read back as the same instants (tz labels differ by reader)."""
    expected = pa.table({"ts": pa.array(TIMES, pa.timestamp("us", tz="UTC"))})
    write_v2(expected, tmp_parquet, use_deprecated_int96_timestamps=True, store_schema=False)
    assert assert_readers_agree(tmp_parquet, expected, readers=NON_SPARK) == dict.fromkeys(NON_SPARK, "ok")


def test_many_row_groups_keep_row_order(tmp_parquet: Path) -> None:
    """Rows over many row groups and pages, dictionaries falling back to PLAIN, come back in file order."""
    n = 20_000
    expected = pa.table({
        "i": pa.array([None if i % 11 == 0 else i for i in range(n)], pa.int64()),
        "s": pa.array([None if i % 7 == 0 else f"row{i}" for i in range(n)]),
        "b": pa.array([None if i % 5 == 0 else i % 3 == 0 for i in range(n)]),
    })
    write_v2(expected, tmp_parquet, row_group_size=3_000, data_page_size=1024, dictionary_pagesize_limit=4096)
    results = assert_readers_agree(tmp_parquet, expected, readers=NON_SPARK)
    assert results["fastparquet"].startswith("partial: compared 2 of 3 columns")


@pytest.mark.spark
def test_all_types_spark(tmp_parquet: Path, spark: Any) -> None:
    """Every reader, Spark's vectorized and row-based readers included, agrees on the all-types file."""
    expected = all_types_table()
    write_v2(expected, tmp_parquet, use_dictionary=False, column_encoding={"b": "PLAIN"}, store_schema=False)
    assert assert_readers_agree(tmp_parquet, expected, spark=spark) == dict.fromkeys(ALL_READERS, "ok")


@pytest.mark.spark
def test_wrong_value_reported_by_every_reader(tmp_parquet: Path, spark: Any) -> None:
    """A file that does not hold the expected values fails in every reader, each one named."""
    expected = all_types_table()
    write_v2(expected, tmp_parquet, use_dictionary=False, column_encoding={"b": "PLAIN"}, store_schema=False)
    with pytest.raises(AssertionError) as info:
        assert_readers_agree(tmp_parquet, with_value(expected, "d18", 4, Decimal("0.0257")), spark=spark)
    for reader in ALL_READERS:
        assert f"{reader}: column 'd18' differs at row 4" in str(info.value)


@pytest.mark.spark
def test_dictionary_and_delta_spark(tmp_parquet: Path, spark: Any) -> None:
    """Spark's two readers decode dictionary, RLE-boolean and DELTA_* v2 pages like the rest."""
    expected = all_types_table()
    write_v2(expected, tmp_parquet)
    results = assert_readers_agree(tmp_parquet, expected, spark=spark, readers=("spark_vectorized", "spark_row"))
    assert results == {"spark_vectorized": "ok", "spark_row": "ok"}
    delta = expected.select(["i32", "i64", "s", "bin"])
    write_v2(delta, tmp_parquet, use_dictionary=False, column_encoding={
        "i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED", "s": "DELTA_BYTE_ARRAY",
        "bin": "DELTA_LENGTH_BYTE_ARRAY"})
    results = assert_readers_agree(tmp_parquet, delta, spark=spark, readers=("spark_vectorized", "spark_row"))
    assert results == {"spark_vectorized": "ok", "spark_row": "ok"}


@pytest.mark.spark
def test_int96_timestamps_spark(tmp_parquet: Path, spark: Any) -> None:
    """Spark reads INT96 written without Spark metadata as the same instants."""
    expected = pa.table({"ts": pa.array(TIMES, pa.timestamp("us", tz="UTC"))})
    write_v2(expected, tmp_parquet, use_deprecated_int96_timestamps=True, store_schema=False)
    results = assert_readers_agree(tmp_parquet, expected, spark=spark, readers=("spark_vectorized", "spark_row"))
    assert results == {"spark_vectorized": "ok", "spark_row": "ok"}


def test_spark_readers_recorded_as_skipped_without_session(tmp_parquet: Path) -> None:
    """Without a SparkSession the Spark readers are reported as skipped, never as ok."""
    expected = all_types_table().select(["i32"])
    write_v2(expected, tmp_parquet)
    results = assert_readers_agree(tmp_parquet, expected, readers=("pyarrow", "spark_row"))
    assert results == {"pyarrow": "ok", "spark_row": "skipped: no SparkSession given"}


def test_unknown_reader_rejected(tmp_parquet: Path) -> None:
    """A misspelt reader name is an error, not a silent no-op."""
    write_v2(all_types_table(), tmp_parquet)
    with pytest.raises(ValueError, match="unknown readers"):
        assert_readers_agree(tmp_parquet, all_types_table(), readers=("pyarow",))


def with_value(table: pa.Table, column: str, row: int, value: Any) -> pa.Table:
    """Copy of table with one cell replaced."""
    values = table.column(column).to_pylist()
    values[row] = value
    idx = table.column_names.index(column)
    return table.set_column(idx, table.field(column), pa.array(values, table.field(column).type))


@pytest.mark.parametrize(("column", "row", "value", "shown"), [
    ("i32", 4, 2, "got 2, expected 1"),
    ("f64", 1, 0.0, "got 0.0, expected -0.0"),
    ("f32", 0, None, "got None, expected nan"),
    ("d38", 7, Decimal("2E-10"), "got Decimal('2E-10'), expected Decimal('1E-10')"),
    ("date", 0, dt.date(1, 1, 2), "got datetime.date(1, 1, 2), expected datetime.date(1, 1, 1)"),
    ("ts_utc", 6, dt.datetime(2024, 2, 29, 12, 0, 0, 2), "expected datetime.datetime(2024, 2, 29, 12, 0, 0, 1,"),
    ("s", 1, None, "got None, expected ''"),
    ("bin", 4, b"\x00\x00", r"got b'\x00\x00', expected b'\x00'"),
    ("b", 2, False, "got False, expected None"),
])
def test_assert_tables_equal_names_column_and_row(column: str, row: int, value: Any, shown: str) -> None:
    """One changed cell fails the comparison, naming reader, column, row and both values."""
    expected = all_types_table()
    actual = with_value(expected, column, row, value)
    with pytest.raises(AssertionError) as info:
        assert_tables_equal(actual, expected, "somereader")
    message = str(info.value)
    assert f"somereader: column {column!r} differs at row {row}" in message
    assert shown in message


def test_assert_tables_equal_accepts_legitimate_changes() -> None:
    """Widened ints, large/dictionary strings and binaries, other timestamp units and tz labels compare equal."""
    expected = all_types_table()
    changed = {
        "i8": expected["i8"].cast(pa.int32()),
        "i16": expected["i16"].cast(pa.int64()),
        "s": expected["s"].cast(pa.large_string()).dictionary_encode(),
        "bin": expected["bin"].cast(pa.large_binary()),
        "d7": expected["d7"].cast(pa.decimal128(38, 2)),
        "ts_utc": expected["ts_utc"].cast(pa.timestamp("us", tz="Etc/UTC")),
        "ts_ntz": pa.chunked_array([expected["ts_ntz"].combine_chunks().slice(0, 3),
                                    expected["ts_ntz"].combine_chunks().slice(3)]),
    }
    actual = expected
    for name, col in changed.items():
        actual = actual.set_column(actual.column_names.index(name), name, col)
    assert_tables_equal(actual, expected, "somereader")
    modern = pa.table({"t": pa.array([TIMES[i] for i in (2, 3, 4, 6)], pa.timestamp("us", tz="UTC"))})
    as_ns = pa.table({"t": modern["t"].cast(pa.timestamp("ns", tz="America/New_York"))})
    assert_tables_equal(as_ns, modern, "somereader")


def test_assert_tables_equal_checks_zone_and_type_family() -> None:
    """Zoned vs zone-less timestamps and string vs binary are reported unless explicitly ignored."""
    expected = all_types_table().select(["ts_utc", "s"])
    naive = expected.set_column(0, "ts_utc", expected["ts_utc"].cast(pa.timestamp("us")))
    with pytest.raises(AssertionError, match="zoned vs zone-less"):
        assert_tables_equal(naive, expected, "somereader")
    assert_tables_equal(naive, expected, "somereader", ignore_tz=["ts_utc"])
    as_binary = expected.set_column(1, "s", expected["s"].cast(pa.binary()))
    with pytest.raises(AssertionError, match="column 's' has type binary, expected string"):
        assert_tables_equal(as_binary, expected, "somereader")


def test_assert_tables_equal_shape_errors() -> None:
    """Different column names or row counts are reported with the reader's name."""
    expected = all_types_table()
    with pytest.raises(AssertionError, match="r1: columns"):
        assert_tables_equal(expected.rename_columns([n.upper() for n in expected.column_names]), expected, "r1")
    with pytest.raises(AssertionError, match="r2: 7 rows, expected 8"):
        assert_tables_equal(expected.slice(0, 7), expected, "r2")


def test_nan_as_null_only_when_asked() -> None:
    """fastparquet's float nulls-as-NaN pass only with nan_as_null; NaN still never equals a number."""
    expected = pa.table({"f": pa.array([1.0, None, float("nan")], pa.float64())})
    actual = pa.table({"f": pa.array([1.0, float("nan"), float("nan")], pa.float64())})
    with pytest.raises(AssertionError, match="column 'f' differs at row 1"):
        assert_tables_equal(actual, expected, "fastparquet")
    assert_tables_equal(actual, expected, "fastparquet", nan_as_null=True)
    wrong = pa.table({"f": pa.array([float("nan"), None, float("nan")], pa.float64())})
    with pytest.raises(AssertionError, match="row 0"):
        assert_tables_equal(wrong, expected, "fastparquet", nan_as_null=True)
