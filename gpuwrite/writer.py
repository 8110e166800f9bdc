"""The front door: `ParquetWriter` (streaming, bounded memory) and `write_table` (one call)."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa

from .assemble.footer import column_metadata, file_metadata, row_group
from .assemble.indexes import column_index, offset_index
from .assemble.sink import MAGIC, FileSink
from .backends import resolve_device
from .columns import LeafData, leaf_data
from .encode.bloom import serialize_filter
from .encode.chunk import ChunkEncoder, EncodedPage
from .encode.compress import CODEC_IDS, compressor
from .errors import GpuwriteError, SchemaMismatchError
from .format.structs import ColumnChunk, RowGroup
from .format.thrift import serialize
from .integrations.arrow import ArrowPiece, as_arrow_piece, open_input
from .options import WriteOptions, resolve_options
from .plan import RowGroupBuilder
from .result import FileResult, summarize
from .schema import FileSchema, Leaf
from .spark.footer_keys import spark_footer_metadata


class ParquetWriter:
    """Writes one Parquet v2 file from a stream of Arrow batches; row groups are flushed as they fill.

    Nothing appears at `path` until close() succeeds; on an exception inside a `with` block, or abort(),
    the temporary file is removed.
    """

    def __init__(self, path: str | os.PathLike[str], schema: pa.Schema, *,
                 options: WriteOptions | dict[str, Any] | None = None, **keywords: Any) -> None:
        self.options = resolve_options(options, keywords)
        self.device = resolve_device(self.options.device)
        if not isinstance(schema, pa.Schema):
            raise TypeError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
        self.schema = FileSchema.from_arrow(schema, self.options)
        self._compress = compressor(self.options.compression, self.options.compression_level)
        self._codec = CODEC_IDS[self.options.compression]
        self._sink = FileSink(path)
        self._pending: list[ArrowPiece] = []
        self._pending_rows = 0
        self._row_groups: list[RowGroup] = []
        self._page_counts: list[list[int]] = []
        self._index_pending: list[tuple[ColumnChunk, Leaf, list[EncodedPage], list[int], bytes | None]] = []
        self._num_rows = 0
        self._builder: Any = None
        self._window: list[LeafData] | None = None
        self._window_rows = 0
        self._target_rows = 0
        self.result: FileResult | None = None
        self._pool = _page_pool(len(self.schema.leaves)) if self.device == "cpu" else None
        self._arrays: Any = None
        self._device_codec: Any = None
        if self.device == "gpu":
            from .backends.device import DeviceArrays, page_codec

            self._arrays = DeviceArrays()
            self._device_codec = page_codec(self.options.compression, self.options.compression_level, self._arrays)

    def _run(self, fn: Callable[..., Any], jobs: list[tuple]) -> list[Any]:
        """Encode independent columns' pages on the worker threads (kernels release the GIL)."""
        if self._pool is None or len(jobs) < 2:
            return [fn(*job) for job in jobs]
        return list(self._pool.map(lambda job: fn(*job), jobs))

    # -- input -------------------------------------------------------------------------------------

    def write(self, data: Any) -> None:
        """Append rows (an Arrow table/batch, pandas DataFrame or Arrow C stream) with the writer's schema."""
        self._check_open()
        try:
            piece = as_arrow_piece(data)
            self._check_schema(piece)
            if piece.num_rows == 0:
                return
            self._pending.append(piece)
            self._pending_rows += piece.num_rows
            self._drive(final=False)
        except BaseException:
            self.abort()
            raise

    def _check_schema(self, piece: ArrowPiece) -> None:
        """Refuse a batch whose columns differ from the schema by name, type or forbidden nulls."""
        expected = self.schema.arrow
        got = piece.schema
        if got.names != expected.names:
            raise SchemaMismatchError(f"batch columns {got.names} differ from the writer's schema {expected.names}")
        for f_exp, f_got, col in zip(expected, got, piece.columns, strict=True):
            if f_got.type != f_exp.type:
                raise SchemaMismatchError(f"column {f_exp.name!r}: batch has type {f_got.type}, the writer's "
                                          f"schema has {f_exp.type}")
            if not f_exp.nullable and col.null_count:
                raise SchemaMismatchError(f"column {f_exp.name!r} is declared non-nullable but the batch holds "
                                          f"{col.null_count} null(s)")

    # -- row groups --------------------------------------------------------------------------------

    def _new_builder(self) -> Any:
        """Fresh chunk encoders for a new row group (parquet-java starts every row group afresh)."""
        o = self.options
        if self.device == "gpu":
            from .backends.device import DeviceRowGroupBuilder

            return DeviceRowGroupBuilder(self.schema.leaves, o, self._arrays, self._device_codec)
        encoders = [ChunkEncoder(leaf, use_dictionary=o.dictionary_enabled(leaf.dotted),
                                 dictionary_limit=o.dictionary_page_size, compress=self._compress,
                                 codec_is_identity=o.compression == "uncompressed", checksum=o.page_checksum,
                                 bloom=o.bloom_filter(leaf.dotted))
                    for leaf in self.schema.leaves]
        return RowGroupBuilder(self.schema.leaves, encoders, o, run=self._run)

    def _initial_target(self) -> int:
        """Rows to convert for a new row group: a bit more than the last one, else 8 blocks by Arrow size."""
        if self._row_groups:
            return max(1024, self._row_groups[-1].num_rows * 5 // 4)
        nbytes = sum(p.nbytes for p in self._pending) or 1
        per_row = max(1, nbytes // max(1, self._pending_rows))
        return max(self.options.page_row_count_limit, 8 * self.options.block_size // per_row, 1024)

    def _extend_window(self, rows: int) -> None:
        """Convert pending rows window_rows..rows (the open row group's next rows) and append them."""
        table = _concat(self._pending).slice(self._window_rows, rows - self._window_rows)
        fresh = [leaf_data(table.column(leaf.index), leaf, self.options) for leaf in self.schema.leaves]
        if self._window is None:
            self._window = fresh
        else:
            self._window = [LeafData.concat([old, new]) for old, new in zip(self._window, fresh, strict=True)]
        self._window_rows = rows

    def _drive(self, final: bool) -> None:
        """Encode and write every row group that is complete (all of them when `final`)."""
        while self._pending_rows > 0:
            if self._builder is None:
                self._builder = self._new_builder()
                self._window, self._window_rows = None, 0
                self._target_rows = self._initial_target()
            want = min(self._target_rows, self._pending_rows)
            if not final and want < self._target_rows:
                return  # wait for more input before converting a partial window
            if self._window_rows < want:
                self._extend_window(want)
            assert self._window is not None
            at_end = self._window_rows == self._pending_rows
            cut = self._builder.advance(self._window, self._window_rows, final and at_end)
            if cut is None:
                if at_end:
                    return
                self._target_rows *= 2
                continue
            self._emit_row_group(cut)

    def _emit_row_group(self, rows: int) -> None:
        """Write the finished row group's chunks and drop its rows from the pending input."""
        assert self._builder is not None
        chunks = self._builder.finish()
        columns = []
        counts = []
        for leaf, chunk in zip(self.schema.leaves, chunks, strict=True):
            meta, _ = column_metadata(leaf, chunk, self._codec, self._sink.pos,
                                      self.options.statistics_truncate_length)
            if chunk.dictionary_header is not None:
                self._sink.write(chunk.dictionary_header)
                self._sink.write(chunk.dictionary_body or b"")
            offsets = []
            for page in chunk.pages:
                offsets.append(self._sink.pos)
                self._sink.write(page.header)
                self._sink.write(page.body)
            column = ColumnChunk(file_offset=0, meta_data=meta)
            columns.append(column)
            self._index_pending.append((column, leaf, chunk.pages, offsets, chunk.bloom_filter))
            counts.append(len(chunk.pages))
        self._row_groups.append(row_group(columns, rows, len(self._row_groups)))
        self._page_counts.append(counts)
        self._num_rows += rows
        rest = _concat(self._pending).slice(rows)
        self._pending = [rest] if rest.num_rows else []
        self._pending_rows -= rows
        self._builder = None
        self._window = None

    # -- finish ------------------------------------------------------------------------------------

    def close(self) -> FileResult:
        """Write the remaining rows and the footer, then move the file into place; returns the result."""
        if self.result is not None:
            return self.result
        self._check_open()
        try:
            self._drive(final=True)
            self._write_page_indexes()
            o = self.options
            key_value = spark_footer_metadata(self.schema.spark_row_metadata(), o.spark_version, o.datetime_rebase,
                                              o.int96_rebase, o.time_zone)
            meta = file_metadata(self.schema, self._row_groups, self._num_rows, key_value)
            footer = serialize(meta)
            self._sink.write(footer)
            self._sink.write(struct.pack("<I", len(footer)))
            self._sink.write(MAGIC)
            size = self._sink.commit()
            self._shutdown()
        except BaseException:
            self.abort()
            raise
        self.result = FileResult(self._sink.path, self._num_rows, size,
                                 summarize(meta, self.schema.leaves, self._page_counts), meta)
        return self.result

    def _write_page_indexes(self) -> None:
        """All column indexes, then all offset indexes, then all bloom filters, after the row groups
        (parquet-java's order: ParquetFileWriter.end)."""
        truncate = self.options.column_index_truncate_length
        for column, leaf, pages, _, _ in self._index_pending:
            index = column_index(leaf, pages, truncate)
            if index is not None:
                data = serialize(index)
                column.column_index_offset, column.column_index_length = self._sink.pos, len(data)
                self._sink.write(data)
        for column, leaf, pages, offsets, _ in self._index_pending:
            data = serialize(offset_index(leaf, pages, offsets))
            column.offset_index_offset, column.offset_index_length = self._sink.pos, len(data)
            self._sink.write(data)
        # SPEC: ParquetFileWriter.serializeBloomFilters: header + bitset per chunk that has a filter, in row
        # group then column order; ColumnMetaData.bloom_filter_offset / bloom_filter_length cover both.
        for column, _, _, _, bitset in self._index_pending:
            if bitset is None:
                continue
            data = serialize_filter(bitset)
            meta = column.meta_data
            assert meta is not None
            meta.bloom_filter_offset, meta.bloom_filter_length = self._sink.pos, len(data)
            self._sink.write(data)
        self._index_pending = []

    def abort(self) -> None:
        """Give up: remove the temporary file; nothing is left at the path."""
        self._sink.abort()
        self._pending = []
        self._shutdown()

    def _shutdown(self) -> None:
        """Stop the page-encoding threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _check_open(self) -> None:
        """Refuse use after abort or close."""
        if self._sink.closed:
            raise GpuwriteError(f"writer for {self._sink.path!r} is already closed or aborted")

    def __enter__(self) -> ParquetWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        elif self.result is None:
            self.close()


def _page_pool(columns: int) -> ThreadPoolExecutor | None:
    """Threads for page encoding: one per core (at most one per column); None on a single core."""
    workers = min(os.cpu_count() or 1, columns)
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpuwrite") if workers > 1 else None


def _concat(pieces: list[ArrowPiece]) -> pa.Table:
    """Pending pieces as one table without copying column data."""
    tables = [p if isinstance(p, pa.Table) else pa.Table.from_batches([p]) for p in pieces]
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def write_table(data: Any, path: str | os.PathLike[str], *, options: WriteOptions | dict[str, Any] | None = None,
                progress: Callable[[int], None] | None = None, **keywords: Any) -> FileResult:
    """Write `data` (Arrow, pandas, or any Arrow C stream such as polars or DuckDB) to one Parquet v2 file."""
    schema, pieces = open_input(data)
    writer = ParquetWriter(path, schema, options=options, **keywords)
    try:
        for piece in pieces:
            writer.write(piece)
            if progress is not None:
                progress(piece.num_rows)
    except BaseException:
        writer.abort()
        raise
    return writer.close()
