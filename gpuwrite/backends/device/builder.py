"""The GPU `ColumnEncoders` of one row group: a `DeviceColumn` per column, each encoding its batch of planned
pages on the device; the shared driver (`backends.rowgroup.PlannedRowGroup`) plans, replays and cuts."""

from __future__ import annotations

from collections.abc import Sequence

from ...encode.chunk import ChunkOptions, Compressor, EncodedChunk, EncodedPage
from ...leafdata import LeafData
from ...options import WriteOptions
from ...schema import Leaf
from ..base import PageRanges, RowGroupBuilder
from ..rowgroup import PlannedRowGroup
from .arrays import DeviceArrays
from .codecs import HostCodec, NvcompCodec
from .column import DeviceColumn


class DeviceEncoders:
    """Column chunks of one row group on the device."""

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, compress: Compressor,
                 device: tuple[DeviceArrays, HostCodec | NvcompCodec]) -> None:
        arrays, codec = device
        self.columns = [DeviceColumn(leaf, ChunkOptions.for_leaf(leaf, opts, compress), arrays, codec)
                        for leaf in leaves]

    def load(self, window: Sequence[LeafData]) -> None:
        """Make the device hold the window (only rows added since the last call are copied where possible)."""
        for column, data in zip(self.columns, window, strict=True):
            column.load(data)

    def encode(self, ranges: PageRanges) -> None:
        """Each column's next pages, one batch per column."""
        for column, r in zip(self.columns, ranges, strict=True):
            if r:
                column.encode(list(r))

    def pages(self, column: int) -> Sequence[EncodedPage]:
        """The column's pages so far."""
        return self.columns[column].pages

    def truncate(self, column: int, keep: int) -> None:
        """Drop the column's pages after the first `keep`."""
        self.columns[column].truncate(keep)

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks, in schema order."""
        return [column.finish() for column in self.columns]


class DeviceBackend:
    """The GPU `Backend`: device arrays and the page codec, shared by the file's row groups."""

    name = "gpu"

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, compress: Compressor) -> None:
        from .codecs import page_codec

        self.leaves, self.opts, self.compress = leaves, opts, compress
        self.arrays = DeviceArrays()
        self.codec = page_codec(opts.compression, opts.compression_level, self.arrays)

    def row_group(self) -> RowGroupBuilder:
        """A builder for the next row group."""
        encoders = DeviceEncoders(self.leaves, self.opts, self.compress, (self.arrays, self.codec))
        return PlannedRowGroup(self.leaves, self.opts, encoders)

    def close(self) -> None:
        """Nothing to release beyond what CuPy's pool keeps."""
