"""What killed jobs leave behind, recognised by name, and cleaned only when no live process owns it.

Staging directories (`.<name>.gpuwrite-staging-<job>`): dead when their owner file is no longer flock-held
(the kernel drops a dead process's lock, whatever its pid became), or, for one without an owner file (an older
gpuwrite, or a job killed within microseconds of starting), when untouched for `older_than` seconds. Cleaning
one undoes its commit if it stopped half-way (`publish.recover`), under its target's lock. Retired staging
directories (`<staging directory>.done`, see `retire`) hold only what a finished or abandoned write was deleting
when it died or could not delete: anyone removes them at once (no owner to ask). Lock files
(`.<name>.gpuwrite-lock`): stale when not held. Temp files of single-file writes (`.<name>.<hex>.gpuwrite-tmp`):
stale when no one holds a lock on them and they are untouched for `older_than` seconds. A Spark job's directory
(`<table>/_temporary/<job uuid>`, see `commit`) is judged as a staging directory by its `owner` file; the next
write cleans it only when that file shows its job dead (a job on a non-native filesystem has none, and may run
for longer than any age), `gpuwrite clean` also by age; a retired one (`<job>.done`) at once, as is an empty
`_temporary` (a job killed before removing it).
"""

from __future__ import annotations

import os
import re
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from ..assemble.sink import TEMP_NAME
from ..errors import GpuwriteError, LeftoverWarning
from .lock import TargetLock
from .publish import recover
from .retire import DONE_SUFFIX, delete_tree
from .staging import (
    LOCK_NAME,
    OWNER,
    RETIRED_NAME,
    STAGING_NAME,
    TEMPORARY,
    describe_owner,
    is_locked,
    staging_prefix,
)

STALE_AGE_S = 3600.0  # a leftover with no owner to ask is taken as dead after an hour untouched
JOB_NAME = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")  # gpuwrite's job ids


@dataclass(frozen=True)
class Leftover:
    """One leftover: its path, kind (staging, lock, temp), the target it belongs to, and whether it is stale
    (safe to clean), with the reason."""

    path: str
    kind: str
    target: str
    stale: bool
    why: str


def _age(path: str) -> float | None:
    """Seconds since `path` was modified (None when it is gone)."""
    try:
        return max(0.0, time.time() - os.lstat(path).st_mtime)
    except FileNotFoundError:
        return None


def _by_age(path: str, older_than: float, what: str) -> tuple[bool, str]:
    """Stale when untouched for `older_than` seconds."""
    age = _age(path)
    if age is None:
        return False, "gone meanwhile"
    if age >= older_than:
        return True, f"{what}, untouched for {age:.0f} s"
    return False, f"{what}, modified {age:.0f} s ago (within {older_than:.0f} s)"


def _owner(root: str) -> str:
    """The owner record of a staging directory, described."""
    try:
        with open(os.path.join(root, OWNER), "rb") as f:
            return describe_owner(f.read(4096))
    except OSError:
        return "unknown owner"


def _job_state(path: str, older_than: float) -> tuple[bool, str]:
    """Whether the job that owns the staging directory `path` is gone, and why we think so."""
    held = is_locked(os.path.join(path, OWNER))
    if held:
        return False, f"its job is running ({_owner(path)})"
    if held is False:
        return True, f"its job ({_owner(path)}) is gone"
    return _by_age(path, older_than, "no owner record")


def is_job_dir(path: str, retired: bool = False) -> bool:
    """Whether `path` is named as a gpuwrite Spark job's directory in a table's `_temporary` (`retired`: as one
    being deleted, `<job>.done`)."""
    folder, name = os.path.split(path)
    if retired:
        if not name.endswith(DONE_SUFFIX):
            return False
        name = name[: -len(DONE_SUFFIX)]
    return os.path.basename(folder) == TEMPORARY and bool(JOB_NAME.match(name))


def _real_dir(path: str) -> bool:
    """A directory, not a link to one."""
    return os.path.isdir(path) and not os.path.islink(path)


RETIRED_WHY = "a finished or abandoned write's files, to delete"


def classify(path: str, older_than: float = STALE_AGE_S) -> Leftover | None:
    """The leftover at `path`, judged now; None when the name is not one of gpuwrite's."""
    folder, name = os.path.split(path)
    if m := STAGING_NAME.match(name):
        return Leftover(path, "staging", os.path.join(folder, m.group("target")), *_job_state(path, older_than))
    if m := RETIRED_NAME.match(name):
        return Leftover(path, "retired", os.path.join(folder, m.group("target")), True, RETIRED_WHY)
    if is_job_dir(path) and _real_dir(path):
        return Leftover(path, "job", os.path.dirname(folder), *_job_state(path, older_than))
    if is_job_dir(path, retired=True) and _real_dir(path):
        return Leftover(path, "retired", os.path.dirname(folder), True, RETIRED_WHY)
    if name == TEMPORARY and _real_dir(path) and not os.listdir(path):
        return Leftover(path, "empty", folder, True, "an empty Spark staging area")
    if m := LOCK_NAME.match(name):
        held = is_locked(path)
        return Leftover(path, "lock", os.path.join(folder, m.group("target")), held is False,
                        "held by a running job" if held else "not held")
    if m := TEMP_NAME.match(name):
        if is_locked(path):
            stale, why = False, "held by a running writer"
        else:
            stale, why = _by_age(path, older_than, "temp file")
        return Leftover(path, "temp", os.path.join(folder, m.group("target")), stale, why)
    return None


