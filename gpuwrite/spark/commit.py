"""Spark's commit protocol for a gpuwrite job (HadoopMapReduceCommitProtocol with FileOutputCommitter v1),
over any pyarrow filesystem: tasks write into attempt directories, a finished attempt is renamed to its task
directory (so a retried task leaves one copy), and the driver moves committed files into place, writes
`_SUCCESS` and removes the job's temporary directory, or removes only that directory when the job fails.

    <path>/_temporary/<job>/_attempt_<task>_<attempt>/...   written by a running attempt
    <path>/_temporary/<job>/task_<task>/...                 a committed task (`_ATTEMPT` names its attempt)
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Any

import pyarrow.fs as pafs

SUCCESS = "_SUCCESS"
TEMPORARY = "_temporary"
ATTEMPT_MARKER = "_ATTEMPT"


def resolve(path: str, filesystem: Any = None) -> tuple[pafs.FileSystem, str]:
    """A pyarrow FileSystem and the path on it: a given pyarrow or fsspec filesystem, or from the URI."""
    if filesystem is None:
        fs, base = pafs.FileSystem.from_uri(path) if "://" in path else (pafs.LocalFileSystem(), path)
        if isinstance(fs, pafs.LocalFileSystem):
            base = os.path.abspath(base)
        return fs, base.rstrip("/")
    if not isinstance(filesystem, pafs.FileSystem):
        filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    return filesystem, path.rstrip("/")


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


def _clear(fs: pafs.FileSystem, root: str) -> None:
    """Static overwrite: remove what the output path held (a file, or a directory's entries but the staging
    area). SPEC: InsertIntoHadoopFsRelationCommand.deleteMatchingPartitions deletes the path before the job;
    gpuwrite deletes at job commit so a failed job leaves the old data."""
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.File:
        fs.delete_file(root)
        return
    if info.type != pafs.FileType.Directory:
        return
    for entry in fs.get_file_info(pafs.FileSelector(root)):
        if posixpath.basename(entry.path) == TEMPORARY:
            continue
        if entry.type == pafs.FileType.Directory:
            fs.delete_dir(entry.path)
        else:
            fs.delete_file(entry.path)


def commit_job(fs: pafs.FileSystem, paths: JobPaths, files: list[tuple[int, str]], overwrite: bool,
               dynamic: bool = False) -> list[str]:
    """Move every committed (task, relative path) file into the table directory, write `_SUCCESS`, clean up.

    `overwrite`: what the path held before (except the staging area) is deleted first. `dynamic`: dynamic
    partition overwrite instead: only the partition directories this job wrote are replaced, and no `_SUCCESS`
    appears (SPEC: HadoopMapReduceCommitProtocol.commitJob with dynamicPartitionOverwrite: the committer's
    output is the staging directory, its `_SUCCESS` goes away with it, each written partition directory is
    deleted and the staged one renamed into place).
    """
    root = paths.root
    if dynamic:
        for part in sorted({posixpath.dirname(rel) for _, rel in files}):
            final = posixpath.join(root, part)
            if _exists(fs, final):
                fs.delete_dir(final)
    elif overwrite:
        _clear(fs, root)
    moved = []
    for task, rel in files:
        final = posixpath.join(root, rel)
        parent = posixpath.dirname(final)
        if parent:
            fs.create_dir(parent, recursive=True)
        fs.move(posixpath.join(paths.task_dir(task), rel), final)
        moved.append(final)
    fs.create_dir(root, recursive=True)
    if not dynamic:
        with fs.open_output_stream(posixpath.join(root, SUCCESS)):
            pass
    cleanup(fs, paths)
    return moved


def cleanup(fs: pafs.FileSystem, paths: JobPaths) -> None:
    """Remove the job's staging directory (and `_temporary` when nothing else is staged there)."""
    if _exists(fs, paths.job_dir):
        fs.delete_dir(paths.job_dir)
    temporary = posixpath.join(paths.root, TEMPORARY)
    if _exists(fs, temporary) and not fs.get_file_info(pafs.FileSelector(temporary)):
        fs.delete_dir(temporary)
