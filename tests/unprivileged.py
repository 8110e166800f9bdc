"""Running a block as an unprivileged user, for tests of permission errors (root may read, write and search
anything), in a directory that user can reach wherever the checkout's temporary directory sits."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator

import pytest

NOBODY = 65534
_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")  # tried after tempfile's own, when root runs the tests


@contextlib.contextmanager
def unprivileged() -> Iterator[None]:
    """Run the block as user nobody when the tests run as root (as any other user, as that user)."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def _searchable_by_others(directory: str) -> bool:
    """Whether every directory from / down to `directory` lets others search it (nobody owns none of them)."""
    path = os.path.realpath(directory)
    while True:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode) or not st.st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


@contextlib.contextmanager
def reachable_directory() -> Iterator[str]:
    """A new empty directory (mode 0777) that `unprivileged()` can enter and write in, removed afterwards.

    As root, the first of tempfile's directory, /tmp, /var/tmp and /dev/shm whose every parent others may
    search is used (a checkout's temporary directory may sit under a directory nobody cannot enter, where
    every test would fail for that reason alone); the test is skipped when there is none."""
    candidates = [tempfile.gettempdir()]
    if os.geteuid() == 0:
        candidates += [r for r in _ROOTS if r not in candidates]
        candidates = [c for c in candidates if _searchable_by_others(c)]
        if not candidates:
            pytest.skip("no temporary directory that uid 65534 can reach, to test permissions as a non-root user")
    directory = tempfile.mkdtemp(dir=candidates[0])
    os.chmod(directory, 0o777)
    try:
        yield directory
    finally:
        for root, dirs, _ in os.walk(directory):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o777)  # a test may have locked a subdirectory
        shutil.rmtree(directory)
