"""CUDA forms of the device planner steps (twins and shared sources: `plan_device.py`).

`pack_levels_block`: one block per 1-bit level stream, threads over its words. `plan_thread` / `replay_thread`:
the planner and the replay are one sequential chain of checks (each check's row depends on the last), so one
thread runs each (the compiled `schedule.plan_pages` / `replay_blocks` as a device function). `page_spans_thread`:
one thread per page. Importing this module imports numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from .planner import pack_stream, page_span
from .schedule import plan_pages, replay_blocks

_pack_stream = device(pack_stream)
_plan_pages = device(plan_pages)
_replay_blocks = device(replay_blocks)
_page_span = device(page_span)


@cuda_kernel
def pack_levels_block(streams: np.ndarray, lev: np.ndarray, bits: np.ndarray) -> None:
    """Block k packs stream k; thread t its words t, t + blockDim, ..."""
    _pack_stream(cuda.blockIdx.x, streams, lev, bits, cuda.threadIdx.x, cuda.blockDim.x)


@cuda_kernel
def plan_thread(n: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
                index: np.ndarray, params: np.ndarray, horizon: int, sched: np.ndarray, cursor: np.ndarray,
                ev_row: np.ndarray, ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray, fl_start: np.ndarray,
                status: np.ndarray) -> None:
    """Thread 0: every page check up to `horizon`."""
    if cuda.grid(1) == 0 and n > 0:
        status[0] = _plan_pages(desc, levels, words, bits, index, params, horizon, sched, cursor, ev_row, ev_end,
                                ev_lev, fl_col, fl_start)


@cuda_kernel
def replay_thread(n: int, desc: np.ndarray, levels: np.ndarray, words: np.ndarray, bits: np.ndarray,
                  index: np.ndarray, params: np.ndarray, limits: np.ndarray, sched: np.ndarray, ev_row: np.ndarray,
                  ev_end: np.ndarray, ev_lev: np.ndarray, fl_col: np.ndarray, fl_size: np.ndarray, block: np.ndarray,
                  cursor: np.ndarray, status: np.ndarray) -> None:
    """Thread 0: the memory checks interleaved with the planned page checks."""
    if cuda.grid(1) == 0 and n > 0:
        status[0] = _replay_blocks(desc, levels, words, bits, index, params, limits[0], limits[1] != 0, sched,
                                   ev_row, ev_end, ev_lev, fl_col, fl_size, limits[2], block, cursor)


@cuda_kernel
def page_spans_thread(n: int, pages: np.ndarray, cols: np.ndarray, idx: np.ndarray, spans: np.ndarray) -> None:
    """Thread p: page p's level entries and values."""
    p = cuda.grid(1)
    if p < n:
        _page_span(p, pages, cols, idx, spans)
