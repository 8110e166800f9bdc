"""Tables for the commit tests (test_dataset_commit.py, test_dataset_concurrency.py, spark/test_commit.py): a
first dataset, the rows of a second write, and a table's bytes to compare before and after."""

from __future__ import annotations

import errno
import os
from typing import Any

import pyarrow as pa

import gpuwrite


def snapshot(root: str | os.PathLike[str]) -> dict[str, bytes | None]:
    """Every entry below `root`: relative path -> file bytes (None for a directory, 'link:<to>' for a link)."""
    out: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        for d in dirs:
            path = os.path.join(folder, d)
            out[os.path.relpath(path, root)] = f"link:{os.readlink(path)}".encode() if os.path.islink(path) else None
        for f in files:
            path = os.path.join(folder, f)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = fh.read()
    return out


def old_table(path: str | os.PathLike[str], partitioned: bool = True) -> None:
    """A table with three partitions (or three files) and `_SUCCESS`."""
    t = pa.table({"p": ["a", "b", "c"] * 4, "v": pa.array(range(12), pa.int64())})
    if partitioned:
        gpuwrite.write_dataset(t, path, partition_by=["p"])
    else:
        gpuwrite.write_dataset(t, path, max_records_per_file=4)


def new_table() -> pa.Table:
    """Rows for the second write: partitions b (also in the old table) and d (new)."""
    return pa.table({"p": ["b", "d"] * 3, "v": pa.array(range(100, 106), pa.int64())})


def refuse_unlink(monkeypatch: Any, marker: str) -> None:
    """Make `os.unlink` refuse (EACCES) every path holding `marker` (an old write's job id): old files that
    cannot be deleted, for the leftover tests (`monkeypatch.undo()` gives unlink back)."""
    real_unlink = os.unlink

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if marker in os.fspath(path):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
