"""The planner on the device: the compiled page planner and row-group replay (`schedule.py`) run as single-thread
device steps over the window's arenas, plus the two small steps around them — 1-bit level streams packed the
way the planner's meters read them, and each planned page's level entries and values. Sequential CPU twins
here; CUDA forms in `plan_device_cuda.py`.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .layout import CT_ENTRY, CT_VBEFORE, CT_VIDX
from .schedule import plan_pages, replay_blocks

# rows of `streams` (pack_levels): where a 1-bit level stream is in `lev`, how many levels, its first word
LS_LEV, LS_COUNT, LS_WORD = range(3)


@jit
def pack_stream(k: int, streams: np.ndarray, lev: np.ndarray, bits: np.ndarray, first: int, step: int) -> None:
    """Words first, first + step, ... of stream k: 64 levels (0 / 1) a word, LSB first, zero past the end."""
    base = streams[k, LS_LEV]
    n = streams[k, LS_COUNT]
    word0 = streams[k, LS_WORD]
    for w in range(first, (n + 63) // 64, step):
        word = np.uint64(0)
        for j in range(64):
            i = w * 64 + j
            if i < n and lev[base + i] != 0:
                word |= np.uint64(1) << np.uint64(j)
        bits[word0 + w] = word


@jit
def pack_levels(n: int, streams: np.ndarray, lev: np.ndarray, bits: np.ndarray) -> None:
    """Twin: every 1-bit level stream packed into `bits` (one block per stream on a GPU, threads over words)."""
    for k in range(n):
        pack_stream(k, streams, lev, bits, 0, 1)


@jit
def plan_step(n: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
              index: np.ndarray, params: np.ndarray, horizon: int, sched: np.ndarray, cursor: np.ndarray,
              ev_row: np.ndarray, ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray, fl_start: np.ndarray,
              status: np.ndarray) -> None:
    """Twin (one thread on a GPU): `schedule.plan_pages` up to `horizon`; status[0] = its result."""
    if n > 0:
        status[0] = plan_pages(desc, levels, words, bits, index, params, horizon, sched, cursor, ev_row, ev_end,
                               ev_lev, fl_col, fl_start)


@jit
def replay_step(n: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
                index: np.ndarray, params: np.ndarray, limits: np.ndarray, sched: np.ndarray, ev_row: np.ndarray,
                ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray, fl_size: np.ndarray, block: np.ndarray,
                cursor: np.ndarray, status: np.ndarray) -> None:
    """Twin (one thread on a GPU): `schedule.replay_blocks` with limits = (available, final, checks sized);
    status[0] = its result."""
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
def popcount(x: np.uint64) -> int:
    """Set bits of a word."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


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