def of_target(target: str, older_than: float = STALE_AGE_S) -> list[Leftover]:
    """The leftovers beside `target` (a real path) that belong to it."""
    folder, base = os.path.split(target)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        if name.startswith(f".{base}."):
            item = classify(os.path.join(folder, name), older_than)
            if item is not None and os.path.basename(item.target) == base:
                found.append(item)
    return found


def jobs_of(target: str, older_than: float = STALE_AGE_S) -> list[Leftover]:
    """The gpuwrite Spark jobs' directories (running, dead or retired) in `target`'s `_temporary`, and that
    directory itself when it is empty."""
    temporary = os.path.join(target, TEMPORARY)
    try:
        names = sorted(os.listdir(temporary))
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not names:
        empty = classify(temporary, older_than)
        return [] if empty is None else [empty]
    return [item for n in names if (item := classify(os.path.join(temporary, n), older_than)) is not None]


def under(directory: str, older_than: float = STALE_AGE_S) -> Iterator[Leftover]:
    """Every leftover anywhere below `directory` (symlinks not followed, staging directories not entered)."""
    for folder, dirs, files in os.walk(directory):
        in_temporary = os.path.basename(folder) == TEMPORARY
        for name in sorted(files + dirs):
            item = classify(os.path.join(folder, name), older_than) \
                if name.startswith(".") or in_temporary or name == TEMPORARY else None
            if item is not None:
                yield item
        dirs[:] = sorted(d for d in dirs if classify(os.path.join(folder, d), older_than) is None)


def find(path: str, older_than: float = STALE_AGE_S) -> list[Leftover]:
    """The leftovers of `path` as a target (its siblings) and, for a directory, everything below it."""
    real = os.path.realpath(path)
    found = of_target(real, older_than)
    if os.path.isdir(real):
        found.extend(under(real, older_than))
    return found


def clean(item: Leftover, older_than: float = STALE_AGE_S) -> str:
    """Remove one stale leftover (a staging directory's interrupted commit is undone first, under its target's
    lock); returns 'removed', 'restored', or 'kept: <why>' when it turned out to be live."""
    if item.kind == "temp":
        os.remove(item.path)
        return "removed"
    if item.kind == "retired":  # garbage: no lock needed, nothing to check again
        return _recover(item)
    lock = TargetLock(item.target)
    if not lock.acquire(timeout_s=0 if item.kind == "lock" else 5.0):
        return f"kept: the lock of {item.target!r} is held ({lock.holder()})"
    try:
        if item.kind == "lock":
            return "removed"  # releasing the lock removes its file
        now = classify(item.path, older_than)
        if now is None or not now.stale:
            return f"kept: {now.why if now else 'gone meanwhile'}"
        return _recover(now)
    finally:
        lock.release()


def _recover(item: Leftover) -> str:
    """Undo a dead job's half-done commit and remove its directory (for a Spark job's, `_temporary` too when
    nothing else is staged there), or delete a retired directory; the caller holds the target's lock (but for
    a retired directory). Returns 'restored', 'removed', or 'kept: <why>' when something could not be deleted
    (the caller was warned)."""
    if item.kind == "empty":
        _remove_if_empty(item.path)
        return "removed"
    if item.kind == "retired":
        done, error = "removed", delete_tree(item.path)
        left = None if error is None else (item.path, error)
    else:
        done, left = recover(item.path, item.target)
    if os.path.basename(os.path.dirname(item.path)) == TEMPORARY:
        _remove_if_empty(os.path.dirname(item.path))
    if left is not None:
        report_left(left, item.target)
        return f"kept: cannot delete ({_reason(left[1])})"
    return done


def _remove_if_empty(path: str) -> None:
    """rmdir, which leaves a directory that is not empty (another job's directory is in `_temporary`)."""
    try:
        os.rmdir(path)
    except OSError:
        pass


def _reason(error: OSError) -> str:
    """'reason: path' of an OS error."""
    return f"{error.strerror}: {error.filename!r}" if error.strerror and error.filename else str(error)


def report_left(left: tuple[str, OSError], target: str) -> None:
    """Warn that the directory `left[0]`, of a write to `target`, could not be deleted, and who will."""
    warnings.warn(f"gpuwrite: could not delete {left[0]!r} ({_reason(left[1])}), left by a write to {target!r} "
                  f"(the files it wrote, or an overwritten table's old files); the next write to {target!r} or "
                  f"`gpuwrite clean {target} --force` deletes it", LeftoverWarning, stacklevel=3)


def _dead_job(item: Leftover) -> bool:
    """A Spark job's directory whose owner file shows its driver dead (not merely old: see the module)."""
    return item.stale and os.path.exists(os.path.join(item.path, OWNER))


def recover_dead(target: str) -> list[str]:
    """Clean every dead staging directory of `target`, dead Spark job directory in it, and retired one of
    either (the caller holds its lock): undo an interrupted commit, remove the files; the paths cleaned. What
    cannot be deleted is warned about (`LeftoverWarning`) and left for the next time."""
    cleaned = []
    prefix = staging_prefix(target)
    found = [i for i in of_target(target) if i.kind in ("staging", "retired") and i.stale
             and os.path.basename(i.path).startswith(prefix)]
    found += [i for i in jobs_of(target) if _dead_job(i) or i.kind in ("retired", "empty")]
    for item in found:
        try:
            _recover(item)
        except OSError as e:
            raise GpuwriteError(f"cannot clean up the interrupted write {item.path!r} of {target!r} "
                                f"({e.strerror}: {e.filename!r}); see `gpuwrite clean {target}`") from e
        cleaned.append(item.path)
    return cleaned
