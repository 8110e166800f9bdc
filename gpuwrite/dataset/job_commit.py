"""Spark's commit protocol for a gpuwrite job (HadoopMapReduceCommitProtocol with FileOutputCommitter v1),
over any pyarrow filesystem: tasks write into attempt directories, a finished attempt is renamed to its task
directory (so a retried task leaves one copy), and the driver moves committed files into place, writes
`_SUCCESS` and removes the job's temporary directory, or removes only that directory when the job fails.

    <path>/_temporary/<job>/owner                           flock-held by the driver while the job lives (local)
    <path>/_temporary/<job>/_attempt_<task>_<attempt>/...   written by a running attempt
    <path>/_temporary/<job>/task_<task>/...                 a committed task (`_ATTEMPT` names its attempt)
    <path>/_temporary/<job>/old/..., journal.json, committed   the job commit's journal (`publish.execute`)

The job commit never deletes before it has moved: it runs the same journal as write_dataset (`publish`): the
entries it replaces (the whole table but `_temporary` for an overwrite, the partition directories written for
a dynamic partition overwrite) are moved aside into the job's directory, the new files moved in, `_SUCCESS`
last, the commit marked done, and only then is the job's directory (old files included) deleted: its journal
first, then, on the local disk, the directory renamed to `<job>.done` in one step and that deleted (on other
filesystems deleted in place), so that no order of deletion and no crash point looks like a half-done commit
(`retire` gives the states and what recovery does in each). A failure before the mark moves everything back;
a killed driver leaves the journal, from which the next write to the path or `gpuwrite clean` (`leftovers`)
restores the old table. Everything staged is under `_temporary`, which
Spark and pyarrow readers skip (names starting with `_` or `.` are hidden). On the local disk the commit runs
under the target's lock (`lock.TargetLock`, the one write_dataset takes), so concurrent jobs and dataset writes
on one path commit one at a time; other filesystems have no lock (as with Spark itself).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow.fs as pafs

from ..errors import GpuwriteError
from ..filesystems import is_local, resolve
from ..spark.policy.modes import should_write
from .leftovers import recover_dead, report_left
from .lock import TargetLock
from .moves import COMMITTED, JOURNAL, ArrowFiles, Files, Journal
from .publish import LOCAL, execute, missing_dirs, table_entries
from .retire import retire
from .staging import SUCCESS, TEMPORARY, hold_owner

__all__ = ["ATTEMPT_MARKER", "SUCCESS", "TEMPORARY", "JobPaths", "JobStage", "commit_job", "publish_job",
           "resolve"]

ATTEMPT_MARKER = "_ATTEMPT"


def files_of(fs: pafs.FileSystem) -> Files:
    """The journal's file operations on `fs`."""
    return LOCAL if is_local(fs) else ArrowFiles(fs)


@dataclass(frozen=True)
class JobPaths:
    """Where one job stages its files."""

    root: str
    job: str

    @property
    def job_dir(self) -> str:
        return posixpath.join(self.root, TEMPORARY, self.job)

    def attempt_dir(self, task: int, attempt: int) -> str:
        return posixpath.join(self.job_dir, f"_attempt_{task:05d}_{attempt}")

    def task_dir(self, task: int) -> str:
        return posixpath.join(self.job_dir, f"task_{task:05d}")


def _exists(fs: pafs.FileSystem, path: str) -> bool:
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def commit_task(fs: pafs.FileSystem, paths: JobPaths, task: int, attempt: int) -> int:
    """Rename this attempt's directory to the task's; returns the attempt that holds the task's output.

    A second successful attempt of the same task (speculation) finds the task committed and deletes its own
    files, so exactly one copy survives.
    """
    attempt_dir, task_dir = paths.attempt_dir(task, attempt), paths.task_dir(task)
    with fs.open_output_stream(posixpath.join(attempt_dir, ATTEMPT_MARKER)) as out:
        out.write(str(attempt).encode())
    if _exists(fs, task_dir):
        fs.delete_dir(attempt_dir)
        return committed_attempt(fs, paths, task)
    fs.move(attempt_dir, task_dir)
    return attempt


