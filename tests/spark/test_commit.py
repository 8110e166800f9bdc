"""A Spark job's commit cannot destroy a table (issue 12, the job half): the old entries are moved aside into the
job's directory under `_temporary`, never deleted before the new files are in, so a failure at any step (the
reproducer: a move failing after the old data was deleted) restores the table byte for byte; a failure that
cannot be undone, or a killed driver, leaves a journal that `gpuwrite clean` and the next write undo; staged and
aside files are never read as table data; the path is checked as write_dataset checks it. Most tests drive
`commit.py` directly (tasks simulated by files written with pyarrow); one runs a real Spark job."""

from __future__ import annotations

import errno
import os
import signal
import uuid

import fsspec
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from dataset_tables import refuse_unlink, snapshot
from staged_jobs import CTX, old_table, staged_job, state

import gpuwrite
from gpuwrite.dataset import job_commit as commit
from gpuwrite.dataset import publish
from gpuwrite.dataset.publish import CommitError
from gpuwrite.dataset.target import DatasetPathError
from gpuwrite.spark import job
from gpuwrite.tools.cli import main


def who(root) -> list[int]:
    """The `who` column of every row readers see (hive partitions)."""
    return sorted(pq.read_table(root, partitioning="hive").column("who").to_pylist())


MODES = {"overwrite": ("overwrite", False), "dynamic": ("overwrite", True), "append": ("append", False)}


def count_moves(tmp_path, how: str) -> int:
    """How many renames a clean commit of a second job (partitions k=1, k=3) over `old_table` makes."""
    root = tmp_path / f"probe-{how}"
    old_table(root)
    second = staged_job(root, 2, parts=("k=1", "k=3"))
    calls = []
    real = publish._move

    def counting(src, dst):
        calls.append(dst)
        real(src, dst)

    publish._move = counting
    try:
        commit.publish_job(second.fs, second.paths, second.files, *MODES[how])
    finally:
        publish._move = real
        second.close()
    return len(calls)


def test_fault_between_moving_old_aside_and_moving_new_in(tmp_path):
    """Reproducer: commit_job with overwrite deleted the old table, then a move failed on the 2nd new file and
    the table held one new file of 4 (5 of 20 rows in the reproduction against main). Now the old entries were
    only moved aside; they come back, byte for byte and readable, and nothing of the job is left."""
    root = tmp_path / "t"
    before = old_table(root)
    second = staged_job(root, 2)
    old_entries = len(publish.table_entries(os.listdir(root)))
    real, calls = publish._move, []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) == old_entries + 2:  # the old protocol had deleted the table by now
            assert sorted(os.listdir(root)) == [commit.TEMPORARY, "k=0", "k=1", "k=2"]
            assert len([p for p in state(root) if p.endswith(".parquet")]) == 1  # one new file in, no old one
            raise OSError(errno.ENOSPC, "No space left on device", dst)
        real(src, dst)

    publish._move = failing
    try:
        with pytest.raises(CommitError, match="table is as it was") as info:
            commit.publish_job(second.fs, second.paths, second.files, "overwrite")
    finally:
        publish._move = real
        second.close()
    assert str(second.paths.root) in str(info.value) and "No space left" in str(info.value)
    assert state(root) == before and who(root) == [1] * 24
    assert sorted(os.listdir(root)) == ["_SUCCESS", "k=0", "k=1", "k=2"]  # job directory and lock are gone
    assert sorted(os.listdir(tmp_path)) == ["t"]


@pytest.mark.parametrize("how", list(MODES))
def test_every_failed_rename_restores_the_table(tmp_path, how):
    """A rename failing at each step of a static overwrite, a dynamic partition overwrite or an append: the
    table byte-identical, CommitError naming the path, the job's directory removed."""
    moves = count_moves(tmp_path, how)
    # static: 4 old entries aside, 4 files and `_SUCCESS` in; dynamic: k=1 aside, 4 files in; append: 4 files
    assert moves == {"overwrite": 9, "dynamic": 5, "append": 4}[how]
    root = tmp_path / "t"
    before = old_table(root)
    real = publish._move
    for k in range(1, moves + 1):
        second = staged_job(root, 2, parts=("k=1", "k=3"))
        calls = []

        def failing(src, dst, k=k, calls=calls):
            calls.append(dst)
            if len(calls) == k:
                raise OSError(errno.EIO, "Input/output error", dst)
            real(src, dst)

        publish._move = failing
        try:
            with pytest.raises(CommitError, match="table is as it was") as info:
                commit.publish_job(second.fs, second.paths, second.files, *MODES[how])
        finally:
            publish._move = real
            second.close()
        assert str(second.paths.root) in str(info.value)
        assert state(root) == before, f"failure at rename {k} of {moves}"
        assert not (root / commit.TEMPORARY).exists()


