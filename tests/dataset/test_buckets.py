"""Bucketed write_dataset: Spark's bucket files, the same rows per bucket, and shuffle-free bucketed joins."""

from __future__ import annotations

import os
import re
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite import GpuwriteError

BUCKET = re.compile(r"_(\d{5})\.c\d{3}\.snappy\.parquet$")


def _by_bucket(root) -> dict[tuple[str, int], Counter]:
    """(relative directory, bucket id) -> rows of that bucket's files."""
    out: dict[tuple[str, int], Counter] = {}
    for folder, _, files in os.walk(root):
        for f in files:
            m = BUCKET.search(f)
            if not m or f.startswith("."):
                continue
            t = pq.read_table(os.path.join(folder, f), partitioning=None)
            rows = Counter(zip(*[t.column(c).to_pylist() for c in sorted(t.column_names)], strict=True))
            key = (os.path.relpath(folder, root), int(m.group(1)))
            out.setdefault(key, Counter()).update(rows)
    return out


def _table(n: int, seed: int) -> pa.Table:
    """Keys of several types, some nulls, and a payload."""
    rng = np.random.default_rng(seed)
    return pa.table({
        "k": pa.array(rng.integers(0, 500, n), pa.int64()),
        "s": pa.array([f"user{v}" if v % 17 else None for v in rng.integers(0, 300, n)]),
        "p": pa.array([["x", "y"][int(v)] for v in rng.integers(0, 2, n)]),
        "v": pa.array(rng.random(n)),
    })


def test_bucket_arguments_validated(tmp_path):
    """Bad bucket specs name the problem."""
    t = pa.table({"a": [1], "b": [2]})
    with pytest.raises(GpuwriteError, match="number of buckets"):
        gpuwrite.write_dataset(t, tmp_path / "x", bucket_by=(0, ["a"]))
    with pytest.raises(GpuwriteError, match="also a partition column"):
        gpuwrite.write_dataset(t, tmp_path / "x", bucket_by=(4, ["a"]), partition_by=["a"])
    with pytest.raises(GpuwriteError, match="'zz'"):
        gpuwrite.write_dataset(t, tmp_path / "x", bucket_by=(4, ["zz"]))
    assert not os.path.exists(tmp_path / "x")


def test_bucket_file_names(tmp_path):
    """`part-00000-<uuid>_00003.c000.snappy.parquet`, one file per non-empty bucket."""
    out = tmp_path / "b"
    gpuwrite.write_dataset(_table(200, 1), out, bucket_by=(4, ["k"]))
    names = sorted(f for f in os.listdir(out) if not f.startswith("_"))
    assert len(names) == 4 and all(re.fullmatch(r"part-00000-[0-9a-f-]{36}_0000\d\.c000\.snappy\.parquet", n)
                                   for n in names)


@pytest.mark.spark
@pytest.mark.parametrize("partitioned", [False, True])
def test_same_rows_per_bucket_as_spark_and_no_shuffle_join(tmp_path, spark, partitioned):
    """Every bucket holds the rows of Spark's own bucket file; a table over our files joins a Spark-written
    bucketed table without an Exchange and gives the right answer."""
    table = _table(3_000, 2)
    ours = tmp_path / "ours"
    partition_by = ["p"] if partitioned else None
    gpuwrite.write_dataset(table, ours, bucket_by=(8, ["k", "s"]), partition_by=partition_by)
    suffix = "p" if partitioned else "f"
    theirs_name, ours_name = f"spark_bucketed_{suffix}", f"gpuwrite_bucketed_{suffix}"
    writer = spark.createDataFrame(table).coalesce(1).write.mode("overwrite").bucketBy(8, "k", "s")
    if partitioned:
        writer = writer.partitionBy("p")
    writer.saveAsTable(theirs_name)
    location = spark.sql(f"DESCRIBE FORMATTED {theirs_name}").filter("col_name = 'Location'").collect()[0][1]
    theirs_dir = location.replace("file:", "")
    assert _by_bucket(ours) == _by_bucket(theirs_dir)

    partition_clause = "PARTITIONED BY (p)" if partitioned else ""
    columns = "k BIGINT, s STRING, v DOUBLE, p STRING"
    spark.sql(f"DROP TABLE IF EXISTS {ours_name}")
    spark.sql(f"CREATE TABLE {ours_name} ({columns}) USING parquet {partition_clause} "
              f"CLUSTERED BY (k, s) INTO 8 BUCKETS LOCATION '{ours}'")
    if partitioned:
        spark.sql(f"MSCK REPAIR TABLE {ours_name}")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    joined = spark.sql(f"SELECT a.k, a.s, a.v, b.v FROM {ours_name} a JOIN {theirs_name} b "
                       f"ON a.k = b.k AND a.s = b.s")
    plan = joined._jdf.queryExecution().executedPlan().toString()
    assert "SortMergeJoin" in plan and "Exchange" not in plan, plan
    expected = spark.sql(f"SELECT a.k, a.s, a.v, b.v FROM {theirs_name} a JOIN {theirs_name} b "
                         f"ON a.k = b.k AND a.s = b.s").collect()
    assert sorted(joined.collect()) == sorted(expected) and len(expected) > 0
    spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


HIVE_FILE = re.compile(r"^(\d{5})_0_part-00000-[0-9a-f-]{36}_(\d{5})\.c000\.snappy\.parquet$")


@pytest.mark.spark
def test_hive_compatible_buckets_as_spark(tmp_path, spark):
    """HiveHash buckets and the `00003_0_` prefix: the same rows per bucket file as Spark's Hive-compatible
    bucketed insert, for keys of several types (ints, longs, strings, dates, timestamps, decimals, doubles)."""
    import datetime as dt
    import decimal

    rng = np.random.default_rng(4)
    n = 600
    table = pa.table({
        "i": pa.array(rng.integers(-1000, 1000, n), pa.int32()),
        "l": pa.array(rng.integers(-2**40, 2**40, n), pa.int64()),
        "s": pa.array([f"k{v}" if v % 11 else None for v in rng.integers(0, 99, n)]),
        "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=int(v)) for v in rng.integers(-9000, 9000, n)]),
        "t": pa.array(rng.integers(-10**15, 10**15, n), pa.timestamp("us", "UTC")),
        "m": pa.array([decimal.Decimal(int(v)).scaleb(-2) for v in rng.integers(-10**6, 10**6, n)],
                      pa.decimal128(20, 2)),
        "f": pa.array(rng.normal(size=n).round(3)),
        "v": pa.array(range(n), pa.int64()),
    })
    keys = ["i", "l", "s", "d", "t", "m", "f"]
    for key in keys:
        ours = tmp_path / f"ours_{key}"
        gpuwrite.write_dataset(table, ours, bucket_by=(5, [key]), hive_compatible_buckets=True)
        name = f"hive_bucketed_{key}"
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        spark.createDataFrame(table).coalesce(1).write.option("__hive_compatible_bucketed_table_insertion__",
                                                             "true").bucketBy(5, key).saveAsTable(name)
        location = spark.sql(f"DESCRIBE FORMATTED {name}").filter("col_name = 'Location'").collect()[0][1]
        theirs = location.replace("file:", "")
        for directory in (ours, theirs):
            names = [f for f in os.listdir(directory) if f.endswith(".parquet") and not f.startswith(".")]
            assert names and all(HIVE_FILE.match(f) and HIVE_FILE.match(f).group(1) == HIVE_FILE.match(f).group(2)
                                 for f in names), names
        assert _by_bucket(ours) == _by_bucket(theirs), key
