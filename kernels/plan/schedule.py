"""Page and row-group boundaries of a Parquet writer, over every column of a row group at once.

Two sequential passes replay a writer's size checks over per-row column data:

* `plan_pages` runs the page checks (parquet-java's ColumnWriteStoreBase.sizeCheck) up to a horizon row: at
  each check it measures every column's open page (level bytes the RLE encoders have emitted, plus raw value
  bytes), decides which columns end a page there and when the next check is. The checks depend only on
  these sizes, so a whole window can be planned before any page is encoded.
* `replay_blocks` interleaves the planned page checks with the row-group memory checks
  (InternalParquetRecordWriter.checkBlockSizeReached), given the stored size of each finished page, and stops
  at the row where the row group ends, or when it needs pages planned or encoded first. Emitted level bytes
  only grow, so the planner's measures at the checks either side bound an open page's level bytes at a memory
  check; the replay meters levels itself only when the check's answer depends on where in those bounds
  they are.

Both keep their state in arrays, so a call resumes where the last one stopped when more rows arrive.
Geometry: one thread runs a whole pass (the checks form one sequential chain); nothing is allocated.

Column data, C columns concatenated CSR-style (`desc[c, D_*]` gives each column's start in the shared arrays):

* levels: a column's repetition levels (one per entry) at `desc[c, D_REP]`, its definition levels at
  `desc[c, D_DEF]` (-1: none, a required column). Levels of width 1 (0 or 1: flat columns' validity) are
  bits of `bits` (uint64; the offset counts bits, bit i % 64 of word i // 64), wider ones bytes of `levels`
  (uint8; `words`: the same bytes as uint64 words). Both arrays hold a spare word past the last level.
* `index` (int64): a nested column's entry of each row (rows + 1 values) at `desc[c, D_ENTRY]` (-1: one entry
  per row), its values before each entry (entries + 1) at `desc[c, D_VBEFORE]` (-1: a flat column counts its
  values as its non-zero definition levels, or one per row without levels), and a byte column's value offsets
  (values + 1) at `desc[c, D_OFFS]`.
* `desc[c, D_KIND]`: the value kind (layout.K_*), which sizes the raw values (`fallback.raw_size`);
  `desc[c, D_REPW]`, `desc[c, D_DEFW]`: level bit widths (0: none).

`params` (int64[P_COUNT]) holds the writer settings at the P_* positions.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from ..encode.fallback import raw_size
from .level_meter import bits_emitted_size, count_ones, levels_emitted_size

# desc columns
D_KIND, D_REPW, D_DEFW, D_REP, D_DEF, D_ENTRY, D_VBEFORE, D_OFFS = range(8)
D_COUNT = 8

# params
(P_PAGE_SIZE, P_PAGE_ROWS, P_PAGE_VALUES, P_CHECK_MIN, P_CHECK_MAX, P_ESTIMATE, P_TOLERANCE, P_BLOCK_SIZE,
 P_BLOCK_ROWS) = range(9)
P_COUNT = 9

# cursor[c]: one column's open page, as a pass has measured it
S_START = 0  # first row of the open page
S_VSTART = 1  # values before S_START
S_UPTO = 2  # rows whose values are counted
S_VUPTO = 3  # values before S_UPTO
S_REP = 4  # repetition level meter, rle_emitted_size state (6 values; [5] the bytes emitted)
S_DEF = 10  # definition level meter (6 values)
S_PRODUCED = 16  # replay: stored bytes of the column's finished pages
S_MUPTO = 17  # rows fed to the level meters
S_COUNT = 18

# sched (plan_pages): next page check, checks planned, pages (flushes) planned
SC_NEXT, SC_EVENTS, SC_FLUSHES = range(3)
SC_COUNT = 3

# block (replay_blocks): next memory check, checks applied, cut row (-1 until cut)
B_NEXT, B_EVENTS, B_CUT = range(3)
B_COUNT = 3

PLAN_DONE, PLAN_FULL = 0, 1
REPLAY_NOT_YET, REPLAY_CUT, REPLAY_NEED_PLAN, REPLAY_NEED_SIZES = 0, 1, 2, 3

LONG_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
MIN_RECORDS_FOR_BLOCK_CHECK = 100  # SPEC: InternalParquetRecordWriter.MINIMUM_RECORD_COUNT_FOR_CHECK
MAX_RECORDS_FOR_BLOCK_CHECK = 10_000  # SPEC: InternalParquetRecordWriter.MAXIMUM_RECORD_COUNT_FOR_CHECK


@jit
def _entry(desc: np.ndarray, index: np.ndarray, c: int, row: int) -> int:
    """First level entry of `row` in column c."""
    base = desc[c, D_ENTRY]
    if base < 0:
        return row
    return int(index[base + row])


@jit
def _count(desc: np.ndarray, bits: np.ndarray, index: np.ndarray, st: np.ndarray, c: int, row: int) -> None:
    """Count column c's values up to `row` (a flat column's definition levels are 0 or 1)."""
    upto = st[S_UPTO]
    if row <= upto:
        return
    vb = desc[c, D_VBEFORE]
    dfn = desc[c, D_DEF]
    if vb >= 0:
        st[S_VUPTO] = index[vb + _entry(desc, index, c, row)]
    elif dfn >= 0:
        st[S_VUPTO] += count_ones(bits, dfn + upto, dfn + row)
    else:
        st[S_VUPTO] = row
    st[S_UPTO] = row


@jit
def _has_levels(desc: np.ndarray, c: int) -> bool:
    """Whether column c has level bytes to measure."""
    return (desc[c, D_REP] >= 0 and desc[c, D_REPW] > 0) or (desc[c, D_DEF] >= 0 and desc[c, D_DEFW] > 0)


@jit
def _feed_meter(levels: np.ndarray, words: np.ndarray, bits: np.ndarray, base: int, width: int, ea: int,
                eb: int, state: np.ndarray) -> None:
    """Feed level entries ea..eb of the stream at `base` (bits when width 1, else bytes) to a meter."""
    if base < 0 or width == 0:
        return
    if width == 1:
        bits_emitted_size(bits, base + ea, base + eb, state)
    else:
        levels_emitted_size(levels, words, base + ea, base + eb, width, state)


@jit
def _meter(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
           st: np.ndarray, c: int, row: int) -> int:
    """Feed column c's level meters up to `row`; return the level bytes its encoders have emitted."""
    upto = st[S_MUPTO]
    if row > upto and _has_levels(desc, c):
        ea = _entry(desc, index, c, upto)
        eb = _entry(desc, index, c, row)
        rep, dfn = desc[c, D_REP], desc[c, D_DEF]
        _feed_meter(levels, words, bits, rep, desc[c, D_REPW], ea, eb, st[S_REP:S_REP + 6])
        _feed_meter(levels, words, bits, dfn, desc[c, D_DEFW], ea, eb, st[S_DEF:S_DEF + 6])
    if row > upto:
        st[S_MUPTO] = row
    return int(st[S_REP + 5] + st[S_DEF + 5])


