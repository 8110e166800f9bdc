"""Input rows waiting to be written, and the window of them the open row group's builder works on.

Rows are converted to NumPy in windows, never the whole input: a window starts at the open row group's first
row with about eight row groups' worth of Arrow data (a bit more than the last row group's rows after the
first), and doubles while no row group ends inside it. A streaming window (a writer fed batch by batch while
more arrive, as a Spark task is) starts at a few MiB (32k rows at most) and grows by a quarter, so pages are
encoded as the batches come instead of at close. Page and row-group boundaries depend only on the rows, never
on how the input was chunked or converted.
"""

from __future__ import annotations

from typing import Protocol

import pyarrow as pa

from .columns import leaf_data
from .integrations.arrow import ArrowPiece
from .leafdata import LeafData
from .options import WriteOptions
from .schema import FileSchema

STREAM_WINDOW_BYTES = 4 << 20  # a streaming window's first conversion: about this much Arrow data,
STREAM_WINDOW_ROWS = 32768  # and no more rows than this


class Window(Protocol):
    """Rows 0..rows of the open row group: as Arrow (a backend that converts them itself: the GPU) or as LeafData
    (converted on the host: the CPU path)."""

    @property
    def rows(self) -> int:
        """Rows in the window."""

    def arrow(self) -> pa.Table:
        """The window's rows as Arrow."""

    def leaves(self) -> list[LeafData]:
        """The window's rows converted, one LeafData per leaf."""


class LeafWindow:
    """A window of rows already converted (tests and tools drive builders with these)."""

    def __init__(self, data: list[LeafData]) -> None:
        self.data = data

    @property
    def rows(self) -> int:
        """Rows in the window."""
        return self.data[0].num_rows if self.data else 0

    def arrow(self) -> pa.Table:
        """Not available: the rows were given converted."""
        raise TypeError("this window holds converted rows only")

    def leaves(self) -> list[LeafData]:
        """The rows, converted."""
        return self.data


def concat_pieces(pieces: list[ArrowPiece]) -> pa.Table:
    """Pieces as one table without copying column data."""
    tables = [p if isinstance(p, pa.Table) else pa.Table.from_batches([p]) for p in pieces]
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


class RowWindow:
    """Pending Arrow rows, and the leaves' converted data for rows 0..`rows` of the open row group."""

    def __init__(self, schema: FileSchema, opts: WriteOptions, lookahead: int = 8, streaming: bool = False) -> None:
        self.schema = schema
        self.opts = opts
        self.lookahead = lookahead  # row groups' worth of Arrow bytes in the first window
        self.streaming = streaming
        self.pending: list[ArrowPiece] = []
        self.pending_rows = 0
        self.data: list[LeafData] = []
        self.rows = 0  # rows of the open row group in the window
        self.converted = 0  # of them, rows converted on the host
        self.target = 0  # rows the window should hold before the next check

    def push(self, piece: ArrowPiece) -> None:
        """Queue rows for writing."""
        self.pending.append(piece)
        self.pending_rows += piece.num_rows

    def start_row_group(self, last_rows: int | None) -> None:
        """A new row group starts at the first pending row; `last_rows` is the previous one's row count."""
        self.data, self.rows, self.converted = [], 0, 0
        if last_rows is not None and not self.streaming:
            self.target = max(1024, last_rows * 5 // 4)
            return
        nbytes = sum(p.nbytes for p in self.pending) or 1
        per_row = max(1, nbytes // max(1, self.pending_rows))
        if self.streaming:
            self.target = max(1024, min(STREAM_WINDOW_ROWS, STREAM_WINDOW_BYTES // per_row))
            return
        self.target = max(self.opts.page_row_count_limit, self.lookahead * self.opts.block_size // per_row, 1024)

    def ready(self, final: bool) -> bool:
        """Whether there are rows to convert now (enough for the target, or the input has ended)."""
        return self.pending_rows > 0 and (final or self.pending_rows >= self.target)

    def extend(self) -> RowWindow:
        """Take pending rows up to the target (or the end of the input) into the window; the window."""
        self.rows = max(self.rows, min(self.target, self.pending_rows))
        return self

    def arrow(self) -> pa.Table:
        """The window's rows as Arrow (no copy of column data)."""
        return concat_pieces(self.pending).slice(0, self.rows)

    def leaves(self) -> list[LeafData]:
        """The window's rows converted on the host; rows added since the last call are converted and joined."""
        if self.converted < self.rows:
            table = concat_pieces(self.pending).slice(self.converted, self.rows - self.converted)
            fresh = [leaf_data(table.column(leaf.index), leaf, self.opts) for leaf in self.schema.leaves]
            if not self.data:
                self.data = fresh
            else:
                self.data = [LeafData.concat([old, new]) for old, new in zip(self.data, fresh, strict=True)]
            self.converted = self.rows
        return self.data

    @property
    def at_end(self) -> bool:
        """Whether the window holds every pending row."""
        return self.rows == self.pending_rows

    def grow(self) -> None:
        """No row group ended inside the window: take twice as many rows next time (a quarter more when
        streaming, so little is left to encode when the input ends; the copies stay linear in the rows)."""
        self.target = self.target + max(1024, self.target // 4) if self.streaming else self.target * 2

    def drop(self, rows: int) -> None:
        """The open row group ended after `rows` rows and was written: forget them."""
        rest = concat_pieces(self.pending).slice(rows)
        self.pending = [rest] if rest.num_rows else []
        self.pending_rows -= rows
        self.data, self.rows, self.converted = [], 0, 0

    def clear(self) -> None:
        """Forget everything pending (the write was abandoned)."""
        self.pending, self.pending_rows = [], 0
        self.data, self.rows, self.converted = [], 0, 0
