"""Spark's buckets: `bucket_by=(n, columns)` checked as Spark checks it, and each row's bucket id,
pmod(hash(columns...), n) with Spark's Murmur3 or, for Hive-compatible buckets, HiveHash."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...errors import GpuwriteError
from .hashing import hive_hash, spark_hash

MAX_BUCKETS = 100_000  # SPEC: SQLConf.BUCKETING_MAX_BUCKETS default


def hive_bucket_ids(table: pa.Table, columns: list[str], num_buckets: int) -> np.ndarray:
    """pmod(hivehash & Int.MaxValue, num_buckets): Hive-compatible bucket id per row."""
    return np.mod(hive_hash(table, columns).astype(np.int64) & 0x7FFFFFFF, num_buckets).astype(np.int32)


def bucket_ids(table: pa.Table, columns: list[str], num_buckets: int, hive: bool = False) -> np.ndarray:
    """pmod(hash(columns...), num_buckets): Spark's bucket id per row (Hive's with `hive`)."""
    if hive:
        return hive_bucket_ids(table, columns, num_buckets)
    return np.mod(spark_hash(table, columns).astype(np.int64), num_buckets).astype(np.int32)


@dataclass(frozen=True)
class BucketSpec:
    """Bucketing of a dataset write: Spark's Murmur3 buckets, or Hive-compatible ones (HiveHash, file prefix)."""

    num_buckets: int
    columns: list[str]
    hive_compatible: bool = False

    def ids(self, table: pa.Table) -> np.ndarray:
        """Bucket id of every row of `table`."""
        return bucket_ids(table, self.columns, self.num_buckets, hive=self.hive_compatible)


def parse_bucket_by(bucket_by: tuple[int, Sequence[str]] | None, partition_by: Sequence[str],
                    hive_compatible: bool = False) -> BucketSpec | None:
    """Validate `bucket_by=(num_buckets, columns)` as Spark does; None when there is no bucketing."""
    if bucket_by is None:
        return None
    try:
        num, columns = bucket_by
    except (TypeError, ValueError):
        raise GpuwriteError(f"bucket_by must be (num_buckets, [columns]), got {bucket_by!r}") from None
    names: list[str] = [columns] if isinstance(columns, str) else list(columns)
    if not isinstance(num, int) or isinstance(num, bool) or not 0 < num <= MAX_BUCKETS:
        raise GpuwriteError(f"bucket_by: number of buckets must be an integer in 1..100000, got {num!r}")
    if not names:
        raise GpuwriteError("bucket_by: at least one bucket column is needed")
    both = sorted(set(names) & set(partition_by))
    if both:
        raise GpuwriteError(f"bucket_by column {both[0]!r} is also a partition column; Spark refuses that")
    return BucketSpec(num, names, hive_compatible)
