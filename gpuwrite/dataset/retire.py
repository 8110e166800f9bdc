"""How a commit's staging directory ends, so that a process killed at any step, whatever order the OS lists a
directory in, leaves a state that the next write or `gpuwrite clean` reads correctly.

A staging directory R is write_dataset's `.<name>.gpuwrite-staging-<job>` (beside the table) or a Spark job's
`<table>/_temporary/<job>`. Its state is read from two files in it and from its name, never from what a
listing returns first:

    state       on disk                                  the table                recovery (its job dead)
    open        R, no journal.json                       holds nothing of R's     retire R
    committing  R/journal.json, no R/committed           part way: entries moved  roll back by the journal
                                                                                  (idempotent), remove the
                                                                                  journal, retire R
    committed   R/journal.json and R/committed           the new table            remove the journal, retire R
    retired     R.done (local disks)                     old or new, complete     delete R.done (no owner to
                                                                                  ask: it is garbage)

A job is `open` while it writes, and again once its commit has finished or been rolled back. The steps between
states are single atomic operations:

- open -> committing: the journal is written whole (`journal.json.tmp`, fsync, rename, fsync of R) before the
  first entry moves (`publish.execute`).
- committing -> committed: `committed` is created (then R fsynced) only after every entry has moved and the
  directories that received entries are fsynced.
- committed -> open, and committing -> open after a roll-back put everything back: `journal.json` is removed
  (then R fsynced). This is always the first step of a cleanup; `committed` is never removed while the journal
  exists.
- open -> retired: one rename of R to R.done. Nothing under R is deleted before it; after it everything under
  R.done is, in any order, by the job or by whoever sees it next. Where renaming a directory is not one step
  (object stores, `job_commit.cleanup`), R is deleted in place once the journal is gone: a state `open` that
  recovery deletes too.

So every prefix of a cleanup is `committed`, `open` or `retired`, and a kill during a recovery leaves a state
whose recovery finishes the job. What a retired directory's deletion cannot remove (permissions) stays under its
`.done` name: the caller is told (`LeftoverWarning`) and the next write or `gpuwrite clean` removes it.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from .moves import COMMITTED, JOURNAL

DONE_SUFFIX = ".done"


def interrupted(root: str) -> bool:
    """Whether the local staging directory `root` is `committing`: its commit stopped half-way and must be rolled
    back (the old table's entries are in it)."""
    return os.path.exists(os.path.join(root, JOURNAL)) and not os.path.exists(os.path.join(root, COMMITTED))


def sync_dir(path: str) -> None:
    """fsync a directory, so the entries created, renamed or removed in it are on disk before what follows."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def delete_tree(path: str) -> OSError | None:
    """Delete a retired directory in whatever order the OS lists it; None when it is gone, else the first error
    that kept something (what vanished meanwhile, deleted by another cleaner, is no error)."""
    errors: list[OSError] = []

    def failed(func: Any, failed_path: str, exc: Any) -> None:
        err = exc[1] if isinstance(exc, tuple) else exc
        if not isinstance(err, FileNotFoundError):
            errors.append(err)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=failed)
    else:
        shutil.rmtree(path, onerror=failed)
    if not os.path.lexists(path):
        return None
    return errors[0] if errors else OSError(f"{path!r} is still there")


def drop_journal(root: str) -> None:
    """committed (or rolled back) -> open: remove the journal, durably, before anything else in `root` goes."""
    try:
        os.remove(os.path.join(root, JOURNAL))
    except FileNotFoundError:
        return
    sync_dir(root)


def retire(root: str) -> tuple[str, OSError] | None:
    """End the local staging directory `root`, which is not `committing`: remove its journal, rename it to
    `root.done` in one step, then delete that. None when all is gone; else (what is left, why): a journal that
    cannot be removed keeps `root` whole (still `committed`, which the next recovery finishes)."""
    if not os.path.lexists(root):
        return None
    if interrupted(root):
        return root, OSError(f"{root!r} holds a commit that stopped half-way")
    try:
        drop_journal(root)
    except OSError as e:
        return root, e
    done = root + DONE_SUFFIX
    try:
        os.rename(root, done)
    except FileNotFoundError:
        return None  # another cleaner retired it meanwhile
    except OSError:
        done = root  # not renamed: it is `open`, which recovery deletes too
    error = delete_tree(done)
    return None if error is None else (done, error)
