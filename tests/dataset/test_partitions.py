"""Partitioned write_dataset: Spark's directory names, escaping, default partition, rows per directory."""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.spark.policy.partitions import escape_path_name, java_float_string, partition_fragment

TRICKY = ["a/b", "x=y", "50%", "c:d", "#1", "with space", "ünïcödé 日本", "", None, "q?*", "plain"]


def _layout(root):
    """relative directory -> Counter of rows (as tuples) in the data files below it."""
    out = {}
    for folder, _, files in os.walk(root):
        data = [f for f in files if f.endswith(".parquet") and not f.startswith((".", "_"))]
        if not data:
            continue
        rows = Counter()
        for f in data:
            t = pq.read_table(os.path.join(folder, f), partitioning=None)
            rows.update(zip(*[t.column(c).to_pylist() for c in sorted(t.column_names)], strict=True))
        out[os.path.relpath(folder, root)] = rows
    return out


def test_escaping_and_default_partition():
    """Spark's escape set, upper-case hex, and nulls / empty strings in the default partition."""
    assert escape_path_name("a/b=c%d:e#f") == "a%2Fb%3Dc%25d%3Ae%23f"
    assert escape_path_name("with space ü") == "with space ü"
    assert partition_fragment("k", None) == partition_fragment("k", "") == "k=__HIVE_DEFAULT_PARTITION__"
    assert partition_fragment("a=b", "x") == "a%3Db=x"
    assert [java_float_string(v) for v in (1.0, 1e10, 1.5e-5, 0.001, -2.5)] == \
        ["1.0", "1.0E10", "1.5E-5", "0.001", "-2.5"]


def test_partition_columns_left_out_and_files_named(tmp_path):
    """Files hold only the data columns; names use the dynamic `.c000` form; counters restart per directory."""
    table = pa.table({"k": ["a", "b", "a", None], "v": pa.array([1, 2, 3, 4], pa.int64())})
    out = tmp_path / "p"
    result = gpuwrite.write_dataset(table, out, partition_by=["k"], max_records_per_file=1)
    dirs = sorted(d for d in os.listdir(out) if not d.startswith("_"))
    assert dirs == ["k=__HIVE_DEFAULT_PARTITION__", "k=a", "k=b"]
    a_files = sorted(os.listdir(out / "k=a"))
    assert len(a_files) == 2 and a_files[0].endswith(".c000.snappy.parquet") and a_files[1].endswith(".c001.snappy.parquet")
    assert pq.read_table(out / "k=a" / a_files[0], partitioning=None).column_names == ["v"]
    assert result.num_rows == 4 and (out / "_SUCCESS").exists()


@pytest.mark.spark
def test_same_directories_and_rows_as_spark(tmp_path, spark):
    """Values needing escaping, nulls, empty strings, ints, dates, booleans: the same directories and the same
    rows in each as Spark's partitionBy."""
    n = len(TRICKY)
    table = pa.table({
        "s": pa.array(TRICKY),
        "i": pa.array([i % 3 if i % 4 else None for i in range(n)], pa.int32()),
        "d": pa.array([dt.date(2024, 1, 1 + i % 2) for i in range(n)]),
        "b": pa.array([i % 2 == 0 for i in range(n)]),
        "v": pa.array(range(n), pa.int64()),
        "w": pa.array([f"row{i}" for i in range(n)]),
    })
    ours, theirs = tmp_path / "ours", tmp_path / "spark"
    gpuwrite.write_dataset(table, ours, partition_by=["s", "i", "d", "b"])
    spark.createDataFrame(table).coalesce(1).write.partitionBy("s", "i", "d", "b").parquet(str(theirs))
    assert _layout(ours) == _layout(theirs)
    back = spark.read.parquet(str(ours))
    assert back.count() == n
    assert sorted(r.v for r in back.filter("s = 'a/b'").collect()) == [0]


@pytest.mark.spark
def test_timestamp_decimal_and_double_partitions_as_spark(tmp_path, spark):
    """Timestamps (session time zone UTC), decimals and doubles are rendered as Spark casts them."""
    table = pa.table({
        "t": pa.array([dt.datetime(2024, 5, 1, 12, 30, 0, 120000), dt.datetime(1999, 12, 31, 23, 59, 59), None],
                      pa.timestamp("us", "UTC")),
        "m": pa.array([1, 2, 3], pa.decimal128(5, 2)),
        "f": pa.array([1.5, 1e10, 0.25]),
        "v": pa.array([1, 2, 3], pa.int64()),
    })
    ours, theirs = tmp_path / "ours", tmp_path / "spark"
    gpuwrite.write_dataset(table, ours, partition_by=["t", "m", "f"])
    spark.createDataFrame(table).coalesce(1).write.partitionBy("t", "m", "f").parquet(str(theirs))
    assert _layout(ours) == _layout(theirs)


