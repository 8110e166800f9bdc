"""One lock per dataset target, so concurrent jobs on one directory check the mode and commit one at a time.

The lock is `.<name>.gpuwrite-lock` beside the target, held with flock(2): the kernel drops it when the holding
process dies, so a killed job never leaves a lock that blocks the next one; the file it leaves is reused and
removed by the next holder. flock is per open file, so two threads of one process exclude each other too. The
file records the holder's pid, host and start time, for messages only (pids are reused; hosts differ on NFS).
"""

from __future__ import annotations

import fcntl
import os
import time
from types import TracebackType

from ..errors import GpuwriteError
from .staging import LOCK_SUFFIX, describe_owner, owner_record

LOCK_TIMEOUT_S = 600.0  # a commit only renames; waiting longer means the holder is stuck


class LockTimeoutError(GpuwriteError):
    """Another job held a target's lock for longer than we were willing to wait."""


def lock_path(target: str) -> str:
    """The lock file of `target` (its real path)."""
    return os.path.join(os.path.dirname(target), f".{os.path.basename(target)}{LOCK_SUFFIX}")


def _read(path: str) -> bytes:
    """The lock file's owner record (empty when it vanished)."""
    try:
        with open(path, "rb") as f:
            return f.read(4096)
    except OSError:
        return b""


class TargetLock:
    """Exclusive lock of one target; `with TargetLock(target):` waits up to `timeout_s` for it."""

    def __init__(self, target: str, timeout_s: float | None = None) -> None:
        self.target = target
        self.path = lock_path(target)
        self.timeout_s = LOCK_TIMEOUT_S if timeout_s is None else timeout_s
        self.fd = -1

    def _try(self) -> bool:
        """One attempt: open (create) the lock file, flock it without waiting, check it is still the file at
        the path (the previous holder may have unlinked it meanwhile), record ourselves."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise GpuwriteError(f"cannot lock the dataset {self.target!r}: cannot create {self.path!r}: "
                                f"{e.strerror}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = os.fstat(fd)
            now = os.stat(self.path)
        except (BlockingIOError, FileNotFoundError):
            os.close(fd)
            return False
        except OSError as e:
            os.close(fd)
            raise GpuwriteError(f"cannot lock the dataset {self.target!r} with {self.path!r}: {e.strerror}") from e
        if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, owner_record())
        self.fd = fd
        return True

    def acquire(self, timeout_s: float | None = None) -> bool:
        """Take the lock, polling up to `timeout_s` (default: the lock's); False when it stayed busy."""
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        pause = 0.005
        while not self._try():
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
        return True

    def holder(self) -> str:
        """Who holds the lock now, as far as its file says."""
        return describe_owner(_read(self.path))

    def release(self) -> None:
        """Remove the lock file while still holding it, then let go (a waiter re-checks the path's inode)."""
        if self.fd < 0:
            return
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = -1

    def __enter__(self) -> TargetLock:
        if not self.acquire():
            raise LockTimeoutError(f"another job ({self.holder()}) has held the lock {self.path!r} of "
                                   f"{self.target!r} for over {self.timeout_s:.0f} s; gave up")
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
