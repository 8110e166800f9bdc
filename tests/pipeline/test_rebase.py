"""Calendar rebase on write (LEGACY / EXCEPTION / CORRECTED) and its footer keys, against Spark itself."""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite import GpuwriteError
from gpuwrite.spark.policy.footer_keys import java_string_hash

DATES = [dt.date(1, 1, 1), dt.date(1000, 2, 28), dt.date(1000, 3, 1), dt.date(1500, 3, 1), dt.date(1582, 10, 4),
         dt.date(1582, 10, 14), dt.date(1582, 10, 15), dt.date(1899, 12, 31), dt.date(2000, 1, 1), None]
TIMES = [dt.datetime(1, 1, 1, 0, 0, 0, 1), dt.datetime(1000, 3, 1, 12, 34, 56, 789000),
         dt.datetime(1582, 10, 10, 23, 59, 59), dt.datetime(1899, 12, 31, 23, 59, 59, 999999),
         dt.datetime(1900, 1, 1), dt.datetime(2024, 6, 1, 8, 0), None, dt.datetime(1850, 7, 1, 23, 30),
         dt.datetime(1960, 1, 1), dt.datetime(1883, 11, 18, 20, 0)]


def _table() -> pa.Table:
    """Dates and zoned timestamps around every calendar switch."""
    return pa.table({"d": pa.array(DATES), "t": pa.array(TIMES, pa.timestamp("us", "UTC")),
                     "k": pa.array(range(len(DATES)), pa.int32())})


def _raw(directory, column: str) -> list:
    """The stored values of a column as integers (days, micros) or INT96 bytes, in row order by k."""
    name = next(f for f in sorted(os.listdir(directory)) if f.endswith(".parquet") and not f.startswith("."))
    t = pq.read_table(os.path.join(directory, name), coerce_int96_timestamp_unit="us").sort_by("k")
    col = t.column(column)
    target = pa.int32() if pa.types.is_date(col.type) else pa.int64()
    return col.cast(target).to_pylist()


def test_java_string_hash():
    """String.hashCode, the basis of parquet-java's footer key order."""
    assert java_string_hash("hello") == 99162322 and java_string_hash("") == 0
    assert java_string_hash("org.apache.spark.version") == int(np.int32(np.uint32(
        sum(ord(c) * 31 ** (len("org.apache.spark.version") - 1 - i)
            for i, c in enumerate("org.apache.spark.version")) % 2**32)))


def test_exception_mode_names_column_and_value(tmp_path):
    """EXCEPTION refuses ancient values with the column and the value; modern values pass."""
    table = _table()
    with pytest.raises(GpuwriteError, match=r"'d'.*0001-01-01"):
        gpuwrite.write_table(table, tmp_path / "x.parquet", datetime_rebase="EXCEPTION")
    modern = table.slice(8, 1)
    gpuwrite.write_table(modern, tmp_path / "ok.parquet", datetime_rebase="EXCEPTION", int96_rebase="EXCEPTION")
    assert not os.path.exists(tmp_path / "x.parquet")


def test_unknown_session_zone_named(tmp_path):
    """LEGACY rebase in a zone that does not exist names the zone."""
    old = pa.table({"t": pa.array([dt.datetime(1800, 1, 1)], pa.timestamp("us", "UTC"))})
    with pytest.raises(GpuwriteError, match="Mars/Olympus"):
        gpuwrite.write_table(old, tmp_path / "o.parquet", int96_rebase="LEGACY", time_zone="Mars/Olympus")
    assert not os.path.exists(tmp_path / "o.parquet")


