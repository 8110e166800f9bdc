"""Input rows waiting to be written, and the window of them the open row group's builder works on.

Two windows, one per kind of backend (`Backend.converts_on_host`):

- `RowWindow` (the CPU backend): Arrow rows are converted to the encoders' form (`columns.leaf_data`) a step at
  a time as they arrive: once at least `convert_bytes` of Arrow data are pending (the row-group size, at least
  32 MiB; 8 MiB for a streaming writer, fed batch by batch while more arrive as a Spark task is, so pages
  are encoded as the batches come; `lookahead` row groups' worth, without the floor, for writers that roll
  files on written bytes, so finished row groups reach the file while rows arrive), or at the end of the input. Each step converts about `convert_bytes` (all
  of it when less than twice that is pending), chunk by chunk, and appends the result to the open row group's
  `LeafBuffer`s, so the Arrow rows are released as soon as they are converted and nothing is copied twice.
  Where the options cap a row group's rows (`block_row_count_limit`), a step also starts once that many rows
  wait and converts about that many. When a row group ends inside the converted rows, the rows past the cut
  stay converted and start the next row group's window, and every row group they hold is cut before the next
  step. Memory is about the open row group's converted rows and one step's, plus up to twice `convert_bytes`
  of Arrow rows waiting, plus one step's temporaries, plus the open row group's encoded pages: however many
  rows the stream writes.
- `ArrowWindow` (the GPU backend, which converts Arrow buffers on the device): the window is a slice of the
  pending Arrow rows, never converted on the host; it starts at the open row group's first row with about
  `lookahead` row groups' worth of Arrow data (a bit more than the last row group's rows after the first) and
  doubles while no row group ends inside it, so a row group is planned in few passes.

Page and row-group boundaries depend only on the rows, never on how the input was chunked or converted.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Protocol

import pyarrow as pa

from ..backends.workpool import WorkPool, grouped, wait_in_order, worth_threads
from ..integrations.arrow import ArrowPiece
from ..integrations.device_data import DeviceTable
from ..options.model import WriteOptions
from ..schema import FileSchema, Leaf
from .columns import conversion_bytes, leaf_data
from .leafdata import LeafBuffer, LeafData
from .levels import LevelMemo
from .rebase import RebaseOptions
from .views import piece_bytes

MIN_CONVERT_BYTES = 32 << 20
# A streaming writer converts once this much Arrow data is waiting, or this many rows. Each step costs about
# 0.2 ms per leaf besides its rows' work (conversion calls, buffer growth, a plan over the window, page calls),
# so steps are as large as keeps the work after the last batch small: 8 MiB is four of Spark's 10k-row
# store_sales batches, and a 200k-row task costs about a quarter less CPU than with 4 MiB steps (same bytes).
# The row bound rules where values are narrow (Spark's decimals sent unscaled: 8 bytes, not 16): at 32,768 rows a
# 50k-row task converts and encodes while its batches arrive (its work after the last batch 12 ms, 22 ms at 65,536
# rows, which converted it all after its last batch), and a 250k-row task costs the same CPU (bench/README.md).
STREAM_CONVERT_BYTES = 8 << 20
STREAM_CONVERT_ROWS = 32768
JOIN_CHUNK_ROWS = 16384  # a step's chunks shorter than this on average are joined before conversion
HINT_GROWTH = 16  # the first row group's buffers reserve at most this many times the block-size estimate
# A step converts at most about a row group's rows when the options cap its rows (block_row_count_limit), and
# starts once that many rows wait: row groups of 1M narrow rows are a few MB, a step of 128 MiB held 16 of them.
# Never fewer rows than this, so each step's calls per leaf stay small beside its rows' work.
MIN_STEP_ROWS = 65536


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

    def __init__(self, data: list[LeafData], rows_hint: int = 0) -> None:
        self.data = data
        self.rows_hint = rows_hint  # rows its row group is expected to reach (0: unknown), sizes the planner's layout

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


def concat_pieces(pieces: list[ArrowPiece]) -> pa.Table | DeviceTable:
    """Pieces as one table without copying column data (device pieces stay on the device; mixed with host
    pieces, they are copied to the host)."""
    if any(isinstance(p, DeviceTable) for p in pieces):
        if all(isinstance(p, DeviceTable) for p in pieces):
            return DeviceTable.concat(pieces)  # type: ignore[arg-type]
        pieces = [p.to_host() if isinstance(p, DeviceTable) else p for p in pieces]
    tables = [p if isinstance(p, pa.Table) else pa.Table.from_batches([p]) for p in pieces]
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


class RowWindow:
    """Pending Arrow rows, and the leaves' converted data for rows 0..`rows` of the open row group (the CPU
    backend's window). `streaming`: convert in small steps, so pages are encoded as batches arrive. `pool`: the
    backend's threads, which convert the leaves of a step side by side (the conversions release the GIL)."""

    def __init__(self, schema: FileSchema, opts: WriteOptions, streaming: bool = False,
                 lookahead: int | None = None, pool: WorkPool | None = None) -> None:
        """`lookahead`: convert once that many row groups' worth of Arrow bytes are waiting, with no 32 MiB
        floor, so row groups reach the file as soon as they fill (writers that roll files on written bytes)."""
        self.schema = schema
        self.rebase = RebaseOptions.of(opts)  # what converting rows reads of the options
        self.check_decimals = opts.validate  # check decimals against their precision as they are converted
        self.block_size = opts.block_size  # sizes the first row group's buffers
        self.pool = pool
        if lookahead is not None:
            self.convert_bytes = max(1, lookahead * opts.block_size)
        else:
            self.convert_bytes = STREAM_CONVERT_BYTES if streaming else max(opts.block_size, MIN_CONVERT_BYTES)
        self.convert_rows = STREAM_CONVERT_ROWS if streaming else 1 << 62
        self.step_rows = max(opts.block_row_count_limit, MIN_STEP_ROWS)  # rows a step holds at most (about)
        self.pending: list[ArrowPiece] = []  # Arrow rows not converted yet
        self.unconverted = 0
        self.unconverted_bytes = 0
        self.rows_hint = 0  # rows the open row group is expected to reach (capacity of the buffers)
        self.buffers = [LeafBuffer() for _ in schema.leaves]
        self.rows = 0  # rows of the open row group converted so far
        # the window `extend` returned last, returned again while no rows were converted or dropped since (the
        # row group lays a window out for its planner once per window object: the same rows are not copied twice)
        self._window: LeafWindow | None = None
        # the step being converted ahead on the pool (its jobs, its rows) while the window's pages are encoded
        self._ahead: tuple[list[Future], int] | None = None
        # rows past the last cut, converted and not yet offered to the next row group, that may hold whole row
        # groups (a step of many rows, row groups of few): they are cut before another step is converted
        self._unseen = False

    @property
    def pending_rows(self) -> int:
        """Rows not written yet: converted rows of the open row group, rows being converted and Arrow rows
        waiting."""
        return self.rows + (self._ahead[1] if self._ahead is not None else 0) + self.unconverted

    def push(self, piece: ArrowPiece) -> None:
        """Queue rows for writing."""
        self.pending.append(piece)
        self.unconverted += piece.num_rows
        self.unconverted_bytes += piece_bytes(piece)

    def start_row_group(self, last_rows: int | None) -> None:
        """A new row group starts at row 0 of the window; `last_rows` is the previous one's row count."""
        if last_rows is not None:
            self.rows_hint = max(1024, last_rows * 5 // 4)
        else:
            per_row = max(1, self.unconverted_bytes // max(1, self.unconverted))
            guess = max(1024, 2 * self.block_size // per_row)
            # Rows already waiting can all land in this row group (compressible data fills block_size with
            # several times its Arrow bytes): reserve for them, so the buffers are not regrown (each growth
            # copies every converted row) while untouched capacity costs no memory.
            # A row group and the step past it never hold more than twice step_rows (the row cap, when set).
            self.rows_hint = min(max(guess, min(self.pending_rows, HINT_GROWTH * guess)), 2 * self.step_rows)
        for buffer in self.buffers:
            buffer.rows_hint = self.rows_hint

    def ready(self, final: bool) -> bool:
        """Whether to extend the window now: rows converted past the last cut wait for the new row group, a
        step's worth of Arrow rows is waiting, or the input ended."""
        if final or self._ahead is not None:
            return self.pending_rows > 0
        return self._unseen or self._step_waiting()

    def _step_waiting(self) -> bool:
        """Whether a step's worth of Arrow rows waits to be converted."""
        return self.unconverted > 0 and (self.unconverted_bytes >= self.convert_bytes
                                         or self.unconverted >= min(self.convert_rows, self.step_rows))

    def extend(self) -> LeafWindow:
        """Add the next step of pending rows (all of them when little is left) and return the window: the step
        converted ahead, or converted now; then start converting the step after it in the background. Rows
        converted past the last cut are offered first, alone: the row groups they hold are cut before more
        rows are converted, so the converted rows never outgrow a step and a row group (a step that held
        several row groups used to end only one of them, and the rest piled up for the whole write)."""
        if self._unseen:
            self._unseen = False
        elif not self._settle() and self.unconverted:
            futures, rows = self._convert_step(ahead=False)
            wait_in_order(futures, pool=self.pool)
            self.rows += rows
            self._window = None
        if self._window is None:  # viewed before the next step starts appending to the buffers in the background
            self._window = LeafWindow([buffer.view() for buffer in self.buffers], self.rows_hint)
        if self.unconverted and self.pool is not None and self._ahead is None and self._step_waiting():
            self._ahead = self._convert_step(ahead=True)
        return self._window

    def _convert_step(self, ahead: bool) -> tuple[list[Future], int]:
        """Take the next step of pending rows and convert it into the buffers: one job per column on the pool
        (as background work when `ahead`: pages waited for run first), or here without a pool."""
        table = concat_pieces(self.pending)
        rows = self.unconverted
        if self.unconverted_bytes > 2 * self.convert_bytes:
            rows = max(1, rows * self.convert_bytes // self.unconverted_bytes)
        if rows > 2 * self.step_rows:
            rows = self.step_rows
        head, rest = table.slice(0, rows), table.slice(rows)
        self.pending = [rest] if rest.num_rows else []
        self.unconverted -= rows
        self.unconverted_bytes = piece_bytes(rest) if rest.num_rows else 0
        jobs: dict[int, list[tuple[LeafBuffer, Leaf]]] = {}  # by column: sibling leaves share their levels
        for leaf, buffer in zip(self.schema.leaves, self.buffers, strict=True):
            jobs.setdefault(leaf.index, []).append((buffer, leaf))
        pieces = {index: _joined([chunk for chunk in head.column(index).chunks if len(chunk)]) for index in jobs}
        work = [(leaves, pieces[index]) for index, leaves in jobs.items() if pieces[index]]
        costs = [sum(max(conversion_bytes(chunk, leaf) for _, leaf in leaves) for chunk in chunks)
                 for leaves, chunks in work] if self.pool else []
        groups = grouped(costs)
        futures: list[Future] = []
        # converted here when waited for at once and too little to gain from threads (workpool.worth_threads)
        if self.pool is None or (not ahead and (len(groups) < 2 or not worth_threads(costs))):
            _convert_columns(work, self.rebase, self.check_decimals)
        else:  # a job per column (small ones a group of neighbours) converts and appends (the copy off this thread)
            submit = self.pool.submit_later if ahead else self.pool.submit
            futures = [submit(_convert_columns, [work[i] for i in g], self.rebase, self.check_decimals)
                       for g in groups]
        return futures, rows

    def _settle(self) -> bool:
        """Wait for the step converted ahead, if any, and add its rows to the window; whether there was one."""
        if self._ahead is None:
            return False
        futures, rows = self._ahead
        self._ahead = None
        wait_in_order(futures, pool=self.pool)
        self.rows += rows
        self._window = None
        return True

    @property
    def at_end(self) -> bool:
        """Whether the window holds every pending row."""
        return self.unconverted == 0 and self._ahead is None

    def grow(self) -> None:
        """No row group ended inside the window: the next extend adds the next step of rows."""

    def drop(self, rows: int) -> None:
        """The open row group ended after `rows` rows and was written: the converted rows past it start the
        next window."""
        self._settle()
        hint = max(1024, rows * 5 // 4)
        self.buffers = [buffer.tail(rows, hint) for buffer in self.buffers]
        self.rows -= rows
        self._window = None
        # offered alone when they likely hold a whole row group (as many rows as the one just cut); fewer go on
        # with the next step, as they always did (one more planning pass per row group would cost every write)
        self._unseen = self.rows >= rows

    def clear(self) -> None:
        """Forget everything pending (the write was abandoned); a step being converted ahead is cancelled or
        waited for, its failure ignored."""
        if self._ahead is not None:
            for future in self._ahead[0]:
                future.cancel()
            for future in self._ahead[0]:
                if not future.cancelled():
                    future.exception()
            self._ahead = None
        self.pending, self.unconverted, self.unconverted_bytes = [], 0, 0
        self.buffers = [LeafBuffer() for _ in self.schema.leaves]
        self.rows = 0
        self._window = None
        self._unseen = False


def _joined(chunks: list[pa.Array]) -> list[pa.Array]:
    """A step's chunks of one column, small ones joined into one array: each chunk costs a conversion call per
    leaf (about 50 us for a flat leaf), so a streaming step of 10k-row batches (Spark's) spent more on the
    calls than on its rows; the join is one copy of the step's bytes. Dictionary-encoded chunks stay as they
    are (their dictionaries differ)."""
    if len(chunks) < 2 or sum(len(c) for c in chunks) > JOIN_CHUNK_ROWS * len(chunks) \
            or pa.types.is_dictionary(chunks[0].type):
        return chunks
    return [pa.concat_arrays(chunks)]


def _convert_columns(work: list[tuple[list[tuple[LeafBuffer, Leaf]], list[pa.Array]]], rebase: RebaseOptions,
                     check_decimals: bool) -> None:
    """`_convert_into` for several columns, one after another."""
    for leaves, chunks in work:
        _convert_into(leaves, chunks, rebase, check_decimals)


def _convert_into(leaves: list[tuple[LeafBuffer, Leaf]], chunks: list[pa.Array], rebase: RebaseOptions,
                  check_decimals: bool) -> None:
    """Convert one column's chunks of a step in order and append each leaf's rows to its buffer (leaves in
    schema order, so the first failure is the first failing leaf's). Decimals are checked against their
    precision on the way with `check_decimals` (the options validate; a batch written with more=False is
    checked here: see FileWriter.write)."""
    memos = [LevelMemo() for _ in chunks]  # one per chunk: the levels its leaves share
    for buffer, leaf in leaves:
        for chunk, memo in zip(chunks, memos, strict=True):
            buffer.append(leaf_data(chunk, leaf, rebase, buffer, memo, check_decimals=check_decimals))


SLACK_FIRST = 1 / 8  # the margin after one row group: nothing is known of how row counts vary yet
SLACK_MIN, SLACK_MAX = 1 / 32, 1 / 4
SLACK_SEEN = 4  # changes between consecutive row counts (the last 5 row groups') that set the margin


def window_slack(row_counts: Sequence[int]) -> float:
    """The margin past the last row group's rows a device window takes (a fraction of them): twice the largest
    change among the last `SLACK_SEEN` changes between consecutive row counts, within [SLACK_MIN, SLACK_MAX];
    `SLACK_FIRST` after one. Row groups cut by size from similar rows end within a fraction of a percent of
    each other (store_sales at 128 MiB: 3,827,446 rows six times in eight), so the window re-uploads ~3% where
    a fixed 25% re-uploaded a quarter of every row group; rows that vary more widen it."""
    seen = list(row_counts[-(SLACK_SEEN + 1):])
    if len(seen) < 2:
        return SLACK_FIRST
    change = max(abs(b - a) / max(1, a) for a, b in itertools.pairwise(seen))
    return min(SLACK_MAX, max(SLACK_MIN, 2 * change))


class ArrowWindow:
    """Pending Arrow rows; the window is rows 0..`rows` of the open row group, as Arrow (the GPU backend's
    window: it converts the rows itself) or converted on the host when asked. The device plans a window
    afresh each time it grows, so a window is never small: a streaming writer's batches wait here too."""

    def __init__(self, schema: FileSchema, opts: WriteOptions, lookahead: int = 8) -> None:
        self.schema = schema
        self.rebase = RebaseOptions.of(opts)  # what converting on the host reads of the options
        self.page_row_count_limit, self.block_size = opts.page_row_count_limit, opts.block_size  # the first window
        self.lookahead = lookahead  # row groups' worth of Arrow bytes in the first window
        self.pending: list[ArrowPiece] = []
        self.pending_rows = 0
        self.data: list[LeafData] = []
        self.rows = 0  # rows of the open row group in the window
        self.converted = 0  # of them, rows converted on the host
        self.target = 0  # rows the window should hold before the next check
        self.row_counts: list[int] = []  # the rows of the row groups written so far, in order

    def push(self, piece: ArrowPiece) -> None:
        """Queue rows for writing."""
        self.pending.append(piece)
        self.pending_rows += piece.num_rows

    def start_row_group(self, last_rows: int | None) -> None:
        """A new row group starts at the first pending row; `last_rows` is the previous one's row count. The
        window takes the rows the last row group had and a margin (`window_slack`): every row past the cut is
        uploaded again with the next window, and a window without the cut is planned again, twice as large."""
        self.data, self.rows, self.converted = [], 0, 0
        if last_rows is not None:
            self.row_counts.append(last_rows)
            self.target = max(1024, last_rows + int(last_rows * window_slack(self.row_counts)) + 1)
            return
        nbytes = sum(piece_bytes(p) for p in self.pending) or 1
        per_row = max(1, nbytes // max(1, self.pending_rows))
        self.target = max(self.page_row_count_limit, self.lookahead * self.block_size // per_row, 1024)

    def ready(self, final: bool) -> bool:
        """Whether there are rows to convert now (enough for the target, or the input has ended)."""
        return self.pending_rows > 0 and (final or self.pending_rows >= self.target)

    def extend(self) -> ArrowWindow:
        """Take pending rows up to the target (or the end of the input) into the window; the window."""
        self.rows = max(self.rows, min(self.target, self.pending_rows))
        return self

    def arrow(self) -> pa.Table | DeviceTable:
        """The window's rows as Arrow (no copy of column data; device input stays on the device)."""
        return concat_pieces(self.pending).slice(0, self.rows)

    def leaves(self) -> list[LeafData]:
        """The window's rows converted on the host; rows added since the last call are converted and joined."""
        if self.converted < self.rows:
            table = concat_pieces(self.pending).slice(self.converted, self.rows - self.converted)
            if isinstance(table, DeviceTable):  # converted on the host: copied there (counted)
                table = table.to_host()
            fresh = [leaf_data(table.column(leaf.index), leaf, self.rebase) for leaf in self.schema.leaves]
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
        """No row group ended inside the window: take twice as many rows next time."""
        self.target *= 2

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
