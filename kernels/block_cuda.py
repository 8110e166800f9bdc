"""Device helpers of the block kernels: a thread's contiguous run of a block's items, and the block scan.

A block kernel that walks items in order (a column's chunks, a chunk's values, an array to prefix-sum) gives
thread t the contiguous run `run_bounds(start, n, t, T)` of them; each thread sums its run, `block_scan` of the
T sums in shared memory gives every run its start (its exclusive prefix), and the thread walks its run again.
Users: dictionary/row_group_cuda.py, convert/arenas_cuda.py, plan/page_layout_cuda.py (and the planner
blocks' page-end flags in plan/planner_cuda.py: `_block_check`). Serial steps of one thread: 2 * ceil(n / T) + log2(T)
(`block_runs_steps` in gpuwrite/backends/device/serial_steps.py). Importing this module imports numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ._jit import device
from .encode.rle_segments import segment_bounds

_segment = device(segment_bounds)


@cuda.jit(device=True)
def run_bounds(start: int, n: int, t: int, threads: int) -> tuple[int, int]:
    """[lo, hi) of thread t's run when `threads` threads split the n items from `start` into contiguous runs of
    ceil(n / threads) (the last runs shorter or empty): the RLE encoder's `segment_bounds`, from `start`."""
    lo, hi = _segment(n, t, threads)
    return start + lo, start + hi


@cuda.jit(device=True)
def block_scan(sh: np.ndarray, x: int, y: int, t: int, threads: int) -> tuple[int, int]:
    """Thread t's exclusive prefixes (the sums of x, and of y, over threads 0 .. t - 1) by an inclusive
    Hillis-Steele scan in shared memory: sh int64[1 or 2, >= threads] (y is dropped when sh has one row).
    Every thread of the block calls it; barriers before and after, so on return sh[r, :threads] holds the
    inclusive sums, readable by all (sh[r, threads - 1]: row r's total). log2(threads) rounds, both rows
    advancing in the same rounds."""
    two = sh.shape[0] > 1
    sh[0, t] = x
    if two:
        sh[1, t] = y
    cuda.syncthreads()  # type: ignore[call-arg]
    step = 1
    while step < threads:
        a = np.int64(0)
        b = np.int64(0)
        if t >= step:
            a = sh[0, t - step]
            if two:
                b = sh[1, t - step]
        cuda.syncthreads()  # type: ignore[call-arg]
        sh[0, t] += a
        if two:
            sh[1, t] += b
        cuda.syncthreads()  # type: ignore[call-arg]
        step *= 2
    return sh[0, t] - x, (sh[1, t] - y) if two else np.int64(0)
