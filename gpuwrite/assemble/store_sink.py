"""Output files on filesystems other than the local disk, each published only when complete (`Sink`).

`open_sink` picks the sink for a path or URI (`filesystems.locate`): the local disk's `FileSink` (temporary
file, rename); `RenameSink` for other filesystems (temporary name beside the target, moved at commit: a rename
where the filesystem has one, else its copy-and-delete); `TransactionSink` for fsspec stores whose files take `autocommit=False` (written at the final key,
made visible by `commit()`: s3fs completes the multipart upload there, `discard()` aborts it); `SpoolSink` for
pyarrow's object stores, which cannot abort an output stream (pyarrow completes the upload when a stream is
dropped), so the file is written whole to an unnamed local temporary file and streamed to the store at commit.
Nothing appears at the target before commit; abort, a failure, or a sink dropped without either (with a
ResourceWarning) leaves nothing behind.
"""

from __future__ import annotations

import posixpath
import tempfile
import warnings
import weakref
from collections.abc import Sequence
from typing import IO, Any, NoReturn, Protocol

import pyarrow.fs as pafs

from ..errors import FileWriteError, GpuwriteError
from ..filesystems import locate
from .sink import FileSink, temp_name

UPLOAD_CHUNK = 8 << 20  # bytes read from the spool per write to the store


