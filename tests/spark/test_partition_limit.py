"""max_partitions (issue 18): write_dataset refuses more partition directories than the limit (1,024 by default,
as pyarrow), naming the columns and the count, before any file is written; nothing is left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite import GpuwriteError
from gpuwrite.spark.policy.partitions import PartitionError


def _everything(root: Path) -> list[str]:
    """Every path below root (hidden files and staging directories included)."""
    return sorted(os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in dirs + files)


def test_default_limit_is_pyarrows_1024(tmp_path: Path) -> None:
    """1,025 distinct values of one column are refused by default, naming the column, its distinct values, the
    count and the limit; nothing is written, not even the table directory or a staging area."""
    table = pa.table({"price": [i * 0.25 for i in range(1_025)], "v": range(1_025)})
    with pytest.raises(PartitionError) as err:
        gpuwrite.write_dataset(table, tmp_path / "t", partition_by="price")
    message = str(err.value)
    assert "partition_by=['price'] would create 1,025 partition directories" in message
    assert "price: 1,025 distinct values" in message and "max_partitions=1,024" in message
    assert _everything(tmp_path) == []


def test_limit_counts_combinations_and_names_every_column(tmp_path: Path) -> None:
    """Two columns count their distinct combinations (nulls and empty strings are one partition, as Spark
    writes them); the message gives each column's distinct values."""
    table = pa.table({"a": ["x", "y", "", None] * 3, "b": [1, 2, 3] * 4, "v": range(12)})
    with pytest.raises(PartitionError, match=r"\['a', 'b'\] would create 9 partition directories \(a: 3 distinct "
                                             r"values, b: 3 distinct values\), more than max_partitions=8"):
        gpuwrite.write_dataset(table, tmp_path / "t", partition_by=["a", "b"], max_partitions=8)
    assert _everything(tmp_path) == []
    result = gpuwrite.write_dataset(table, tmp_path / "t", partition_by=["a", "b"], max_partitions=9)
    assert result.num_rows == 12
    assert len({os.path.dirname(f.path) for f in result.files}) == 9


def test_raising_the_limit_writes_every_partition(tmp_path: Path) -> None:
    """At the limit the write succeeds."""
    table = pa.table({"k": [i % 40 for i in range(200)], "v": range(200)})
    result = gpuwrite.write_dataset(table, tmp_path / "t", partition_by="k", max_partitions=40)
    assert sorted(p.name for p in (tmp_path / "t").iterdir() if p.is_dir()) == sorted(f"k={i}" for i in range(40))
    assert result.num_rows == 200


def test_concurrent_writers_also_stop_and_leave_nothing(tmp_path: Path) -> None:
    """With max_open_files (files opened as rows stream in) the limit stops the write at the first directory
    too many; the staging area is removed and an existing table is left as it was."""
    target = tmp_path / "t"
    gpuwrite.write_dataset(pa.table({"k": [1], "v": [1]}), target, partition_by="k")
    before = _everything(tmp_path)
    table = pa.table({"k": list(range(30)), "v": range(30)})
    batches = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=4))
    with pytest.raises(PartitionError, match=r"partition_by=\['k'\] would create at least 11 partition directories"):
        gpuwrite.write_dataset(batches, target, partition_by="k", max_open_files=5, max_partitions=10,
                               mode="overwrite")
    assert _everything(tmp_path) == before


def test_buckets_do_not_count_as_partitions(tmp_path: Path) -> None:
    """Bucket files are not partitions: 2 directories with 8 buckets fit max_partitions=2."""
    table = pa.table({"k": [i % 2 for i in range(64)], "id": range(64), "v": range(64)})
    result = gpuwrite.write_dataset(table, tmp_path / "t", partition_by="k", bucket_by=(8, "id"), max_partitions=2)
    assert result.num_rows == 64


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_limit_is_refused(tmp_path: Path, bad: object) -> None:
    """max_partitions must be a positive integer."""
    with pytest.raises(GpuwriteError, match="max_partitions must be a positive integer"):
        gpuwrite.write_dataset(pa.table({"k": [1], "v": [1]}), tmp_path / "t", partition_by="k",
                               max_partitions=bad)  # type: ignore[arg-type]
    assert _everything(tmp_path) == []
