"""One file on any filesystem: URIs and pyarrow / fsspec filesystems, each published only when complete.

Local forms (`file://`, LocalFileSystem, SubTreeFileSystem over it, fsspec's local) take the local sink; fsspec's
memory filesystem and pyarrow's mock rename a temporary name; a fake object store without rename (an fsspec
filesystem whose files honour autocommit=False, as s3fs's) and a fake pyarrow object store (spooled) show that
nothing is visible before close and nothing is left after a failure. No network.
"""

from __future__ import annotations

import gc
import io
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

fsspec = pytest.importorskip("fsspec")
from fsspec.implementations.memory import MemoryFile, MemoryFileSystem  # noqa: E402

import gpuwrite  # noqa: E402
from gpuwrite import filesystems  # noqa: E402
from gpuwrite.api import ParquetWriter  # noqa: E402
from gpuwrite.assemble.sink import FileSink  # noqa: E402
from gpuwrite.assemble.store_sink import (  # noqa: E402
    RenameSink,
    SpoolSink,
    TransactionSink,
    open_sink,
)
from gpuwrite.errors import GpuwriteError  # noqa: E402
from gpuwrite.filesystems import is_uri, locate, resolve  # noqa: E402

N = 120_000
TABLE = pa.table({"id": pa.array(range(N), pa.int64()), "name": [f"n{i % 17}" for i in range(N)]})
# a streaming writer with small row groups: row groups reach the sink as batches come, well before close
SMALL_GROUPS = {"block_size": 65536, "streaming": True}


def _write_in_batches(path: Any, filesystem: Any, check: Any) -> None:
    """Write TABLE in batches of 40,000 rows, calling `check(writer)` after each."""
    with ParquetWriter(path, TABLE.schema, filesystem=filesystem, **SMALL_GROUPS) as writer:
        for batch in TABLE.to_batches(max_chunksize=40_000):
            writer.write(batch)
            check(writer)


# -- a fake object store: no rename, files published only by commit() --------------------------------------------


class _Upload(MemoryFile):
    """An upload in progress: bytes arrive, nothing is visible until commit() (as an S3 multipart upload)."""

    def __init__(self, fs: Any, path: str) -> None:
        super().__init__(fs, path)
        self.discarded = False

    def discard(self) -> None:
        self.discarded = True
        self.fs.aborted.append(self.path)


