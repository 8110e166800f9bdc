"""CUDA forms of the device planner steps (twins and shared sources: `plan_device.py`).

`pack_levels_block`: a block per part of a 1-bit level stream (PACK_PART words), threads over its words.
The page checks are one sequential chain (each check's row depends on the last), but within a check the columns
are independent: `plan_count_block` / `plan_walk_block` / `plan_emit_block` run the chain cut into segments, a
block per segment with a thread per column (`_block_check`); `replay_block` runs the replay in one block with a
thread per column, after `replay_marks_thread` (a thread per page) has marked the columns' counts and level
meters. Their sequential twins are `planner.plan_count` / `plan_walk` / `plan_emit`, `schedule.plan_pages` /
`replay_blocks` on the CPU (tests/gpu/test_planner_blocks.py). `page_spans_thread`:
one thread per page; `open_spans_thread` one per column. Importing this module imports numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from ..block_cuda import block_scan
from .planner import (
    SEG_LAST,
    W_FIX,
    W_SPEC,
    X_MEET,
    apply_marked,
    emit_copy,
    emit_plan,
    emit_state,
    mark_page,
    memory_marked,
    metered_marked,
    open_span,
    pack_part,
    page_span,
    segment_ones,
    walk_begin,
    walk_column,
    walk_room,
    walk_step,
)
from .schedule import (
    B_CUT,
    B_EVENTS,
    B_NEXT,
    LONG_MAX,
    P_BLOCK_ROWS,
    P_BLOCK_SIZE,
    PLAN_DONE,
    PLAN_FULL,
    REPLAY_CUT,
    REPLAY_NEED_PLAN,
    REPLAY_NEED_SIZES,
    REPLAY_NOT_YET,
    S_START,
    SC_EVENTS,
    SC_FLUSHES,
    SC_NEXT,
    block_full,
    column_check,
    next_check,
    verdict_of,
)

MAX_THREADS = 128  # threads of a block, at most (ops.THREADS): the shared scan and reduction buffers
_GO = -1  # a block's control: check on (else a stop: PLAN_DONE / PLAN_FULL, a replay's status)

_pack_part = device(pack_part)
_column_check = device(column_check)
_next_check = device(next_check)
_apply_marked = device(apply_marked)
_block_full = device(block_full)
_memory_marked = device(memory_marked)
_metered_marked = device(metered_marked)
_mark_page = device(mark_page)
_verdict_of = device(verdict_of)
_page_span = device(page_span)
_open_span = device(open_span)
_segment_ones = device(segment_ones)
_walk_column = device(walk_column)
_walk_begin = device(walk_begin)
_walk_room = device(walk_room)
_walk_step = device(walk_step)
_emit_plan = device(emit_plan)
_emit_copy = device(emit_copy)
_emit_state = device(emit_state)


@cuda_kernel
def pack_levels_block(parts: np.ndarray, streams: np.ndarray, lev: np.ndarray, bits: np.ndarray) -> None:
    """Block b packs part b (`planner.pack_part`: up to PACK_PART words of one stream); thread t its words t,
    t + blockDim, ... CPU twin: `planner.pack_levels`."""
    _pack_part(cuda.blockIdx.x, parts, streams, lev, bits, cuda.threadIdx.x, cuda.blockDim.x)


_SUM, _MIN = 0, 1  # _block_reduce's operations


@cuda.jit(device=True)
def _block_reduce(buf: np.ndarray, t: int, threads: int, op: int) -> int:
    """Tree sum (_SUM) or minimum (_MIN) of buf[:threads] in shared memory (every thread of the block calls it);
    the result, to all."""
    cuda.syncthreads()
    half = 1
    while half < threads:
        half *= 2
    half //= 2
    while half > 0:
        if t < half and t + half < threads:
            if op == _SUM:
                buf[t] += buf[t + half]
            else:
                buf[t] = min(buf[t], buf[t + half])
        cuda.syncthreads()
        half //= 2
    total = buf[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def _block_sums(buf: np.ndarray, t: int, threads: int) -> tuple[int, int, int]:
    """Tree sums of buf[0, :threads], buf[1, :threads] and buf[2, :threads] (shared int64[3, >= threads]) in the
    same log2(threads) rounds (every thread of the block calls it); the three totals, to all."""
    cuda.syncthreads()
    half = 1
    while half < threads:
        half *= 2
    half //= 2
    while half > 0:
        if t < half and t + half < threads:
            for r in range(3):
                buf[r, t] += buf[r, t + half]
        cuda.syncthreads()
        half //= 2
    a, b, c = buf[0, 0], buf[1, 0], buf[2, 0]
    cuda.syncthreads()
    return a, b, c


@cuda.jit(device=True)
def _block_check(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
                 params: np.ndarray, row: int, nev: int, nfl: int, cursor: np.ndarray, ev_lev: np.ndarray,
                 fl_col: np.ndarray, fl_start: np.ndarray, flag: np.ndarray, wait: np.ndarray, t: int,
                 threads: int) -> tuple[int, int]:
    """The page check at `row`, check number nev, by the whole block (`schedule._size_check`): thread t runs
    `column_check` for columns t, t + blockDim, ... (tiles of blockDim columns), a scan of the tile's page-end flags
    (`block_cuda.block_scan`; flag int64[1, >= blockDim] in shared memory) places its pages at fl_col / fl_start
    from nfl in column order, and tree min-reductions give the next check row. Returns (pages so far, next check
    row), the same to every thread."""
    ncols = desc.shape[0]
    my_wait = LONG_MAX
    my_rc = LONG_MAX
    for tile in range(0, ncols, threads):
        c = tile + t
        flushed = np.int64(-1)
        if c < ncols:
            flushed, to_fill, col_rc = _column_check(desc, levels, words, bits, index, params, row, cursor, ev_lev,
                                                     nev, c)
            my_wait = min(my_wait, to_fill)
            my_rc = min(my_rc, col_rc)
        before, _ = block_scan(flag, 1 if flushed >= 0 else 0, 0, t, threads)
        if flushed >= 0:
            j = nfl + before
            fl_col[j] = c
            fl_start[j] = flushed
        nfl += flag[0, threads - 1]
        cuda.syncthreads()
    wait[t] = my_wait
    least_wait = _block_reduce(wait, t, threads, _MIN)
    wait[t] = my_rc
    least_rc = _block_reduce(wait, t, threads, _MIN)
    return nfl, _next_check(params, row, least_wait, least_rc)


@cuda_kernel
def plan_count_block(desc: np.ndarray, bits: np.ndarray, segs: np.ndarray, cursor: np.ndarray,
                     ones: np.ndarray) -> None:
    """Block k, thread t: ones[k, c] (`planner.segment_ones`) for columns c = t, t + blockDim, ... CPU twin:
    `planner.plan_count`. Geometry: a block per segment (grid S)."""
    k = cuda.blockIdx.x
    for c in range(cuda.threadIdx.x, desc.shape[0], cuda.blockDim.x):
        ones[k, c] = _segment_ones(k, c, desc, bits, segs, cursor)


@cuda_kernel
def plan_walk_block(w: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
                    index: np.ndarray, params: np.ndarray, segs: np.ndarray, ones: np.ndarray, sched: np.ndarray,
                    cursor: np.ndarray, xs: np.ndarray, xc: np.ndarray, xr: np.ndarray, xe: np.ndarray,
                    xl: np.ndarray, xfc: np.ndarray, xfs: np.ndarray, starts: np.ndarray) -> None:
    """Chain w (W_SPEC: from the guess; W_FIX: from the previous segment's guessed end, until it meets this
    segment's guess) of segment k = blockIdx.x, the columns of each check in parallel (`_block_check`). CPU twin:
    `planner.plan_walk`; same arguments with `n` for the grid, same outputs byte for byte.

    Geometry: a block per segment (grid S), blockDim <= MAX_THREADS. Thread 0 alone reads and writes xs[w, k],
    xr[w, k] and xe[w, k] and steps through the guess's checks for a meeting; a meeting's page starts are compared
    by thread t for columns t, t + blockDim, ... and a tree sum. A chain makes at most xr.shape[2] checks (its room:
    `planner.segment_checks`, a bound on the checks of a segment).
    """
    ctl = cuda.shared.array(3, np.int64)  # control (_GO / stop), check row, the guess's check at or after it
    flag = cuda.shared.array((1, MAX_THREADS), np.int64)
    wait = cuda.shared.array(MAX_THREADS, np.int64)
    k = cuda.blockIdx.x
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    ncols = desc.shape[0]
    for c in range(t, ncols, threads):
        _walk_column(w, k, desc, index, segs, ones, cursor, xc, c)
    if t == 0:
        _walk_begin(w, k, params, segs, sched, xs)
        ctl[2] = 0
    cuda.syncthreads()
    if w == W_FIX and k == 0:
        return
    spn = xs[W_SPEC, k, SC_EVENTS]
    while True:
        if t == 0:
            row0 = xs[w, k, SC_NEXT]
            ctl[1] = row0
            ctl[0] = _GO if row0 <= segs[k, SEG_LAST] else PLAN_DONE
            j0 = ctl[2]
            while w == W_FIX and j0 < spn and xr[W_SPEC, k, j0] < row0:
                j0 += 1
            ctl[2] = j0
        cuda.syncthreads()
        if ctl[0] != _GO:
            return
        row = ctl[1]
        j = ctl[2]
        if w == W_FIX and j < spn and xr[W_SPEC, k, j] == row:
            mine = np.int64(0)
            for c in range(t, ncols, threads):
                if xc[W_FIX, k, c, S_START] != starts[k, j, c]:
                    mine += 1
            wait[t] = mine
            if _block_reduce(wait, t, threads, _SUM) == 0:
                if t == 0:
                    xs[w, k, X_MEET] = j
                return
        if t == 0:
            ctl[0] = _GO if _walk_room(w, k, ncols, xs, xr, xfc) else PLAN_FULL
        cuda.syncthreads()
        if ctl[0] != _GO:
            return
        nev = xs[w, k, SC_EVENTS]
        if w == W_SPEC:
            for c in range(t, ncols, threads):
                starts[k, nev, c] = xc[w, k, c, S_START]
        nfl, nxt = _block_check(desc, levels, words, bits, index, params, row, nev, xs[w, k, SC_FLUSHES], xc[w, k],
                                xl[w, k], xfc[w, k], xfs[w, k], flag, wait, t, threads)
        if t == 0:
            _walk_step(w, k, row, nfl, nxt, xs, xr, xe)
        cuda.syncthreads()


@cuda_kernel
def plan_emit_block(segs: np.ndarray, sched: np.ndarray, cursor: np.ndarray, xs: np.ndarray, xc: np.ndarray,
                    xr: np.ndarray, xe: np.ndarray, xl: np.ndarray, xfc: np.ndarray, xfs: np.ndarray,
                    ev_row: np.ndarray, ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray,
                    fl_start: np.ndarray, status: np.ndarray) -> None:
    """Segment k = blockIdx.x's part of the true chain copied to the planner's arrays by the block's threads; the
    last kept segment's block writes the true state; block 0's thread 0 the status. CPU twin: `planner.plan_emit`.
    Geometry: a block per segment (grid S); each thread finds its segment's place from the segments' counts (S
    steps)."""
    k = cuda.blockIdx.x
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    keep, my_e, my_f, last, events, flushes = _emit_plan(k, t, segs, xs, xe, ev_row, fl_col, status)
    if keep:
        _emit_copy(k, t, threads, xs, xr, xe, xl, xfc, xfs, my_e, my_f, ev_row, ev_end, ev_lev, fl_col, fl_start)
        if k == last:
            _emit_state(last, t, threads, xs, xc, sched, cursor, events, flushes)


@cuda_kernel
def replay_block(desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray, index: np.ndarray,
                 params: np.ndarray, limits: np.ndarray, sched: np.ndarray, ev_row: np.ndarray, ev_end: np.ndarray,
                 ev_lev: np.ndarray, fl_col: np.ndarray, fl_size: np.ndarray, block: np.ndarray, cursor: np.ndarray,
                 status: np.ndarray, marks: np.ndarray, every: int) -> None:
    """The memory checks interleaved with the planned page checks, the columns of each check in parallel. CPU
    twin: `planner.replay_step` (`schedule.replay_blocks`); same arguments without `n`, same outputs byte for byte.

    Geometry: ONE block of blockDim <= MAX_THREADS threads (grid 1). Thread 0 alone walks the chain of checks
    (which check comes next, the cut, `block_full` and its next check: a few steps each); at a page check the
    check's pages (distinct columns) are applied by threads j, j + blockDim, ...; at a memory check thread t
    bounds (and, when the bounds leave the answer open, meters) columns t, t + blockDim, ... and tree sums in
    shared memory give the row group's bytes (the low and high bounds and the columns sure of them in one). A column is counted and metered from the mark before the row
    (`marks`, int64[C, G, MK_COUNT]: replay_marks_thread's, `every` rows apart), so a thread walks at most
    `every` rows of a column's levels per check. Inputs as replay_blocks: limits int64[3] = (available,
    final, checks sized), fl_size int64[F] (stored page sizes), block int64[B_COUNT], cursor int64[C, S_COUNT]
    (the replay's own), status int64[1].
    """
    ctl = cuda.shared.array(4, np.int64)  # row, control (_GO or a status), page check (1/0), memory check (1/0)
    span = cuda.shared.array(2, np.int64)  # the page check's pages
    sums = cuda.shared.array((3, MAX_THREADS), np.int64)  # low, high, sure; then the metered bytes in row 0
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    ncols = desc.shape[0]
    available = limits[0]
    limit = params[P_BLOCK_ROWS]
    block_size = params[P_BLOCK_SIZE]
    while True:
        if t == 0:
            k = block[B_EVENTS]
            page_check = ev_row[k] if k < sched[SC_EVENTS] else sched[SC_NEXT]
            row0 = min(page_check, block[B_NEXT], limit)
            ctl[0] = row0
            ctl[1] = _GO
            ctl[2] = 0
            ctl[3] = 0
            if row0 > available:
                if limits[1] != 0 and available > 0:
                    block[B_CUT] = available
                    ctl[1] = REPLAY_CUT
                else:
                    ctl[1] = REPLAY_NOT_YET
            elif row0 == page_check:
                if k >= sched[SC_EVENTS]:
                    ctl[1] = REPLAY_NEED_PLAN
                elif k >= limits[2]:
                    ctl[1] = REPLAY_NEED_SIZES
                else:
                    ctl[2] = 1
                    span[0] = ev_end[k - 1] if k > 0 else 0
                    span[1] = ev_end[k]
                    block[B_EVENTS] = k + 1
            if ctl[1] == _GO:
                if row0 >= limit:
                    block[B_CUT] = row0
                    ctl[1] = REPLAY_CUT
                elif row0 == block[B_NEXT]:
                    ctl[3] = 1
        cuda.syncthreads()
        row = ctl[0]
        if ctl[2] != 0:
            for j in range(span[0] + t, span[1], threads):
                _apply_marked(desc, bits, index, marks, every, fl_col, fl_size, cursor, j, row)
        cuda.syncthreads()
        verdict = ctl[1]
        if verdict != _GO:
            if t == 0:
                status[0] = verdict
            return
        if ctl[3] != 0:
            applied = block[B_EVENTS]
            planned = sched[SC_EVENTS]
            my_lo = np.int64(0)
            my_hi = np.int64(0)
            my_sure = np.int64(1)
            for c in range(t, ncols, threads):
                low, high, known = _memory_marked(desc, bits, index, marks, every, planned, applied, ev_row, ev_lev,
                                                  cursor, c, row)
                my_lo += low
                my_hi += high
                if not known:
                    my_sure = 0
            sums[0, t] = my_lo
            sums[1, t] = my_hi
            sums[2, t] = my_sure
            total_lo, total_hi, sure = _block_sums(sums, t, threads)
            all_sure = sure == threads
            answer = _verdict_of(total_lo, total_hi, row, block_size) if all_sure else -1
            if answer < 0:
                mine = np.int64(0)
                for c in range(t, ncols, threads):
                    mine += _metered_marked(desc, levels, words, bits, index, marks, every, cursor, c, row)
                sums[0, t] = mine
                sums[1, t] = 0
                sums[2, t] = 0
                total_lo, _, _ = _block_sums(sums, t, threads)
            if t == 0:
                if answer == 1 or _block_full(total_lo, row, block_size, block):
                    block[B_CUT] = row
                    status[0] = REPLAY_CUT
                    ctl[1] = REPLAY_CUT
            cuda.syncthreads()
            if ctl[1] == REPLAY_CUT:
                return
        cuda.syncthreads()


@cuda_kernel
def replay_marks_thread(n: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
                        index: np.ndarray, ev_row: np.ndarray, ev_end: np.ndarray, fl_col: np.ndarray,
                        fl_start: np.ndarray, plan_cursor: np.ndarray, sched: np.ndarray, limits: np.ndarray,
                        every: int, marks: np.ndarray) -> None:
    """Thread p: page p's marks for replay_block (`planner.mark_page`: the planned pages, then each column's open
    page after them up to the next page check, all up to row limits[0]); it walks one page's levels. CPU twin: `planner.replay_marks`."""
    p = cuda.grid(1)
    if p < n:
        _mark_page(p, desc, levels, words, bits, index, ev_row, ev_end, fl_col, fl_start, plan_cursor, sched,
                   limits[0], every, marks)


@cuda_kernel
def page_spans_thread(n: int, pages: np.ndarray, cols: np.ndarray, idx: np.ndarray, spans: np.ndarray) -> None:
    """Thread p: page p's level entries and values."""
    p = cuda.grid(1)
    if p < n:
        _page_span(p, pages, cols, idx, spans)


@cuda_kernel
def open_spans_thread(n: int, block: np.ndarray, cursor: np.ndarray, rows: int, cols: np.ndarray, idx: np.ndarray,
                      pages: np.ndarray, spans: np.ndarray) -> None:
    """Thread c: column c's page open at the replay's cut and its level entries and values."""
    c = cuda.grid(1)
    if c < n:
        _open_span(c, block, cursor, rows, cols, idx, pages, spans)
