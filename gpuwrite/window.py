"""Input rows waiting to be written, and the converted rows of the open row group.

Arrow rows are converted to the encoders' form (`columns.leaf_data`) a step at a time as they arrive: once at
least `convert_bytes` of Arrow data are pending (the row-group size, at least 32 MiB), or at the end of the
input. Each step converts about `convert_bytes` (all of it when less than twice that is pending), chunk by
chunk, and appends the result to the open row group's `LeafBuffer`s, so the Arrow rows are released as soon
as they are converted and nothing is copied twice. When a row group ends inside the converted rows, the rows
past the cut stay converted and start the next row group's window (they are never converted again).

Memory is therefore about: the open row group's converted rows (about its Arrow size, often less), plus up to
twice `convert_bytes` of Arrow rows waiting, plus one step's conversion temporaries, plus the encoded pages of
the open row group. Page and row-group boundaries depend only on the rows, never on how the input was chunked
or converted.
"""

from __future__ import annotations

import pyarrow as pa

from .columns import leaf_data
from .integrations.arrow import ArrowPiece
from .leafdata import LeafBuffer, LeafData
from .options import WriteOptions
from .schema import FileSchema

MIN_CONVERT_BYTES = 32 << 20


def concat_pieces(pieces: list[ArrowPiece]) -> pa.Table:
    """Pieces as one table without copying column data."""
    tables = [p if isinstance(p, pa.Table) else pa.Table.from_batches([p]) for p in pieces]
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


class RowWindow:
    """Pending Arrow rows, and the leaves' converted data for rows 0..`rows` of the open row group."""

    def __init__(self, schema: FileSchema, opts: WriteOptions) -> None:
        self.schema = schema
        self.opts = opts
        self.convert_bytes = max(opts.block_size, MIN_CONVERT_BYTES)
        self.pending: list[ArrowPiece] = []  # Arrow rows not converted yet
        self.unconverted = 0
        self.unconverted_bytes = 0
        self.rows_hint = 0  # rows the open row group is expected to reach (capacity of the buffers)
        self.buffers = [LeafBuffer() for _ in schema.leaves]
        self.rows = 0  # rows of the open row group converted so far

    @property
    def pending_rows(self) -> int:
        """Rows not written yet: converted rows of the open row group and Arrow rows waiting."""
        return self.rows + self.unconverted

    def push(self, piece: ArrowPiece) -> None:
        """Queue rows for writing."""
        self.pending.append(piece)
        self.unconverted += piece.num_rows
        self.unconverted_bytes += piece.nbytes

    def start_row_group(self, last_rows: int | None) -> None:
        """A new row group starts at row 0 of the window; `last_rows` is the previous one's row count."""
        if last_rows is not None:
            self.rows_hint = max(1024, last_rows * 5 // 4)
        else:
            per_row = max(1, self.unconverted_bytes // max(1, self.unconverted))
            self.rows_hint = max(1024, 2 * self.opts.block_size // per_row)
        for buffer in self.buffers:
            buffer.rows_hint = self.rows_hint

    def ready(self, final: bool) -> bool:
        """Whether to convert (and check) now: a step's worth of Arrow rows is waiting, or the input ended."""
        if final:
            return self.pending_rows > 0
        return self.unconverted > 0 and self.unconverted_bytes >= self.convert_bytes

    def extend(self) -> list[LeafData]:
        """Convert the next step of pending rows (all of them when little is left) and return the window."""
        if self.unconverted:
            table = concat_pieces(self.pending)
            rows = self.unconverted
            if self.unconverted_bytes > 2 * self.convert_bytes:
                rows = max(1, rows * self.convert_bytes // self.unconverted_bytes)
            head, rest = table.slice(0, rows), table.slice(rows)
            self.pending = [rest] if rest.num_rows else []
            self.unconverted -= rows
            self.unconverted_bytes = rest.nbytes if rest.num_rows else 0
            for leaf, buffer in zip(self.schema.leaves, self.buffers, strict=True):
                for chunk in head.column(leaf.index).chunks:
                    if len(chunk):
                        buffer.append(leaf_data(chunk, leaf, self.opts))
            self.rows += rows
        return [buffer.view() for buffer in self.buffers]

    @property
    def at_end(self) -> bool:
        """Whether the window holds every pending row."""
        return self.unconverted == 0

    def grow(self) -> None:
        """No row group ended inside the window: the next extend converts the next step of rows."""

    def drop(self, rows: int) -> None:
        """The open row group ended after `rows` rows and was written: the converted rows past it start the
        next window."""
        hint = max(1024, rows * 5 // 4)
        self.buffers = [buffer.tail(rows, hint) for buffer in self.buffers]
        self.rows -= rows

    def clear(self) -> None:
        """Forget everything pending (the write was abandoned)."""
        self.pending, self.unconverted, self.unconverted_bytes = [], 0, 0
        self.buffers = [LeafBuffer() for _ in self.schema.leaves]
        self.rows = 0
