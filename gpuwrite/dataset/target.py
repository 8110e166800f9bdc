"""Where a dataset write goes, checked before anything is written or deleted.

The path is resolved to its real path: `.` and `..` components and symlinks are followed, so a symlink to a
directory is written through (the table lands in the directory it points to and the link stays a link), as a
symlinked single file is. Refused: an overwrite of the working directory or of a directory that contains it
(which includes `/`), a path inside a gpuwrite staging area, a name that is one of gpuwrite's lock or temp
files, a file, and a table directory the user may not write into. A missing parent is created
(`make_parents`, as pyarrow's write_dataset and Spark's writer do) once the path is checked, and removed again
(`remove_parents`) when the write fails. `write_dataset` and `spark.write_parquet` check their local paths here.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from ..assemble.sink import TEMP_NAME, unusable_directory
from ..errors import GpuwriteError, os_reason
from ..spark.policy.modes import check_mode
from .staging import LOCK_NAME, RETIRED_NAME, STAGING_NAME


class DatasetPathError(GpuwriteError, ValueError):
    """A dataset path gpuwrite will not write at (the message names the path as given)."""


@dataclass(frozen=True)
class Target:
    """A dataset path as the user gave it, and the real directory the write goes to."""

    given: str
    real: str

    @property
    def display(self) -> str:
        """The path to report files under: the given one, normalised, when it names the real directory by the
        same route (no symlink then `..`), else the real path."""
        plain = os.path.normpath(self.given)
        return plain if os.path.realpath(plain) == self.real else self.real


def _working_directory() -> str | None:
    """The real working directory (None when it was deleted)."""
    try:
        return os.path.realpath(os.getcwd())
    except FileNotFoundError:
        return None


def _not_a_directory(real: str) -> str:
    """What stands at `real` instead of a directory: a symlink loop (the real path of a loop is the loop), a
    path we may not reach, or a file."""
    try:
        os.stat(real)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "it is a symlink loop (too many levels of symbolic links)"
        return f"it cannot be reached: {os_reason(e)}"
    return "it is a file"


def resolve_target(path: str, mode: str, parents: bool = False) -> Target:
    """Check `path` for a write in `mode` and resolve it; raises DatasetPathError naming the path. `parents`:
    a missing parent directory is fine (the caller creates it: `make_parents`)."""
    check_mode(mode)
    if not path or "\x00" in path:
        raise DatasetPathError(f"{path!r} is not a usable dataset path")
    real = os.path.realpath(path)
    shown = path if os.path.abspath(path) == real else f"{path} (= {real})"
    if os.path.lexists(real) and not os.path.isdir(real):
        raise DatasetPathError(f"cannot write a dataset at {shown!r}: {_not_a_directory(real)}")
    parent = os.path.dirname(real)
    unusable = None if parents else unusable_directory(parent)
    if unusable is not None:
        raise DatasetPathError(f"cannot write {shown!r}: {unusable[1]}")
    parts = real.split(os.sep)
    if any(STAGING_NAME.match(p) or RETIRED_NAME.match(p) for p in parts):
        raise DatasetPathError(f"cannot write a dataset at {shown!r}: it is inside a gpuwrite staging directory")
    if LOCK_NAME.match(parts[-1]) or TEMP_NAME.match(parts[-1]):
        raise DatasetPathError(f"cannot write a dataset at {shown!r}: the name is one of gpuwrite's own files")
    cwd = _working_directory()
    if mode == "overwrite" and cwd is not None and (cwd == real or cwd.startswith(real.rstrip(os.sep) + os.sep)):
        raise DatasetPathError(f"refusing to overwrite {shown!r}: it is the working directory or contains it "
                               f"({cwd!r}); its files would be deleted")
    if mode in ("overwrite", "append") and os.path.isdir(real) and not os.access(real, os.W_OK | os.X_OK):
        raise DatasetPathError(f"cannot {mode} the dataset at {shown!r}: the directory is not writable")
    return Target(path, real)


def make_parents(target: Target) -> list[str]:
    """Create the missing directories above `target.real`, as pyarrow's write_dataset does (SPEC:
    pyarrow.dataset.write_dataset creates the base directory with its parents); the ones created, outermost
    first, for `remove_parents`. DatasetPathError naming the path when one cannot be made."""
    missing = []
    folder = os.path.dirname(target.real)
    while folder != os.path.dirname(folder):
        problem = unusable_directory(folder)
        if problem is None:
            break
        if problem[0] != errno.ENOENT:  # there but unreachable (no search permission, a loop, a file): said so
            raise DatasetPathError(f"cannot write {target.given!r}: {problem[1]}")
        missing.append(folder)
        folder = os.path.dirname(folder)
    created: list[str] = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            if os.path.isdir(d):
                continue  # another writer made it meanwhile: not ours to remove
            remove_parents(created)
            raise DatasetPathError(f"cannot write {target.given!r}: {d!r} is a file, not a directory") from None
        except OSError as e:
            remove_parents(created)
            raise DatasetPathError(f"cannot write {target.given!r}: cannot create the directory {d!r}: "
                                   f"{e.strerror}") from e
        created.append(d)
    return created


def remove_parents(created: list[str]) -> None:
    """Remove the directories `make_parents` created (innermost first) that are still empty: a failed write
    leaves nothing behind."""
    for d in reversed(created):
        try:
            os.rmdir(d)
        except OSError:
            return  # not empty (another write uses it) or gone: the ones above are not empty either