@pytest.mark.parametrize("step", ["journal", "mkdir", "commit mark", "interrupt"])
def test_failures_outside_renames_restore_the_table(tmp_path, monkeypatch, step):
    """Writing the journal, making a partition directory, the commit mark, or a KeyboardInterrupt half-way:
    the table byte-identical, the interrupt re-raised as is."""
    root = tmp_path / "t"
    before = old_table(root)
    second = staged_job(root, 2, parts=("k=1", "k=3"))

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
        real, calls = publish._move, []

        def interrupt(src, dst):
            calls.append(dst)
            if len(calls) == 6:
                raise KeyboardInterrupt
            real(src, dst)

        monkeypatch.setattr(publish, "_move", interrupt)
        expected = KeyboardInterrupt
    with pytest.raises(expected):
        commit.publish_job(second.fs, second.paths, second.files, "overwrite")
    monkeypatch.undo()
    second.close()
    assert state(root) == before and not (root / commit.TEMPORARY).exists()


def test_failed_restore_keeps_old_files_and_clean_brings_them_back(tmp_path, capsys):
    """When putting the old files back fails too, the job's directory is kept with them (cleanup after the
    failed job does not delete it), the error names it, readers see none of its files, and `gpuwrite clean
    --force` restores the table byte for byte."""
    root = tmp_path / "t"
    before = old_table(root)
    second = staged_job(root, 2)
    real, calls = publish._move, []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) >= 6:  # 4 old entries aside, 1 new file in; the 6th rename and all of the roll-back fail
            raise OSError(errno.EIO, "Input/output error", dst)
        real(src, dst)

    publish._move = failing
    try:
        with pytest.raises(CommitError, match="kept in") as info:
            commit.publish_job(second.fs, second.paths, second.files, "overwrite")
    finally:
        publish._move = real
        second.close()  # what job.run_job does after a failure: the interrupted commit is kept
    assert second.paths.job_dir in str(info.value)
    assert os.path.isdir(second.paths.job_dir) and state(root) != before
    files = pads.dataset(str(root), partitioning="hive").files
    assert files and not any(commit.TEMPORARY in f for f in files)  # the old files aside are not read
    assert main(["clean", str(root)]) == 0  # dry run: lists, changes nothing
    assert f"restore  job     {second.paths.job_dir}" in capsys.readouterr().out
    assert os.path.isdir(second.paths.job_dir)
    assert main(["clean", str(root), "--force"]) == 0
    assert "restored job" in capsys.readouterr().out
    assert state(root) == before and sorted(os.listdir(root)) == ["_SUCCESS", "k=0", "k=1", "k=2"]
    assert sorted(os.listdir(tmp_path)) == ["t"]


def _killed_at_rename(root: str, k: int) -> None:
    """Stage a job and overwrite `root`, SIGKILL-ing ourselves just before the k-th rename of the commit."""
    second = staged_job(root, 2, parts=("k=1", "k=3"))
    real, calls = publish._move, []

    def dying(src, dst):
        calls.append(dst)
        if len(calls) == k:
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst)

    publish._move = dying
    commit.publish_job(second.fs, second.paths, second.files, "overwrite")


