"""write_dataset's commit cannot destroy a table (issue 12): the target path is checked before anything moves,
every failure during a commit (injected at each step, including between moving the old files aside and moving
the new ones in) puts the table back byte for byte, and nothing is left beside it afterwards."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dataset_tables import new_table, old_table, refuse_unlink, snapshot

import gpuwrite
from gpuwrite import GpuwriteError
from gpuwrite.dataset import publish
from gpuwrite.dataset.lock import TargetLock, lock_path
from gpuwrite.dataset.publish import CommitError
from gpuwrite.dataset.target import DatasetPathError


def count_moves(tmp_path, mode: str) -> int:
    """How many renames a clean commit of `new_table` over `old_table` makes."""
    probe = tmp_path / "probe"
    old_table(probe)
    calls = []
    real = publish._move

    def counting(src, dst):
        calls.append(dst)
        real(src, dst)

    publish._move = counting
    try:
        gpuwrite.write_dataset(new_table(), probe, mode=mode, partition_by=["p"])
    finally:
        publish._move = real
    shutil.rmtree(probe)
    return len(calls)


@pytest.mark.parametrize("path_form", ["ds/.", "ds/sub/..", "./ds/"])
def test_dot_forms_of_the_path_overwrite_the_table(tmp_path, monkeypatch, path_form):
    """Reproducer: overwrite at `ds/.` deleted the old files, then failed to move (EINVAL) and removed the new
    ones too. Now `.`/`..` forms resolve to the directory and the overwrite replaces the table."""
    monkeypatch.chdir(tmp_path)
    old_table("ds")
    (tmp_path / "ds" / "sub").mkdir()
    gpuwrite.write_dataset(new_table(), path_form, mode="overwrite", partition_by=["p"])
    assert sorted(pq.read_table("ds").column("v").to_pylist()) == list(range(100, 106))
    assert sorted(os.listdir(tmp_path)) == ["ds"]


def test_working_directory_and_its_parents_are_refused(tmp_path, monkeypatch):
    """Reproducer: overwrite at `.` deleted the working directory's own files. Now it, `..` and `/` are refused
    before anything is written, and the files stay."""
    old_table(tmp_path / "ds")
    monkeypatch.chdir(tmp_path / "ds")
    before = snapshot(tmp_path)
    for path in (".", "..", "/", str(tmp_path / "ds" / "p=a" / "..")):
        with pytest.raises(DatasetPathError, match="working directory") as info:
            gpuwrite.write_dataset(new_table(), path, mode="overwrite", partition_by=["p"])
        assert repr(path)[1:-1] in str(info.value)
    assert snapshot(tmp_path) == before
    # append into the working directory deletes nothing and is allowed
    gpuwrite.write_dataset(new_table(), ".", mode="append", partition_by=["p"])
    assert pq.read_table(".").num_rows == 18


def test_paths_inside_staging_or_named_like_gpuwrite_files_are_refused(tmp_path):
    """A target inside a staging directory, or named as a lock / temp file, is refused naming the path."""
    stage = tmp_path / ".t.gpuwrite-staging-0123abcd"
    stage.mkdir()
    for bad in (stage / "x", stage, tmp_path / ".t.gpuwrite-lock", tmp_path / ".t.0123456789ab.gpuwrite-tmp"):
        with pytest.raises(DatasetPathError, match="gpuwrite") as info:
            gpuwrite.write_dataset(new_table(), bad, partition_by=["p"])
        assert str(bad) in str(info.value)
    assert os.listdir(stage) == []


def test_symlinked_directory_is_written_through(tmp_path):
    """Reproducer: overwrite through a symlinked directory raised a bare OSError. Now the link is resolved: the
    table in the directory it points to is replaced, and the link stays a link."""
    real = tmp_path / "real"
    old_table(real)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    result = gpuwrite.write_dataset(new_table(), link, mode="overwrite", partition_by=["p"])
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert sorted(pq.read_table(real).column("v").to_pylist()) == list(range(100, 106))
    assert all(os.path.exists(f.path) for f in result.files)
    assert sorted(os.listdir(tmp_path)) == ["link", "real"]
    (tmp_path / "file").write_bytes(b"x")
    (tmp_path / "filelink").symlink_to(tmp_path / "file")
    with pytest.raises(DatasetPathError, match="it is a file") as info:
        gpuwrite.write_dataset(new_table(), tmp_path / "filelink", mode="overwrite")
    assert "filelink" in str(info.value)


@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_every_failed_rename_restores_the_table(tmp_path, mode):
    """A rename failing at each step of the commit (old entries aside, partition directories in, `_SUCCESS`
    last): CommitError naming the path, the table byte-identical, nothing left beside it."""
    moves = count_moves(tmp_path, mode)
    assert moves == (7 if mode == "overwrite" else 2)  # 4 old entries aside, 3 in; or 2 files into the table
    target = tmp_path / "t"
    old_table(target)
    before = snapshot(target)
    real = publish._move
    for k in range(1, moves + 1):
        calls = []

        def failing(src, dst, k=k, calls=calls):
            calls.append(dst)
            if len(calls) == k:
                raise OSError(errno.EIO, "Input/output error", dst)
            real(src, dst)

        publish._move = failing
        try:
            with pytest.raises(CommitError, match="table is as it was") as info:
                gpuwrite.write_dataset(new_table(), target, mode=mode, partition_by=["p"])
        finally:
            publish._move = real
        assert str(target) in str(info.value)
        assert snapshot(target) == before, f"failure at rename {k} of {moves}"
        assert sorted(os.listdir(tmp_path)) == ["t"]


def test_failure_between_moving_old_aside_and_moving_new_in(tmp_path):
    """The point where the old code had deleted the table and not yet moved the new one: the first rename of a
    new entry fails after every old entry is aside; the old table comes back."""
    target = tmp_path / "t"
    old_table(target)
    before = snapshot(target)
    old_entries = len(os.listdir(target))
    real = publish._move
    calls = []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) == old_entries + 1:
            assert os.listdir(target) == []  # everything is aside: the moment the old protocol lost data
            raise OSError(errno.ENOSPC, "No space left on device", dst)
        real(src, dst)

    publish._move = failing
    try:
        with pytest.raises(CommitError, match="No space left"):
            gpuwrite.write_dataset(new_table(), target, mode="overwrite", partition_by=["p"])
    finally:
        publish._move = real
    assert snapshot(target) == before and sorted(os.listdir(tmp_path)) == ["t"]


@pytest.mark.parametrize("step", ["journal", "mkdir", "commit mark", "interrupt"])
def test_failures_outside_renames_restore_the_table(tmp_path, monkeypatch, step):
    """Writing the journal, making a partition directory, writing the commit mark, or a KeyboardInterrupt
    mid-commit: the table byte-identical, the interrupt re-raised as is."""
    target = tmp_path / "t"
    old_table(target)
    before = snapshot(target)
    mode = "append" if step == "mkdir" else "overwrite"

    def boom(*args, **kwargs):
        raise OSError(errno.EDQUOT, "Disk quota exceeded", args[0] if args else None)

    expected: type[BaseException] = CommitError
    if step == "journal":
        monkeypatch.setattr(publish, "_write_journal", boom)
    elif step == "mkdir":
        monkeypatch.setattr(publish, "_make_dir", boom)
    elif step == "commit mark":
        real_touch = publish._touch
        monkeypatch.setattr(publish, "_touch", lambda p: boom(p) if p.endswith(publish.COMMITTED) else real_touch(p))
    else:
        real = publish._move
        calls = []

        def interrupt(src, dst):
            calls.append(dst)
            if len(calls) == 3:
                raise KeyboardInterrupt
            real(src, dst)

        monkeypatch.setattr(publish, "_move", interrupt)
        expected = KeyboardInterrupt
    with pytest.raises(expected):
        gpuwrite.write_dataset(new_table(), target, mode=mode, partition_by=["p"])
    assert snapshot(target) == before and sorted(os.listdir(tmp_path)) == ["t"]


def test_failed_restore_keeps_old_files_and_clean_brings_them_back(tmp_path, capsys):
    """When even putting the old files back fails, the staging directory is kept (never deleted), the error
    says where, and `gpuwrite clean --force` (here) restores the table byte for byte."""
    from gpuwrite.tools.cli import main

    target = tmp_path / "t"
    old_table(target)
    before = snapshot(target)
    real = publish._move
    calls = []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) >= 5:  # the 5th rename fails, and so does every rename of the roll-back
            raise OSError(errno.EIO, "Input/output error", dst)
        real(src, dst)

    publish._move = failing
    try:
        with pytest.raises(CommitError, match="kept in") as info:
            gpuwrite.write_dataset(new_table(), target, mode="overwrite", partition_by=["p"])
    finally:
        publish._move = real
    stage = [n for n in os.listdir(tmp_path) if ".gpuwrite-staging-" in n]
    assert len(stage) == 1 and stage[0] in str(info.value)
    assert snapshot(target) != before
    assert main(["clean", str(target)]) == 0  # dry run: lists, changes nothing
    assert "restore  staging" in capsys.readouterr().out and len(os.listdir(tmp_path)) == 2
    assert main(["clean", str(target), "--force"]) == 0
    assert "restored staging" in capsys.readouterr().out
    assert snapshot(target) == before and sorted(os.listdir(tmp_path)) == ["t"]


def test_unpartitioned_overwrite_and_append_commit(tmp_path):
    """Unpartitioned tables: overwrite leaves exactly the new files; append keeps the old `_SUCCESS` bytes and
    adds files; the result's paths exist."""
    target = tmp_path / "t"
    old_table(target, partitioned=False)
    result = gpuwrite.write_dataset(pa.table({"v": pa.array([1, 2], pa.int64())}), target, mode="overwrite")
    assert sorted(os.listdir(target)) == sorted(["_SUCCESS", *(os.path.basename(f.path) for f in result.files)])
    again = gpuwrite.write_dataset(pa.table({"v": pa.array([3], pa.int64())}), target, mode="append")
    assert all(os.path.exists(f.path) for f in result.files + again.files)
    assert sorted(pq.read_table(target).column("v").to_pylist()) == [1, 2, 3]


