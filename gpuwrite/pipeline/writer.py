"""The write pipeline for one file: input -> windows -> backend -> assembler.

`FileWriter` takes Arrow pieces, converts them in windows (`window.RowWindow`), lets the backend's row-group
builder find where parquet-java would end each row group and encode its pages (`backends`), and hands the
finished chunks to the assembler, which owns every byte of the file (`assemble.file.FileAssembler`). The
key/value metadata of the footer is whatever the caller passes: the public front door (`gpuwrite.api`) passes
Spark's keys.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any

import pyarrow as pa

from ..assemble.bloom import warn_if_filters_outweigh_data
from ..assemble.file import FileAssembler, FileLayout
from ..assemble.store_sink import open_sink
from ..backends import RowGroupBuilder, kernel_cache, open_backend, resolve_device
from ..backends.workpool import wait_in_order
from ..encode.compress import CODEC_IDS
from ..errors import GpuwriteError, UnsupportedTypeError, WideDecimalError
from ..format.structs import FileMetaData
from ..integrations.arrow import ArrowPiece, as_arrow_piece
from ..integrations.device_data import DeviceTable
from ..options.model import WriteOptions
from ..page_model import PageStats
from ..result import FileResult, FooterSummary, summarize
from ..schema import FileSchema, Leaf
from .gcpause import collector_paused
from .nullability import conform
from .validate import CheckOptions, check_batch, checked_in_conversion
from .window import ArrowWindow, RowWindow

KeyValue = Sequence[tuple[str, str]]

# Every write (write_table, ParquetWriter, datasets, Spark tasks, Iceberg) goes through this module, and its imports
# have just loaded the kernels (none compiled yet: numba compiles on a kernel's first call), so listening here
# announces the first compile without making `import gpuwrite` load numba.
kernel_cache.install()


def _summary(meta: FileMetaData, leaves: tuple[Leaf, ...], page_counts: list[list[int]],
             chunk_stats: list[list[PageStats]]) -> FooterSummary:
    """A result's footer summary, built with the collector off, as close() built it before it was deferred: it
    makes objects per column chunk, and the collector's passes would visit the file's chunk metadata (0.5 s
    at 20,000 columns, measured when close() built it with the write's objects alive)."""
    with collector_paused():
        return summarize(meta, leaves, page_counts, chunk_stats)


class FileWriter:
    """Writes one Parquet v2 file from a stream of Arrow batches; row groups are flushed as they fill.

    Nothing appears at `path` until close() succeeds; on an exception inside a `with` block, abort(), a
    failure while writing, or garbage collection of a writer never closed (with a ResourceWarning), the
    temporary file is removed (`assemble.sink.FileSink`; other filesystems: `assemble.store_sink`). `lookahead`
    (row groups' worth of Arrow data in the GPU backend's first window, 8 when None; when set, also the CPU
    backend's conversion step, which is otherwise at least 32 MiB) changes only memory and how soon row groups
    reach the file, never the bytes; writers that roll files on size use 1, so `bytes_written` follows the rows
    written.
    """

    def __init__(self, path: str | os.PathLike[str], schema: FileSchema, options: WriteOptions,
                 key_value: KeyValue = (), *, lookahead: int | None = None, streaming: bool = False,
                 filesystem: Any = None) -> None:
        """`lookahead`: row groups' worth of Arrow bytes in the GPU backend's first window (8 when None) and, when
        set, in each of the CPU backend's conversion steps. `streaming`: the input
        arrives batch by batch while the caller waits for more (a Spark task), so the CPU backend converts and
        encodes in small steps as rows come (same bytes either way). `path` may be a URI, or a path on
        `filesystem` (pyarrow or fsspec): see `assemble.store_sink` for how each store publishes the file."""
        self.options = options
        self.warn_filter_size = True  # close() warns when bloom filters outweigh the data (dataset writes: once)
        self._checks = CheckOptions.of(options)  # what check_batch reads of them
        self.schema = schema
        self.key_value = list(key_value)
        self.device = resolve_device(options.device)
        self._sink = open_sink(path, filesystem)
        try:
            self._backend = open_backend(schema.leaves, options, self.device)
        except BaseException:
            self._sink.abort()
            raise
        try:
            self._assembler = FileAssembler(self._sink, schema, FileLayout(
                CODEC_IDS[options.compression], options.statistics_truncate_length,
                options.column_index_truncate_length))
        except BaseException:
            self._sink.abort()
            self._backend.close()
            raise
        self._window: RowWindow | ArrowWindow = (RowWindow(schema, options, streaming, lookahead,
                                                           getattr(self._backend, "pool", None))
                                                 if self._backend.converts_on_host
                                                 else ArrowWindow(schema, options, lookahead or 8))
        self._builder: RowGroupBuilder | None = None
        self._last_rows: int | None = None  # the last row group's rows (the next one's size hint)
        self._rows_in = 0  # rows accepted so far
        # batches written with more=False whose decimal precision is checked where they are converted, with the
        # rows written before each (see write): checked again in full if the conversion finds a wide decimal
        self._deferred: list[tuple[ArrowPiece, int]] = []
        self._defer_all = False  # see check_at_conversion
        # batches written with more=False whose value checks still run on the pool (their futures, the batch and
        # the rows written before it): waited for before the file is committed (`_wait_checks`)
        self._checking: list[tuple[list[Future], ArrowPiece, int]] = []
        self.result: FileResult | None = None

    # -- input -------------------------------------------------------------------------------------

    def write(self, data: Any, *, more: bool = True) -> None:
        """Append rows (an Arrow table/batch, pandas DataFrame or Arrow C stream) with the writer's schema.

        A batch the writer refuses (other columns or types, nulls where the schema forbids them, values a
        reader would fail on: see `validate.check_batch`) raises before anything changes: the writer stays
        usable and the rows written so far stay. Only a failure while encoding or writing aborts the file.
        `more=False`: close() comes next, so the rows are encoded there, knowing the input ends with them
        (the last row group's chunks then reach the file while its last columns encode; same bytes). The CPU
        path then checks flat decimals against their precision as it converts them, in the pass that reads
        them anyway, and runs the batch's value checks (UTF-8, nulls, ...) on its threads while the rows are
        encoded, not before: a value refused makes close() raise the error this method would have raised, and
        abort (nothing is left at the path).
        """
        self._check_open()
        try:
            self._wait_checks()  # an earlier more=False batch's (close() normally comes next)
        except BaseException as exc:
            self._fail(exc)
            raise
        piece = self._piece(data)
        defer = (not more or self._defer_all) and self._backend.converts_on_host and self.options.validate
        pool = getattr(self._backend, "pool", None)
        checking = check_batch(piece, self.schema, self._checks, self._rows_in, self._backend.checks_values, pool,
                               deferred=checked_in_conversion if defer else None,
                               background=not more and self._backend.converts_on_host)
        if checking:
            self._checking.append((checking, piece, self._rows_in))
        if piece.num_rows == 0:
            return
        try:
            if defer:
                self._deferred.append((piece, self._rows_in))
            self._rows_in += piece.num_rows
            self._window.push(piece)
            if more:
                with collector_paused():
                    self._drive(final=False)
                if self._deferred:
                    self._forget_checked()
        except BaseException as exc:
            self._fail(exc)
            raise

    def end_row_group(self) -> None:
        """End the open row group after the rows written so far (the rows are encoded now); the next rows start
        a new one. A failure while encoding aborts the file, as in write()."""
        self._check_open()
        try:
            self._wait_checks()
            with collector_paused():
                self._drive(final=True)
            self._deferred = []  # every row written is converted, and so checked
        except BaseException as exc:
            self._fail(exc)
            raise

    def _piece(self, data: Any) -> ArrowPiece:
        """`data` as the one Arrow (or device) piece the pipeline takes: the only place a batch is normalised
        (a writer that changes batches, as ParquetWriter's widening does, extends this)."""
        device = getattr(self._backend, "device", None)
        piece = as_arrow_piece(data, self.schema.arrow, device)
        if isinstance(piece, DeviceTable):
            if self._backend.converts_on_host:  # the CPU backend reads host memory: one copy of the batch
                piece = piece.to_host()
            else:
                piece.adopt(device)  # reads and their counts on the writer's device
        return conform(piece, self.schema.arrow)  # a batch differing only in nullability, relabelled if it fits

    def check_at_conversion(self) -> None:
        """Check every later batch's flat decimals against their precision where the batch is converted (as
        batches written with more=False are), not in write(): the pass over their words that the conversion
        makes anyway. A decimal too wide then aborts the file (with the error write() would have raised)
        instead of leaving the writer usable: for callers that give up the file on any error, as a Spark
        task does, where the check cost a tenth of the task's encoding time."""
        self._defer_all = True

    def _wait_checks(self) -> None:
        """Wait for the value checks left running on the pool (`write(more=False)`); a refused batch raises its
        check's error (the caller's `_fail` turns it into the batch's full check error and aborts)."""
        for futures, _, _ in self._checking:
            wait_in_order(futures, pool=getattr(self._backend, "pool", None))
        self._checking = []

    def _forget_checked(self) -> None:
        """Let go of the deferred batches whose rows are all converted (and so checked): kept, they would hold
        a streaming writer's whole input."""
        window = self._window
        if not isinstance(window, RowWindow):
            return
        converted = self._assembler.num_rows + window.rows
        keep = 0
        while keep < len(self._deferred) and self._deferred[keep][1] + self._deferred[keep][0].num_rows <= converted:
            keep += 1
        if keep:
            del self._deferred[:keep]

    # -- row groups --------------------------------------------------------------------------------

    def _drive(self, final: bool) -> None:
        """Encode and write every row group that is complete (all of them when `final`); every row group is in
        the file when it returns (`_settle`)."""
        self._drive_row_groups(final)
        self._settle()

    def _drive_row_groups(self, final: bool) -> None:
        """Encode every row group that is complete, each written in order (`_finish_row_group`)."""
        window = self._window
        while window.pending_rows > 0:
            if self._builder is None:
                self._builder = self._backend.row_group()
                if self._sink.can_rewind:  # the last row group's chunks are written as they are done
                    self._builder.stage = self._assembler.stage
                window.start_row_group(self._last_rows)
            if not window.ready(final):
                return
            cut = self._builder.advance(window.extend(), window.rows, final and window.at_end)
            if cut is None:
                if window.at_end:
                    return
                window.grow()
                continue
            self._finish_row_group(cut)
            window.drop(cut)
            self._builder = None

    def _finish_row_group(self, cut: int) -> None:
        """Write the ended row group's chunks: now, or, when its builder reads them back asynchronously
        (`finish_later`: the GPU backend), once the next row group's device work is queued (the backend runs
        the write before it next waits for the device, or at `_settle`). Row groups are written in order."""
        assert self._builder is not None
        self._last_rows = cut
        later = getattr(self._builder, "finish_later", None)
        if later is None:
            self._assembler.write_row_group(self._builder.finish(), cut)
            return
        assembler = self._assembler
        later(lambda chunks: assembler.write_row_group(chunks, cut))

    def _settle(self) -> None:
        """Write the row group whose write the backend still holds (`_finish_row_group`)."""
        flush = getattr(self._backend, "flush", None)
        if flush is not None:
            flush()

    @property
    def rows_written(self) -> int:
        """Rows accepted so far: at close, the file's row count."""
        return self._rows_in

    def footer_key_value(self) -> KeyValue:
        """The footer's key/value metadata, asked for at close (a writer whose keys depend on the rows extends it)."""
        return self.key_value

    def top_level_encodings(self) -> dict[str, set[int]]:
        """The encodings of every column chunk written so far (all of them at close), by top-level column."""
        out: dict[str, set[int]] = {}
        for rg in self._assembler.row_groups:
            for chunk in rg.columns:
                meta = chunk.meta_data
                if meta is not None:
                    out.setdefault(meta.path_in_schema[0], set()).update(meta.encodings)
        return out

    @property
    def bytes_written(self) -> int:
        """Bytes of the file so far (finished row groups); what writers that roll files on size watch."""
        return self._sink.pos

    # -- finish ------------------------------------------------------------------------------------

    def close(self) -> FileResult:
        """Write the remaining rows and the footer, then move the file into place; returns the result."""
        if self.result is not None:
            return self.result
        self._check_open()
        # The collector stays off until the result is built: turned on before, its first passes visited every
        # object of the write still alive (a wide table's encoders, pages and chunk metadata: 0.5 s at 20,000
        # columns, most of them freed by reference counting moments later).
        with collector_paused():
            try:
                self._drive(final=True)
                self._wait_checks()
                meta = self._assembler.finish(self.footer_key_value())
                size = self._sink.commit()
                self._window.clear()  # nothing of the caller's data is kept once the file is written
                self._backend.close()
            except BaseException as exc:
                self._fail(exc)
                raise
            self._deferred = []
            summary = partial(_summary, meta, self.schema.leaves, self._assembler.page_counts,
                              self._assembler.chunk_stats)  # built when the result's footer is first read
            self.result = FileResult(self._sink.path, self._assembler.num_rows, size, summary, meta)
        if self.warn_filter_size:
            warn_if_filters_outweigh_data([meta], repr(self._sink.path))
        return self.result

    def _fail(self, exc: BaseException) -> None:
        """Abort after a failure while encoding or writing; a wide decimal found in a batch whose check was
        deferred to its conversion, or by a check left running on the pool, raises that batch's full check error
        instead (naming the column and row)."""
        self.abort()  # the pool's queued jobs run or are cancelled: every check's future is settled
        checking, self._checking = self._checking, []
        failed = [(piece, written) for futures, piece, written in checking
                  if any(f.cancelled() or f.exception() is not None for f in futures)]
        if isinstance(exc, WideDecimalError) or failed:
            deferred, self._deferred = self._deferred, []
            for piece, written in sorted([*failed, *deferred], key=lambda pw: pw[1]):  # the first batch's error
                try:
                    check_batch(piece, self.schema, self._checks, written)
                except GpuwriteError as err:
                    raise err from None  # the batch's own error, as write() would have raised it

    def abort(self) -> None:
        """Give up: remove the temporary file; nothing is left at the path."""
        self._sink.abort()
        self._window.clear()
        self._backend.close()

    @property
    def rows_encoded(self) -> int:
        """Rows whose pages are encoded so far: finished row groups plus the open one's (for progress bars)."""
        builder = self._builder
        return self._assembler.num_rows + (getattr(builder, "replayed", 0) if builder is not None else 0)

    def _check_open(self) -> None:
        """Refuse use after abort or close."""
        if self._sink.closed:
            raise GpuwriteError(f"writer for {self._sink.path!r} is already closed or aborted")

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        elif self.result is None:
            self.close()


def check_arrow_schema(schema: Any) -> pa.Schema:
    """`schema` if it is a pyarrow.Schema, else an UnsupportedTypeError (a TypeError) naming what was given."""
    if not isinstance(schema, pa.Schema):
        raise UnsupportedTypeError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
    return schema