@pytest.mark.parametrize("k, recover_by", [(5, "clean"), (5, "dataset write"), (7, "job"), (9, "clean")])
def test_driver_killed_half_way_is_undone(tmp_path, capsys, k, recover_by):
    """A driver SIGKILL'd during an overwrite commit (k=5: every old entry aside, nothing new in, where the old
    protocol had deleted the table; 9: all but `_SUCCESS` in) leaves its journal under `_temporary`, whose
    files readers skip; `gpuwrite clean --force`, the next write_dataset and the next job each put the old
    table back byte for byte first."""
    root = tmp_path / "t"
    before = old_table(root)
    child = CTX.Process(target=_killed_at_rename, args=(str(root), k))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == -signal.SIGKILL
    (job_dir,) = os.listdir(root / commit.TEMPORARY)
    assert publish.interrupted(str(root / commit.TEMPORARY / job_dir))
    assert state(root) != before
    assert not any(commit.TEMPORARY in f for f in pads.dataset(str(root), partitioning="hive").files)
    if recover_by == "clean":
        assert main(["clean", str(root), "--force"]) == 0
        out = capsys.readouterr().out
        assert "restored job" in out and "its job (pid" in out and "is gone" in out
        assert state(root) == before
    elif recover_by == "dataset write":
        gpuwrite.write_dataset(pa.table({"k": [9], "who": pa.array([3], pa.int64()), "v": pa.array([0])}), root,
                               mode="append", partition_by=["k"])
        assert {n: b for n, b in state(root).items() if not n.startswith("k=9")} == before
    else:
        third = staged_job(root, 3, parts=("k=5",))
        commit.publish_job(third.fs, third.paths, third.files, "append")
        third.close()
        assert {n: b for n, b in state(root).items() if not n.startswith("k=5")} == before
    assert not (root / commit.TEMPORARY).exists() and sorted(os.listdir(tmp_path)) == ["t"]


def test_old_files_a_job_cannot_delete_are_reported_and_removed_later(tmp_path, monkeypatch):
    """Issue 33, item 8, the job half: an overwrite job whose old files cannot all be deleted (unlink refuses
    them) commits, warns naming the retired job directory (`_temporary/<job>.done`), and the next write removes
    it; before, the job directory was deleted in place in listing order and what stayed had no owner file."""
    from gpuwrite.errors import LeftoverWarning

    root = tmp_path / "t"
    old_table(root)
    second = staged_job(root, 2, parts=("k=1", "k=3"))
    old_job = next(n for n in os.listdir(root / "k=0")).split("-", 2)[2][:36]
    refuse_unlink(monkeypatch, old_job)
    with pytest.warns(LeftoverWarning, match="Permission denied") as caught:
        commit.publish_job(second.fs, second.paths, second.files, "overwrite")
    second.close()
    monkeypatch.undo()
    retired = second.paths.job_dir + ".done"
    assert retired in str(caught[0].message) and os.listdir(root / commit.TEMPORARY) == [os.path.basename(retired)]
    assert who(root) == [2] * 16
    gpuwrite.write_dataset(pa.table({"k": [7], "who": pa.array([5], pa.int64()), "v": pa.array([0])}), root,
                           mode="append", partition_by=["k"])
    assert who(root) == [2] * 16 + [5] and sorted(os.listdir(root)) == ["_SUCCESS", "k=1", "k=3", "k=7"]


