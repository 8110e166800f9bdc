"""The file operations a commit journal (`publish.execute`) makes, so one protocol serves the local disk (os
calls, in `publish`) and any pyarrow filesystem (`ArrowFiles`, for Spark jobs writing to remote storage).

Every operation refuses to replace what is at its destination, as a journal's roll-back relies on. A directory
move on a filesystem that cannot rename directories (object stores: pyarrow's S3 refuses) moves its files one
by one and can be resumed: moving the same directory again finishes the job, and moving it back undoes it.
"""

from __future__ import annotations

import errno
import json
import posixpath
from typing import Any, Protocol

import pyarrow.fs as pafs

Journal = dict[str, Any]  # "kind", "old": [rel], "new": [rel | [source rel to the staging root, rel]], "dirs"
JOURNAL, COMMITTED = "journal.json", "committed"


class Files(Protocol):
    """What a journal needs of a filesystem."""

    def exists(self, path: str) -> bool:
        """Whether anything (a link included) is at `path`."""

    def move(self, src: str, dst: str) -> None:
        """Rename `src` to `dst`; FileExistsError when `dst` exists."""

    def make_dir(self, path: str) -> None:
        """Create one directory (its parent exists)."""

    def make_dirs(self, path: str) -> None:
        """Create a directory and its parents, if missing."""

    def remove_dir_if_empty(self, path: str) -> None:
        """Remove a directory when empty; otherwise, or when gone, do nothing."""

    def touch(self, path: str) -> None:
        """Create an empty marker file."""

    def write_journal(self, root: str, journal: Journal) -> None:
        """Write `root/journal.json` so that it is absent or complete."""

    def remove(self, path: str) -> None:
        """Remove a file, if present."""

    def sync(self, path: str) -> None:
        """Make what was created, moved or removed in the directory `path` durable before what follows."""


class ArrowFiles:
    """`Files` over a pyarrow filesystem (an fsspec one wrapped in PyFileSystem included)."""

    def __init__(self, fs: pafs.FileSystem) -> None:
        self.fs = fs

    def _type(self, path: str) -> pafs.FileType:
        return self.fs.get_file_info(path).type

    def exists(self, path: str) -> bool:
        """Whether a file or directory is at `path`."""
        return self._type(path) != pafs.FileType.NotFound

    def move(self, src: str, dst: str) -> None:
        """Rename a file; a directory file by file (merging into what an interrupted move left at `dst`), then
        remove what is left of it (empty directories)."""
        if self._type(src) != pafs.FileType.Directory:
            if self.exists(dst):
                raise FileExistsError(errno.EEXIST, "already exists", dst)
            self.fs.move(src, dst)
            return
        entries = self.fs.get_file_info(pafs.FileSelector(src, recursive=True))
        for info in sorted(entries, key=lambda i: i.path):
            if info.type == pafs.FileType.File:
                to = posixpath.join(dst, posixpath.relpath(info.path, src))
                self.make_dirs(posixpath.dirname(to))
                self.move(info.path, to)
        self.make_dirs(dst)
        self.fs.delete_dir(src)

    def make_dir(self, path: str) -> None:
        """Create one directory."""
        self.fs.create_dir(path, recursive=False)

    def make_dirs(self, path: str) -> None:
        """Create a directory and its parents."""
        self.fs.create_dir(path, recursive=True)

    def remove_dir_if_empty(self, path: str) -> None:
        """Remove `path` when it is an empty directory."""
        if self._type(path) == pafs.FileType.Directory and not self.fs.get_file_info(pafs.FileSelector(path)):
            self.fs.delete_dir(path)

    def touch(self, path: str) -> None:
        """Create an empty file."""
        with self.fs.open_output_stream(path):
            pass

    def write_journal(self, root: str, journal: Journal) -> None:
        """One write of the whole journal (object stores publish an object whole or not at all)."""
        with self.fs.open_output_stream(posixpath.join(root, JOURNAL)) as out:
            out.write(json.dumps(journal).encode())

    def remove(self, path: str) -> None:
        """Delete a file when present."""
        if self.exists(path):
            self.fs.delete_file(path)

    def sync(self, path: str) -> None:
        """Nothing: pyarrow's filesystems have no fsync (an object store's write is durable once it returns)."""