def abort_task(fs: pafs.FileSystem, paths: JobPaths, task: int, attempt: int) -> None:
    """Remove a failed attempt's files."""
    attempt_dir = paths.attempt_dir(task, attempt)
    if _exists(fs, attempt_dir):
        fs.delete_dir(attempt_dir)


def committed_attempt(fs: pafs.FileSystem, paths: JobPaths, task: int) -> int:
    """The attempt number recorded in a committed task directory."""
    with fs.open_input_stream(posixpath.join(paths.task_dir(task), ATTEMPT_MARKER)) as f:
        return int(f.read().decode())


def committed_tasks(fs: pafs.FileSystem, paths: JobPaths) -> dict[int, int]:
    """task -> committed attempt, for every committed task of the job."""
    if not _exists(fs, paths.job_dir):
        return {}
    out = {}
    for info in fs.get_file_info(pafs.FileSelector(paths.job_dir)):
        name = posixpath.basename(info.path)
        if info.type == pafs.FileType.Directory and name.startswith("task_"):
            task = int(name[len("task_"):])
            out[task] = committed_attempt(fs, paths, task)
    return out


@dataclass
class JobStage:
    """The driver's hold on its job directory: on the local disk an `owner` file it keeps flock-held, so that
    `leftovers` tells a running job from a dead one's leftovers (whatever pid the dead one had)."""

    paths: JobPaths
    owner_fd: int = -1

    @classmethod
    def open(cls, fs: pafs.FileSystem, paths: JobPaths) -> JobStage:
        """Create the job's directory (and the table's, if missing) before any task writes into it."""
        try:
            try:
                fs.create_dir(paths.job_dir, recursive=True)
            except FileNotFoundError:  # an empty `_temporary` removed by a cleaner meanwhile: once more
                fs.create_dir(paths.job_dir, recursive=True)
            return cls(paths, hold_owner(paths.job_dir) if is_local(fs) else -1)
        except OSError as e:
            raise GpuwriteError(f"cannot stage a Spark job at {paths.root!r}: cannot create {paths.job_dir!r}: "
                                f"{e.strerror or e}") from e

    def close(self) -> None:
        """Let go: from now on the directory, if still there, counts as a dead job's."""
        if self.owner_fd >= 0:
            os.close(self.owner_fd)
            self.owner_fd = -1


@contextmanager
def target_lock(fs: pafs.FileSystem, root: str) -> Iterator[None]:
    """Hold `root`'s lock for a job commit (local disk only), after cleaning what dead jobs and dead
    write_dataset calls left there, as write_dataset does before its commit."""
    if not is_local(fs):
        yield
        return
    os.makedirs(os.path.dirname(root), exist_ok=True)
    with TargetLock(root):
        recover_dead(root)
        yield


def holds_table(fs: pafs.FileSystem, root: str) -> bool:
    """Whether `root` exists with something besides Spark jobs' staging area (a table, as save modes see it
    once this job has created the directory)."""
    kind = fs.get_file_info(root).type
    if kind != pafs.FileType.Directory:
        return kind != pafs.FileType.NotFound
    return any(posixpath.basename(i.path) != TEMPORARY for i in fs.get_file_info(pafs.FileSelector(root)))


def plan_job(fs: pafs.FileSystem, paths: JobPaths, files: list[tuple[int, str]], overwrite: bool,
             dynamic: bool = False) -> Journal:
    """The journal of a job commit: old entries to move aside, directories to make, new files to move in
    (each from its task's directory), `_SUCCESS` (staged in the job's directory) last."""
    root = paths.root

    def kind_of(rel: str) -> pafs.FileType:
        return fs.get_file_info(posixpath.join(root, rel)).type

    new: list[list[str]] = [[posixpath.join(posixpath.basename(paths.task_dir(task)), rel), rel]
                            for task, rel in files]
    rels = [rel for _, rel in files]
    if dynamic:
        kind = "dynamic"
        old = [p for p in sorted({posixpath.dirname(r) for r in rels} - {""})
               if kind_of(p) != pafs.FileType.NotFound]
    elif overwrite:
        kind = "overwrite"
        old = table_entries([posixpath.basename(i.path) for i in fs.get_file_info(pafs.FileSelector(root))])
    else:
        kind, old = "append", []
    if not dynamic and not (kind == "append" and kind_of(SUCCESS) != pafs.FileType.NotFound):
        new.append([SUCCESS, SUCCESS])  # an append keeps the table's own marker

    def present(d: str) -> bool:
        if any(d == o or d.startswith(o + "/") for o in old):
            return False  # moved aside before the new files go in
        return kind_of(d) == pafs.FileType.Directory

    return {"kind": kind, "old": old, "new": new, "dirs": missing_dirs(rels, present)}


