"""write_dataset on URIs and given filesystems: staged under the table's `_temporary`, moved in by the journal.

fsspec's memory filesystem stands in for a remote store (no network); `file://` takes the local path (staging
beside the target, the lock). Read back with pyarrow.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

fsspec = pytest.importorskip("fsspec")

import gpuwrite  # noqa: E402
from gpuwrite.dataset import moves  # noqa: E402
from gpuwrite.dataset.publish import CommitError  # noqa: E402
from gpuwrite.errors import GpuwriteError  # noqa: E402

TABLE = pa.table({"v": pa.array(range(60), pa.int64()), "k": pa.array([i % 3 for i in range(60)], pa.int32())})



def _files(fs: Any, root: str) -> list[str]:
    return sorted(p[len(root) + 1:] for p in fs.find(root))


def _read(fs: Any, root: str) -> pa.Table:
    data = pads.dataset(root, filesystem=fs, format="parquet", partitioning="hive").to_table()
    return data.select(["v"]).sort_by("v")


def test_partitioned_dataset_on_memory_uri(memfs: Any) -> None:
    """Partition directories, `_SUCCESS`, nothing staged left; files reported under the URI; reads back."""
    result = gpuwrite.write_dataset(TABLE, "memory://lake/t", partition_by=["k"])
    names = _files(memfs, "/lake/t")
    assert names[0] == "_SUCCESS" and len(names) == 4
    assert all(n.startswith(f"k={i}/part-00000-{result.job_uuid}") for i, n in enumerate(names[1:]))
    assert [f.path for f in result.files] == [f"memory://lake/t/{n}" for n in names[1:]]
    assert _read(memfs, "/lake/t").equals(TABLE.select(["v"]))
    assert result.num_rows == 60


def test_modes_on_memory(memfs: Any) -> None:
    """error refuses an existing table, ignore leaves it, append adds files, overwrite replaces them all."""
    first = gpuwrite.write_dataset(TABLE, "memory://lake/t")
    with pytest.raises(GpuwriteError, match="already exists"):
        gpuwrite.write_dataset(TABLE, "memory://lake/t")
    assert gpuwrite.write_dataset(TABLE, "memory://lake/t", mode="ignore").files == []
    second = gpuwrite.write_dataset(TABLE.slice(0, 7), "memory://lake/t", mode="append")
    assert _read(memfs, "/lake/t").num_rows == 67 and len(_files(memfs, "/lake/t")) == 3
    third = gpuwrite.write_dataset(TABLE.slice(0, 5), "memory://lake/t", mode="overwrite")
    names = _files(memfs, "/lake/t")
    assert names == ["_SUCCESS", f"part-00000-{third.job_uuid}-c000.snappy.parquet"]
    assert first.job_uuid not in str(names) and second.job_uuid not in str(names)
    assert _read(memfs, "/lake/t").num_rows == 5


def test_fsspec_filesystem_passed_in(memfs: Any) -> None:
    """An fsspec filesystem object (and pyarrow's wrapper of it) with a plain path."""
    gpuwrite.write_dataset(TABLE, "lake/a", filesystem=memfs)
    gpuwrite.write_dataset(TABLE, "lake/b", filesystem=pafs.PyFileSystem(pafs.FSSpecHandler(memfs)))
    for name in ("a", "b"):
        assert _read(memfs, f"/lake/{name}").equals(TABLE.select(["v"]))


def _batches(check: Any) -> pa.RecordBatchReader:
    """TABLE in batches of 10 rows, calling `check(i)` before batch i."""
    def gen() -> Iterator[pa.RecordBatch]:
        for i, batch in enumerate(TABLE.to_batches(max_chunksize=10)):
            check(i)
            yield batch
    return pa.RecordBatchReader.from_batches(TABLE.schema, gen())


def test_files_are_staged_hidden_under_the_table(memfs: Any) -> None:
    """While the write runs, finished files sit under `_temporary/<job>/` only; the table shows nothing."""
    seen: list[tuple[list[str], list[str]]] = []

    def look(i: int) -> None:
        names = _files(memfs, "/lake/t") if memfs.exists("/lake/t") else []
        seen.append(([n for n in names if not n.startswith("_temporary/")],
                     [n for n in names if n.startswith("_temporary/") and n.endswith(".parquet")]))

    result = gpuwrite.write_dataset(_batches(look), "memory://lake/t", max_records_per_file=10)
    assert len(result.files) == 6 and all(visible == [] for visible, _ in seen)
    assert len(seen[-1][1]) == 4  # files 0-3 closed before the last batch came (file 4 closes when it starts)
    assert all(f"/_temporary/{result.job_uuid}/task_00000/part-" in "/" + n for n in seen[-1][1])
    assert not any(n.startswith("_temporary") for n in _files(memfs, "/lake/t"))


def test_failed_input_leaves_nothing(memfs: Any) -> None:
    """Input failing after files were staged: no table, no `_temporary`, not even the directory."""
    def fail(i: int) -> None:
        if i == 4:
            raise RuntimeError("injected input failure")

    with pytest.raises(RuntimeError, match="injected"):
        gpuwrite.write_dataset(_batches(fail), "memory://lake/t", max_records_per_file=10)
    assert not memfs.exists("/lake/t")


def test_failed_commit_keeps_old_table(memfs: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A move failing in the middle of an overwrite's commit: everything is moved back, the old table reads as
    before and nothing is staged."""
    gpuwrite.write_dataset(TABLE, "memory://lake/t", partition_by=["k"])
    before = {p: memfs.cat_file(p) for p in memfs.find("/lake/t")}
    real_move = moves.ArrowFiles.move
    calls = {"n": 0}

    def flaky(self: moves.ArrowFiles, src: str, dst: str) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(5, "injected move failure", dst)
        real_move(self, src, dst)

    monkeypatch.setattr(moves.ArrowFiles, "move", flaky)
    with pytest.raises(CommitError, match="the table is as it was"):
        gpuwrite.write_dataset(TABLE.slice(0, 3), "memory://lake/t", mode="overwrite")
    assert {p: memfs.cat_file(p) for p in memfs.find("/lake/t")} == before


def test_dataset_at_a_file_is_refused(memfs: Any) -> None:
    memfs.pipe("/lake/f", b"x")
    with pytest.raises(GpuwriteError, match="it is a file"):
        gpuwrite.write_dataset(TABLE, "memory://lake/f", mode="overwrite")


def test_file_uri_takes_the_local_path(tmp_path: Path) -> None:
    """`file://` writes as a plain path does (staging beside the target, lock): same files, nothing left."""
    result = gpuwrite.write_dataset(TABLE, f"file://{tmp_path}/t", partition_by=["k"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]
    assert result.files[0].path.startswith(str(tmp_path / "t" / "k=0"))
    got = pq.read_table(tmp_path / "t").select(["v"]).sort_by("v")
    assert got.equals(TABLE.select(["v"]))
