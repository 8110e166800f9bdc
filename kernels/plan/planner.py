"""The planner on the device: the compiled page planner and row-group replay (`schedule.py`) run as single-thread
device steps over the window's arenas, plus the two small steps around them — 1-bit level streams packed the
way the planner's meters read them, and each planned page's level entries and values. Sequential CPU twins
here; CUDA forms in `plan_device_cuda.py`.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .layout import CT_ENTRY, CT_VBEFORE, CT_VIDX
from .level_meter import count_ones, popcount
from .schedule import (
    B_CUT,
    D_DEF,
    D_DEFW,
    D_REP,
    D_REPW,
    D_VBEFORE,
    P_CHECK_MAX,
    P_CHECK_MIN,
    P_PAGE_ROWS,
    PLAN_DONE,
    PLAN_FULL,
    S_COUNT,
    S_DEF,
    S_MUPTO,
    S_REP,
    S_START,
    S_UPTO,
    S_VSTART,
    S_VUPTO,
    SC_EVENTS,
    SC_FLUSHES,
    SC_NEXT,
    _count,
    _entry,
    _feed_meter,
    _has_levels,
    _size_check,
    apply_page,
    column_memory,
    column_metered,
    replay_blocks,
)

# rows of `streams` (pack_levels): where a 1-bit level stream is in `lev`, how many levels, its first word
LS_LEV, LS_COUNT, LS_WORD = range(3)


PACK_PART = 1024  # words of a 1-bit level stream one block packs (pack_levels' parts: 65,536 levels)


def pack_parts(streams: np.ndarray) -> np.ndarray:
    """pack_levels' parts (int64[B, 2]: stream, first word): each stream cut into runs of PACK_PART words."""
    parts = [(k, w) for k in range(len(streams)) for w in range(0, max(1, (int(streams[k, LS_COUNT]) + 63) // 64),
                                                                 PACK_PART)]
    return np.array(parts, dtype=np.int64).reshape(-1, 2)


@jit
def pack_part(b: int, parts: np.ndarray, streams: np.ndarray, lev: np.ndarray, bits: np.ndarray, first: int,
              step: int) -> None:
    """Words first, first + step, ... of part b (up to PACK_PART words of a stream from parts[b, 1]): 64 levels
    (0 / 1) a word, LSB first, zero past the stream's end."""
    k = parts[b, 0]
    base = streams[k, LS_LEV]
    n = streams[k, LS_COUNT]
    word0 = streams[k, LS_WORD]
    lo = parts[b, 1]
    for w in range(lo + first, min(lo + PACK_PART, (n + 63) // 64), step):
        word = np.uint64(0)
        for j in range(64):
            i = w * 64 + j
            if i < n and lev[base + i] != 0:
                word |= np.uint64(1) << np.uint64(j)
        bits[word0 + w] = word


@jit
def pack_levels(n: int, parts: np.ndarray, streams: np.ndarray, lev: np.ndarray, bits: np.ndarray) -> None:
    """Twin: the n parts of the 1-bit level streams packed into `bits` (a block per part on a GPU, threads over its
    words)."""
    for b in range(n):
        pack_part(b, parts, streams, lev, bits, 0, 1)


@jit
def replay_step(n: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
                index: np.ndarray, params: np.ndarray, limits: np.ndarray, sched: np.ndarray, ev_row: np.ndarray,
                ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray, fl_size: np.ndarray, block: np.ndarray,
                cursor: np.ndarray, status: np.ndarray, marks: np.ndarray, every: int) -> None:
    """Twin (one block on a GPU): `schedule.replay_blocks` with limits = (available, final, checks sized);
    status[0] = its result. The twin is the definition: it walks the levels itself and leaves `marks` (the GPU
    form's shortcut, replay_marks') unread."""
    if n > 0:
        status[0] = replay_blocks(desc, levels, words, bits, index, params, limits[0], limits[1] != 0, sched, ev_row,
                                  ev_end, ev_lev, fl_col, fl_size, limits[2], block, cursor)


@jit
def entry_of(cols: np.ndarray, idx: np.ndarray, c: int, row: int) -> int:
    """First level entry of `row` in column c (rows are entries for flat columns)."""
    base = cols[c, CT_ENTRY]
    return int(idx[base + row]) if base >= 0 else row


@jit
def value_of(cols: np.ndarray, idx: np.ndarray, c: int, row: int) -> int:
    """Non-null values of column c before `row`."""
    if cols[c, CT_VBEFORE] >= 0:
        return int(idx[cols[c, CT_VBEFORE] + entry_of(cols, idx, c, row)])
    if cols[c, CT_VIDX] >= 0:  # per 64 rows: values before them, then the mask of those that have one
        g = cols[c, CT_VIDX] + 2 * (row >> 6)
        below = np.uint64(idx[g + 1]) & ((np.uint64(1) << np.uint64(row & 63)) - np.uint64(1))
        return int(idx[g]) + popcount(below)
    return row


@jit
def page_span(p: int, pages: np.ndarray, cols: np.ndarray, idx: np.ndarray, spans: np.ndarray) -> None:
    """Page p's (column, first row, end row) in pages[:, p] -> its entries and values: spans[:, p] =
    (ea, eb, va, vb)."""
    c = pages[0, p]
    a = pages[1, p]
    b = pages[2, p]
    spans[0, p] = entry_of(cols, idx, c, a)
    spans[1, p] = entry_of(cols, idx, c, b)
    spans[2, p] = value_of(cols, idx, c, a)
    spans[3, p] = value_of(cols, idx, c, b)


@jit
def page_spans(n: int, pages: np.ndarray, cols: np.ndarray, idx: np.ndarray, spans: np.ndarray) -> None:
    """Twin: page_span of every page (one thread per page on a GPU)."""
    for p in range(n):
        page_span(p, pages, cols, idx, spans)


@jit
def open_span(c: int, block: np.ndarray, cursor: np.ndarray, rows: int, cols: np.ndarray, idx: np.ndarray,
              pages: np.ndarray, spans: np.ndarray) -> None:
    """Column c's page open at the replay's cut (block[B_CUT], clamped to 0..rows; from its open page start
    cursor[c, S_START] to the cut: empty when the page ended there, or without a cut) -> pages[:, c] = (column,
    first row, cut) and its spans[:, c], as page_span gives them."""
    cut = min(max(block[B_CUT], 0), rows)
    pages[0, c] = c
    pages[1, c] = min(max(cursor[c, S_START], 0), cut)
    pages[2, c] = cut
    page_span(c, pages, cols, idx, spans)


@jit
def open_spans(n: int, block: np.ndarray, cursor: np.ndarray, rows: int, cols: np.ndarray, idx: np.ndarray,
               pages: np.ndarray, spans: np.ndarray) -> None:
    """Twin: open_span of every column (one thread per column on a GPU): the pages a cut inside the batch leaves
    open, found with the replay so that their spans are read with its sync."""
    for c in range(n):
        open_span(c, block, cursor, rows, cols, idx, pages, spans)


# The page checks in segments (plan_count / plan_walk / plan_emit; CUDA forms in planner_cuda.py). The checks are
# one chain, so the row group's rows are cut into segments (segs[k] = (first row, last row a check may have)) and
# each segment's chain is run twice, all segments at once: W_SPEC from a guess (every column's page starts at the
# segment's first row, next check page_size_check_min rows on, as at a row group's start; segment 0 from the true
# state), then W_FIX from the end state of the previous segment's guess, until it meets its own segment's guess at
# a check of the same row with every column's page starting at the same row: from there the two chains are the
# same (a column's state at a check is a function of its page start and the check row: counts and level meters
# give the same result for every split). Each chain keeps xs[w, k] = (next check, checks, pages, meeting check:
# -1 none, -2 out of room), its cursor xc[w, k], checks xr / xe / xl and pages xfc / xfs. plan_emit keeps the
# segments up to the first that did not meet (its start state was true, so its W_FIX walk is) and says PLAN_AGAIN
# when segments were left: the next call starts there from the true state.
# Pages that their size ends (long strings) do not meet: with page_size_check_estimate each check's row follows from
# every column's page start, and two chains from different states keep different check rows (the 140,000-row
# strings table of tests/backends/test_device_rowgroup.py, 16 KiB pages: the true chain and one guessed at row
# 30,000 share none of 1,038 check rows up to the end). The rest is then one chain, its length growing with its rows:
# the host runs it (`schedule.plan_pages`, gpuwrite/backends/device/schedule.py DeviceSchedule._rest).
W_SPEC, W_FIX = 0, 1
X_MEET = 3  # xs column: the W_SPEC check where W_FIX met it
X_EV0, X_FL0 = 4, 5  # xs[W_FIX, 0]: checks and pages planned before this call (sched's, which plan_emit rewrites)
X_COUNT = 6
PLAN_AGAIN, PLAN_BROKEN = 2, 3  # plan_emit's status[0] besides PLAN_DONE / PLAN_FULL
SEG_ROW, SEG_LAST = 0, 1  # segs columns: first row, last row a check may have


@jit
def segment_ones(k: int, c: int, desc: np.ndarray, bits: np.ndarray, segs: np.ndarray, cursor: np.ndarray) -> int:
    """Values (set definition bits) of flat column c in segment k's rows: from the counted row (segment 0) or the
    segment's first row to the next segment's; 0 when the column counts its values otherwise."""
    dfn = desc[c, D_DEF]
    if desc[c, D_VBEFORE] >= 0 or dfn < 0 or k + 1 >= segs.shape[0]:
        return 0
    lo = cursor[c, S_UPTO] if k == 0 else segs[k, SEG_ROW]
    return int(count_ones(bits, dfn + lo, dfn + segs[k + 1, SEG_ROW]))


@jit
def plan_count(n: int, desc: np.ndarray, bits: np.ndarray, segs: np.ndarray, cursor: np.ndarray,
               ones: np.ndarray) -> None:
    """Twin (a block per segment, a thread per column): ones[k, c] = segment_ones."""
    for k in range(n):
        for c in range(desc.shape[0]):
            ones[k, c] = segment_ones(k, c, desc, bits, segs, cursor)


@jit
def guess_column(desc: np.ndarray, index: np.ndarray, cursor: np.ndarray, ones: np.ndarray, k: int, c: int,
                 row: int, st: np.ndarray) -> None:
    """The guessed state of column c at segment k's first row `row`: a page starting there, its values counted."""
    for f in range(S_COUNT):
        st[f] = 0
    vb = desc[c, D_VBEFORE]
    if vb >= 0:
        values = index[vb + _entry(desc, index, c, row)]
    elif desc[c, D_DEF] >= 0:
        values = cursor[c, S_VUPTO]
        for i in range(k):
            values += ones[i, c]
    else:
        values = row
    st[S_START] = row
    st[S_UPTO] = row
    st[S_MUPTO] = row
    st[S_VSTART] = values
    st[S_VUPTO] = values


@jit
def walk_next(w: int, k: int, params: np.ndarray, segs: np.ndarray, sched: np.ndarray, xs: np.ndarray) -> int:
    """The first check row of chain w of segment k: the true one, the guess's, or the previous segment's guess's."""
    if k == 0:
        return int(sched[SC_NEXT])
    if w == W_SPEC:
        return int(segs[k, SEG_ROW] + params[P_CHECK_MIN])
    return int(xs[W_SPEC, k - 1, SC_NEXT])


@jit
def walk_column(w: int, k: int, desc: np.ndarray, index: np.ndarray, segs: np.ndarray, ones: np.ndarray,
                cursor: np.ndarray, xc: np.ndarray, c: int) -> None:
    """Column c's start state in chain w of segment k (the true state, the guess, or the previous segment's guessed
    end state)."""
    if k == 0:
        for f in range(S_COUNT):
            xc[w, k, c, f] = cursor[c, f]
    elif w == W_SPEC:
        guess_column(desc, index, cursor, ones, k, c, segs[k, SEG_ROW], xc[w, k, c])
    else:
        for f in range(S_COUNT):
            xc[w, k, c, f] = xc[W_SPEC, k - 1, c, f]


@jit
def walk_begin(w: int, k: int, params: np.ndarray, segs: np.ndarray, sched: np.ndarray, xs: np.ndarray) -> None:
    """Chain w of segment k's counters (W_FIX of segment 0 met at once: it also keeps the counts planned before)."""
    xs[w, k, SC_NEXT] = walk_next(w, k, params, segs, sched, xs)
    xs[w, k, SC_EVENTS] = 0
    xs[w, k, SC_FLUSHES] = 0
    xs[w, k, X_MEET] = -1
    if w == W_FIX and k == 0:
        xs[w, k, X_MEET] = 0
        xs[w, k, X_EV0] = sched[SC_EVENTS]
        xs[w, k, X_FL0] = sched[SC_FLUSHES]


@jit
def walk_room(w: int, k: int, ncols: int, xs: np.ndarray, xr: np.ndarray, xfc: np.ndarray) -> bool:
    """Whether chain w of segment k has room for another check (else it is marked out of room, -2)."""
    if xs[w, k, SC_EVENTS] >= xr.shape[2] or xs[w, k, SC_FLUSHES] + ncols > xfc.shape[2]:
        xs[w, k, X_MEET] = -2
        return False
    return True


@jit
def walk_met(k: int, row: int, j: int, xs: np.ndarray, xr: np.ndarray, xc: np.ndarray, starts: np.ndarray,
             ncols: int) -> int:
    """W_FIX of segment k at a check at `row`: the first W_SPEC check from j at or after it, negated minus one
    when it is not a meeting (another row, or a column's page starting elsewhere)."""
    spn = xs[W_SPEC, k, SC_EVENTS]
    while j < spn and xr[W_SPEC, k, j] < row:
        j += 1
    if j >= spn or xr[W_SPEC, k, j] != row:
        return -j - 1
    for c in range(ncols):
        if xc[W_FIX, k, c, S_START] != starts[k, j, c]:
            return -j - 1
    return j


@jit
def plan_walk(n: int, w: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
              index: np.ndarray, params: np.ndarray, segs: np.ndarray, ones: np.ndarray, sched: np.ndarray,
              cursor: np.ndarray, xs: np.ndarray, xc: np.ndarray, xr: np.ndarray, xe: np.ndarray, xl: np.ndarray,
              xfc: np.ndarray, xfs: np.ndarray, starts: np.ndarray) -> None:
    """Twin (a block per segment, a thread per column of each check): chain w of segments 0..n-1 (W_SPEC records
    each check's page starts in `starts`; W_FIX of segment 0 is empty: its W_SPEC is true)."""
    ncols = desc.shape[0]
    for k in range(n):
        for c in range(ncols):
            walk_column(w, k, desc, index, segs, ones, cursor, xc, c)
        walk_begin(w, k, params, segs, sched, xs)
        if w == W_FIX and k == 0:
            continue
        j = 0
        while True:
            row = xs[w, k, SC_NEXT]
            if row > segs[k, SEG_LAST]:
                break
            if w == W_FIX:
                j = walk_met(k, row, j, xs, xr, xc, starts, ncols)
                if j >= 0:
                    xs[w, k, X_MEET] = j
                    break
                j = -j - 1
            if not walk_room(w, k, ncols, xs, xr, xfc):
                break
            nev = xs[w, k, SC_EVENTS]
            if w == W_SPEC:
                for c in range(ncols):
                    starts[k, nev, c] = xc[w, k, c, S_START]
            nfl, nxt = _size_check(desc, levels, words, bits, index, params, row, xc[w, k], xl[w, k], xfc[w, k],
                                   xfs[w, k], nev, xs[w, k, SC_FLUSHES])
            walk_step(w, k, row, nfl, nxt, xs, xr, xe)


@jit
def walk_step(w: int, k: int, row: int, nfl: int, nxt: int, xs: np.ndarray, xr: np.ndarray, xe: np.ndarray) -> None:
    """Chain w of segment k made its check at `row`: its pages end at nfl, the next check is at nxt."""
    nev = xs[w, k, SC_EVENTS]
    xr[w, k, nev] = row
    xe[w, k, nev] = nfl
    xs[w, k, SC_EVENTS] = nev + 1
    xs[w, k, SC_FLUSHES] = nfl
    xs[w, k, SC_NEXT] = nxt


@jit
def emit_part(xs: np.ndarray, xe: np.ndarray, k: int) -> tuple[int, int, int, int]:
    """Segment k's part of the true chain: (its checks, its pages, the W_SPEC check it continues from or -1, that
    check's first page)."""
    m = xs[W_FIX, k, X_MEET]
    nev = xs[W_FIX, k, SC_EVENTS]
    nfl = xs[W_FIX, k, SC_FLUSHES]
    if m < 0:
        return int(nev), int(nfl), -1, 0
    base = xe[W_SPEC, k, m - 1] if m > 0 else 0
    return int(nev + xs[W_SPEC, k, SC_EVENTS] - m), int(nfl + xs[W_SPEC, k, SC_FLUSHES] - base), int(m), int(base)


@jit
def emit_plan(k: int, t: int, segs: np.ndarray, xs: np.ndarray, xe: np.ndarray, ev_row: np.ndarray,
              fl_col: np.ndarray, status: np.ndarray) -> tuple[int, int, int, int, int, int]:
    """Segment k's place in the true chain: (whether it is kept and there is room: 1 / 0, its first check, its first
    page, the last segment kept, checks and pages in all). Thread t == 0 of segment 0 writes the status."""
    nseg = segs.shape[0]
    e = xs[W_FIX, 0, X_EV0]
    f = xs[W_FIX, 0, X_FL0]
    my_e = e
    my_f = f
    last = nseg - 1
    broken = False
    for i in range(nseg):
        if xs[W_SPEC, i, X_MEET] == -2 or xs[W_FIX, i, X_MEET] == -2:
            broken = True
        ne, nf, m, base = emit_part(xs, xe, i)
        if i == k:
            my_e = e
            my_f = f
        e += ne
        f += nf
        if m < 0:
            last = i
            break
    room = e <= ev_row.shape[0] and f <= fl_col.shape[0]
    if k == 0 and t == 0:
        if broken:
            status[0] = PLAN_BROKEN
        elif not room:
            status[0] = PLAN_FULL
        elif last < nseg - 1:
            status[0] = PLAN_AGAIN
        else:
            status[0] = PLAN_DONE
        status[1] = e
        status[2] = f
    keep = 1 if k <= last and room and not broken else 0
    return keep, int(my_e), int(my_f), int(last), int(e), int(f)


@jit
def emit_copy(k: int, t: int, step: int, xs: np.ndarray, xr: np.ndarray, xe: np.ndarray, xl: np.ndarray,
              xfc: np.ndarray, xfs: np.ndarray, my_e: int, my_f: int, ev_row: np.ndarray, ev_end: np.ndarray,
              ev_lev: np.ndarray, fl_col: np.ndarray, fl_start: np.ndarray) -> None:
    """Thread t of `step` copies its share of segment k's checks and pages to the true chain's arrays from check my_e
    and page my_f: the W_FIX checks, then the W_SPEC checks from the meeting."""
    ncols = ev_lev.shape[1]
    fe = xs[W_FIX, k, SC_EVENTS]
    ff = xs[W_FIX, k, SC_FLUSHES]
    ne, nf, m, base = emit_part(xs, xe, k)
    for q in range(t, ne, step):
        w = W_FIX if q < fe else W_SPEC
        src = q if q < fe else m + q - fe
        ev_row[my_e + q] = xr[w, k, src]
        ev_end[my_e + q] = my_f + (xe[w, k, src] if w == W_FIX else ff + xe[w, k, src] - base)
        for c in range(ncols):
            ev_lev[my_e + q, c] = xl[w, k, src, c]
    for q in range(t, nf, step):
        w = W_FIX if q < ff else W_SPEC
        src = q if q < ff else base + q - ff
        fl_col[my_f + q] = xfc[w, k, src]
        fl_start[my_f + q] = xfs[w, k, src]


@jit
def emit_state(last: int, t: int, step: int, xs: np.ndarray, xc: np.ndarray, sched: np.ndarray,
               cursor: np.ndarray, events: int, flushes: int) -> None:
    """The true state after the kept segments (thread t of `step`: its columns; thread 0 the counts)."""
    w = W_SPEC if xs[W_FIX, last, X_MEET] >= 0 else W_FIX
    for c in range(t, cursor.shape[0], step):
        for f in range(S_COUNT):
            cursor[c, f] = xc[w, last, c, f]
    if t == 0:
        sched[SC_NEXT] = xs[w, last, SC_NEXT]
        sched[SC_EVENTS] = events
        sched[SC_FLUSHES] = flushes


@jit
def plan_emit(n: int, segs: np.ndarray, sched: np.ndarray, cursor: np.ndarray, xs: np.ndarray, xc: np.ndarray,
              xr: np.ndarray, xe: np.ndarray, xl: np.ndarray, xfc: np.ndarray, xfs: np.ndarray,
              ev_row: np.ndarray, ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray, fl_start: np.ndarray,
              status: np.ndarray) -> None:
    """Twin (a block per segment): the kept segments' checks and pages into the planner's arrays, the true state
    into sched / cursor; status = (PLAN_DONE / PLAN_AGAIN / PLAN_FULL / PLAN_BROKEN, checks and pages in all).
    With PLAN_FULL nothing is written: grow the arrays to status[1] checks and status[2] pages, and emit again."""
    for k in range(n):
        keep, my_e, my_f, last, events, flushes = emit_plan(k, 0, segs, xs, xe, ev_row, fl_col, status)
        if keep:
            emit_copy(k, 0, 1, xs, xr, xe, xl, xfc, xfs, my_e, my_f, ev_row, ev_end, ev_lev, fl_col, fl_start)
            if k == last:
                emit_state(last, 0, 1, xs, xc, sched, cursor, events, flushes)


SEGMENT_ROWS = 65_536  # rows of a plan segment, at most (a multiple of the page row limit when it is smaller)


def segment_rows(page_rows: int) -> int:
    """Rows of a plan segment: the largest multiple of the page row limit up to SEGMENT_ROWS (pages that the row
    limit ends fall at multiples of it from the row group's start, so a segment's guess is likely true there)."""
    return SEGMENT_ROWS if page_rows > SEGMENT_ROWS else SEGMENT_ROWS // page_rows * page_rows


def segment_table(next_row: int, horizon: int, rows: int) -> np.ndarray:
    """segs (int64[S, 2]) for the checks from `next_row` up to `horizon`: segments end before each multiple of
    `rows`; at least one."""
    first = (next_row // rows + 1) * rows
    bounds = [next_row, *range(first, horizon + 1, rows)]
    segs = np.empty((len(bounds), 2), dtype=np.int64)
    segs[:, SEG_ROW] = bounds
    segs[:-1, SEG_LAST] = np.asarray(bounds[1:], dtype=np.int64) - 1
    segs[-1, SEG_LAST] = horizon
    return segs


def segment_checks(rows: int, ncols: int, params: np.ndarray) -> int:
    """Checks one chain can make in a segment of `rows` rows, at most. SPEC: ColumnWriteStoreBase.sizeCheck: the next
    check is at least min(page_size_check_min, page_size_check_max, page row limit) rows on, unless a column's page
    reaches the row limit first; that column's page then ends there, so it comes again a page row limit later."""
    page_rows = int(params[P_PAGE_ROWS])
    spacing = max(1, min(int(params[P_CHECK_MIN]), int(params[P_CHECK_MAX]), page_rows))
    return rows // spacing + 1 + ncols * (rows // page_rows + 1) + 1


# The replay's marks (replay_marks; used by replay_block in planner_cuda.py). A column's level meters and value count
# at a row depend only on its open page's start and the row (the meters give the same result for every split of the
# levels), so one thread per planned page walks the page once and leaves, at every multiple of MARK_ROWS inside it,
# marks[c, g] = the meters' state (rep 6, def 6: rle_emitted_size's) and the values since the page start. The replay
# then counts and meters a column at any row from the mark before it: at most MARK_ROWS rows, however long the row
# group. Same results as schedule.replay_blocks, the definition (tests/gpu/test_planner_blocks.py).
MARK_ROWS = 256  # rows between marks (DeviceSchedule's; the kernels take it as `every`)
MK_ONES = 12  # marks column: values (set definition bits) from the page start to the mark
MK_COUNT = 13


@jit
def mark_page(p: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
              ev_row: np.ndarray, ev_end: np.ndarray, fl_col: np.ndarray, fl_start: np.ndarray,
              plan_cursor: np.ndarray, sched: np.ndarray, available: int, every: int, marks: np.ndarray) -> None:
    """Page p's marks (every `every` rows): planned page p (fl_col / fl_start, ending at its check's row), or, past
    the planned pages, column p - pages' open page after them (from plan_cursor's start to the next page check,
    sched[SC_NEXT]: the replay counts no further before more is planned), both up to row `available`. A page
    holds at most the page row limit's rows (its check comes then), so a thread walks one page's levels."""
    events = ev_row.shape[0]
    pages = ev_end[events - 1] if events > 0 else 0
    if p < pages:
        c = fl_col[p]
        s = fl_start[p]
        lo = 0
        hi = events - 1
        while lo < hi:  # the page's check: the first with ev_end > p
            mid = (lo + hi) // 2
            if ev_end[mid] > p:
                hi = mid
            else:
                lo = mid + 1
        e = min(ev_row[lo], available)
    else:
        c = p - pages
        s = plan_cursor[c, S_START]
        e = min(sched[SC_NEXT], available)
    ones = desc[c, D_VBEFORE] < 0 and desc[c, D_DEF] >= 0
    if not (ones or _has_levels(desc, c)):
        return
    g = s // every + 1
    a = s
    prev = -1
    while g * every < e:
        b = g * every
        mk = marks[c, g]
        for f in range(MK_COUNT):
            mk[f] = 0 if prev < 0 else marks[c, prev, f]
        ea = _entry(desc, index, c, a)
        eb = _entry(desc, index, c, b)
        _feed_meter(levels, words, bits, desc[c, D_REP], desc[c, D_REPW], ea, eb, mk[0:6])
        _feed_meter(levels, words, bits, desc[c, D_DEF], desc[c, D_DEFW], ea, eb, mk[6:12])
        if ones:
            mk[MK_ONES] += count_ones(bits, desc[c, D_DEF] + a, desc[c, D_DEF] + b)
        prev = g
        a = b
        g += 1


@jit
def replay_marks(n: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
                 index: np.ndarray, ev_row: np.ndarray, ev_end: np.ndarray, fl_col: np.ndarray, fl_start: np.ndarray,
                 plan_cursor: np.ndarray, sched: np.ndarray, limits: np.ndarray, every: int,
                 marks: np.ndarray) -> None:
    """Twin (a thread per page on a GPU): mark_page for the n = planned pages + columns (limits[0]: available)."""
    for p in range(n):
        mark_page(p, desc, levels, words, bits, index, ev_row, ev_end, fl_col, fl_start, plan_cursor, sched,
                  limits[0], every, marks)


@jit
def count_marked(desc: np.ndarray, bits: np.ndarray, index: np.ndarray, marks: np.ndarray, every: int,
                 st: np.ndarray, c: int, row: int) -> None:
    """schedule._count from the mark before `row` when the column's count is further back (fewer than `every`
    rows walked); the same values."""
    upto = st[S_UPTO]
    dfn = desc[c, D_DEF]
    if row <= upto or desc[c, D_VBEFORE] >= 0 or dfn < 0:
        _count(desc, bits, index, st, c, row)
        return
    base = (row - 1) // every * every
    if upto >= base:
        st[S_VUPTO] += count_ones(bits, dfn + upto, dfn + row)
    else:  # base is inside the open page (upto >= its start): a mark of it
        st[S_VUPTO] = (st[S_VSTART] + marks[c, base // every, MK_ONES]
                       + count_ones(bits, dfn + base, dfn + row))
    st[S_UPTO] = row


@jit
def meter_from_mark(desc: np.ndarray, marks: np.ndarray, every: int, st: np.ndarray, c: int, row: int) -> None:
    """Before schedule._meter to `row`: the meters at the mark before it when they are further back."""
    base = (row - 1) // every * every
    if row > st[S_MUPTO] and st[S_MUPTO] < base and _has_levels(desc, c):
        mk = marks[c, base // every]
        for f in range(6):
            st[S_REP + f] = mk[f]
            st[S_DEF + f] = mk[6 + f]
        st[S_MUPTO] = base


@jit
def memory_marked(desc: np.ndarray, bits: np.ndarray, index: np.ndarray, marks: np.ndarray, every: int,
                  planned: int, applied: int, ev_row: np.ndarray, ev_lev: np.ndarray, cursor: np.ndarray, c: int,
                  row: int) -> tuple[int, int, bool]:
    """schedule.column_memory, counting from the marks."""
    count_marked(desc, bits, index, marks, every, cursor[c], c, row)
    return column_memory(desc, bits, index, planned, applied, ev_row, ev_lev, cursor, c, row)


@jit
def metered_marked(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
                   marks: np.ndarray, every: int, cursor: np.ndarray, c: int, row: int) -> int:
    """schedule.column_metered, metering from the marks."""
    meter_from_mark(desc, marks, every, cursor[c], c, row)
    return column_metered(desc, levels, words, bits, index, cursor, c, row)


@jit
def apply_marked(desc: np.ndarray, bits: np.ndarray, index: np.ndarray, marks: np.ndarray, every: int,
                 fl_col: np.ndarray, fl_size: np.ndarray, cursor: np.ndarray, j: int, row: int) -> None:
    """schedule.apply_page, counting from the marks."""
    c = fl_col[j]
    count_marked(desc, bits, index, marks, every, cursor[c], c, row)
    apply_page(desc, bits, index, fl_col, fl_size, cursor, j, row)