def test_read_only_dataset_directory_is_a_named_error(tmp_path):
    """Reproducer: a read-only table directory gave a bare PermissionError. Now overwrite and append raise a
    GpuwriteError naming the path and leave the table as it was. (Root ignores permission bits, so as root the
    directory is made immutable instead, which refuses root too.)"""
    target = tmp_path / "t"
    old_table(target)
    before = snapshot(target)
    as_root = os.geteuid() == 0
    if as_root and subprocess.run(["chattr", "+i", str(target)], capture_output=True).returncode != 0:
        pytest.skip("running as root without chattr +i: no way to make a directory read-only for root")
    if not as_root:
        target.chmod(0o555)
    try:
        for mode in ("overwrite", "append"):
            with pytest.raises(GpuwriteError) as info:
                gpuwrite.write_dataset(new_table(), target, mode=mode, partition_by=["p"])
            assert str(target) in str(info.value)
            assert snapshot(target) == before
    finally:
        if as_root:
            subprocess.run(["chattr", "-i", str(target)], check=True)
        else:
            target.chmod(0o755)
    assert sorted(os.listdir(tmp_path)) == ["t"]


def test_read_only_parent_is_a_named_error(tmp_path):
    """A new table in a directory we cannot write: a GpuwriteError naming the path, not an OSError."""
    parent = tmp_path / "ro"
    parent.mkdir()
    as_root = os.geteuid() == 0
    if as_root and subprocess.run(["chattr", "+i", str(parent)], capture_output=True).returncode != 0:
        pytest.skip("running as root without chattr +i")
    if not as_root:
        parent.chmod(0o555)
    try:
        with pytest.raises(GpuwriteError) as info:
            gpuwrite.write_dataset(new_table(), parent / "t", partition_by=["p"])
        assert str(parent) in str(info.value)
    finally:
        if as_root:
            subprocess.run(["chattr", "-i", str(parent)], check=True)
        else:
            parent.chmod(0o755)
    assert os.listdir(parent) == []