class FakeObjectStore(MemoryFileSystem):
    """An fsspec object store (protocol s3, as s3fs): files written with autocommit=False appear only at commit;
    there is no rename (mv, copy and rename raise)."""

    protocol = ("fakes3", "s3")
    cachable = False

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[str, Any] = {}
        self.pseudo_dirs = [""]
        self.aborted: list[str] = []
        self.opened: list[_Upload] = []

    def _open(self, path: str, mode: str = "rb", block_size: Any = None, autocommit: bool = True,
              cache_options: Any = None, **kwargs: Any) -> Any:
        if mode == "wb" and not autocommit:
            f = _Upload(self, self._strip_protocol(path))
            self.opened.append(f)
            return f
        return super()._open(path, mode, block_size, autocommit, cache_options, **kwargs)

    def mv(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("no rename on an object store")

    rename = copy = cp_file = mv


@pytest.fixture
def store() -> FakeObjectStore:
    return FakeObjectStore()


def _read(fs: Any, path: str) -> pa.Table:
    with fs.open(path, "rb") as f:
        return pq.read_table(io.BytesIO(f.read()))


def test_object_store_nothing_visible_before_close(store: FakeObjectStore) -> None:
    """Row groups reach the store's upload as they are written, yet the key appears only at close; no rename."""
    seen: list[tuple[int, bool]] = []
    _write_in_batches("bucket/t.parquet", store, lambda w: seen.append((w.bytes_written, store.exists("bucket/t.parquet"))))
    assert seen[-2][0] > 4 and not any(visible for _, visible in seen)  # row groups written before the last batch
    assert store.opened[0].getbuffer().nbytes >= seen[-1][0]  # the bytes went to the upload, not elsewhere
    assert _read(store, "bucket/t.parquet").equals(TABLE)
    assert store.find("") == ["/bucket/t.parquet"] and store.aborted == []


def test_object_store_failure_leaves_nothing(store: FakeObjectStore) -> None:
    """A failure half-way discards the upload (abort, not close+commit): the old object stays, nothing new."""
    gpuwrite.write_table(TABLE.slice(0, 10), "bucket/t.parquet", filesystem=store)
    before = store.cat_file("bucket/t.parquet")

    def fail(writer: Any) -> None:
        if writer.bytes_written > 4:  # a row group is in the upload
            raise RuntimeError("injected failure")

    with pytest.raises(RuntimeError, match="injected"):
        _write_in_batches("bucket/t.parquet", store, fail)
    assert store.cat_file("bucket/t.parquet") == before
    assert store.find("") == ["/bucket/t.parquet"] and store.aborted == ["/bucket/t.parquet"]
    assert not store.transaction.files  # the finished upload is no longer referenced


def test_object_store_through_pyarrow_wrapper(store: FakeObjectStore) -> None:
    """An fsspec store wrapped in pyarrow's PyFileSystem is written through fsspec (its commit protocol)."""
    wrapped = pafs.PyFileSystem(pafs.FSSpecHandler(store))
    assert locate("b/x.parquet", wrapped).kind == "transaction"
    result = gpuwrite.write_table(TABLE, "b/x.parquet", filesystem=wrapped)
    assert result.num_rows == len(TABLE) and _read(store, "b/x.parquet").equals(TABLE)


def test_object_store_dropped_writer_publishes_nothing(store: FakeObjectStore) -> None:
    """A writer garbage-collected unfinished discards its upload, with a ResourceWarning."""
    writer = ParquetWriter("bucket/gc.parquet", TABLE.schema, filesystem=store, **SMALL_GROUPS)
    writer.write(TABLE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del writer
        gc.collect()
    assert any(issubclass(w.category, ResourceWarning) for w in caught)
    assert not store.exists("bucket/gc.parquet") and store.aborted == ["/bucket/gc.parquet"]


# -- a fake pyarrow object store (spooled: pyarrow cannot abort a stream) ------------------------------------------


class RecordingHandler(pafs.FileSystemHandler):
    """A pyarrow object store in memory: an object exists once its output stream is closed; no move."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.opened: list[str] = []

    def get_type_name(self) -> str:
        return "fake-objects"

    def equals(self, other: Any) -> bool:
        return other is self

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return [pafs.FileInfo(p, pafs.FileType.File, size=len(self.objects[p])) if p in self.objects
                else pafs.FileInfo(p, pafs.FileType.NotFound) for p in paths]

    def get_file_info_selector(self, selector: Any) -> list[pafs.FileInfo]:
        return [pafs.FileInfo(p, pafs.FileType.File, size=len(b)) for p, b in self.objects.items()]

    def open_output_stream(self, path: str, metadata: Any) -> Any:
        self.opened.append(path)
        handler = self

        class Upload(io.BytesIO):
            def close(self) -> None:
                if not self.closed:
                    handler.objects[path] = self.getvalue()
                super().close()

        return pa.PythonFile(Upload(), mode="w")

    def open_input_file(self, path: str) -> Any:
        return pa.BufferReader(self.objects[path])

    def _refuse(self, *args: Any) -> None:
        raise NotImplementedError("not in this fake")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = delete_file = _refuse
    move = copy_file = open_input_stream = open_append_stream = normalize_path = _refuse


@pytest.fixture
def objects(monkeypatch: pytest.MonkeyPatch) -> tuple[RecordingHandler, pafs.PyFileSystem]:
    """The fake pyarrow object store, classified as S3 is (spooled)."""
    handler = RecordingHandler()
    monkeypatch.setattr(filesystems, "OBJECT_STORES", (*filesystems.OBJECT_STORES, pafs.PyFileSystem))
    return handler, pafs.PyFileSystem(handler)


def test_spooled_store_sees_only_the_whole_file(objects: tuple[RecordingHandler, pafs.PyFileSystem]) -> None:
    """Nothing reaches a pyarrow object store before close; then one stream carries the complete file."""
    handler, fs = objects
    assert locate("b/t.parquet", fs).kind == "spool"
    seen: list[tuple[int, int]] = []
    _write_in_batches("b/t.parquet", fs, lambda w: seen.append((w.bytes_written, len(handler.opened))))
    assert seen[-2][0] > 4 and all(opened == 0 for _, opened in seen)  # bytes written before the last batch
    assert handler.opened == ["b/t.parquet"]
    assert pq.read_table(pa.BufferReader(handler.objects["b/t.parquet"])).equals(TABLE)


def test_spooled_store_failure_sends_nothing(objects: tuple[RecordingHandler, pafs.PyFileSystem]) -> None:
    """A failure before close never opens a stream on the store."""
    handler, fs = objects

    def fail(writer: Any) -> None:
        if writer.bytes_written > 4:
            raise RuntimeError("injected failure")

    with pytest.raises(RuntimeError, match="injected"):
        _write_in_batches("b/t.parquet", fs, fail)
    assert handler.opened == [] and handler.objects == {}


def test_pyarrow_object_stores_are_spooled() -> None:
    """pyarrow's S3 (also under a SubTreeFileSystem) takes the spool (constructing it makes no request)."""
    s3 = pafs.S3FileSystem(anonymous=True, region="us-east-1")
    assert locate("bucket/x.parquet", s3).kind == "spool"
    where = locate("x.parquet", pafs.SubTreeFileSystem("bucket/dir", s3))
    assert (where.kind, where.path) == ("spool", "bucket/dir/x.parquet")


# -- filesystems with rename and local forms -----------------------------------------------------------------------



def test_memory_uri(memfs: Any) -> None:
    """`memory://` (fsspec): a hidden temporary name while writing, renamed at close; reads back equal."""
    names: list[list[str]] = []
    _write_in_batches("memory://bucket/t.parquet", None, lambda w: names.append(memfs.find("/bucket")))
    assert all(len(n) == 1 and n[0].endswith(".gpuwrite-tmp") and "/." in n[0] for n in names)
    assert memfs.find("/bucket") == ["/bucket/t.parquet"]
    assert pq.read_table("/bucket/t.parquet", filesystem=memfs).equals(TABLE)


def test_memory_failure_leaves_nothing(memfs: Any) -> None:
    """A failure removes the temporary name; the old file stays."""
    gpuwrite.write_table(TABLE.slice(0, 5), "memory://bucket/t.parquet")
    with pytest.raises(RuntimeError, match="injected"), \
            ParquetWriter("memory://bucket/t.parquet", TABLE.schema) as writer:
        writer.write(TABLE)
        raise RuntimeError("injected failure")
    assert memfs.find("/bucket") == ["/bucket/t.parquet"]
    assert pq.read_table("/bucket/t.parquet", filesystem=memfs).num_rows == 5


def test_fsspec_object_passed_in(memfs: Any) -> None:
    """An fsspec filesystem object with a plain path (or its own URI) works as the URI does."""
    gpuwrite.write_table(TABLE, "bucket/a.parquet", filesystem=memfs)
    gpuwrite.write_table(TABLE, "memory://bucket/b.parquet", filesystem=memfs)
    for name in ("a", "b"):
        assert pq.read_table(f"/bucket/{name}.parquet", filesystem=memfs).equals(TABLE)


def test_pyarrow_mock_filesystem_renames() -> None:
    """A pyarrow filesystem with rename (the mock; HDFS alike): temporary name, then move; replaces a file."""
    fs = pafs._MockFileSystem()
    fs.create_dir("d")
    with pytest.warns(ResourceWarning, match="never closed"):
        assert isinstance(open_sink("d/x.parquet", fs), RenameSink)  # dropped: its temporary name is removed
        gc.collect()
    gpuwrite.write_table(TABLE.slice(0, 1), "d/x.parquet", filesystem=fs)
    gpuwrite.write_table(TABLE, "d/x.parquet", filesystem=fs)
    assert [i.path for i in fs.get_file_info(pafs.FileSelector("d"))] == ["d/x.parquet"]
    with fs.open_input_file("d/x.parquet") as f:
        assert pq.read_table(f).equals(TABLE)
    with pytest.raises(GpuwriteError, match="'d/y.parquet'.*Path does not exist"):
        gpuwrite.write_table(TABLE, "d/y.parquet", filesystem=pafs.SubTreeFileSystem("nope", fs))
    with pytest.raises(GpuwriteError, match="it is a directory"):
        gpuwrite.write_table(TABLE, "d", filesystem=fs)


def test_file_uri_and_local_filesystems(tmp_path: Path) -> None:
    """`file://`, LocalFileSystem, SubTreeFileSystem over it and fsspec's local filesystem all take the local
    sink (temporary file beside the target, rename) and give the same bytes as a plain path."""
    plain = gpuwrite.write_table(TABLE, tmp_path / "plain.parquet")
    forms: list[tuple[str, Any]] = [
        (f"file://{tmp_path}/uri.parquet", None),
        (str(tmp_path / "arrow.parquet"), pafs.LocalFileSystem()),
        ("sub.parquet", pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())),
        (str(tmp_path / "fsspec.parquet"), fsspec.filesystem("file")),
    ]
    for path, fs in forms:
        assert isinstance(open_sink(path, fs), FileSink)
        result = gpuwrite.write_table(TABLE, path, filesystem=fs)
        assert result.size == plain.size
    gc.collect()
    expected = (tmp_path / "plain.parquet").read_bytes()
    for name in ("uri", "arrow", "sub", "fsspec"):
        assert (tmp_path / f"{name}.parquet").read_bytes() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["plain.parquet", "uri.parquet", "arrow.parquet", "sub.parquet", "fsspec.parquet"])


