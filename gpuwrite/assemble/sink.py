"""An output file that appears at its final path only when complete: temporary name, then rename."""

from __future__ import annotations

import os
import uuid

from ..errors import GpuwriteError


class FileSink:
    """Writes to a hidden temporary file beside `path`; commit() renames it, abort() removes it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(directory):
            raise GpuwriteError(f"cannot write {self.path!r}: directory {directory!r} does not exist")
        if os.path.isdir(self.path):
            raise GpuwriteError(f"cannot write {self.path!r}: it is a directory")
        name = os.path.basename(self.path)
        self.tmp_path = os.path.join(directory, f".{name}.{uuid.uuid4().hex[:12]}.gpuwrite-tmp")
        try:
            self._f = open(self.tmp_path, "xb", buffering=1 << 20)  # noqa: SIM115 - closed in commit/abort
        except OSError as e:
            raise GpuwriteError(f"cannot write {self.path!r}: {e.strerror}") from e
        self.pos = 0
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append bytes."""
        self._f.write(data)
        self.pos += len(data)

    def commit(self) -> int:
        """Close and move the file to its final path; return its size."""
        self._f.close()
        self.closed = True
        os.replace(self.tmp_path, self.path)
        return self.pos

    def abort(self) -> None:
        """Close and delete the temporary file; nothing is left at the path."""
        if self.closed:
            return
        self.closed = True
        try:
            self._f.close()
        finally:
            if os.path.exists(self.tmp_path):
                os.remove(self.tmp_path)