@pytest.mark.spark
def test_partitioned_max_records_per_file_as_spark(tmp_path, spark):
    """Per partition directory: the same number of files and rows per file as Spark's maxRecordsPerFile."""
    n = 2_500
    table = pa.table({"p": pa.array([["a", "b", "c"][i % 3] if i % 7 else None for i in range(n)]),
                      "v": pa.array(range(n), pa.int64())})
    ours, theirs = tmp_path / "ours", tmp_path / "spark"
    gpuwrite.write_dataset(table, ours, partition_by=["p"], max_records_per_file=300)
    spark.createDataFrame(table).coalesce(1).write.option("maxRecordsPerFile", 300).partitionBy("p") \
        .parquet(str(theirs))

    def counts(root):
        out = {}
        for folder, _, files in os.walk(root):
            data = sorted(f for f in files if f.endswith(".parquet") and not f.startswith("."))
            if data:
                out[os.path.relpath(folder, root)] = [(f.rsplit(".c", 1)[1], pq.read_metadata(
                    os.path.join(folder, f)).num_rows) for f in data]
        return out

    assert counts(ours) == counts(theirs)
    assert _layout(ours) == _layout(theirs)


@pytest.mark.parametrize("max_open_files", [1, 2, 3, 100])
def test_concurrent_writers_same_layout_as_sorted(tmp_path, max_open_files):
    """max_open_files (Spark's concurrent writers, then sort-based fallback) changes neither the directories,
    the rows in each, nor the number of files and rows per file under maxRecordsPerFile."""
    n = 5_000
    rng = np.random.default_rng(9)
    table = pa.table({"p": pa.array([["a", "b", "c", "d", ""][i] for i in rng.integers(0, 5, n)]),
                      "k": pa.array(rng.integers(0, 50, n), pa.int64()),
                      "v": pa.array(range(n), pa.int64())})
    batches = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=777))
    sorted_out, concurrent_out = tmp_path / "sorted", tmp_path / "concurrent"
    gpuwrite.write_dataset(table, sorted_out, partition_by=["p"], bucket_by=(3, ["k"]), max_records_per_file=400)
    gpuwrite.write_dataset(batches, concurrent_out, partition_by=["p"], bucket_by=(3, ["k"]),
                           max_records_per_file=400, max_open_files=max_open_files)
    assert _layout(concurrent_out) == _layout(sorted_out)

    def file_rows(root):
        return sorted((os.path.relpath(folder, root), pq.read_metadata(os.path.join(folder, f)).num_rows)
                      for folder, _, files in os.walk(root) for f in files if f.endswith(".parquet"))

    assert file_rows(concurrent_out) == file_rows(sorted_out)


@pytest.mark.parametrize("max_open_files", [0, 2])
def test_partitioned_failure_leaves_target_as_it_was(tmp_path, max_open_files):
    """A source failing half-way through a partitioned, bucketed write: the target keeps its old files only,
    no staging directory remains, and a second write succeeds."""
    out = tmp_path / "t"
    schema = pa.schema([("p", pa.string()), ("k", pa.int64())])
    gpuwrite.write_dataset(pa.table({"p": ["old"], "k": pa.array([1], pa.int64())}), out, partition_by=["p"])
    before = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs)

    def batches():
        for i in range(5):
            if i == 3:
                raise RuntimeError("source broke")
            yield pa.record_batch([pa.array(["a", "b", "c"] * 10), pa.array(range(30), pa.int64())], schema=schema)

    with pytest.raises(RuntimeError, match="source broke"):
        gpuwrite.write_dataset(pa.RecordBatchReader.from_batches(schema, batches()), out, mode="overwrite",
                               partition_by=["p"], bucket_by=(2, ["k"]), max_open_files=max_open_files)
    after = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs)
    assert after == before and sorted(os.listdir(tmp_path)) == ["t"]
    gpuwrite.write_dataset(pa.table({"p": ["new"], "k": pa.array([2], pa.int64())}), out, mode="overwrite",
                           partition_by=["p"])
    assert sorted(d for d in os.listdir(out) if not d.startswith("_")) == ["p=new"]


