"""Partition values from gpuwrite's kernels equal pyiceberg's own Arrow transforms (pyiceberg-core)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import (
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
    TimestamptzType,
)

from gpuwrite.iceberg.transforms import apply_transform

UTC = dt.timezone.utc
COLUMNS = {
    "long": (LongType(), pa.array([0, -1, 7, 2**40, None, -(2**50)], pa.int64())),
    "int": (IntegerType(), pa.array([0, -1, 7, 123456, None, -99], pa.int32())),
    "string": (StringType(), pa.array(["", "iceberg", "é€𝄞 unicode", None, "a" * 40, "b"], pa.large_string())),
    "date": (DateType(), pa.array([dt.date(1970, 1, 1), dt.date(1969, 12, 31), None, dt.date(2024, 2, 29),
                                  dt.date(1900, 3, 1), dt.date(2400, 12, 31)], pa.date32())),
    "ts": (TimestampType(), pa.array([dt.datetime(1970, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999999), None,
                                      dt.datetime(2024, 2, 29, 13), dt.datetime(1901, 1, 1), dt.datetime(2100, 7, 1)],
                                     pa.timestamp("us"))),
    "tstz": (TimestamptzType(), pa.array([dt.datetime(2024, 1, 1, tzinfo=UTC), None,
                                          dt.datetime(1960, 6, 1, 5, tzinfo=UTC)], pa.timestamp("us", "UTC"))),
    "decimal": (DecimalType(20, 3), pa.array([Decimal("0.000"), Decimal("-1.234"), None, Decimal("12345678901234.567"),
                                              Decimal("-0.001")], pa.decimal128(20, 3))),
}
CASES = [(IdentityTransform(), c) for c in COLUMNS] + [
    (BucketTransform(n), c) for n in (1, 16, 1000) for c in ("long", "int", "string", "date", "ts", "tstz", "decimal")
] + [(TruncateTransform(w), c) for w in (1, 3, 10) for c in ("long", "int", "string", "decimal")] + [
    (t, c) for t in (YearTransform(), MonthTransform(), DayTransform()) for c in ("date", "ts", "tstz")
] + [(HourTransform(), c) for c in ("ts", "tstz")]


@pytest.mark.parametrize(("transform", "column"), CASES, ids=[f"{t}-{c}" for t, c in CASES])
def test_partition_values_equal_pyiceberg(transform, column: str) -> None:
    iceberg_type, values = COLUMNS[column]
    expected = transform.pyarrow_transform(iceberg_type)(values)
    got = apply_transform(transform, values)
    assert got.to_pylist() == expected.to_pylist()