def test_file_uri_missing_directory_names_it(tmp_path: Path) -> None:
    """A `file://` URI into a missing directory names the directory, as a plain path does."""
    with pytest.raises(GpuwriteError, match="does not exist"):
        gpuwrite.write_table(TABLE, f"file://{tmp_path}/missing/x.parquet")


# -- resolution -----------------------------------------------------------------------------------------------------


def test_uri_detection() -> None:
    assert is_uri("s3://b/k") and is_uri("file:///tmp/x") and is_uri("abfs://c@a.dfs.core.windows.net/x")
    assert not is_uri("/tmp/x") and not is_uri("C://x") and not is_uri("data.parquet")


def test_unknown_scheme_is_named() -> None:
    with pytest.raises(GpuwriteError, match="nosuchscheme://"):
        gpuwrite.write_table(TABLE, "nosuchscheme://x/y.parquet")


def test_bad_filesystem_argument() -> None:
    with pytest.raises(GpuwriteError, match="filesystem= must be"):
        gpuwrite.write_table(TABLE, "x.parquet", filesystem="s3")


def test_resolve_memory_uri_for_datasets() -> None:
    """`resolve` (datasets, Spark jobs) gives pyarrow's view of an fsspec URI, and a local real path."""
    fs, path = resolve("memory://bucket/table/")
    assert isinstance(fs, pafs.PyFileSystem) and path == "/bucket/table"
    fs, path = resolve("file:///tmp/../tmp/t")
    assert isinstance(fs, pafs.LocalFileSystem) and path == "/tmp/t"