BINARY = [b"ab", b"a/b\x01", "é".encode(), None, b"ab"]


def test_binary_partition_values_as_spark_renders_them(tmp_path):
    """Binary partition values that are UTF-8 get Spark's directory (Spark 4.3 writes `p=ab`, `p=a%2Fb%01`,
    `p=é`; an empty value goes to the default partition, as null does)."""
    table = pa.table({"p": pa.array(BINARY + [b""], pa.binary()), "v": pa.array(range(6), pa.int64())})
    out = tmp_path / "b"
    gpuwrite.write_dataset(table, out, partition_by=["p"])
    layout = _layout(out)
    assert sorted(layout) == ["p=__HIVE_DEFAULT_PARTITION__", "p=a%2Fb%01", "p=ab", "p=é"]
    assert layout["p=ab"] == Counter({(0,): 1, (4,): 1})
    assert layout["p=__HIVE_DEFAULT_PARTITION__"] == Counter({(3,): 1, (5,): 1})


@pytest.mark.spark
def test_binary_partition_directories_match_spark(tmp_path, spark):
    """The same directories and rows as Spark's partitionBy on a binary column (UTF-8 values)."""
    table = pa.table({"p": pa.array(BINARY, pa.binary()), "v": pa.array(range(5), pa.int64())})
    ours, theirs = tmp_path / "ours", tmp_path / "spark"
    gpuwrite.write_dataset(table, ours, partition_by=["p"])
    spark.createDataFrame(table).coalesce(1).write.partitionBy("p").parquet(str(theirs))
    assert _layout(ours) == _layout(theirs)


@pytest.mark.parametrize("max_open_files", [0, 2])
def test_binary_partition_value_that_is_not_utf8_is_refused(tmp_path, max_open_files):
    """Reproducer: b"\\xff" became `p=\\ufffd` and was lost (Spark does the same, and puts every such value in
    one directory). Now it is a PartitionError naming column and value, and nothing is written."""
    from gpuwrite.spark.policy.partitions import PartitionError

    table = pa.table({"p": pa.array([b"ok", b"\xff"], pa.binary()), "v": pa.array([1, 2], pa.int64())})
    with pytest.raises(PartitionError, match=r"partition column 'p': binary value b'\\xff' is not UTF-8"):
        gpuwrite.write_dataset(table, tmp_path / "t", partition_by=["p"], max_open_files=max_open_files)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("column, value, message", [
    ("p", "a\x00b", r"partition column 'p': value 'a\\x00b' holds NUL"),
    ("p\x00q", "a", r"partition column 'p\\x00q'"),
    ("..", "a", r"partition column '\.\.'"),
    (".", "a", r"partition column '\.'"),
    (".hidden", "a", r"partition column '\.hidden'"),
    ("", "a", r"partition column ''"),
])
def test_partition_names_and_values_readers_would_lose_are_refused(tmp_path, column, value, message):
    """Reproducer: NUL in a value or a column named `..` failed with a ValueError / ArrowInvalid. A NUL cannot be
    in a directory name (Spark fails too); Spark and pyarrow skip directories starting with `.` when reading
    (Spark writes `..=x` and then cannot read the table) and Spark refuses an empty column name when reading.
    Each is a PartitionError naming the column, before anything is written."""
    from gpuwrite.spark.policy.partitions import PartitionError

    table = pa.table({column: [value, "x"], "v": pa.array([1, 2], pa.int64())})
    with pytest.raises(PartitionError, match=message):
        gpuwrite.write_dataset(table, tmp_path / "t", partition_by=[column])
    assert os.listdir(tmp_path) == []


def test_partition_column_names_pyarrow_would_parse_as_paths(tmp_path):
    """Names such as `a.b` and `[0]` are plain names (pyarrow would read some as field paths when sorting)."""
    table = pa.table({"a.b": ["x", "y", "x"], "[0]": [1, 1, 2], "v": pa.array([1, 2, 3], pa.int64())})
    out = tmp_path / "n"
    gpuwrite.write_dataset(table, out, partition_by=["a.b", "[0]"])
    assert sorted(_layout(out)) == ["a.b=x/%5B0%5D=1", "a.b=x/%5B0%5D=2", "a.b=y/%5B0%5D=1"]