def test_lock_excludes_and_a_left_lock_file_does_not_block(tmp_path):
    """Two holders of one target's lock exclude each other (even within one process); a lock file left by a
    killed job (no one holds it) is taken over and removed."""
    target = str(tmp_path / "t")
    first = TargetLock(target)
    assert first.acquire(timeout_s=0)
    second = TargetLock(target)
    assert not second.acquire(timeout_s=0.05)
    assert f"pid {os.getpid()}" in second.holder()
    first.release()
    assert second.acquire(timeout_s=0)
    second.release()
    assert not os.path.exists(lock_path(target))
    with open(lock_path(target), "wb") as f:
        f.write(b'{"pid": 999999, "host": "gone", "since": 0}')
    gpuwrite.write_dataset(new_table(), target, partition_by=["p"])
    assert sorted(os.listdir(tmp_path)) == ["t"]


def test_staging_directory_without_owner_is_judged_by_age(tmp_path):
    """A staging directory with no owner record (an older gpuwrite's) is left alone while recent and removed by
    the next write once untouched for an hour."""
    target = tmp_path / "t"
    orphan = tmp_path / ".t.gpuwrite-staging-0123abcd"
    (orphan / "x").mkdir(parents=True)
    (orphan / "x" / "part.parquet").write_bytes(b"old bytes")
    gpuwrite.write_dataset(new_table(), target, partition_by=["p"])
    assert orphan.exists()
    hour_ago = time.time() - 3700
    os.utime(orphan, (hour_ago, hour_ago))
    gpuwrite.write_dataset(new_table(), target, mode="append", partition_by=["p"])
    assert sorted(os.listdir(tmp_path)) == ["t"]