class Sink(Protocol):
    """Where the assembler writes a file's bytes: appended in order, published by commit() only."""

    path: str
    pos: int
    closed: bool

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append bytes."""

    def write_parts(self, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        """Append each of `parts`, in order (a column chunk's headers and pages)."""

    @property
    def can_rewind(self) -> bool:
        """Whether `rewind` works (bytes written can be taken back before commit)."""

    def rewind(self, pos: int) -> None:
        """Drop every byte from `pos` on; the next write lands there."""

    def commit(self) -> int:
        """Publish the file at its path; returns its size."""

    def abort(self) -> None:
        """Give up; nothing is left at the path."""


def open_sink(path: Any, filesystem: Any = None) -> Sink:
    """The sink for one file at `path` (local path or URI) or at `path` on `filesystem` (pyarrow or fsspec)."""
    where = locate(path, filesystem)
    shown = str(path)
    if where.kind == "local":
        return FileSink(where.path)
    if where.kind == "transaction":
        return TransactionSink(where.fsspec_fs, where.path, shown)
    assert where.fs is not None
    _check_target(where.fs, where.path, shown)
    if where.kind == "spool":
        return SpoolSink(where.fs, where.path, shown)
    return RenameSink(where.fs, where.path, shown)


def _error(shown: str, action: str, e: BaseException) -> FileWriteError:
    """A FileWriteError naming the path as the user gave it and the store's reason."""
    err = FileWriteError(f"cannot {action} {shown!r}: {getattr(e, 'strerror', None) or e}")
    err.filename = shown
    return err


def _check_target(fs: pafs.FileSystem, path: str, shown: str) -> None:
    """Refuse a directory at the target (a missing parent is the filesystem's to refuse or create: object
    stores have none, HDFS creates them)."""
    try:
        kind = fs.get_file_info(path).type
    except OSError as e:
        raise _error(shown, "write", e) from e
    if kind == pafs.FileType.Directory:
        raise GpuwriteError(f"cannot write {shown!r}: it is a directory")


class _StoreSink:
    """What the sinks share: position, state, and the finalizer that cleans up a sink never finished."""

    def __init__(self, shown: str) -> None:
        self.path = shown
        self.pos = 0
        self.closed = False

    def _watch(self, cleanup: Any) -> None:
        """Run `cleanup` (with a ResourceWarning) if this sink is garbage collected unfinished."""
        self._finalizer = weakref.finalize(self, _abandon, cleanup, self.path)

    def _check_open(self) -> None:
        if self.closed:
            raise GpuwriteError(f"the file {self.path!r} is already closed or aborted")

    def write_parts(self, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        """Append each part in order."""
        for part in parts:
            self.write(part)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append bytes (each sink's own stream)."""
        raise NotImplementedError

    can_rewind = False  # a store's stream only appends (its parts may be uploaded already)

    def rewind(self, pos: int) -> None:
        """Not possible: the bytes may have left."""
        raise GpuwriteError(f"the file {self.path!r} cannot take bytes back")

    def _append(self, out: Any, data: bytes | bytearray | memoryview, action: str = "write") -> None:
        """Write `data` to stream `out` and advance; an OSError becomes a FileWriteError naming the path."""
        try:
            out.write(data)
        except OSError as e:
            raise _error(self.path, action, e) from e
        self.pos += len(data)

    def _commit_failed(self, e: BaseException, action: str) -> NoReturn:
        """After a failed commit: abort (nothing left at the path), then raise (an OSError as a named
        FileWriteError)."""
        self.abort()
        if isinstance(e, OSError):
            raise _error(self.path, action, e) from e
        raise e

    def abort(self) -> None:
        """Give up; nothing is left at the path (each sink's own clean-up)."""
        raise NotImplementedError

    def _finish(self) -> bool:
        """Mark closed; False when it already was."""
        if self.closed:
            return False
        self.closed = True
        self._finalizer.detach()
        return True


def _abandon(cleanup: Any, shown: str) -> None:
    """Finalizer of a sink dropped without commit or abort."""
    try:
        cleanup()
    except Exception:  # noqa: BLE001 - best effort at garbage collection
        pass
    warnings.warn(f"gpuwrite: the file {shown!r} was never closed (call close() or use `with`); nothing was "
                  "written", ResourceWarning, stacklevel=2)


class RenameSink(_StoreSink):
    """A temporary name in the target's directory (hidden, as `FileSink` names it), moved over the target at
    commit: one rename for a new file. Replacing a file is the filesystem's `move`: pyarrow's HDFS deletes the
    old file then renames (a moment with neither); fsspec's memory filesystem copies then deletes."""

    def __init__(self, fs: pafs.FileSystem, path: str, shown: str) -> None:
        super().__init__(shown)
        self.fs, self.target = fs, path
        self.tmp_path = posixpath.join(posixpath.dirname(path), temp_name(posixpath.basename(path)))
        try:
            self._out = fs.open_output_stream(self.tmp_path)
        except OSError as e:
            raise _error(shown, "write", e) from e
        self._watch(lambda out=self._out, fs=fs, tmp=self.tmp_path: _drop(out, fs, tmp))

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append to the temporary file."""
        self._append(self._out, data)

    def commit(self) -> int:
        """Close the temporary file and move it to the target; on failure it is removed."""
        self._check_open()
        action = "write"
        try:
            self._out.close()
            action = "move the finished file to"
            self.fs.move(self.tmp_path, self.target)
        except BaseException as e:
            self._commit_failed(e, action)
        self._finish()
        return self.pos

    def abort(self) -> None:
        """Close and delete the temporary file."""
        if self._finish():
            _drop(self._out, self.fs, self.tmp_path)


def _drop(out: Any, fs: pafs.FileSystem, tmp: str) -> None:
    """Close a temporary file's stream (its name is not the target's) and delete it."""
    try:
        out.close()
    except OSError:
        pass
    try:
        fs.delete_file(tmp)
    except OSError:
        pass  # never created, or already gone


class TransactionSink(_StoreSink):
    """An fsspec file opened at the target with `autocommit=False`: its bytes go to the store as they come
    (s3fs uploads parts of a multipart upload), and only `commit()` publishes them; `discard()` throws them
    away (s3fs aborts the upload), as fsspec's own transactions do."""

    def __init__(self, fs: Any, path: str, shown: str) -> None:
        super().__init__(shown)
        try:
            if fs.isdir(path):
                raise GpuwriteError(f"cannot write {shown!r}: it is a directory")
            self._f = fs.open(path, "wb", autocommit=False)
        except OSError as e:
            raise _error(shown, "write", e) from e
        self._fs = fs
        self._watch(lambda f=self._f: _discard(f))

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append (the store sees parts, never the file)."""
        self._append(self._f, data)

    def commit(self) -> int:
        """Upload what is buffered, then publish the file (s3fs: complete the multipart upload)."""
        self._check_open()
        try:
            self._f.close()
            self._f.commit()
        except BaseException as e:
            self._commit_failed(e, "write")
        self._finish()
        self._forget()
        return self.pos

    def abort(self) -> None:
        """Discard the file (s3fs: abort the multipart upload); nothing is published."""
        if self._finish():
            try:
                _discard(self._f)
            finally:
                self._forget()

    def _forget(self) -> None:
        """fsspec lists every file opened without autocommit in the filesystem's transaction (to commit or
        discard when one ends); this one is done, so it leaves that list rather than stay referenced."""
        pending = getattr(getattr(self._fs, "_transaction", None), "files", None)
        if pending is not None and self._f in pending:
            pending.remove(self._f)


def _discard(f: Any) -> None:
    """fsspec's roll-back of an uncommitted file: close (no publish without autocommit), then discard."""
    try:
        f.close()
    except Exception:  # noqa: BLE001 - the store may refuse the last part; discard anyway
        pass
    f.discard()


class SpoolSink(_StoreSink):
    """The file written whole to an unnamed local temporary file (gone even if the process is killed), then
    streamed to the store at commit: pyarrow's S3, GCS and Azure streams cannot be aborted (one dropped
    completes its upload), so only complete bytes ever reach one: a failure while encoding never reaches the
    store. Needs local disk space for one file. A failure of the upload itself (the network, the store) is
    pyarrow's to handle: its stream is closed without every byte, and S3 completes a multipart upload only if
    every part arrived."""

    def __init__(self, fs: pafs.FileSystem, path: str, shown: str) -> None:
        super().__init__(shown)
        self.fs, self.target = fs, path
        try:
            self._spool: IO[bytes] = tempfile.TemporaryFile(prefix="gpuwrite-spool-")  # noqa: SIM115 - commit/abort
        except OSError as e:
            raise _error(shown, "spool (in the local temporary directory)", e) from e
        self._watch(self._spool.close)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append to the local spool."""
        self._append(self._spool, data, "spool (in the local temporary directory)")

    def commit(self) -> int:
        """Stream the spooled file to the store (published when the stream closes)."""
        self._check_open()
        try:
            self._spool.seek(0)
            with self.fs.open_output_stream(self.target) as out:
                while chunk := self._spool.read(UPLOAD_CHUNK):
                    out.write(chunk)
        except BaseException as e:
            self._commit_failed(e, "upload")
        self._spool.close()
        self._finish()
        return self.pos

    def abort(self) -> None:
        """Drop the spool; the store never saw the file."""
        if self._finish():
            self._spool.close()
