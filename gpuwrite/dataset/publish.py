"""A dataset commit: staged files are moved into place so that no failure, and no killed process, loses the
table that was there. `commit` is write_dataset's (local files); `execute` is the journal both it and a Spark
job's commit (`commit.commit_job`, on any filesystem) run.

Run under the target's lock (`lock.TargetLock`). A new dataset is one rename of the staged directory (with its
`_SUCCESS`). Otherwise a journal (the entries to move, written atomically) comes first; overwrite then moves the
old table's top-level entries aside into the staging directory (`_SUCCESS` first), moves the new ones in
(`_SUCCESS` last) and marks the commit done; append moves the new files in, creating the partition directories
it needs. The old files are deleted only after that mark, once the journal is gone and the staging directory
renamed (`retire`, whose docstring gives the states a staging directory goes through and what recovery does in
each). Any failure before the mark moves everything back; a process killed before it leaves a journal from
which `recover` restores the old table byte for byte. A Spark job's staging area (`_temporary`, inside the
table) is never moved: another job may be writing into it.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable

from ..errors import GpuwriteError, os_reason
from ..spark.policy.modes import should_write
from .moves import COMMITTED, JOURNAL, Files, Journal
from .retire import drop_journal, interrupted, retire, sync_dir
from .staging import NEW, OLD, SUCCESS, TEMPORARY, Staging

__all__ = ["COMMITTED", "JOURNAL", "CommitError", "LocalFiles", "commit", "execute", "interrupted", "recover",
           "roll_back"]


class CommitError(GpuwriteError):
    """The staged table could not be moved into place (the message says whether the old table is intact);
    `kept`: the old files could not be put back and are kept in the staging directory."""

    def __init__(self, message: str, kept: bool = False) -> None:
        super().__init__(message)
        self.kept = kept


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


def _write_journal(root: str, journal: Journal) -> None:
    """Write the journal so that it is either absent or complete (a killed process leaves no half of it), and on
    disk before anything moves."""
    tmp = os.path.join(root, JOURNAL + ".tmp")
    with open(tmp, "w") as f:
        json.dump(journal, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(root, JOURNAL))
    sync_dir(root)


class LocalFiles:
    """`moves.Files` on the local disk, through this module's functions (tests replace them to inject faults)."""

    def exists(self, path: str) -> bool:
        """Whether anything, a dangling link included, is at `path`."""
        return os.path.lexists(path)

    def move(self, src: str, dst: str) -> None:
        """One rename that never replaces."""
        _move(src, dst)

    def make_dir(self, path: str) -> None:
        """One directory."""
        _make_dir(path)

    def make_dirs(self, path: str) -> None:
        """A directory and its parents."""
        os.makedirs(path, exist_ok=True)

    def remove_dir_if_empty(self, path: str) -> None:
        """rmdir, which leaves a directory that is not empty (someone else's files stay)."""
        try:
            os.rmdir(path)
        except OSError:
            pass

    def touch(self, path: str) -> None:
        """An empty marker file."""
        _touch(path)

    def write_journal(self, root: str, journal: Journal) -> None:
        """The journal, atomically."""
        _write_journal(root, journal)

    def remove(self, path: str) -> None:
        """A file, if present."""
        try:
            os.remove(path)
        except FileNotFoundError:
            pass

    def sync(self, path: str) -> None:
        """fsync a directory."""
        sync_dir(path)


LOCAL = LocalFiles()


def success_last(names: list[str]) -> list[str]:
    """`names` sorted, `_SUCCESS` moved to the end (it marks a complete table, so it goes in last)."""
    return sorted(names, key=lambda n: (n == SUCCESS, n))


def table_entries(names: list[str]) -> list[str]:
    """The entries of a table directory an overwrite moves aside: all but a Spark job's staging area (another
    job's, running or to be recovered), the old `_SUCCESS` first (the table stops claiming to be complete)."""
    return sorted((n for n in names if n != TEMPORARY), key=lambda n: (n != SUCCESS, n))


def missing_dirs(files: list[str], present: Callable[[str], bool]) -> list[str]:
    """The directories (relative, parents first) that `files` (relative paths) need and that `present` says
    will not be there."""
    dirs = {os.path.dirname(f) for f in files} - {""}
    for d in list(dirs):
        while os.path.dirname(d):
            d = os.path.dirname(d)
            dirs.add(d)
    return sorted((d for d in dirs if not present(d)), key=lambda d: (d.count(os.sep), d))


def _plan(stage: Staging, target: str, overwrite: bool) -> Journal:
    """The journal of a commit into the existing directory `target`."""
    if overwrite:
        return {"kind": "overwrite", "old": table_entries(os.listdir(target)),
                "new": success_last(os.listdir(stage.new)), "dirs": []}
    files: list[str] = []
    for folder, _, names in os.walk(stage.new):
        files.extend(os.path.relpath(os.path.join(folder, n), stage.new) for n in names)
    if os.path.lexists(os.path.join(target, SUCCESS)):
        files.remove(SUCCESS)  # keep the table's own marker
    missing = missing_dirs(files, lambda d: os.path.isdir(os.path.join(target, d)))
    return {"kind": "append", "old": [], "new": success_last(files), "dirs": missing}