@jit
def _raw(desc: np.ndarray, index: np.ndarray, st: np.ndarray, c: int) -> int:
    """Raw value bytes of column c's open page up to its counted row.

    SPEC: FallbackValuesWriter raw size (`fallback.raw_size`; byte kinds' value bytes from their offsets)."""
    n = st[S_VUPTO] - st[S_VSTART]
    nbytes = 0
    offs = desc[c, D_OFFS]
    if offs >= 0:
        nbytes = index[offs + st[S_VUPTO]] - index[offs + st[S_VSTART]]
    return int(raw_size(desc[c, D_KIND], n, nbytes))


@jit
def _close(st: np.ndarray, row: int) -> None:
    """Column's open page ended at `row` (values counted to `row`): a fresh page and fresh level encoders."""
    st[S_START] = row
    st[S_VSTART] = st[S_VUPTO]
    for k in range(12):
        st[S_REP + k] = 0
    st[S_MUPTO] = row


@jit
def column_check(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
                 params: np.ndarray, row: int, cursor: np.ndarray, ev_lev: np.ndarray, nev: int,
                 c: int) -> tuple[int, int, int]:
    """Column c's part of the page check at record count `row`, check number nev: counts and meters its open
    page, writes its level bytes to ev_lev[nev, c] and closes the page when it ends here. Returns (the ended
    page's first row, or -1; rows the column may still take before the check estimate; its page row limit's
    next check, LONG_MAX when its page ended). Columns are independent: one thread each on a GPU."""
    page_size = params[P_PAGE_SIZE]
    page_rows = params[P_PAGE_ROWS]
    st = cursor[c]
    _count(desc, bits, index, st, c, row)
    level_bytes = _meter(desc, levels, words, bits, index, st, c, row)
    ev_lev[nev, c] = min(level_bytes, INT32_MAX)
    used = level_bytes + _raw(desc, index, st, c)
    start = st[S_START]
    rows = row - start
    entries = _entry(desc, index, c, row) - _entry(desc, index, c, start)
    remaining = page_size - used
    flushed = -1
    next_rc = LONG_MAX
    if remaining <= params[P_TOLERANCE] or rows >= page_rows or entries >= params[P_PAGE_VALUES]:
        flushed = start
        remaining = page_size
        _close(st, row)
    else:
        next_rc = start + page_rows
    to_fill = params[P_CHECK_MAX] if used == 0 else (rows * remaining) // used
    return flushed, to_fill, next_rc