def test_running_job_is_kept_dead_one_cleaned_by_next_write(tmp_path, capsys):
    """A job's directory is a running job's while its driver holds the owner file: `gpuwrite clean --force`
    and other writers leave it (an overwrite by write_dataset keeps `_temporary` in place, and the job then
    commits). Once the driver is gone the next write removes it; one without an owner file (a non-native
    filesystem) only `gpuwrite clean` removes, by age."""
    root = tmp_path / "t"
    old_table(root)
    running = staged_job(root, 2, parts=("k=4",))
    assert main(["clean", str(root), "--force"]) == 0
    assert "its job is running" in capsys.readouterr().out and os.path.isdir(running.paths.job_dir)
    gpuwrite.write_dataset(pa.table({"k": [7], "who": pa.array([5], pa.int64()), "v": pa.array([0])}), root,
                           mode="overwrite", partition_by=["k"])
    assert os.path.isdir(running.paths.job_dir) and who(root) == [5]
    commit.publish_job(running.fs, running.paths, running.files, "append")
    running.close()
    assert who(root) == [2] * 8 + [5] and not (root / commit.TEMPORARY).exists()

    dead = staged_job(root, 6, parts=("k=8",))
    dead.stage.close()  # the driver is gone (its lock dropped), its files still there
    orphan = root / commit.TEMPORARY / str(uuid.uuid4())  # no owner file: cannot tell whether it runs
    (orphan / "task_00000").mkdir(parents=True)
    assert main(["clean", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"remove   job     {dead.paths.job_dir}" in out and f"keep     job     {orphan}" in out
    gpuwrite.write_dataset(pa.table({"k": [7], "who": pa.array([5], pa.int64()), "v": pa.array([1])}), root,
                           mode="append", partition_by=["k"])
    assert not os.path.exists(dead.paths.job_dir) and orphan.is_dir()
    assert main(["clean", str(root), "--force", "--older-than", "0"]) == 0
    assert "removed  job" in capsys.readouterr().out and not (root / commit.TEMPORARY).exists()


def test_lost_task_output_is_an_error_not_a_smaller_table(tmp_path):
    """A task that reported files whose committed directory is gone fails the job: no success with files
    missing (the old table stays)."""
    root = tmp_path / "t"
    before = old_table(root)
    second = staged_job(root, 2, tasks=2)
    second.fs.delete_dir(second.paths.task_dir(1))
    stats = pa.table({"task": [0, 1], "attempt": [0, 0], "path": [second.files[0][1], second.files[3][1]],
                      "rows": [4, 4], "bytes": [1, 1], "partition": ["k=0", "k=0"], "receive_s": [0.0, 0.0],
                      "tail_s": [0.0, 0.0], "task_s": [0.0, 0.0]})
    request = job.WriteRequest(path=str(root), mode="overwrite")
    with pytest.raises(CommitError, match=r"task\(s\) \[1\] are gone") as info:
        job._commit(second.fs, second.paths, stats, request, None, {})
    second.close()
    assert str(root) in str(info.value) and state(root) == before


@pytest.mark.parametrize("form", ["t/.", "t/sub/..", "./t/", "link", "deep/.."])
def test_dot_forms_and_symlinks_overwrite_the_real_table(tmp_path, monkeypatch, form):
    """`t/.`, `t/sub/..` and symlinks resolve to the real directory (as write_dataset's target): the overwrite
    replaces the table there and links stay links. `deep/..`, with `deep` a link to `t/sub`, is `t` (a
    lexical normalisation, as the old `abspath`, made it the directory holding the table)."""
    monkeypatch.chdir(tmp_path)
    old_table(tmp_path / "t")
    (tmp_path / "t" / "sub").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "t", target_is_directory=True)
    (tmp_path / "deep").symlink_to(tmp_path / "t" / "sub", target_is_directory=True)
    fs, root = commit.resolve(form)
    assert root == str(tmp_path / "t")
    job.check_path(fs, form, root, "overwrite")
    second = staged_job(form, 2, parts=("k=3",))
    assert second.paths.root == str(tmp_path / "t")
    commit.publish_job(second.fs, second.paths, second.files, "overwrite")
    second.close()
    assert who(tmp_path / "t") == [2] * 8 and sorted(os.listdir(tmp_path / "t")) == ["_SUCCESS", "k=3"]
    assert os.path.islink(tmp_path / "link") and sorted(os.listdir(tmp_path)) == ["deep", "link", "t"]


def test_paths_write_dataset_refuses_are_refused_before_anything_moves(tmp_path, monkeypatch):
    """The working directory, a directory containing it, a file, a path inside a staging directory: refused
    naming the path, nothing written or deleted; a missing parent is fine (Spark creates it)."""
    old_table(tmp_path / "t")
    (tmp_path / "f.parquet").write_bytes(b"PAR1")
    monkeypatch.chdir(tmp_path / "t")
    before = snapshot(tmp_path)
    cases = {".": "working directory", "..": "working directory", str(tmp_path / "f.parquet"): "it is a file",
             str(tmp_path / ".t.gpuwrite-staging-0123abcd" / "x"): "staging"}
    for path, why in cases.items():
        fs, root = commit.resolve(path)
        with pytest.raises(DatasetPathError, match=why) as info:
            job.check_path(fs, path, root, "overwrite")
        assert path in str(info.value)
    assert snapshot(tmp_path) == before
    job.check_path(pafs.LocalFileSystem(), "new/deep/t", str(tmp_path / "t" / "new" / "deep" / "t"), "error")
    mem = pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem("memory")))
    with mem.open_output_stream("/gw-test/file") as out:
        out.write(b"x")
    with pytest.raises(DatasetPathError, match="it is a file"):
        job.check_path(mem, "memory://gw-test/file", "/gw-test/file", "overwrite")


