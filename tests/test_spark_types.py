"""Spark reads our files with the same schema and rows as files it wrote itself, under its type options."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite

D = decimal.Decimal


def _table() -> pa.Table:
    """Every type Spark maps from Arrow, with nulls."""
    return pa.table({
        "b": pa.array([True, None, False]),
        "i8": pa.array([1, None, -1], pa.int8()),
        "i16": pa.array([1, None, -300], pa.int16()),
        "i32": pa.array([1, None, 2**31 - 1], pa.int32()),
        "i64": pa.array([1, None, -2**63], pa.int64()),
        "f32": pa.array([1.5, None, float("nan")], pa.float32()),
        "f64": pa.array([1.5, None, -0.0]),
        "d5": pa.array([D("1.25"), None, D("-999.99")], pa.decimal128(5, 2)),
        "d15": pa.array([D("1.250"), None, D("-999999999999.999")], pa.decimal128(15, 3)),
        "d30": pa.array([D("1.5"), None, D("-" + "9" * 29 + ".9")], pa.decimal128(30, 1)),
        "date": pa.array([dt.date(2024, 1, 2), None, dt.date(1900, 1, 1)]),
        "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 678901), None, dt.datetime(1970, 1, 1)],
                       pa.timestamp("us", "UTC")),
        "ntz": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 678901), None, dt.datetime(1970, 1, 1)],
                        pa.timestamp("us")),
        "s": pa.array(["héllo", None, ""]),
        "bin": pa.array([b"\x00\x01", None, b""]),
    })


def _parquet_schema(directory: str) -> list[tuple]:
    """(name, physical type, logical type, converted type, length) per leaf of the first data file."""
    name = next(f for f in sorted(os.listdir(directory)) if f.endswith(".parquet") and not f.startswith("."))
    schema = pq.read_metadata(os.path.join(directory, name)).schema
    return [(c.name, c.physical_type, str(c.logical_type), c.converted_type, c.length, c.max_definition_level)
            for c in (schema.column(i) for i in range(len(schema)))]


@pytest.mark.spark
@pytest.mark.parametrize("conf", [
    {},
    {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"},
    {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS"},
    {"spark.sql.parquet.writeLegacyFormat": "true"},
])
def test_same_parquet_schema_and_rows_as_spark(tmp_path, spark, conf):
    """Same Parquet leaf types as Spark's v2 writer, and Spark reads both back identically."""
    table = _table()
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    gpuwrite.write_dataset(table, ours, options=conf)
    # pyspark maps zone-less Arrow timestamps to TIMESTAMP_NTZ only under this setting; gpuwrite always does.
    conf = {**conf, "spark.sql.timestampType": "TIMESTAMP_NTZ"}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        df = spark.createDataFrame(table)
        df.coalesce(1).write.option("parquet.writer.version", "v2").parquet(str(theirs))
    finally:
        for key in conf:
            spark.conf.unset(key)
    assert _parquet_schema(str(ours)) == _parquet_schema(str(theirs))
    a, b = spark.read.parquet(str(ours)), spark.read.parquet(str(theirs))
    assert a.schema == b.schema
    assert sorted(map(repr, a.collect())) == sorted(map(repr, b.collect()))
    meta = pq.read_metadata(next(str(p) for p in ours.iterdir() if p.suffix == ".parquet")).metadata
    spark_meta = pq.read_metadata(next(str(p) for p in theirs.iterdir() if p.suffix == ".parquet")).metadata
    assert meta[b"org.apache.spark.sql.parquet.row.metadata"] == spark_meta[b"org.apache.spark.sql.parquet.row.metadata"]
