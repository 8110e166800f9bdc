"""A local dataset write's staging directory and its commit: files are written beside the target and moved
into place only when the whole write succeeded, then `_SUCCESS` (the job-level commit of a single process;
Spark jobs use `commit.py`)."""

from __future__ import annotations

import os
import shutil

from ..result import FileResult
from .commit import SUCCESS


def create(target: str, job: str) -> str:
    """Make and return the staging directory of job `job` writing at `target` (a hidden sibling of it)."""
    staging = os.path.join(os.path.dirname(os.path.abspath(target)),
                           f".{os.path.basename(target)}.gpuwrite-staging-{job[:8]}")
    os.makedirs(staging)
    return staging


def discard(staging: str) -> None:
    """Remove a failed write's staging directory."""
    shutil.rmtree(staging, ignore_errors=True)


def publish(staging: str, target: str, overwrite: bool, files: list[FileResult]) -> list[FileResult]:
    """Move the staged files into place and write `_SUCCESS` (`overwrite` clears the old table first); the
    files' results at their final paths."""
    if overwrite and os.path.isdir(target):
        shutil.rmtree(target)
    os.makedirs(target, exist_ok=True)
    moved = []
    for f in files:
        final = os.path.join(target, os.path.relpath(f.path, staging))
        os.makedirs(os.path.dirname(final), exist_ok=True)
        os.replace(f.path, final)
        moved.append(FileResult(final, f.num_rows, f.size, f.footer, f.metadata))
    with open(os.path.join(target, SUCCESS), "wb"):
        pass
    shutil.rmtree(staging)
    return moved
