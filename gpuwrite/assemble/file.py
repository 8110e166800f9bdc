"""The file's bytes in parquet-java's order: magic, each row group's chunks (dictionary page, data pages) as
they finish, then all column indexes, all offset indexes, the bloom filters, the footer and the magic again.

SPEC: ParquetFileWriter (start, writeColumnChunk, end, serializeColumnIndexes / serializeOffsetIndexes /
serializeBloomFilters, serializeFooter).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..encode.stats import merge
from ..format.structs import ColumnChunk, FileMetaData, RowGroup
from ..format.thrift import serialize
from ..page_model import EncodedChunk, PageStats
from ..schema import FileSchema, Leaf
from .bloom import bloom_filter_block
from .footer import ChunkLayout, column_metadata, file_metadata, row_group
from .indexes import column_index, offset_index_bytes
from .pages import dictionary_header
from .store_sink import Sink

MAGIC = b"PAR1"


@dataclass(frozen=True)
class FileLayout:
    """What the file's metadata depends on beyond its pages: codec and the two truncation lengths."""

    codec: int
    statistics_truncate_length: int
    column_index_truncate_length: int


@dataclass
class _WrittenChunk:
    """A chunk already in the file, kept until its indexes and bloom filter are written: the indexes are built
    and serialized when its row group is written, so neither its pages (their bytes) nor an object per page are
    kept until the end of the file, and the file's last steps only copy them out."""

    column: ColumnChunk
    stats: PageStats  # its pages' statistics merged
    column_index: bytes | None  # the serialized ColumnIndex
    offset_index: bytes  # the serialized OffsetIndex
    bloom_filter: bytes | None


DESCRIBE_BESIDE_BYTES = 4 << 20  # a row group this large has its chunks' metadata built beside its write
_DESCRIBER: list[ThreadPoolExecutor] = []  # that helper thread, made on first use and kept


def _describer() -> ThreadPoolExecutor:
    """The thread that builds a row group's chunk metadata, statistics and indexes while the writer's thread
    writes the row group's bytes (kept: a thread made per file would be new to its memory each time)."""
    if not _DESCRIBER:
        _DESCRIBER.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpuwrite-describe"))
    return _DESCRIBER[0]


os.register_at_fork(after_in_child=_DESCRIBER.clear)


def _chunk_parts(chunk: EncodedChunk, start: int, parts: list[bytes | bytearray | memoryview]
                 ) -> tuple[ChunkLayout, int]:
    """Append a chunk's bytes (dictionary page, then data pages; one piece when the backend laid it out) to
    `parts`; where its pages lie when written from `start`, and where it ends."""
    header_len = 0
    if chunk.blob is not None:  # the backend laid the chunk out already: one piece
        if chunk.dictionary is not None:
            header_len = len(chunk.dictionary.header)
        pos = start + (header_len + len(chunk.dictionary.body) if chunk.dictionary is not None else 0)
        offsets = []
        for page in chunk.pages:
            offsets.append(pos)
            pos += page.size
        parts.append(chunk.blob)
        return ChunkLayout(start, header_len, tuple(offsets)), start + len(chunk.blob)
    pos = start
    if chunk.dictionary is not None:
        header = chunk.dictionary.header or dictionary_header(chunk.dictionary)
        header_len = len(header)
        parts += (header, chunk.dictionary.body)
        pos += header_len + len(chunk.dictionary.body)
    offsets = []
    for page in chunk.pages:
        offsets.append(pos)
        pos += len(page.header) + len(page.body)
        parts += (page.header, page.body)
    return ChunkLayout(start, header_len, tuple(offsets)), pos


