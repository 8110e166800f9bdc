"""What killed jobs leave behind, recognised by name, and cleaned only when no live process owns it.

Staging directories (`.<name>.gpuwrite-staging-<job>`): dead when their owner file is no longer flock-held
(the kernel drops a dead process's lock, whatever its pid became), or, for one without an owner file (an older
gpuwrite, or a job killed within microseconds of starting), when untouched for `older_than` seconds. Cleaning
one undoes its commit if it stopped half-way (`publish.recover`), under its target's lock. Lock files
(`.<name>.gpuwrite-lock`): stale when not held. Temp files of single-file writes (`.<name>.<hex>.gpuwrite-tmp`):
stale when no one holds a lock on them and they are untouched for `older_than` seconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ..assemble.sink import TEMP_NAME
from ..errors import GpuwriteError
from .lock import TargetLock
from .publish import recover
from .staging import LOCK_NAME, OWNER, STAGING_NAME, describe_owner, is_locked, staging_prefix

STALE_AGE_S = 3600.0  # a leftover with no owner to ask is taken as dead after an hour untouched


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


def classify(path: str, older_than: float = STALE_AGE_S) -> Leftover | None:
    """The leftover at `path`, judged now; None when the name is not one of gpuwrite's."""
    folder, name = os.path.split(path)
    if m := STAGING_NAME.match(name):
        held = is_locked(os.path.join(path, OWNER))
        if held:
            stale, why = False, f"its job is running ({_owner(path)})"
        elif held is False:
            stale, why = True, f"its job ({_owner(path)}) is gone"
        else:
            stale, why = _by_age(path, older_than, "no owner record")
        return Leftover(path, "staging", os.path.join(folder, m.group("target")), stale, why)
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


def under(directory: str, older_than: float = STALE_AGE_S) -> Iterator[Leftover]:
    """Every leftover anywhere below `directory` (symlinks not followed, staging directories not entered)."""
    for folder, dirs, files in os.walk(directory):
        for name in sorted(files + dirs):
            item = classify(os.path.join(folder, name), older_than) if name.startswith(".") else None
            if item is not None:
                yield item
        dirs[:] = sorted(d for d in dirs if not STAGING_NAME.match(d))


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
    lock = TargetLock(item.target)
    if not lock.acquire(timeout_s=0 if item.kind == "lock" else 5.0):
        return f"kept: the lock of {item.target!r} is held ({lock.holder()})"
    try:
        if item.kind == "lock":
            return "removed"  # releasing the lock removes its file
        now = classify(item.path, older_than)
        if now is None or not now.stale:
            return f"kept: {now.why if now else 'gone meanwhile'}"
        return recover(item.path, item.target)
    finally:
        lock.release()


def recover_dead(target: str) -> list[str]:
    """Clean every dead staging directory of `target` (the caller holds its lock): undo an interrupted
    commit, remove the files; the paths cleaned."""
    cleaned = []
    prefix = staging_prefix(target)
    for item in of_target(target):
        if item.kind != "staging" or not item.stale or not os.path.basename(item.path).startswith(prefix):
            continue
        try:
            recover(item.path, target)
        except OSError as e:
            raise GpuwriteError(f"cannot clean up the interrupted write {item.path!r} of {target!r} "
                                f"({e.strerror}: {e.filename!r}); see `gpuwrite clean {target}`") from e
        cleaned.append(item.path)
    return cleaned
