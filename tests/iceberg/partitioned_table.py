"""The partitioned Iceberg table of the table and error tests: its schema, a spec with an identity, a day, a
truncate and a bucket field, and rows for it."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pyarrow as pa
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestamptzType

UTC = dt.timezone.utc


PARTITIONED = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
    NestedField(3, "at", TimestamptzType()),
    NestedField(4, "name", StringType()),
    NestedField(5, "amount", DoubleType()),
)
SPEC = PartitionSpec(
    PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"),
    PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="at_day"),
    PartitionField(source_id=1, field_id=1002, transform=TruncateTransform(100), name="id_trunc"),
    PartitionField(source_id=4, field_id=1003, transform=BucketTransform(4), name="name_bucket"),
)


def partitioned_rows(n: int) -> pa.Table:
    """`n` rows of PARTITIONED, the same for a given `n`: some null regions, NaN amounts, times over four days."""
    rng = np.random.default_rng(5)
    start = dt.datetime(2024, 3, 1, tzinfo=UTC)
    return pa.Table.from_pylist([{
        "id": k, "region": None if k % 17 == 0 else ["eu", "us", "ap"][k % 3],
        "at": start + dt.timedelta(hours=int(rng.integers(-30, 60))),
        "name": f"customer-{int(rng.integers(0, 50))}", "amount": math.nan if k % 23 == 0 else float(k) * 1.5,
    } for k in range(n)], schema=PARTITIONED.as_arrow())