@jit
def next_check(params: np.ndarray, row: int, min_wait: int, next_rc: int) -> int:
    """SPEC: ColumnWriteStoreBase.sizeCheck's next check row, from the columns' least rows to fill (LONG_MAX:
    no column) and least page row limit check."""
    if min_wait == LONG_MAX:
        min_wait = params[P_CHECK_MIN]
    if params[P_ESTIMATE] != 0:
        nxt = row + min(max(min_wait // 2, params[P_CHECK_MIN]), params[P_CHECK_MAX])
    else:
        nxt = row + params[P_CHECK_MIN]
    return min(nxt, min(next_rc, row + params[P_PAGE_ROWS]))


@jit
def _size_check(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
                params: np.ndarray, row: int, cursor: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray,
                fl_start: np.ndarray, nev: int, nfl: int) -> tuple[int, int]:
    """SPEC: ColumnWriteStoreBase.sizeCheck at record count `row`, check number nev: write the columns whose
    page ends here to fl_col/fl_start from nfl and each column's level bytes to ev_lev[nev]; return (flushes
    written so far, next check row)."""
    min_wait = LONG_MAX
    next_rc = LONG_MAX
    for c in range(desc.shape[0]):
        flushed, to_fill, col_rc = column_check(desc, levels, words, bits, index, params, row, cursor, ev_lev,
                                                nev, c)
        if flushed >= 0:
            fl_col[nfl] = c
            fl_start[nfl] = flushed
            nfl += 1
        next_rc = min(next_rc, col_rc)
        min_wait = min(min_wait, to_fill)
    return nfl, next_check(params, row, min_wait, next_rc)


@jit
def plan_pages(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
               params: np.ndarray, horizon: int, sched: np.ndarray, cursor: np.ndarray, ev_row: np.ndarray,
               ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray, fl_start: np.ndarray) -> int:
    """Run every page check at a row <= `horizon` (the rows the column data holds, at most).

    Appends check k at ev_row[k] with its pages fl_col/fl_start[ev_end[k-1]:ev_end[k]] (column, first row;
    the page ends at ev_row[k]) and each column's emitted level bytes there, before its page ends, at
    ev_lev[k, c] (int32, saturating); counts in sched[SC_EVENTS], sched[SC_FLUSHES], next check in
    sched[SC_NEXT] (start with sched = [page_size_check_min, 0, 0] and zero cursors, int64[C, S_COUNT]).
    Returns PLAN_DONE, or PLAN_FULL when the event arrays (capacity len(ev_row) checks, len(fl_col) pages)
    cannot take another check: grow them, keeping their contents, and call again.
    """
    ncols = desc.shape[0]
    while True:
        row = sched[SC_NEXT]
        if row > horizon:
            return PLAN_DONE
        nev = sched[SC_EVENTS]
        nfl = sched[SC_FLUSHES]
        if nev >= ev_row.shape[0] or nfl + ncols > fl_col.shape[0]:
            return PLAN_FULL
        nfl, nxt = _size_check(desc, levels, words, bits, index, params, row, cursor, ev_lev, fl_col,
                               fl_start, nev, nfl)
        ev_row[nev] = row
        ev_end[nev] = nfl
        sched[SC_EVENTS] = nev + 1
        sched[SC_FLUSHES] = nfl
        sched[SC_NEXT] = nxt


@jit
def block_full(mem: int, row: int, block_size: int, block: np.ndarray) -> bool:
    """SPEC: InternalParquetRecordWriter.checkBlockSizeReached at record count `row` holding `mem` bytes:
    whether the row group ends; else sets block[B_NEXT], the next check (float32 estimate, long
    wrap-around)."""
    record_size = mem // row
    if mem > block_size - 2 * record_size:
        return True
    if record_size == 0:
        nxt = MIN_RECORDS_FOR_BLOCK_CHECK  # Java: long cast of +Infinity wraps the sum negative
    else:
        fit = np.float32(np.float64(np.float32(np.float64(block_size)))
                         / np.float64(np.float32(np.float64(record_size))))
        wrapped = np.int64(np.uint64(row) + np.uint64(fit))  # Java long addition wraps
        nxt = min(max(MIN_RECORDS_FOR_BLOCK_CHECK, int(wrapped // 2)), row + MAX_RECORDS_FOR_BLOCK_CHECK)
    block[B_NEXT] = max(nxt, row + 1)
    return False


@jit
def verdict_of(lo: int, hi: int, row: int, block_size: int) -> int:
    """block_full's answer for every memory size in lo..hi: 1 full, 0 not full with one next check, -1 it
    depends."""
    record_size = lo // row
    if hi // row != record_size:
        return -1
    if lo > block_size - 2 * record_size:
        return 1
    if hi <= block_size - 2 * record_size:
        return 0
    return -1


@jit
def _level_bounds(desc: np.ndarray, ev_row: np.ndarray, ev_lev: np.ndarray, planned: int, applied: int,
                  st: np.ndarray, c: int, row: int) -> tuple[int, int]:
    """Bounds on the level bytes of column c's open page at `row` (checks before `applied` are at or before
    it, the others after): emitted bytes only grow, so the planned measures of the checks either side bound
    them, as does the replay's own meter. The upper bound is -1 when unknown."""
    lo = st[S_REP + 5] + st[S_DEF + 5]
    if st[S_MUPTO] == row or not _has_levels(desc, c):
        return lo, lo
    if applied > 0 and st[S_START] < ev_row[applied - 1]:
        lo = max(lo, int(ev_lev[applied - 1, c]))
    hi = -1
    if applied < planned and ev_lev[applied, c] < INT32_MAX:
        hi = int(ev_lev[applied, c])
    return lo, hi


@jit
def column_memory(desc: np.ndarray, bits: np.ndarray, index: np.ndarray, planned: int, applied: int,
                  ev_row: np.ndarray, ev_lev: np.ndarray, cursor: np.ndarray, c: int,
                  row: int) -> tuple[int, int, bool]:
    """Column c's bytes at the memory check at `row` (stored pages, open page's raw values and level bytes), as
    bounds without metering: (low, high, whether high is known)."""
    st = cursor[c]
    _count(desc, bits, index, st, c, row)
    base = st[S_PRODUCED] + _raw(desc, index, st, c)
    low, high = _level_bounds(desc, ev_row, ev_lev, planned, applied, st, c, row)
    return base + low, base + high, high >= 0


@jit
def column_metered(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
                   cursor: np.ndarray, c: int, row: int) -> int:
    """Column c's bytes at the memory check at `row`, its level bytes metered."""
    st = cursor[c]
    level_bytes = _meter(desc, levels, words, bits, index, st, c, row)
    return int(st[S_PRODUCED] + _raw(desc, index, st, c) + level_bytes)


@jit
def apply_page(desc: np.ndarray, bits: np.ndarray, index: np.ndarray, fl_col: np.ndarray, fl_size: np.ndarray,
               cursor: np.ndarray, j: int, row: int) -> None:
    """Planned page j ends at the page check at `row`: its stored size counts, its column opens a page. The
    pages of one check are of distinct columns (one thread each on a GPU)."""
    c = fl_col[j]
    st = cursor[c]
    st[S_PRODUCED] += fl_size[j]
    _count(desc, bits, index, st, c, row)
    _close(st, row)


@jit
def _memory_full(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
                 block_size: int, planned: int, ev_row: np.ndarray, ev_lev: np.ndarray, block: np.ndarray,
                 cursor: np.ndarray, row: int) -> bool:
    """The memory check at `row` (block_full over finished pages as stored plus open pages buffered). Level
    bytes are only measured when their bounds leave the answer open."""
    lo = 0
    hi = 0
    known = True
    for c in range(desc.shape[0]):
        low, high, sure = column_memory(desc, bits, index, planned, block[B_EVENTS], ev_row, ev_lev, cursor, c,
                                        row)
        lo += low
        hi += high
        known = known and sure
    if known:
        verdict = verdict_of(lo, hi, row, block_size)
        if verdict >= 0:
            return verdict == 1 or block_full(lo, row, block_size, block)
    mem = 0
    for c in range(desc.shape[0]):
        mem += column_metered(desc, levels, words, bits, index, cursor, c, row)
    return block_full(mem, row, block_size, block)


@jit
def replay_blocks(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
                  index: np.ndarray, params: np.ndarray, available: int, final: bool, sched: np.ndarray,
                  ev_row: np.ndarray, ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray,
                  fl_size: np.ndarray, sized: int, block: np.ndarray, cursor: np.ndarray) -> int:
    """Replay the planned page checks and the memory checks, in parquet-java's order, over rows 0..available.

    At each row the page check comes first (its pages count at their stored size fl_size[j], header
    included), then the memory check; the row group ends at P_BLOCK_ROWS rows at the latest, and with
    `final` at `available`. Checks 0..sized-1 have sizes. State: block = [100, 0, -1] and zero cursors
    (int64[C, S_COUNT], separate from plan_pages'); sched, ev_* and fl_col are plan_pages'.
    Returns REPLAY_CUT (row in block[B_CUT]; checks 0..block[B_EVENTS]-1 applied, their pages kept; column c's
    page from cursor[c, S_START] to the cut is open when it starts before the cut), REPLAY_NOT_YET (more rows
    needed), REPLAY_NEED_PLAN (plan past sched[SC_NEXT] first), REPLAY_NEED_SIZES (check block[B_EVENTS]
    needs its pages' sizes).
    """
    limit = params[P_BLOCK_ROWS]
    while True:
        k = block[B_EVENTS]
        page_check = ev_row[k] if k < sched[SC_EVENTS] else sched[SC_NEXT]
        row = min(page_check, block[B_NEXT], limit)
        if row > available:
            if final and available > 0:
                block[B_CUT] = available
                return REPLAY_CUT
            return REPLAY_NOT_YET
        if row == page_check:
            if k >= sched[SC_EVENTS]:
                return REPLAY_NEED_PLAN
            if k >= sized:
                return REPLAY_NEED_SIZES
            for j in range(ev_end[k - 1] if k > 0 else 0, ev_end[k]):
                apply_page(desc, bits, index, fl_col, fl_size, cursor, j, row)
            block[B_EVENTS] = k + 1
        if row >= limit or (row == block[B_NEXT]
                            and _memory_full(desc, levels, words, bits, index, params[P_BLOCK_SIZE],
                                             sched[SC_EVENTS], ev_row, ev_lev, block, cursor, row)):
            block[B_CUT] = row
            return REPLAY_CUT
