"""Where a path names: the local disk, or a file on a pyarrow or fsspec filesystem (from a URI or one given).

`resolve` gives a pyarrow FileSystem and the path on it (what a dataset's journal moves files with);
`locate` says how one file is written there (`assemble.store_sink.open_sink`):

    local        the local disk (a plain path, `file://`, pyarrow's LocalFileSystem or a SubTreeFileSystem over
                 it, fsspec's local filesystem): temporary file beside the target, then rename (`FileSink`)
    rename       any other filesystem (HDFS, fsspec's memory, sftp and adlfs, pyarrow's mock...): temporary
                 name in the target's directory, then move (a copy then a delete where there is no rename)
    transaction  an fsspec object store whose files honour `autocommit=False` (s3fs, gcsfs): written
                 at the final key, published only by `commit()` (S3 completes the multipart upload there),
                 `discard()` on failure
    spool        pyarrow's object stores (S3, GCS, Azure): pyarrow cannot abort an output stream (dropping it
                 completes the upload), so the file is written whole to a local temporary file and streamed
                 to the store at close

URIs pyarrow knows (`s3://`, `gs://`, `abfs://`, `hdfs://`, `file://`) go to pyarrow's filesystems; others
(`memory://`, and any fsspec protocol) to fsspec when it is installed.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from .errors import FileWriteError, GpuwriteError

# fsspec protocols whose files are published only by commit() when opened with autocommit=False
# Not here, so they take the rename path: fsspec's memory filesystem (publishes at open outside a transaction)
# and adlfs (deletes the old blob when an upload starts and commits its block list at close either way).
TRANSACTIONAL = frozenset({"s3", "s3a", "gs", "gcs"})
OBJECT_STORES = tuple(getattr(pafs, n) for n in ("S3FileSystem", "GcsFileSystem", "AzureFileSystem")
                      if hasattr(pafs, n))


@dataclass(frozen=True)
class Location:
    """How one file at `path` is written: `kind` (see the module docstring), the path on its filesystem (an OS
    path for `local`), and the filesystem (`fs`: pyarrow's; `fsspec_fs`: fsspec's, for `transaction`)."""

    kind: str
    path: str
    fs: pafs.FileSystem | None = None
    fsspec_fs: Any = None


def is_uri(path: str) -> bool:
    """Whether `path` names a scheme (`s3://...`, `file:///...`); a Windows drive letter does not."""
    head, sep, _ = path.partition("://")
    return bool(sep) and len(head) > 1 and head.replace("+", "").replace("-", "").replace(".", "").isalnum()


def user_path(path: str | os.PathLike[str]) -> str:
    """`path` as a string, a leading `~` / `~user` expanded (as pyarrow's writers and the shell do) unless it is
    a URI: the one place a local path the user typed is normalised."""
    text = os.fspath(path)
    return text if is_uri(text) else os.path.expanduser(text)


def _is_fsspec(fs: Any) -> bool:
    """Whether `fs` is an fsspec filesystem (without importing fsspec when it is not)."""
    return any(c.__module__.startswith("fsspec.") and c.__name__ == "AbstractFileSystem" for c in type(fs).__mro__)


def _protocols(fs: Any) -> set[str]:
    """An fsspec filesystem's protocol names."""
    proto = getattr(fs, "protocol", ())
    return {proto} if isinstance(proto, str) else set(proto)


def _fsspec_local(fs: Any) -> bool:
    """Whether an fsspec filesystem is the local disk."""
    return bool(_protocols(fs) & {"file", "local"})


def _from_uri(uri: str) -> tuple[Any, str]:
    """(filesystem, path) of a URI: pyarrow's filesystem when pyarrow knows the scheme, else fsspec's."""
    try:
        return pafs.FileSystem.from_uri(uri)
    except OSError as e:  # the store answered (or could not be reached): no bucket, no network, no credentials
        raise FileWriteError(f"cannot write {uri!r}: {e}") from e
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as e:
        scheme = uri.partition("://")[0]
        try:
            import fsspec.core
        except ImportError:
            raise GpuwriteError(f"cannot write {uri!r}: pyarrow has no filesystem for {scheme}:// ({e}) and "
                                "fsspec is not installed (`pip install fsspec` and the scheme's package)") from e
        try:
            fs, path = fsspec.core.url_to_fs(uri)
        except (ImportError, ValueError) as e2:
            raise GpuwriteError(f"cannot write {uri!r}: no filesystem for {scheme}:// (pyarrow: {e}; fsspec: "
                                f"{e2})") from e2
        return fs, path


def _unwrap(fs: Any, path: str) -> tuple[Any, str]:
    """See through pyarrow wrappers: a SubTreeFileSystem (its base path joined), a PyFileSystem over fsspec."""
    while True:
        if isinstance(fs, pafs.SubTreeFileSystem):
            fs, path = fs.base_fs, posixpath.join(fs.base_path, path.lstrip("/"))
        elif isinstance(fs, pafs.PyFileSystem) and isinstance(fs.handler, pafs.FSSpecHandler):
            fs = fs.handler.fs
        else:
            return fs, path


def locate(path: str | os.PathLike[str], filesystem: Any = None) -> Location:
    """How to write one file at `path` (a local path, `~` expanded, or a URI, or a path on `filesystem`: a
    pyarrow or fsspec filesystem). Raises GpuwriteError for a scheme no installed filesystem serves or a filesystem of
    another kind."""
    path = os.fspath(path)
    if filesystem is None:
        if not is_uri(path):
            return Location("local", user_path(path))
        fs, on_fs = _from_uri(path)
    elif isinstance(filesystem, pafs.FileSystem) or _is_fsspec(filesystem):
        fs, on_fs = filesystem, path
    else:
        raise GpuwriteError(f"filesystem= must be a pyarrow.fs.FileSystem or an fsspec filesystem, got "
                            f"{type(filesystem).__name__}")
    fs, on_fs = _unwrap(fs, on_fs)
    if isinstance(fs, pafs.LocalFileSystem):
        return Location("local", on_fs)
    if isinstance(fs, pafs.FileSystem):
        return Location("spool" if isinstance(fs, OBJECT_STORES) else "rename", on_fs, fs)
    on_fs = fs._strip_protocol(on_fs) if is_uri(on_fs) else on_fs
    if _fsspec_local(fs):
        return Location("local", on_fs)
    if _protocols(fs) & TRANSACTIONAL:
        return Location("transaction", on_fs, None, fs)
    return Location("rename", on_fs, pafs.PyFileSystem(pafs.FSSpecHandler(fs)))


def resolve(path: str, filesystem: Any = None) -> tuple[pafs.FileSystem, str]:
    """A pyarrow FileSystem and the path on it: a given pyarrow or fsspec filesystem, or from the URI (fsspec's
    for schemes pyarrow lacks, `memory://`). A local path is its real path (`.`, `..` and symlinks resolved,
    as write_dataset's target)."""
    if filesystem is None:
        fs, base = _from_uri(path) if is_uri(path) else (pafs.LocalFileSystem(), user_path(path))
        if isinstance(fs, pafs.LocalFileSystem):
            base = os.path.realpath(base)
    else:
        fs, base = filesystem, path
    if not isinstance(fs, pafs.FileSystem):
        base = fs._strip_protocol(base) if is_uri(base) else base
        fs = pafs.PyFileSystem(pafs.FSSpecHandler(fs))
    return fs, base.rstrip("/") or "/"


def is_local(fs: pafs.FileSystem) -> bool:
    """Whether `fs` is the local disk through pyarrow's own filesystem (locks and os renames apply)."""
    return isinstance(fs, pafs.LocalFileSystem)


def local_path(path: str | os.PathLike[str], filesystem: Any = None) -> str | None:
    """The OS path when `path` (on `filesystem`) is on the local disk, else None."""
    where = locate(path, filesystem)
    return where.path if where.kind == "local" else None
