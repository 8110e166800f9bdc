"""The block kernels' shared device helpers (kernels/block_cuda.py) under numba's CUDA simulator: a thread's
contiguous run of the items and the shared-memory block scan, against NumPy's running sums."""

from __future__ import annotations

import numpy as np
import pytest
from gpuwrite.kernels.block_cuda import block_scan, run_bounds
from numba import cuda


@cuda.jit
def _runs_scanned(values: np.ndarray, start: int, n: int, bounds: np.ndarray, before: np.ndarray,
                  totals: np.ndarray) -> None:
    """Thread t: its run's bounds, and the sums (of values, and of items) of the runs before it (two rows)."""
    sh = cuda.shared.array((2, 128), np.int64)
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    lo, hi = run_bounds(start, n, t, threads)
    total = np.int64(0)
    for i in range(lo, hi):
        total += values[i]
    a, b = block_scan(sh, total, hi - lo, t, threads)
    bounds[t, 0] = lo
    bounds[t, 1] = hi
    before[t, 0] = a
    before[t, 1] = b
    if t == threads - 1:
        totals[0] = sh[0, t]
        totals[1] = sh[1, t]


@cuda.jit
def _one_row(values: np.ndarray, before: np.ndarray, totals: np.ndarray) -> None:
    """Thread t: the sum of values[:t] by a one-row scan (its second value is dropped)."""
    sh = cuda.shared.array((1, 128), np.int64)
    t = cuda.threadIdx.x
    a, b = block_scan(sh, values[t], np.int64(99), t, cuda.blockDim.x)
    before[t, 0] = a
    before[t, 1] = b
    totals[0] = sh[0, cuda.blockDim.x - 1]


@pytest.mark.parametrize(("threads", "n"), [(1, 5), (3, 10), (4, 2), (32, 100), (7, 0)])
def test_runs_and_two_row_scan(threads: int, n: int) -> None:
    start = 3
    values = np.arange(1, start + n + 1, dtype=np.int64) ** 2
    bounds = np.full((threads, 2), -1, np.int64)
    before = np.full((threads, 2), -1, np.int64)
    totals = np.zeros(2, np.int64)
    _runs_scanned[1, threads](values, start, n, bounds, before, totals)
    per = -(-n // threads)
    want_lo = [start + min(n, t * per) for t in range(threads)]
    want_hi = [start + min(n, (t + 1) * per) for t in range(threads)]
    assert bounds.tolist() == [list(p) for p in zip(want_lo, want_hi, strict=True)]
    sums = [int(values[lo:hi].sum()) for lo, hi in zip(want_lo, want_hi, strict=True)]
    assert before[:, 0].tolist() == np.concatenate([[0], np.cumsum(sums)[:-1]]).tolist()
    assert before[:, 1].tolist() == [lo - start for lo in want_lo]
    assert totals.tolist() == [int(values[start:].sum()), n]


@pytest.mark.parametrize("threads", [1, 5, 16])
def test_one_row_scan_drops_the_second_value(threads: int) -> None:
    values = np.arange(3, 3 + threads, dtype=np.int64)
    before = np.full((threads, 2), -1, np.int64)
    totals = np.zeros(1, np.int64)
    _one_row[1, threads](values, before, totals)
    assert before[:, 0].tolist() == (np.cumsum(values) - values).tolist()
    assert before[:, 1].tolist() == [0] * threads
    assert totals.tolist() == [int(values.sum())]