@pytest.mark.parametrize("recover_by", ["next write", "clean"])
def test_old_files_that_cannot_be_deleted_are_reported_and_removed_later(tmp_path, monkeypatch, capsys,
                                                                         recover_by):
    """Reproducer (issue 33, item 8): an overwrite whose old files could not all be deleted (here unlink refuses
    them) succeeded silently and left a hidden staging directory that the next write did not remove (no owner
    file: the one-hour rule). Now the caller gets a LeftoverWarning naming the directory, the result lists it,
    the table is the new one, and the next write or `gpuwrite clean --force` removes it."""
    from gpuwrite.errors import LeftoverWarning
    from gpuwrite.tools.cli import main

    target = tmp_path / "t"
    old_table(target)
    old_job = next(n for n in os.listdir(target / "p=a")).split("-", 2)[2][:36]
    refuse_unlink(monkeypatch, old_job)
    with pytest.warns(LeftoverWarning) as caught:
        result = gpuwrite.write_dataset(new_table(), target, mode="overwrite", partition_by=["p"])
    monkeypatch.undo()
    left = [str(tmp_path / n) for n in os.listdir(tmp_path) if n != "t"]
    assert len(left) == 1 and result.leftovers == tuple(left)
    assert left[0] in str(caught[0].message) and "Permission denied" in str(caught[0].message)
    assert f"leftovers=['{left[0]}']" in repr(result)
    assert sorted(pq.read_table(target).column("v").to_pylist()) == list(range(100, 106))
    if recover_by == "next write":
        again = gpuwrite.write_dataset(new_table(), target, mode="append", partition_by=["p"])
        assert again.leftovers == () and pq.read_table(target).num_rows == 12
    else:
        assert main(["clean", str(target), "--force"]) == 0
        assert f"removed  retired {left[0]}" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path)) == ["t"]


def test_missing_parent_directories_are_created(tmp_path):
    """Reproducer (issue 33, item 9): a path whose parent did not exist was refused (DatasetPathError), where
    pyarrow's write_dataset and Spark create it. Now the parents are made, the table is written as pyarrow's
    (the same files under the same nested path), and nothing else is left there."""
    import pyarrow.dataset as pads

    nested = tmp_path / "a" / "b" / "c" / "t"
    result = gpuwrite.write_dataset(new_table(), nested, partition_by=["p"])
    assert result.num_rows == 6 and all(os.path.exists(f.path) for f in result.files)
    pads.write_dataset(new_table(), tmp_path / "pa" / "b" / "c" / "t", format="parquet", partitioning=["p"],
                       partitioning_flavor="hive")
    assert sorted(os.listdir(tmp_path / "pa" / "b" / "c" / "t")) == ["p=b", "p=d"]
    assert sorted(pq.read_table(nested).column("v").to_pylist()) == list(range(100, 106))
    assert sorted(os.listdir(nested)) == ["_SUCCESS", "p=b", "p=d"]
    assert os.listdir(tmp_path / "a" / "b" / "c") == ["t"] and os.listdir(tmp_path / "a") == ["b"]
    assert sorted(os.listdir(tmp_path)) == ["a", "pa"]


def test_a_failed_write_removes_the_parents_it_made(tmp_path):
    """Parent directories made for a write that then fails are removed (nothing left behind), those that were
    there stay; a parent that is a file is a DatasetPathError naming the path, nothing created."""
    (tmp_path / "a").mkdir()
    with pytest.raises(TypeError):
        gpuwrite.write_dataset({"v": [1]}, tmp_path / "a" / "b" / "c" / "t")
    assert os.listdir(tmp_path) == ["a"] and os.listdir(tmp_path / "a") == []
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(DatasetPathError, match="is a file") as info:
        gpuwrite.write_dataset(new_table(), tmp_path / "f" / "x" / "t")
    assert str(tmp_path / "f" / "x" / "t") in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["a", "f"]
