"""Iceberg partition transform kernels and the standard murmur3_x86_32 against mmh3 and pyiceberg's own
transforms (the reference implementation of the Iceberg spec in Python)."""

from __future__ import annotations

from decimal import Decimal

import mmh3
import numpy as np
from gpuwrite.kernels.hashing.murmur3 import hash_bytes, hash_bytes_x86_32, java_big_integer_bytes
from gpuwrite.kernels.hashing.transforms import (
    DAY,
    HOUR,
    MICROS_PER_DAY,
    MONTH,
    YEAR,
    bucket_bytes,
    bucket_long,
    temporal,
    truncate_long,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import DateType, DecimalType, IntegerType, LongType, StringType, TimestampType

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONGS = st.integers(-(2**63), 2**63 - 1)
MICROS = st.integers(-(6 * 10**16), 6 * 10**16)  # about +-1900 years (Python datetimes stop at year 1)


def _bytes_layout(values: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in values])
    return offsets, np.frombuffer(b"".join(values) or b"\0", dtype=np.uint8)


def test_iceberg_hash_of_iceberg() -> None:
    data = np.frombuffer(b"iceberg", dtype=np.uint8)
    assert hash_bytes_x86_32(data, 0, 7, 0) == 1210000089  # SPEC: Iceberg spec, appendix B
    assert hash_bytes(data, 0, 7, 0) != 1210000089  # Spark's tail differs: the reason for the second variant


@SETTINGS
@given(st.binary(max_size=40), st.integers(0, 2**32 - 1))
def test_standard_murmur3_equals_mmh3(value: bytes, seed: int) -> None:
    data = np.frombuffer(value + b"\0", dtype=np.uint8)
    signed_seed = np.uint32(seed).view(np.int32)
    assert hash_bytes_x86_32(data, 0, len(value), signed_seed) == mmh3.hash(value, seed)


@SETTINGS
@given(st.lists(LONGS, min_size=1, max_size=50), st.integers(1, 1000))
def test_bucket_long_equals_pyiceberg(values: list[int], n: int) -> None:
    out = np.empty(len(values), dtype=np.int64)
    bucket_long(np.array(values, dtype=np.int64), n, out)
    expect = BucketTransform(n).transform(LongType())
    assert out.tolist() == [expect(v) for v in values]
    small = [v for v in values if -(2**31) <= v < 2**31]  # ints hash as longs (Iceberg spec)
    assert [BucketTransform(n).transform(IntegerType())(v) for v in small] == [expect(v) for v in small]


@SETTINGS
@given(st.lists(st.text(max_size=20), min_size=1, max_size=30), st.integers(1, 100))
def test_bucket_strings_equal_pyiceberg(values: list[str], n: int) -> None:
    offsets, data = _bytes_layout([v.encode() for v in values])
    out = np.empty(len(values), dtype=np.int64)
    bucket_bytes(offsets, data, n, out)
    assert out.tolist() == [BucketTransform(n).transform(StringType())(v) for v in values]


@SETTINGS
@given(st.lists(st.integers(-(10**38) + 1, 10**38 - 1), min_size=1, max_size=30), st.integers(1, 64))
def test_bucket_decimals_equal_pyiceberg(unscaled: list[int], n: int) -> None:
    """Minimal big-endian two's-complement unscaled bytes (BigInteger.toByteArray), then the byte hash."""
    lo = np.array([u & (2**64 - 1) for u in unscaled], dtype=np.uint64).view(np.int64)
    hi = np.array([u >> 64 for u in unscaled], dtype=np.int64)
    offsets = np.zeros(len(unscaled) + 1, dtype=np.int64)
    data = np.zeros(16 * len(unscaled), dtype=np.uint8)
    java_big_integer_bytes(lo, hi, offsets, data)
    out = np.empty(len(unscaled), dtype=np.int64)
    bucket_bytes(offsets, data, n, out)
    expect = BucketTransform(n).transform(DecimalType(38, 3))
    assert out.tolist() == [expect(Decimal(f"{u}E-3")) for u in unscaled]


@SETTINGS
@given(st.lists(LONGS.filter(lambda v: abs(v) < 2**62), min_size=1, max_size=50), st.integers(1, 10**6))
def test_truncate_long_equals_pyiceberg(values: list[int], width: int) -> None:
    out = np.empty(len(values), dtype=np.int64)
    truncate_long(np.array(values, dtype=np.int64), width, out)
    assert out.tolist() == [TruncateTransform(width).transform(LongType())(v) for v in values]


@SETTINGS
@given(st.lists(st.integers(-719162, 2932896), min_size=1, max_size=50))  # years 1..9999
def test_date_transforms_equal_pyiceberg(days: list[int]) -> None:
    values = np.array(days, dtype=np.int64)
    for what, transform in ((YEAR, YearTransform()), (MONTH, MonthTransform()), (DAY, DayTransform())):
        out = np.empty(len(days), dtype=np.int64)
        temporal(values, np.int64(1), what, out)
        assert out.tolist() == [transform.transform(DateType())(d) for d in days], transform


@SETTINGS
@given(st.lists(MICROS, min_size=1, max_size=50))
def test_timestamp_transforms_equal_pyiceberg(micros: list[int]) -> None:
    values = np.array(micros, dtype=np.int64)
    for what, transform in ((YEAR, YearTransform()), (MONTH, MonthTransform()), (DAY, DayTransform()),
                            (HOUR, HourTransform())):
        out = np.empty(len(micros), dtype=np.int64)
        temporal(values, np.int64(MICROS_PER_DAY), what, out)
        assert out.tolist() == [transform.transform(TimestampType())(m) for m in micros], transform


def test_edges_around_the_epoch() -> None:
    micros = np.array([-1, 0, 1, -MICROS_PER_DAY, MICROS_PER_DAY - 1], dtype=np.int64)
    out = np.empty(5, dtype=np.int64)
    temporal(micros, np.int64(MICROS_PER_DAY), DAY, out)
    assert out.tolist() == [-1, 0, 0, -1, 0]
    temporal(micros, np.int64(MICROS_PER_DAY), MONTH, out)
    assert out.tolist() == [-1, 0, 0, -1, 0]
    truncate_long(np.array([-1, -10, 9, 10], dtype=np.int64), 10, out[:4])
    assert out[:4].tolist() == [-10, -10, 0, 10]