@pytest.mark.spark
@pytest.mark.parametrize("ts_type, mode, zone", [
    ("INT96", "LEGACY", "UTC"), ("TIMESTAMP_MICROS", "LEGACY", "UTC"), ("INT96", "CORRECTED", "UTC"),
    ("TIMESTAMP_MICROS", "CORRECTED", "UTC"), ("TIMESTAMP_MICROS", "LEGACY", "America/Los_Angeles"),
    ("INT96", "LEGACY", "Europe/Paris"), ("TIMESTAMP_MICROS", "LEGACY", "Asia/Kolkata"),
    ("INT96", "LEGACY", "Australia/Sydney"), ("TIMESTAMP_MICROS", "LEGACY", "+05:30"),
    ("TIMESTAMP_MICROS", "LEGACY", "GMT+05:30"), ("INT96", "LEGACY", "GMT-3"),
])
def test_stored_values_and_footer_as_spark(tmp_path, spark, ts_type, mode, zone):
    """The stored days / micros / INT96 and the footer keys (in order) equal Spark's, in UTC, fixed-offset and
    region session zones (local mean time before standard time included); Spark reads ours back."""
    table = _table()
    conf = {"spark.sql.parquet.datetimeRebaseModeInWrite": mode, "spark.sql.parquet.int96RebaseModeInWrite": mode,
            "spark.sql.parquet.outputTimestampType": ts_type, "spark.sql.session.timeZone": zone}
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    gpuwrite.write_dataset(table, ours, options=conf)
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        spark.createDataFrame(table).coalesce(1).write.option("parquet.writer.version", "v2").parquet(str(theirs))
        assert _raw(ours, "d") == _raw(theirs, "d")
        assert _raw(ours, "t") == _raw(theirs, "t")
        ours_file = next(p for p in ours.iterdir() if p.suffix == ".parquet")
        theirs_file = next(p for p in theirs.iterdir() if p.suffix == ".parquet")
        assert list(pq.read_metadata(ours_file).metadata) == list(pq.read_metadata(theirs_file).metadata)
        for read_mode in ("CORRECTED", "LEGACY"):
            spark.conf.set("spark.sql.parquet.datetimeRebaseModeInRead", read_mode)
            spark.conf.set("spark.sql.parquet.int96RebaseModeInRead", read_mode)
            cols = ("k", "cast(d as string)", "cast(t as string)")
            a = sorted(spark.read.parquet(str(ours)).selectExpr(*cols).collect())
            b = sorted(spark.read.parquet(str(theirs)).selectExpr(*cols).collect())
            assert a == b
    finally:
        for key in [*conf, "spark.sql.parquet.datetimeRebaseModeInRead", "spark.sql.parquet.int96RebaseModeInRead"]:
            spark.conf.unset(key)


@pytest.mark.spark
@pytest.mark.parametrize("column, value, fails", [
    ("d", dt.date(1582, 10, 14), True), ("d", dt.date(1582, 10, 15), False),
    ("t", dt.datetime(1899, 12, 31, 23, 59, 59, 999999), True), ("t", dt.datetime(1900, 1, 1), False),
])
def test_exception_boundaries_as_spark(tmp_path, spark, column, value, fails):
    """EXCEPTION fails exactly where Spark's writer fails."""
    t = pa.table({column: pa.array([value], pa.date32() if column == "d" else pa.timestamp("us", "UTC"))})
    conf = {"spark.sql.parquet.datetimeRebaseModeInWrite": "EXCEPTION",
            "spark.sql.parquet.int96RebaseModeInWrite": "EXCEPTION"}
    spark_failed = False
    for key, v in conf.items():
        spark.conf.set(key, v)
    try:
        spark.createDataFrame(t).coalesce(1).write.parquet(str(tmp_path / "s"))
    except Exception as exc:  # Spark raises a wrapped SparkUpgradeException
        spark_failed = "ancient" in str(exc).lower() or "rebase" in str(exc).lower() or "1582" in str(exc)
        assert spark_failed, str(exc)[:2000]
    finally:
        for key in conf:
            spark.conf.unset(key)
    ours_failed = False
    try:
        gpuwrite.write_table(t, tmp_path / "o.parquet", options=conf)
    except GpuwriteError:
        ours_failed = True
    assert spark_failed == ours_failed == fails
