"""The GPU backend: a row group's window on the device, its dictionaries, and batches of pages of every column
encoded together; the shared driver (`backends.rowgroup.PlannedRowGroup`) plans, replays and cuts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...encode.bloom import BloomBuilder, chunk_bitset
from ...encode.chunk import Compressor, EncodedChunk
from ...leafdata import LeafData
from ...options import WriteOptions
from ...schema import Leaf
from ..base import PageRanges, RowGroupBuilder
from ..rowgroup import PlannedRowGroup
from .chunks import PageRef, assemble_chunks
from .codecs import PageCodec, page_codec
from .dictionary import DeviceDictionary, build_dictionary
from .encode import BatchSetup, EncodedBatch, PageTable, encode_batch
from .ops import Device
from .window import DeviceWindow, window_from_leafdata


@dataclass
class _PageSize:
    """What the driver's replay reads of a page: its size on disk."""

    size: int


def page_table(window: Sequence[LeafData], ranges: PageRanges) -> PageTable:
    """The pages (column, rows, entries, values) of each column's new ranges."""
    parts: list[list[int]] = [[] for _ in range(7)]
    for c, spans in enumerate(ranges):
        data = window[c]
        for a, b in spans:
            row = (c, a, b, data.entry_index(a), data.entry_index(b), data.value_index(a), data.value_index(b))
            for part, v in zip(parts, row, strict=True):
                part.append(int(v))
    return PageTable(*(np.array(p, dtype=np.int64) for p in parts))


class DeviceEncoders:
    """The column chunks of one row group on the device (a `base.ColumnEncoders`)."""

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, device: Device, codec: PageCodec | None) -> None:
        self.leaves, self.opts, self.device, self.codec = list(leaves), opts, device, codec
        self.window: Sequence[LeafData] = ()
        self.win: DeviceWindow | None = None
        self.dic: DeviceDictionary | None = None
        self.batches: list[EncodedBatch] = []
        self.refs: list[list[PageRef]] = [[] for _ in leaves]
        self.fell_back = np.zeros(len(leaves), dtype=bool)

    def load(self, window: Sequence[LeafData]) -> None:
        """Lay out the window on the device and build its dictionaries (again, when it grew)."""
        if window is self.window:
            return
        self.window = window
        self.win = window_from_leafdata(self.device, self.leaves, window, self.opts)
        self.dic = build_dictionary(self.device, self.win.cols, self.win.dev_cols, self.win.arenas,
                                    self.opts.dictionary_page_size)

    def encode(self, ranges: PageRanges) -> None:
        """Every column's new pages, as one batch."""
        assert self.win is not None and self.dic is not None
        table = page_table(self.window, ranges)
        if len(table) == 0:
            return
        setup = BatchSetup(self.codec, self.opts.page_checksum, self.fell_back)
        batch, self.fell_back = encode_batch(self.device, self.win, self.dic, table, setup)
        batch.fetch(self.device)
        k = len(self.batches)
        self.batches.append(batch)
        order = np.lexsort((batch.pages.a, batch.pages.col))
        for j in order:
            self.refs[int(batch.pages.col[j])].append(PageRef(k, int(j)))

    def pages(self, column: int) -> Sequence[_PageSize]:
        """The column's pages so far, with their sizes."""
        out = []
        for r in self.refs[column]:
            host = self.batches[r.batch].fetch(self.device)
            out.append(_PageSize(int(host["header_len"][r.index] + host["body_len"][r.index])))
        return out

    def truncate(self, column: int, keep: int) -> None:
        """Drop the column's pages after the first `keep` (a chunk left with no page tests its first page
        again)."""
        del self.refs[column][keep:]
        if keep == 0:
            self.fell_back[column] = False

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks, their bytes gathered in file order on the device and read back once."""
        assert self.win is not None and self.dic is not None
        chunks = assemble_chunks(self.device, (self.win, self.dic), self.leaves, self.batches, self.refs,
                                 (self.codec, self.opts.page_checksum))
        for c, (leaf, chunk) in enumerate(zip(self.leaves, chunks, strict=True)):
            spec = self.opts.bloom_filter(leaf.dotted)
            if spec is None:
                continue
            builder = BloomBuilder(leaf, spec)
            for page in chunk.pages:
                builder.add(self.window[c], page.span.va, page.span.vb)
            chunk.bloom_filter = chunk_bitset(builder, [p.encoding for p in chunk.pages])
        return chunks


class DeviceBackend:
    """The GPU `Backend`: the device and its page codec, shared by the file's row groups."""

    name = "gpu"

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, compress: Compressor) -> None:
        self.leaves, self.opts = leaves, opts
        self.device = Device()
        self.codec = page_codec(opts.compression, opts.compression_level, self.device)

    def row_group(self) -> RowGroupBuilder:
        """A builder for the next row group."""
        encoders = DeviceEncoders(self.leaves, self.opts, self.device, self.codec)
        return PlannedRowGroup(self.leaves, self.opts, encoders, one_batch=True)

    def close(self) -> None:
        """Nothing to release beyond what CuPy's pool keeps."""
