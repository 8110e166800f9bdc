"""Spark's hash() and bucket ids, bit for bit, for every supported key type (checked against Spark itself)."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pytest

from gpuwrite.spark.policy.buckets import bucket_ids
from gpuwrite.spark.policy.hashing import spark_hash

D = decimal.Decimal


def _keys() -> pa.Table:
    """Key columns of every hashable type, with nulls, zeros of both signs, NaN, extremes and unicode."""
    return pa.table({
        "b": pa.array([True, False, None, True, False, True, None, False]),
        "i8": pa.array([0, -1, 127, -128, None, 5, 6, 7], pa.int8()),
        "i16": pa.array([0, -1, 32767, -32768, None, 5, 6, 7], pa.int16()),
        "i32": pa.array([0, -1, 2**31 - 1, -2**31, None, 1, 42, 7], pa.int32()),
        "i64": pa.array([0, -1, 2**63 - 1, -2**63, None, 1, 42, 7], pa.int64()),
        "f32": pa.array([0.0, -0.0, float("nan"), float("inf"), None, 1.5, -2.25, 3.4e38], pa.float32()),
        "f64": pa.array([0.0, -0.0, float("nan"), float("-inf"), None, 1.5, -2.25, 1e308]),
        "d9": pa.array([D("0"), D("-1.25"), D("9999999.99"), None, D("1"), D("0.01"), D("-0.01"), D("3")],
                       pa.decimal128(9, 2)),
        "d38": pa.array([D("0"), D("-1.25"), D("9" * 28 + ".99"), None, D("1"), D("0.01"), D("-0.01"),
                         D("-" + "9" * 30)], pa.decimal128(38, 2)),
        "date": pa.array([dt.date(1970, 1, 1), dt.date(1, 1, 1), dt.date(9999, 12, 31), None,
                          dt.date(2024, 2, 29), dt.date(1582, 10, 4), dt.date(1969, 12, 31), dt.date(2000, 1, 1)]),
        "ts": pa.array([0, -1, 10**15, None, 1_700_000_000_123_456, -62_135_596_800_000_000, 1, 2],
                       pa.timestamp("us", "UTC")),
        "s": pa.array(["", "a", "Spark", "日本語", None, "abcd", "abcde", "\x80\xff"]),
        "bin": pa.array([b"", b"a", b"\x80", b"\xff\xfe\xfd", None, b"abcd", b"abcdefg", b"\x00"], pa.binary()),
    })


def test_known_vectors():
    """Spark's documented values: hash(1) and hash(1L), hash('a'), hash('Spark', 123, 2) style folding."""
    t = pa.table({"i": pa.array([1], pa.int32()), "l": pa.array([1], pa.int64()), "s": ["a"]})
    assert spark_hash(t, ["i"]).tolist() == [-559580957]
    assert spark_hash(t, ["l"]).tolist() == [-1712319331]
    assert spark_hash(t, ["s"]).tolist() == [1485273170]
    t2 = pa.table({"s": ["Spark"], "x": pa.array([123], pa.int32()), "y": pa.array([2], pa.int32())})
    assert spark_hash(t2, ["s", "x", "y"]).tolist() == [-1321691492]
    assert bucket_ids(pa.table({"i": pa.array([-3], pa.int32())}), ["i"], 4).tolist()[0] in range(4)


@pytest.mark.spark
def test_every_type_matches_spark_hash(spark):
    """hash(col) for each type, and pmod(hash(all columns), 7), equal Spark's own."""
    table = _keys()
    df = spark.createDataFrame(table)
    names = table.column_names
    exprs = [f"hash(`{c}`) AS h_{c}" for c in names]
    exprs.append(f"pmod(hash({', '.join(f'`{c}`' for c in names)}), 7) AS bucket")
    rows = df.selectExpr(*exprs).collect()
    for c in names:
        theirs = [r[f"h_{c}"] for r in rows]
        assert spark_hash(table, [c]).tolist() == theirs, c
    assert bucket_ids(table, names, 7).tolist() == [r["bucket"] for r in rows]


@pytest.mark.spark
def test_random_keys_match_spark(spark):
    """Random ints, longs, strings: bucket ids for 16 buckets equal Spark's pmod(hash(...), 16)."""
    rng = np.random.default_rng(5)
    n = 2_000
    table = pa.table({"i": pa.array(rng.integers(-2**31, 2**31, n), pa.int32()),
                      "l": pa.array(rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)),
                      "s": pa.array([rng.bytes(int(k)).hex()[: int(k)] for k in rng.integers(0, 20, n)])})
    rows = spark.createDataFrame(table).selectExpr("pmod(hash(i, l, s), 16) AS b").collect()
    assert bucket_ids(table, ["i", "l", "s"], 16).tolist() == [r["b"] for r in rows]


def test_nanosecond_keys_hash_the_microseconds_written():
    """timestamp[ns] keys hash as the microseconds the file holds: cut toward zero, as
    allow_truncated_timestamps writes them (-1,999 ns is -1 us, not -2)."""
    ns = pa.table({"t": pa.array([-1_999, 1_999, -2_000, None], pa.timestamp("ns", "UTC"))})
    us = pa.table({"t": pa.array([-1, 1, -2, None], pa.timestamp("us", "UTC"))})
    assert spark_hash(ns, ["t"]).tolist() == spark_hash(us, ["t"]).tolist()