def _new_entries(journal: Journal) -> list[tuple[str, str]]:
    """(source relative to the staging root, destination relative to the table) of each new entry: a plain name
    comes from `new/` (write_dataset's journals), a pair names its source (a Spark job's task directories)."""
    return [(os.path.join(NEW, e), e) if isinstance(e, str) else (e[0], e[1]) for e in journal["new"]]


def _apply(root: str, target: str, journal: Journal, files: Files) -> None:
    """Do what the journal says: old entries aside, directories made, new entries in; then fsync the directories
    that received entries (the commit mark must not reach the disk before them)."""
    received = set()
    for name in journal["old"]:
        aside = os.path.join(root, OLD, name)
        files.make_dirs(os.path.dirname(aside))
        files.move(os.path.join(target, name), aside)
        received.add(os.path.dirname(aside))
    for d in journal["dirs"]:
        files.make_dir(os.path.join(target, d))
        received.add(os.path.dirname(os.path.join(target, d)))
    for src, dst in _new_entries(journal):
        files.move(os.path.join(root, src), os.path.join(target, dst))
        received.add(os.path.dirname(os.path.join(target, dst)))
    for folder in sorted(received):
        files.sync(folder)


def roll_back(root: str, target: str, journal: Journal, files: Files = LOCAL) -> None:
    """Undo a commit that did not reach its mark, from any point (idempotent): new entries back into the
    staging directory, created directories removed, old entries back into the table."""
    for src, dst in reversed(_new_entries(journal)):
        staged, placed = os.path.join(root, src), os.path.join(target, dst)
        if not files.exists(staged) and files.exists(placed):
            files.make_dirs(os.path.dirname(staged))
            files.move(placed, staged)
    for d in reversed(journal["dirs"]):
        files.remove_dir_if_empty(os.path.join(target, d))
    for name in reversed(journal["old"]):
        aside = os.path.join(root, OLD, name)
        if files.exists(aside):
            files.move(aside, os.path.join(target, name))


def _reason(exc: BaseException) -> str:
    """An OS error as 'reason: path', anything else as its message."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename!r}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__


def execute(root: str, target: str, journal: Journal, files: Files = LOCAL, what: str = "the dataset") -> None:
    """Run `journal` from the staging directory `root` into `target` (the caller holds the target's lock):
    write it, apply it, mark it done. On failure everything is moved back and the journal removed (CommitError
    for an OSError, anything else re-raised); if moving back fails too, CommitError with `kept` set: the old
    files are in `root`, which must then be kept (its journal lets `recover` finish the job)."""
    try:
        files.write_journal(root, journal)
        _apply(root, target, journal, files)
        files.touch(os.path.join(root, COMMITTED))
        files.sync(root)
    except BaseException as exc:
        try:
            roll_back(root, target, journal, files)
            files.remove(os.path.join(root, JOURNAL))
        except BaseException as undo:
            raise CommitError(f"could not commit {what} {target!r} ({_reason(exc)}), nor put its old files "
                              f"back ({_reason(undo)}); they are kept in {root!r}: `gpuwrite clean "
                              f"{target} --force` (or the next write to it) restores them", kept=True) from exc
        if isinstance(exc, OSError):
            raise CommitError(f"could not commit {what} {target!r}: {_reason(exc)}; the table is as it "
                              "was") from exc
        raise


def commit(stage: Staging, target: str, mode: str) -> bool:
    """Move the staged table into `target` as `mode` says (the caller holds the target's lock); False when
    nothing was published (mode ignore found a table). On failure the table is as it was, or, if even
    putting it back failed, the staging directory is kept and the error says how to restore it."""
    exists = os.path.isdir(target)
    if not should_write(target, mode, exists):
        return False
    action = "create" if not exists else "append to" if mode == "append" else mode
    marker = os.path.join(stage.new, SUCCESS)
    try:
        if not os.path.lexists(marker):
            _touch(marker)
    except OSError as e:
        raise CommitError(f"could not {action} the dataset {target!r}: creating the staged {SUCCESS} marker "
                          f"{marker!r} failed: {os_reason(e)}; the table is as it was") from e
    if not exists:
        try:
            _move(stage.new, target)  # one rename publishes the whole table, `_SUCCESS` included
        except OSError as e:
            raise CommitError(f"could not create the dataset {target!r}: moving the staged table into place "
                              f"failed: {os_reason(e)}") from e
        return True
    try:
        journal = _plan(stage, target, overwrite=mode == "overwrite")
    except OSError as e:
        raise CommitError(f"could not commit the dataset {target!r}: {_reason(e)}; the table is as it was") from e
    try:
        execute(stage.root, target, journal)
    except CommitError as e:
        if e.kept:
            stage.keep()
        raise
    return True


def recover(root: str, target: str) -> tuple[str, tuple[str, OSError] | None]:
    """Finish with a dead job's local staging directory (the caller holds the target's lock): roll its commit
    back if it is `committing`, then retire it (`retire`: journal removed first, renamed, deleted). Returns what
    was done, 'restored' or 'removed', and what could not be deleted (path, why), if anything."""
    done = "removed"
    if interrupted(root):
        with open(os.path.join(root, JOURNAL)) as f:
            roll_back(root, target, json.load(f))
        drop_journal(root)
        done = "restored"
    return done, retire(root)