def test_sinks_refuse_use_after_close(store: FakeObjectStore, memfs: Any) -> None:
    """Every sink refuses a second commit, and abort after commit does nothing."""
    for sink in (TransactionSink(store, "b/x", "b/x"), open_sink("memory://b/y"),
                 SpoolSink(pafs.LocalFileSystem(), "/nonexistent-dir/never", "never")):
        sink.write(b"abc")
        if not isinstance(sink, SpoolSink):
            assert sink.commit() == 3
            with pytest.raises(GpuwriteError, match="already closed"):
                sink.commit()
        sink.abort()
    assert store.cat_file("b/x") == b"abc" and memfs.cat_file("b/y") == b"abc"


@pytest.mark.parametrize(("protocol", "kind"), [("s3", "transaction"), ("gs", "transaction"),
                                                ("abfs", "rename"), ("sftp", "rename"), ("file", "local")])
def test_fsspec_protocol_decides(protocol: str, kind: str) -> None:
    """fsspec stores known to publish only at commit() take the transaction; adlfs (commits at close either way),
    sftp and others a temporary name and a move; fsspec's local filesystem the local sink."""
    fake = type(f"Fake_{protocol}", (MemoryFileSystem,), {"protocol": (protocol,), "cachable": False})()
    assert locate("bucket/x.parquet", fake).kind == kind


