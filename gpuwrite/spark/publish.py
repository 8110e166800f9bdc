"""A local dataset write's commit: the staged table is moved into place so that no failure, and no killed
process, loses the table that was there.

Run under the target's lock (`lock.TargetLock`). A new target is one rename of the staged directory (with its
`_SUCCESS`). Otherwise a journal (the entries to move, written atomically) comes first; overwrite then moves the
old table's top-level entries aside into the staging directory (`_SUCCESS` first), moves the new ones in
(`_SUCCESS` last) and marks the commit done; append moves the new files in, creating the partition directories
it needs. The old files are deleted only after that mark. Any failure before it moves everything back; a
process killed before it leaves a journal from which `recover` restores the old table byte for byte.
"""

from __future__ import annotations

import errno
import json
import os
import shutil

from ..errors import GpuwriteError
from .commit import SUCCESS
from .modes import should_write
from .staging import NEW, OLD, Staging

JOURNAL, COMMITTED = "journal.json", "committed"


class CommitError(GpuwriteError):
    """The staged table could not be moved into place (the message says whether the old table is intact)."""


def _move(src: str, dst: str) -> None:
    """Rename `src` to `dst`, never replacing what is at `dst` (a rename would silently)."""
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, "already exists", dst)
    os.rename(src, dst)


def _make_dir(path: str) -> None:
    """Create one directory."""
    os.mkdir(path)


def _touch(path: str) -> None:
    """Create an empty marker file (`_SUCCESS`, the commit mark)."""
    with open(path, "wb"):
        pass


def _write_journal(root: str, journal: dict[str, list[str] | str]) -> None:
    """Write the journal so that it is either absent or complete (a killed process leaves no half of it)."""
    tmp = os.path.join(root, JOURNAL + ".tmp")
    with open(tmp, "w") as f:
        json.dump(journal, f)
    os.replace(tmp, os.path.join(root, JOURNAL))


def _success_last(names: list[str]) -> list[str]:
    """`names` sorted, `_SUCCESS` moved to the end (it marks a complete table, so it goes in last)."""
    return sorted(names, key=lambda n: (n == SUCCESS, n))


def _plan(stage: Staging, target: str, overwrite: bool) -> dict[str, list[str] | str]:
    """The journal of a commit into the existing directory `target`."""
    if overwrite:
        old = sorted(os.listdir(target), key=lambda n: (n != SUCCESS, n))  # the old marker goes first
        return {"kind": "overwrite", "old": old, "new": _success_last(os.listdir(stage.new)), "dirs": []}
    files: list[str] = []
    for folder, _, names in os.walk(stage.new):
        files.extend(os.path.relpath(os.path.join(folder, n), stage.new) for n in names)
    if os.path.lexists(os.path.join(target, SUCCESS)):
        files.remove(SUCCESS)  # keep the table's own marker
    dirs = {os.path.dirname(f) for f in files} - {""}
    for d in list(dirs):
        while os.path.dirname(d):
            d = os.path.dirname(d)
            dirs.add(d)
    missing = sorted((d for d in dirs if not os.path.isdir(os.path.join(target, d))),
                     key=lambda d: (d.count(os.sep), d))
    return {"kind": "append", "old": [], "new": _success_last(files), "dirs": missing}


def _apply(stage: Staging, target: str, journal: dict[str, list[str] | str]) -> None:
    """Do what the journal says: old entries aside, directories made, new entries in."""
    if journal["old"]:
        os.mkdir(stage.old)
    for name in journal["old"]:
        _move(os.path.join(target, name), os.path.join(stage.old, name))
    for d in journal["dirs"]:
        _make_dir(os.path.join(target, d))
    for rel in journal["new"]:
        _move(os.path.join(stage.new, rel), os.path.join(target, rel))


def roll_back(root: str, target: str, journal: dict[str, list[str] | str]) -> None:
    """Undo a commit that did not reach its mark, from any point (idempotent): new entries back into the
    staging directory, created directories removed, old entries back into the table."""
    new, old = os.path.join(root, NEW), os.path.join(root, OLD)
    for rel in reversed(journal["new"]):
        staged, placed = os.path.join(new, rel), os.path.join(target, rel)
        if not os.path.lexists(staged) and os.path.lexists(placed):
            os.makedirs(os.path.dirname(staged), exist_ok=True)
            _move(placed, staged)
    for d in reversed(journal["dirs"]):
        try:
            os.rmdir(os.path.join(target, d))
        except OSError:  # gone already, or not empty: someone else's files stay
            pass
    for name in reversed(journal["old"]):
        aside = os.path.join(old, name)
        if os.path.lexists(aside):
            _move(aside, os.path.join(target, name))


def _reason(exc: BaseException) -> str:
    """An OS error as 'reason: path', anything else as its message."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename!r}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__


def commit(stage: Staging, target: str, mode: str) -> bool:
    """Move the staged table into `target` as `mode` says (the caller holds the target's lock); False when
    nothing was published (mode ignore found a table). On failure the table is as it was, or, if even
    putting it back failed, the staging directory is kept and the error says how to restore it."""
    exists = os.path.isdir(target)
    if not should_write(target, mode, exists):
        return False
    try:
        if not os.path.lexists(os.path.join(stage.new, SUCCESS)):
            _touch(os.path.join(stage.new, SUCCESS))
        if not exists:
            _move(stage.new, target)  # one rename publishes the whole table, `_SUCCESS` included
            return True
    except OSError as e:
        raise CommitError(f"could not create the dataset {target!r}: {_reason(e)}") from e
    journal: dict[str, list[str] | str] = {"kind": "none", "old": [], "new": [], "dirs": []}
    try:
        journal = _plan(stage, target, overwrite=mode == "overwrite")
        _write_journal(stage.root, journal)
        _apply(stage, target, journal)
        _touch(os.path.join(stage.root, COMMITTED))
    except BaseException as exc:
        try:
            roll_back(stage.root, target, journal)
        except BaseException as undo:
            stage.keep()
            raise CommitError(f"could not commit the dataset {target!r} ({_reason(exc)}), nor put its old files "
                              f"back ({_reason(undo)}); they are kept in {stage.root!r}: `gpuwrite clean "
                              f"{target} --force` (or the next write to it) restores them") from exc
        if isinstance(exc, OSError):
            raise CommitError(f"could not commit the dataset {target!r}: {_reason(exc)}; the table is as it "
                              "was") from exc
        raise
    return True


def interrupted(root: str) -> bool:
    """Whether the staging directory `root` holds a commit that stopped half-way (recovering it restores the
    old table)."""
    return os.path.exists(os.path.join(root, JOURNAL)) and not os.path.exists(os.path.join(root, COMMITTED))


def recover(root: str, target: str) -> str:
    """Finish with a dead job's staging directory (the caller holds the target's lock): undo its commit if it
    stopped half-way, then remove it. Returns what was done: 'restored' or 'removed'."""
    done = "removed"
    if interrupted(root):
        with open(os.path.join(root, JOURNAL)) as f:
            roll_back(root, target, json.load(f))
        done = "restored"
    shutil.rmtree(root)
    return done