def commit_job(fs: pafs.FileSystem, paths: JobPaths, files: list[tuple[int, str]], overwrite: bool,
               dynamic: bool = False) -> list[str]:
    """Move every committed (task, relative path) file into the table directory, write `_SUCCESS`, clean up;
    the caller holds `target_lock`. Returns the files' final paths.

    `overwrite`: what the path held (but `_temporary`) is replaced. SPEC: InsertIntoHadoopFsRelationCommand.
    deleteMatchingPartitions deletes the path before the job; gpuwrite replaces it at job commit, so a failed
    job leaves the old data. `dynamic`: dynamic partition overwrite instead: only the partition directories
    this job wrote are replaced, and no `_SUCCESS` appears (SPEC: HadoopMapReduceCommitProtocol.commitJob with
    dynamicPartitionOverwrite: the committer's output is the staging directory, its `_SUCCESS` goes away with
    it, each written partition directory is deleted and the staged one renamed into place). On failure the
    table is as it was (CommitError), or the job's directory is kept with the old files (see `publish.execute`).
    """
    io = files_of(fs)
    if not dynamic:
        io.touch(posixpath.join(paths.job_dir, SUCCESS))
    journal = plan_job(fs, paths, files, overwrite, dynamic)
    execute(paths.job_dir, paths.root, journal, io, what="the Spark job's output at")
    cleanup(fs, paths)
    return [posixpath.join(paths.root, rel) for _, rel in files]


def publish_job(fs: pafs.FileSystem, paths: JobPaths, files: list[tuple[int, str]], mode: str,
                dynamic: bool = False) -> list[str] | None:
    """The driver's job commit as a whole: under the path's lock (dead jobs' leftovers cleaned first), the
    save mode checked again, since another job may have written the path while this one ran (error modes
    raise naming the path; ignore returns None), then `commit_job`."""
    with target_lock(fs, paths.root):
        if not should_write(paths.root, mode, holds_table(fs, paths.root)):
            return None
        return commit_job(fs, paths, files, mode == "overwrite", dynamic)


def interrupted(fs: pafs.FileSystem, paths: JobPaths) -> bool:
    """Whether the job's directory holds a commit that stopped half-way (the old table's files)."""
    io = files_of(fs)
    return io.exists(posixpath.join(paths.job_dir, JOURNAL)) and \
        not io.exists(posixpath.join(paths.job_dir, COMMITTED))


def cleanup(fs: pafs.FileSystem, paths: JobPaths) -> None:
    """Remove the job's staging directory (and `_temporary` when nothing else is staged there), unless it holds
    a commit that stopped half-way: those are the old table's files, kept for `gpuwrite clean`. The journal goes
    first; on the local disk the directory is then retired (`retire`: one rename, then deleted), and what cannot
    be deleted is warned about (`LeftoverWarning`) and left to the next write or `gpuwrite clean`."""
    if interrupted(fs, paths):
        return
    if is_local(fs):
        left = retire(paths.job_dir)
        if left is not None:
            report_left(left, paths.root)
    else:
        io = ArrowFiles(fs)
        io.remove(posixpath.join(paths.job_dir, JOURNAL))
        if _exists(fs, paths.job_dir):
            fs.delete_dir(paths.job_dir)
    files_of(fs).remove_dir_if_empty(posixpath.join(paths.root, TEMPORARY))


def remove_if_empty(fs: pafs.FileSystem, root: str) -> None:
    """Remove the table directory a failed job created, if nothing (another job's staging area included) is in
    it."""
    files_of(fs).remove_dir_if_empty(root)