def test_every_sink_writes_the_local_bytes(tmp_path: Path, store: FakeObjectStore, memfs: Any,
                                           objects: tuple[RecordingHandler, pafs.PyFileSystem]) -> None:
    """The sink changes where bytes go, never the bytes: each store holds exactly what a local write holds."""
    gpuwrite.write_table(TABLE, tmp_path / "local.parquet")
    expected = (tmp_path / "local.parquet").read_bytes()
    gpuwrite.write_table(TABLE, "bucket/t.parquet", filesystem=store)
    gpuwrite.write_table(TABLE, "memory://bucket/t.parquet")
    handler, spooled = objects
    gpuwrite.write_table(TABLE, "b/t.parquet", filesystem=spooled)
    mock = pafs._MockFileSystem()
    mock.create_dir("d")
    gpuwrite.write_table(TABLE, "d/t.parquet", filesystem=mock)
    with mock.open_input_stream("d/t.parquet") as f:
        from_mock = f.read()
    assert store.cat_file("bucket/t.parquet") == expected
    assert memfs.cat_file("/bucket/t.parquet") == expected
    assert handler.objects["b/t.parquet"] == expected and from_mock == expected


class _FailingLocal:
    """pyarrow's local filesystem whose `move` and (after `armed`) `open_output_stream` fail with a full disk."""

    def __init__(self) -> None:
        self.local = pafs.LocalFileSystem()
        self.armed = False

    def open_output_stream(self, path: str) -> Any:
        if self.armed:
            raise OSError(28, "No space left on device")
        return self.local.open_output_stream(path)

    def move(self, src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    def delete_file(self, path: str) -> None:
        self.local.delete_file(path)


def test_failed_commit_is_named_and_leaves_nothing(tmp_path: Path, store: FakeObjectStore) -> None:
    """Each store sink's commit failure: a FileWriteError naming the path as given and the reason, and no file
    (neither the target nor a temporary name) left behind."""
    from gpuwrite.errors import FileWriteError

    fs = _FailingLocal()
    rename = RenameSink(fs, str(tmp_path / "r.parquet"), "r.parquet")  # type: ignore[arg-type]
    spool = SpoolSink(fs, str(tmp_path / "s.parquet"), "s.parquet")  # type: ignore[arg-type]
    txn = TransactionSink(store, "/bucket/t.parquet", "s3://bucket/t.parquet")

    def no_commit() -> None:
        raise OSError(28, "No space left on device")

    txn._f.commit = no_commit  # the store refuses to publish
    fs.armed = True
    for sink, shown, action in ((rename, "r.parquet", "move the finished file to"), (spool, "s.parquet", "upload"),
                                (txn, "s3://bucket/t.parquet", "write")):
        sink.write(b"PAR1" * 10)
        with pytest.raises(FileWriteError, match=f"cannot {action} '{shown}': No space left") as e:
            sink.commit()
        assert e.value.filename == shown and isinstance(e.value.__cause__, OSError)
        assert sink.closed
    assert list(tmp_path.iterdir()) == []
    assert store.find("/bucket") == [] and store.aborted == ["/bucket/t.parquet"]


def test_failed_commit_passes_other_errors_through(tmp_path: Path) -> None:
    """A non-OS failure during commit (an interrupt) is raised as it is, after the clean-up."""
    fs = _FailingLocal()
    sink = RenameSink(fs, str(tmp_path / "r.parquet"), "r.parquet")  # type: ignore[arg-type]

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    fs.move = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        sink.commit()
    assert sink.closed and list(tmp_path.iterdir()) == []


def test_file_sink_gathering_writes_survive_short_writes_and_many_parts(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """write_parts hands a chunk's pieces to os.writev: more pieces than one call takes, a kernel that writes
    only part of what it was given (resumed mid-piece), and bytes buffered by write() before them all land in
    order, and `pos` counts every byte."""
    import gpuwrite.assemble.sink as sink_module

    real = os.writev
    calls: list[int] = []

    def short(fd: int, buffers: list[memoryview]) -> int:
        calls.append(len(buffers))
        first = bytes(buffers[0])
        return real(fd, [first[: max(1, len(first) // 3)]])  # a third of the first piece at most

    monkeypatch.setattr(sink_module.os, "writev", short)
    parts = [bytes([i % 251]) * (i % 7 + 1) for i in range(3000)] + [np.arange(5, dtype=np.uint8).data, b""]
    sink = FileSink(tmp_path / "f.bin")
    sink.write(b"head")
    sink.write_parts(parts)
    sink.write(b"tail")
    assert sink.pos == 8 + sum(len(bytes(p)) for p in parts)
    assert sink.commit() == sink.pos
    assert (tmp_path / "f.bin").read_bytes() == b"head" + b"".join(bytes(p) for p in parts) + b"tail"
    assert max(calls) <= sink_module._IOV_MAX and len(calls) > len(parts)


def test_file_sink_gathering_write_failure_is_named_and_leaves_nothing(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk during a gathering write: a FileWriteError naming the path, and abort leaves no file."""
    import gpuwrite.assemble.sink as sink_module
    from gpuwrite.errors import FileWriteError

    def full(fd: int, buffers: list[memoryview]) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sink_module.os, "writev", full)
    sink = FileSink(tmp_path / "f.parquet")
    with pytest.raises(FileWriteError, match="No space left") as e:
        sink.write_parts([b"PAR1", b"x" * 100])
    assert "f.parquet" in str(e.value)
    sink.abort()
    assert list(tmp_path.iterdir()) == []


def test_user_path_expands_tilde_of_local_paths_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`~` is the home directory in a local path (where single files and datasets are located), never in a URI
    or a path on a given filesystem."""
    monkeypatch.setenv("HOME", str(tmp_path))
    assert filesystems.user_path("~/x.parquet") == str(tmp_path / "x.parquet")
    assert filesystems.user_path(Path("~") / "x") == str(tmp_path / "x")
    assert filesystems.user_path("memory://~/x") == "memory://~/x"
    assert filesystems.user_path("a/~/x") == "a/~/x"
    assert filesystems.locate("~/x.parquet") == filesystems.Location("local", str(tmp_path / "x.parquet"))
    assert filesystems.local_path("~/d") == str(tmp_path / "d")
    fs, base = filesystems.resolve("~/d")
    assert base == os.path.realpath(tmp_path / "d")
    assert filesystems.locate("~/x", pafs.LocalFileSystem()).path == "~/x"  # the filesystem's own path