class FileAssembler:
    """Writes row groups to `sink` as they finish and the file's tail on `finish`."""

    def __init__(self, sink: Sink, schema: FileSchema, layout: FileLayout) -> None:
        self.sink = sink
        self.schema = schema
        self.layout = layout
        self.row_groups: list[RowGroup] = []
        self.page_counts: list[list[int]] = []
        self.chunk_stats: list[list[PageStats]] = []  # per row group, each chunk's merged page statistics
        self.num_rows = 0
        self._written: list[_WrittenChunk] = []
        self._staged: list[tuple[EncodedChunk, ChunkLayout]] = []  # chunks written, not yet described
        sink.write(MAGIC)

    def stage(self, column: int, chunk: EncodedChunk) -> None:
        """Write chunk `column` of the open row group before the row group is confirmed (columns in order from
        0; a new column 0 drops what was staged). Only on a sink that can rewind. Its metadata and indexes are
        built once the row group is (`write_row_group`): built here, between the encoding threads' pages, their
        Python held the GIL those threads wait for after each compiled call (a wide table's write took 5% longer
        and 3% more CPU with them here)."""
        if column == 0:
            self._unstage(0)
        assert column == len(self._staged), "chunks are staged in schema order"
        self._staged.append((chunk, self._chunk_bytes(chunk)))

    def _unstage(self, keep: int) -> None:
        """Forget the staged chunks after the first `keep`, and their bytes."""
        if len(self._staged) > keep:
            self.sink.rewind(self._staged[keep][1].start)
            del self._staged[keep:]

    def write_row_group(self, chunks: Sequence[EncodedChunk], num_rows: int) -> None:
        """Append a finished row group: each chunk's dictionary page then its data pages, in schema order (the
        chunks staged already, as they are, stay; any staged after one that changed are written again); then
        every chunk's metadata and indexes."""
        keep = 0
        while keep < min(len(self._staged), len(chunks)) and self._staged[keep][0] is chunks[keep]:
            keep += 1
        self._unstage(keep)
        layouts = [layout for _, layout in self._staged]
        self._staged = []
        parts: list[bytes | bytearray | memoryview] = []
        pos = self.sink.pos
        for chunk in chunks[keep:]:
            layout, pos = _chunk_parts(chunk, pos, parts)
            layouts.append(layout)
        jobs = list(zip(self.schema.leaves, chunks, layouts, strict=True))
        if sum(len(p) for p in parts) < DESCRIBE_BESIDE_BYTES:
            self.sink.write_parts(parts)
            written = self._all_described(jobs)
        else:  # the metadata built on a helper thread while this one writes (the GIL is let go in the write)
            described = _describer().submit(self._all_described, jobs)
            try:
                self.sink.write_parts(parts)
            finally:
                written = described.result()
        self._written += written
        self.row_groups.append(row_group([w.column for w in written], num_rows, len(self.row_groups)))
        self.page_counts.append([len(c.pages) for c in chunks])
        self.chunk_stats.append([w.stats for w in written])
        self.num_rows += num_rows

    def _chunk_bytes(self, chunk: EncodedChunk) -> ChunkLayout:
        """Write a chunk's dictionary page then its data pages (in one call: a local file's gathering write);
        where they lie."""
        parts: list[bytes | bytearray | memoryview] = []
        layout, _ = _chunk_parts(chunk, self.sink.pos, parts)
        self.sink.write_parts(parts)
        return layout

    def _all_described(self, jobs: list[tuple[Leaf, EncodedChunk, ChunkLayout]]) -> list[_WrittenChunk]:
        """`_described` of each (leaf, chunk, layout)."""
        return [self._described(leaf, chunk, layout) for leaf, chunk, layout in jobs]

    def _described(self, leaf: Leaf, chunk: EncodedChunk, layout: ChunkLayout) -> _WrittenChunk:
        """A written chunk's metadata, merged statistics, column index and offset index."""
        merged = merge([p.stats for p in chunk.pages])
        meta = column_metadata(leaf, chunk, layout, self.layout.codec, self.layout.statistics_truncate_length,
                               merged=merged)
        index = column_index(leaf, chunk.pages, self.layout.column_index_truncate_length)
        return _WrittenChunk(ColumnChunk(file_offset=0, meta_data=meta), merged,
                             None if index is None else serialize(index),
                             offset_index_bytes(leaf, chunk.pages, layout.page_offsets), chunk.bloom_filter)

    def _write_page_indexes(self) -> None:
        """All column indexes, then all offset indexes, then all bloom filters, after the row groups
        (parquet-java's order: ParquetFileWriter.end)."""
        sink = self.sink
        for w in self._written:
            if w.column_index is not None:
                w.column.column_index_offset, w.column.column_index_length = sink.pos, len(w.column_index)
                sink.write(w.column_index)
        for w in self._written:
            w.column.offset_index_offset, w.column.offset_index_length = sink.pos, len(w.offset_index)
            sink.write(w.offset_index)
        # SPEC: ParquetFileWriter.serializeBloomFilters: header + bitset per chunk that has a filter, in row
        # group then column order; ColumnMetaData.bloom_filter_offset / bloom_filter_length cover both.
        for w in self._written:
            if w.bloom_filter is None:
                continue
            data = bloom_filter_block(w.bloom_filter)
            meta = w.column.meta_data
            assert meta is not None
            meta.bloom_filter_offset, meta.bloom_filter_length = sink.pos, len(data)
            sink.write(data)
        self._written = []

    def finish(self, key_value: Sequence[tuple[str, str]]) -> FileMetaData:
        """Write page indexes, bloom filters, the footer (with `key_value` metadata, in order) and the closing
        magic; the sink then holds the whole file."""
        self._write_page_indexes()
        meta = file_metadata(self.schema, self.row_groups, self.num_rows, list(key_value))
        footer = serialize(meta)
        self.sink.write(footer)
        self.sink.write(struct.pack("<I", len(footer)))
        self.sink.write(MAGIC)
        return meta
