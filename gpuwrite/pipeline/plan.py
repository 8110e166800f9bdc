"""Where pages and row groups end, decided exactly as parquet-java's writer decides while it writes: the host
side of the compiled planner (`kernels/plan/schedule.py`), shared by both backends.

Page checks (ColumnWriteStoreBase.sizeCheck) depend only on buffered sizes — the level bytes parquet-java's
RLE encoders have emitted and PLAIN-equivalent value bytes — so `PageSchedule` plans the pages of a whole
window over all columns before any is encoded. Row-group checks (InternalParquetRecordWriter.
checkBlockSizeReached) count finished pages at their stored size, so `BlockReplay` replays them, interleaved
with the planned page checks in parquet-java's order, once the pages are encoded. `ColumnArrays` lays a
window's columns out for the kernels. Both resume across calls as the window grows; rows, entries and values
are counted from the start of the row group's window. (tests/plan_reference.py is the same logic in plain
Python, record count by record count.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gpuwrite.kernels.plan import schedule as k
from gpuwrite.kernels.plan.layout import KIND_CODES

from ..options.model import WriteOptions
from ..schema import Leaf
from . import buffers
from .leafdata import LeafData

MIN_RECORDS_FOR_BLOCK_CHECK = 100  # SPEC: InternalParquetRecordWriter.MINIMUM_RECORD_COUNT_FOR_CHECK
THRESHOLD_TOLERANCE_RATIO = 0.1  # SPEC: ColumnWriteStoreBase.THRESHOLD_TOLERANCE_RATIO

NOT_YET, CUT, NEED_PLAN, NEED_SIZES = k.REPLAY_NOT_YET, k.REPLAY_CUT, k.REPLAY_NEED_PLAN, k.REPLAY_NEED_SIZES


def schedule_params(opts: WriteOptions) -> np.ndarray:
    """The writer settings the kernels read (int64[P_COUNT])."""
    params = np.zeros(k.P_COUNT, dtype=np.int64)
    params[k.P_PAGE_SIZE] = opts.page_size
    params[k.P_PAGE_ROWS] = opts.page_row_count_limit
    params[k.P_PAGE_VALUES] = opts.page_value_count_threshold
    params[k.P_CHECK_MIN] = opts.page_size_check_min
    params[k.P_CHECK_MAX] = opts.page_size_check_max
    params[k.P_ESTIMATE] = int(opts.page_size_check_estimate)
    # SPEC: ColumnWriteStoreBase: (int) (pageSizeThreshold * THRESHOLD_TOLERANCE_RATIO) in float arithmetic
    params[k.P_TOLERANCE] = int(np.float32(opts.page_size) * np.float32(THRESHOLD_TOLERANCE_RATIO))
    params[k.P_BLOCK_SIZE] = opts.block_size
    params[k.P_BLOCK_ROWS] = opts.block_row_count_limit
    return params


class _Parts:
    """Arrays laid back to back, each from a multiple of `unit` elements, in one array padded by a unit.

    A part equal to one already added is not copied again: its start is the earlier part's (sibling leaves of a
    repeated group have the same row entries and, without nulls of their own, the same value counts; the
    kernels only read these arrays, so sharing them changes nothing but the copy and its memory)."""

    def __init__(self, dtype: type, unit: int = 1) -> None:
        self.dtype = dtype
        self.unit = unit
        self.parts: list[np.ndarray] = []
        self.size = 0
        self._seen: dict[tuple[int, ...], list[tuple[np.ndarray, int]]] = {}

    def put(self, arr: np.ndarray) -> int:
        """Add a part; its start (an equal earlier part's start when there is one)."""
        key = _probe(arr)
        same = self._seen.setdefault(key, [])
        for earlier, at in same:
            if earlier is arr or np.array_equal(earlier, arr):
                return at
        start = self.size
        self.parts.append(arr)
        self.size += -(-len(arr) // self.unit) * self.unit
        same.append((arr, start))
        return start

    def join(self, scale: float = 1.0) -> np.ndarray:
        """The parts in one zero-padded array (cut from a kept slab when large: `buffers`), from a slab sized for
        `scale` times as many elements (the window's expected growth: each rebuild then fits the same slab)."""
        out: np.ndarray = buffers.empty(self.size + self.unit, self.dtype, int(self.size * scale) + self.unit)
        pos = 0
        for p in self.parts:
            out[pos:pos + len(p)] = p
            end = pos + -(-len(p) // self.unit) * self.unit
            out[pos + len(p):end] = 0
            pos = end
        out[pos:] = 0
        return out


@dataclass
class ColumnArrays:
    """A window's columns as the schedule kernels take them (see kernels/plan/schedule.py for the layout)."""

    desc: np.ndarray  # int64[C, D_COUNT]
    levels: np.ndarray  # uint8: levels wider than 1 bit, zero-padded to whole words plus one
    words: np.ndarray  # uint64 view of `levels`
    bits: np.ndarray  # uint64: 1-bit levels (flat columns' validity), each stream from a word boundary
    index: np.ndarray  # int64: row entries, values before entries, value offsets
    rows: int

    @classmethod
    def build(cls, leaves: Sequence[Leaf], datas: Sequence[LeafData], rows_hint: int = 0) -> ColumnArrays:
        """Lay out `datas` (one window, a LeafData per leaf): levels packed, indexes copied, no row loops.
        `rows_hint`: rows the window is expected to reach (its row group's), which sizes the slabs: a window
        laid out again at each step then reuses one slab per array, not a new one per step."""
        desc = np.full((len(leaves), k.D_COUNT), -1, dtype=np.int64)
        levels, bits, index = _Parts(np.uint8, 8), _Parts(np.uint8, 8), _Parts(np.int64)

        def put_levels(arr: np.ndarray, width: int) -> int:
            if width == 1:  # bit offset of a byte-aligned, word-aligned stream
                return 8 * bits.put(np.packbits(arr, bitorder="little"))
            return levels.put(arr)

        for c, (leaf, data) in enumerate(zip(leaves, datas, strict=True)):
            row = desc[c]
            row[k.D_KIND] = KIND_CODES[leaf.kind]  # sizes the raw values (SPEC: FallbackValuesWriter)
            row[k.D_REPW], row[k.D_DEFW] = leaf.rep_width, leaf.def_width
            if data.nested:
                assert data.row_entry is not None and data.values_before is not None and data.dfn is not None
                row[k.D_ENTRY] = index.put(data.row_entry)
                row[k.D_VBEFORE] = index.put(data.values_before)
                if data.rep is not None and row[k.D_REPW] > 0:
                    row[k.D_REP] = put_levels(data.rep, int(row[k.D_REPW]))
                if row[k.D_DEFW] > 0:
                    row[k.D_DEF] = put_levels(data.dfn, int(row[k.D_DEFW]))
            elif data.valid is not None:  # packed mostly as the rows were converted
                row[k.D_DEF] = 8 * bits.put(data.packed_valid())
            elif row[k.D_DEFW] > 0:
                # an optional column without nulls (so far: the window may grow) is all ones, packed directly
                row[k.D_DEF] = 8 * bits.put(np.full(-(-data.num_rows // 8), 0xFF, dtype=np.uint8))
            if not leaf.fixed_width:
                row[k.D_OFFS] = index.put(data.byte_offsets)
        rows = datas[0].num_rows if datas else 0
        scale = max(1.0, rows_hint / rows) if rows else 1.0
        level_bytes = levels.join(scale)
        return cls(desc, level_bytes, level_bytes.view(np.uint64), bits.join(scale).view(np.uint64),
                   index.join(scale), rows)


def _probe(arr: np.ndarray) -> tuple[int, ...]:
    """A cheap key for equality candidates: dtype, length and three sampled elements."""
    n = len(arr)
    if n == 0:
        return (arr.dtype.num, 0)
    return (arr.dtype.num, n, int(arr[0]), int(arr[n // 2]), int(arr[-1]))


def _grown(arr: np.ndarray, size: int) -> np.ndarray:
    """`arr` copied into a zeroed array of at least `size` rows (doubling)."""
    out = np.zeros((max(size, 2 * len(arr)), *arr.shape[1:]), dtype=arr.dtype)
    out[:len(arr)] = arr
    return out


def plan_growing(cols: tuple[np.ndarray, ...], params: np.ndarray, horizon: int, sched: np.ndarray,
                 cursor: np.ndarray, out: list[np.ndarray]) -> list[np.ndarray]:
    """`plan_pages` over column data `cols` (desc, levels, words, bits, index) up to `horizon`, from the state sched /
    cursor, into `out` (ev_row, ev_end, ev_lev, fl_col, fl_start): on PLAN_FULL the check arrays or the page arrays
    are grown (their contents kept) and it goes on. Returns the arrays as they end."""
    ncols = cursor.shape[0]
    while k.plan_pages(*cols, params, horizon, sched, cursor, *out) == k.PLAN_FULL:
        if int(sched[k.SC_EVENTS]) >= len(out[0]):
            out[:3] = [_grown(a, int(sched[k.SC_EVENTS]) + 1) for a in out[:3]]
        else:
            out[3:] = [_grown(a, int(sched[k.SC_FLUSHES]) + ncols) for a in out[3:]]
    return out


def page_ends(ev_row: np.ndarray, ev_end: np.ndarray, first_flush: int) -> np.ndarray:
    """Each page's end row (the row of the check that ended it) for the pages of checks ev_row / ev_end (their
    rows and flush ends), the first of which ended pages from `first_flush`: the host planner's and the
    device's page tables alike."""
    counts = np.diff(np.concatenate(([first_flush], ev_end)))
    return np.repeat(ev_row, counts)


class PageBatch(NamedTuple):
    """Pages that page checks first..last-1 end, in check order then column order (one row per page)."""

    flushes: range  # their indexes in the schedule's flush arrays
    column: np.ndarray  # int64: the column
    start: np.ndarray  # int64: first row
    end: np.ndarray  # int64: row the page ends before (the check's row)
    ordinal: np.ndarray  # int64: the page's position among its column's pages in the row group


class PageSchedule:
    """SPEC: ColumnWriteStoreBase.sizeCheck over all columns (plan.PagePlanner), compiled.

    Check k happened at row `event_rows[k]`; it ended the pages `flush_columns[j]` (first row
    `flush_starts[j]`) for j in flush_range(k).
    """

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, capacity: int = 256) -> None:
        self.ncols = len(leaves)
        self.params = schedule_params(opts)
        self.sched = np.array([opts.page_size_check_min, 0, 0], dtype=np.int64)
        self.cursor = np.zeros((self.ncols, k.S_COUNT), dtype=np.int64)
        self.ev_row = np.zeros(capacity, dtype=np.int64)
        self.ev_end = np.zeros(capacity, dtype=np.int64)
        self.ev_lev = np.zeros((capacity, self.ncols), dtype=np.int32)
        self.fl_col = np.zeros(capacity * max(1, self.ncols), dtype=np.int64)
        self.fl_start = np.zeros_like(self.fl_col)
        self._pages_per_column = np.zeros(self.ncols, dtype=np.int64)
        self._ordinal = np.zeros(0, dtype=np.int64)

    @property
    def next_page_check(self) -> int:
        """Row of the next check not planned yet: every check before it is planned."""
        return int(self.sched[k.SC_NEXT])

    @property
    def events(self) -> int:
        """Checks planned so far."""
        return int(self.sched[k.SC_EVENTS])

    @property
    def flushes(self) -> int:
        """Pages ended by the checks planned so far."""
        return int(self.sched[k.SC_FLUSHES])

    @property
    def event_rows(self) -> np.ndarray:
        """Row of each planned check."""
        return self.ev_row[:self.events]

    @property
    def flush_columns(self) -> np.ndarray:
        """Column of each planned page, in check order."""
        return self.fl_col[:self.flushes]

    @property
    def flush_starts(self) -> np.ndarray:
        """First row of each planned page."""
        return self.fl_start[:self.flushes]

    def flush_range(self, event: int) -> range:
        """Indexes of the pages check `event` ends."""
        return range(int(self.ev_end[event - 1]) if event > 0 else 0, int(self.ev_end[event]))

    def plan(self, cols: ColumnArrays, horizon: int) -> int:
        """Plan every check at a row <= horizon (<= cols.rows); return the number of checks planned in all."""
        if horizon > cols.rows:
            raise ValueError(f"horizon {horizon} is past the {cols.rows} rows of the window")
        self.ev_row, self.ev_end, self.ev_lev, self.fl_col, self.fl_start = plan_growing(
            (cols.desc, cols.levels, cols.words, cols.bits, cols.index), self.params, horizon, self.sched,
            self.cursor, [self.ev_row, self.ev_end, self.ev_lev, self.fl_col, self.fl_start])
        self._number_pages()
        return self.events

    def _number_pages(self) -> None:
        """Extend the per-column page ordinals over the newly planned pages."""
        done = len(self._ordinal)
        cols = self.fl_col[done:self.flushes]
        if not len(cols):
            return
        order = np.argsort(cols, kind="stable")
        ranked = cols[order]
        rank = np.arange(len(cols)) - np.searchsorted(ranked, ranked, side="left")
        ordinal = np.empty(len(cols), dtype=np.int64)
        ordinal[order] = self._pages_per_column[ranked] + rank
        self._pages_per_column += np.bincount(cols, minlength=self.ncols)
        self._ordinal = np.concatenate([self._ordinal, ordinal])

    def open_starts(self) -> np.ndarray:
        """First row of each column's open page (the rows after its last planned page)."""
        return self.cursor[:, k.S_START].copy()

    def pages(self, first: int, last: int) -> PageBatch:
        """The pages checks first..last-1 end."""
        a = int(self.ev_end[first - 1]) if first > 0 else 0
        b = int(self.ev_end[last - 1]) if last > 0 else 0
        end = page_ends(self.ev_row[first:last], self.ev_end[first:last], a)
        return PageBatch(range(a, b), self.fl_col[a:b].copy(), self.fl_start[a:b].copy(), end,
                         self._ordinal[a:b].copy())


class BlockReplay:
    """SPEC: InternalParquetRecordWriter.checkBlockSizeReached interleaved with the planned page checks
    (plan.BlockCheck as plan.RowGroupBuilder.advance runs it), compiled."""

    def __init__(self, schedule: PageSchedule) -> None:
        self.schedule = schedule
        self.block = np.array([MIN_RECORDS_FOR_BLOCK_CHECK, 0, -1], dtype=np.int64)
        self.cursor = np.zeros((schedule.ncols, k.S_COUNT), dtype=np.int64)
        self.fl_size = np.zeros(len(schedule.fl_col), dtype=np.int64)
        self.sized = 0  # checks whose pages have sizes

    @property
    def next_memory_check(self) -> int:
        """Row of the next memory check."""
        return int(self.block[k.B_NEXT])

    @property
    def applied(self) -> int:
        """Checks replayed: after a cut, the checks whose pages the row group keeps."""
        return int(self.block[k.B_EVENTS])

    @property
    def cut(self) -> int | None:
        """Row the row group ends at, once replay returned CUT."""
        cut = int(self.block[k.B_CUT])
        return None if cut < 0 else cut

    def set_sizes(self, events: int, sizes: np.ndarray) -> None:
        """Stored sizes (header + body) of the pages of checks self.sized..events-1, in flush order."""
        s = self.schedule
        a = int(s.ev_end[self.sized - 1]) if self.sized > 0 else 0
        b = int(s.ev_end[events - 1]) if events > 0 else 0
        if len(sizes) != b - a:
            raise ValueError(f"{len(sizes)} sizes for the {b - a} pages of checks {self.sized}..{events - 1}")
        if len(self.fl_size) < b:
            self.fl_size = _grown(self.fl_size, b)
        self.fl_size[a:b] = sizes
        self.sized = events

    def certain(self) -> int:
        """Checks whose pages the row group keeps whatever the sizes: those up to the next memory check."""
        s = self.schedule
        bound = min(self.next_memory_check, int(s.params[k.P_BLOCK_ROWS]))
        return int(np.searchsorted(s.event_rows, bound, side="right"))

    def advance(self, cols: ColumnArrays, available: int, final: bool) -> int:
        """Replay over rows 0..available: CUT (see `cut`), NOT_YET, NEED_PLAN or NEED_SIZES."""
        s = self.schedule
        return int(k.replay_blocks(cols.desc, cols.levels, cols.words, cols.bits, cols.index, s.params,
                                   available, final, s.sched, s.ev_row, s.ev_end, s.ev_lev, s.fl_col,
                                   self.fl_size, self.sized, self.block, self.cursor))

    def kept_pages(self) -> np.ndarray:
        """Pages per column that the applied checks ended (int64[C])."""
        s = self.schedule
        n = int(s.ev_end[self.applied - 1]) if self.applied > 0 else 0
        return np.bincount(s.fl_col[:n], minlength=s.ncols)

    def open_starts(self) -> np.ndarray:
        """First row of each column's open page where the replay stopped (at a cut, open if before it)."""
        return self.cursor[:, k.S_START]

    def open_pages(self) -> list[tuple[int, int]]:
        """(column, first row) of each page open at the cut: they end at the cut."""
        cut = self.cut
        assert cut is not None
        starts = self.open_starts()
        return [(int(c), int(starts[c])) for c in np.flatnonzero(starts < cut)]
