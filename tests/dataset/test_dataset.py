"""write_dataset: Spark's file names, maxRecordsPerFile rolling (checked against Spark), modes, atomicity."""

from __future__ import annotations

import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite import GpuwriteError

NAME = re.compile(r"^part-00000-[0-9a-f-]{36}-c(\d{3})\.snappy\.parquet$")


def _data_files(directory):
    """Data files of a table directory, sorted by name (Spark's hidden and marker files excluded)."""
    return sorted(f for f in os.listdir(directory) if not f.startswith(("_", ".")))


def test_file_names_success_and_rolling(tmp_path):
    """maxRecordsPerFile rolls files mid-batch, names follow Spark, _SUCCESS marks the commit."""
    table = pa.table({"a": pa.array(range(2_500), pa.int64())})
    batches = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=700))
    out = tmp_path / "t"
    result = gpuwrite.write_dataset(batches, out, max_records_per_file=1_000)
    files = _data_files(out)
    assert [NAME.match(f).group(1) for f in files] == ["000", "001", "002"]
    assert len({f.split("-c")[0] for f in files}) == 1
    assert [pq.read_metadata(out / f).num_rows for f in files] == [1_000, 1_000, 500]
    assert (out / "_SUCCESS").read_bytes() == b""
    assert result.num_rows == 2_500 and [f.num_rows for f in result.files] == [1_000, 1_000, 500]
    assert pq.read_table(out).column("a").to_pylist() == list(range(2_500))


def test_modes(tmp_path):
    """error refuses an existing table, ignore keeps it, append adds files, overwrite replaces them."""
    out = tmp_path / "m"
    t = pa.table({"a": [1, 2]})
    gpuwrite.write_dataset(t, out)
    with pytest.raises(GpuwriteError, match="already exists"):
        gpuwrite.write_dataset(t, out)
    gpuwrite.write_dataset(pa.table({"a": [9]}), out, mode="ignore")
    assert pq.read_table(out).num_rows == 2
    gpuwrite.write_dataset(t, out, mode="append")
    assert len(_data_files(out)) == 2 and pq.read_table(out).num_rows == 4
    gpuwrite.write_dataset(pa.table({"a": [7]}), out, mode="overwrite")
    assert pq.read_table(out).column("a").to_pylist() == [7]
    with pytest.raises(GpuwriteError, match="mode"):
        gpuwrite.write_dataset(t, out, mode="replace")


def test_failure_half_way_leaves_target_as_it_was(tmp_path):
    """A source failing after some files: no new file in the target, no staging directory left."""
    out = tmp_path / "f"
    gpuwrite.write_dataset(pa.table({"a": pa.array([1], pa.int64())}), out)
    before = sorted(os.listdir(out))
    schema = pa.schema([("a", pa.int64())])

    def batches():
        for i in range(4):
            if i == 2:
                raise RuntimeError("boom")
            yield pa.record_batch([pa.array(range(100), pa.int64())], schema=schema)

    with pytest.raises(RuntimeError, match="boom"):
        gpuwrite.write_dataset(pa.RecordBatchReader.from_batches(schema, batches()), out, mode="overwrite",
                               max_records_per_file=50)
    assert sorted(os.listdir(out)) == before
    assert sorted(os.listdir(tmp_path)) == ["f"]
    gpuwrite.write_dataset(pa.table({"a": pa.array([5], pa.int64())}), out, mode="overwrite")
    assert pq.read_table(out).column("a").to_pylist() == [5]


def test_empty_input_writes_one_footer_only_file(tmp_path):
    """As Spark's task 0: an empty write still produces one file."""
    out = tmp_path / "e"
    gpuwrite.write_dataset(pa.table({"a": pa.array([], pa.int32())}), out)
    files = _data_files(out)
    assert len(files) == 1 and pq.read_metadata(out / files[0]).num_rows == 0


@pytest.mark.spark
@pytest.mark.parametrize("rows, limit", [(2_500, 1_000), (3_000, 1_000), (10, 0), (10, 3)])
def test_max_records_per_file_matches_spark(tmp_path, spark, rows, limit):
    """Same number of files and rows per file as Spark's maxRecordsPerFile for one task."""
    table = pa.table({"id": pa.array(range(rows), pa.int64())})
    ours = tmp_path / "ours"
    gpuwrite.write_dataset(table, ours, max_records_per_file=limit)
    theirs = tmp_path / "spark"
    df = spark.range(rows).coalesce(1)
    writer = df.write.option("parquet.writer.version", "v2")
    if limit:
        writer = writer.option("maxRecordsPerFile", limit)
    writer.parquet(str(theirs))
    spark_counts = [pq.read_metadata(theirs / f).num_rows for f in _data_files(theirs)]
    our_counts = [pq.read_metadata(ours / f).num_rows for f in _data_files(ours)]
    assert our_counts == spark_counts
    counter = re.compile(r"-c(\d{3})\.snappy\.parquet$")
    assert [counter.search(f).group(1) for f in _data_files(ours)] == \
        [counter.search(f).group(1) for f in _data_files(theirs)]
    assert spark.read.parquet(str(ours)).count() == rows


def test_write_task_presorted_streams_like_the_sorted_path(tmp_path):
    """Rows already in V1Writes order stream through one open file at a time and give the same files, rows and
    names as the gather-and-sort path; a key that comes back continues its file counter."""
    from gpuwrite.dataset.write import write_task
    from gpuwrite.dataset.writers import FileLayout

    n = 3000
    table = pa.table({"p": pa.array([None if i % 17 == 0 else ("" if i % 19 == 0 else f"v{i % 4}")
                                     for i in range(n)]),
                      "k": pa.array(range(n), pa.int64()), "x": pa.array([float(i) for i in range(n)])})
    from gpuwrite.spark.policy.buckets import BucketSpec

    keys = pa.table({"p": pa.compute.if_else(pa.compute.equal(table["p"], ""), pa.scalar(None, pa.string()),
                                             table["p"]),
                     "b": pa.array(BucketSpec(3, ["k"]).ids(table))})
    sorted_input = table.take(pa.compute.sort_indices(keys, sort_keys=[("p", "ascending", "at_start"),
                                                                       ("b", "ascending", "at_start")]))
    layouts = []
    for presorted, source in ((False, table), (True, sorted_input)):
        out = tmp_path / f"presorted_{presorted}"
        layout = FileLayout(job="job", task=7, partition_by=("p",), buckets=BucketSpec(3, ["k"]),
                            max_records_per_file=100)
        files = write_task(table.schema, iter(source.to_batches(max_chunksize=256)), str(out), layout,
                           presorted=presorted)
        layouts.append(sorted((os.path.relpath(f.path, out), f.num_rows,
                               tuple(pq.read_table(f.path).column("k").to_pylist())) for f in files))
    assert layouts[0] == layouts[1]
    assert all(name.split("/")[-1].startswith("part-00007-job_") for name, _, _ in layouts[0])
    # unsorted input declared presorted: a key that comes back opens its next file, never overwrites one
    files = write_task(table.schema, iter(table.to_batches(max_chunksize=256)), str(tmp_path / "unsorted"),
                       FileLayout(job="job", task=7, partition_by=("p",)), presorted=True)
    names = [f.path for f in files]
    assert len(names) == len(set(names)) and sum(f.num_rows for f in files) == n
    assert sum(pq.ParquetFile(p).metadata.num_rows for p in names) == n
