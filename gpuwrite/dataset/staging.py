"""A local dataset write's staging directory: a hidden sibling of the target that holds the job's new files
(`new/`), the old files an overwrite moves aside (`old/`), the commit journal, and an owner file the job keeps
locked (flock) while it lives, so another process can tell a running job from a dead one's leftovers.

    .<name>.gpuwrite-staging-<job>/owner      pid, host, start time; flock-held by the job while it runs
    .<name>.gpuwrite-staging-<job>/new/...    the table being written (partition directories below)
    .<name>.gpuwrite-staging-<job>/old/...    an overwrite's previous entries, deleted once the commit is done
    .<name>.gpuwrite-staging-<job>/journal.json, committed   the commit's plan and its end (see `publish`)
    .<name>.gpuwrite-staging-<job>.done       the same, retired: being deleted, by anyone (see `retire`)
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import time
from dataclasses import dataclass, field

from ..errors import GpuwriteError
from .retire import DONE_SUFFIX, retire

STAGING_MARK = ".gpuwrite-staging-"
LOCK_SUFFIX = ".gpuwrite-lock"
STAGING_NAME = re.compile(r"^\.(?P<target>.+)\.gpuwrite-staging-[0-9a-f]+$")
RETIRED_NAME = re.compile(r"^\.(?P<target>.+)\.gpuwrite-staging-[0-9a-f]+" + re.escape(DONE_SUFFIX) + "$")
LOCK_NAME = re.compile(r"^\.(?P<target>.+)\.gpuwrite-lock$")
OWNER, NEW, OLD = "owner", "new", "old"
SUCCESS = "_SUCCESS"  # SPEC: FileOutputCommitter.SUCCEEDED_FILE_NAME: a complete table's marker
TEMPORARY = "_temporary"  # SPEC: FileOutputCommitter.PENDING_DIR_NAME: a Spark job's staging area in the table


def staging_prefix(target: str) -> str:
    """The name every staging directory of `target` starts with (they are its siblings)."""
    return f".{os.path.basename(target)}{STAGING_MARK}"


def owner_record() -> bytes:
    """Who holds a lock or a staging directory, for messages: pid, host and start time."""
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}).encode()


def describe_owner(raw: bytes) -> str:
    """'pid 123 on host h, since 12:00:00' from an owner record ('unknown owner' when unreadable)."""
    try:
        info = json.loads(raw.decode())
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["since"])))
        return f"pid {info['pid']} on {info['host']}, since {since}"
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return "unknown owner"


def is_locked(path: str) -> bool | None:
    """Whether a live process holds a flock on `path`; None when the file does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the probe's own lock
    return False


def hold_owner(root: str) -> int:
    """Create `root/owner` flock-held by this process and return its descriptor (closing it lets go). The file
    appears under its name already locked, so no one sees it unlocked while we live."""
    tmp = os.path.join(root, OWNER + ".tmp")
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, owner_record())
        os.rename(tmp, os.path.join(root, OWNER))
    except BaseException:
        os.close(fd)
        raise
    return fd


@dataclass
class Staging:
    """One job's staging directory; the job holds its owner file locked until `discard` or `close`."""

    root: str
    target: str
    owner_fd: int = -1
    kept: bool = field(default=False)

    @property
    def new(self) -> str:
        """Where the job writes its table."""
        return os.path.join(self.root, NEW)

    @property
    def old(self) -> str:
        """Where an overwrite moves the previous table's entries."""
        return os.path.join(self.root, OLD)

    @classmethod
    def create(cls, target: str, job: str) -> Staging:
        """Make the staging directory of job `job` writing at `target` (its real path) and lock its owner file."""
        root = os.path.join(os.path.dirname(target), f"{staging_prefix(target)}{job.replace('-', '')[:12]}")
        try:
            os.mkdir(root)
        except OSError as e:
            raise GpuwriteError(f"cannot stage a write to {target!r}: cannot create {root!r}: {e.strerror}") from e
        stage = cls(root, target)
        try:
            stage.owner_fd = hold_owner(root)
            os.mkdir(stage.new)
        except BaseException as e:
            stage.discard()
            if isinstance(e, OSError):
                raise GpuwriteError(f"cannot stage a write to {target!r} in {root!r}: {e.strerror}") from e
            raise
        return stage

    def keep(self) -> None:
        """Leave the directory in place (it holds files a later `gpuwrite clean` or write must restore)."""
        self.kept = True
        self.close()

    def discard(self) -> tuple[str, OSError] | None:
        """Retire the directory (unless kept: `retire` removes its journal, renames it, deletes it), then let go
        of the owner lock. Returns what could not be deleted (path, why), if anything."""
        left = None if self.kept else retire(self.root)
        self.close()
        return left

    def close(self) -> None:
        """Release the owner lock: from now on the directory counts as a dead job's."""
        if self.owner_fd >= 0:
            os.close(self.owner_fd)
            self.owner_fd = -1