def test_dropin_overwrite_of_a_file_is_sparks(tmp_path):
    """The drop-in leaves an overwrite of a file to Spark's writer (Spark replaces it; gpuwrite refuses)."""
    from gpuwrite.spark.readwriter import _path_problem

    (tmp_path / "f").write_bytes(b"x")
    assert _path_problem(None, str(tmp_path / "f"), "overwrite") == "the path is a file: Spark's writer decides " \
                                                                      "what happens"


def test_remote_filesystem_overwrite_failure_restores(tmp_path, monkeypatch):
    """On a non-native filesystem (fsspec through pyarrow: no lock, directories moved file by file) a failed
    overwrite still puts the old files back, and a clean one leaves exactly the new table."""
    fs = pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem("file")))
    root = tmp_path / "t"
    before = old_table(root)
    calls = []

    class FailingFiles(commit.ArrowFiles):
        def move(self, src: str, dst: str) -> None:
            if self._type(src) == pafs.FileType.File:
                calls.append(dst)
                if len(calls) == 9:  # `_SUCCESS` and 6 old files aside, then the 2nd new file
                    raise OSError(errno.EIO, "Input/output error", dst)
            super().move(src, dst)

    second = staged_job(root, 2)
    second.stage.close()
    monkeypatch.setattr(commit, "files_of", lambda _fs: FailingFiles(_fs))
    with pytest.raises(CommitError, match="table is as it was"):
        commit.publish_job(fs, second.paths, second.files, "overwrite")
    commit.cleanup(fs, second.paths)
    monkeypatch.undo()
    assert len(calls) > 9 and state(root) == before and not (root / commit.TEMPORARY).exists()
    ok = staged_job(root, 3)
    ok.stage.close()
    commit.publish_job(fs, ok.paths, ok.files, "overwrite")
    commit.cleanup(fs, ok.paths)
    assert who(root) == [3] * 24 and sorted(os.listdir(root)) == ["_SUCCESS", "k=0", "k=1", "k=2"]


@pytest.mark.spark
def test_write_parquet_overwrite_failing_at_commit_keeps_the_table(tmp_path, spark, monkeypatch):
    """A real job: its commit's 2nd new file fails to move; Spark still reads the old table, all of it, and
    the job's directory is gone."""
    from gpuwrite.spark import write_parquet

    path = str(tmp_path / "t")
    write_parquet(spark.range(0, 300, 1, 3).selectExpr("id", "id % 3 as k"), path, partition_by=["k"])
    before = state(path)
    real, calls = publish._move, []

    def failing(src, dst):
        calls.append(dst)
        if dst.endswith(".parquet") and sum(c.endswith(".parquet") for c in calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", dst)
        real(src, dst)

    monkeypatch.setattr(publish, "_move", failing)
    with pytest.raises(CommitError, match="table is as it was"):
        write_parquet(spark.range(0, 20, 1, 2).selectExpr("id", "id % 2 as k"), path, mode="overwrite",
                      partition_by=["k"])
    monkeypatch.undo()
    assert state(path) == before and spark.read.parquet(path).count() == 300
    assert not os.path.exists(os.path.join(path, commit.TEMPORARY))


def test_job_directory_that_cannot_be_made_is_a_named_error(tmp_path):
    """A job that cannot create its directory (here its parent is a file) fails with a GpuwriteError naming
    the path, before any task runs."""
    from gpuwrite import GpuwriteError

    (tmp_path / "f").write_bytes(b"x")
    fs, root = commit.resolve(str(tmp_path / "f" / "t"))
    with pytest.raises(GpuwriteError, match="cannot stage a Spark job") as info:
        commit.JobStage.open(fs, commit.JobPaths(root, str(uuid.uuid4())))
    assert root in str(info.value) and os.listdir(tmp_path) == ["f"]
