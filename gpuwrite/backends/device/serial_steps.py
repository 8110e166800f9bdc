"""Serial-step formulas of the device kernels (`Kernel.serial`): the longest sequential loop one thread of a
launch runs, from host-side sizes only, for the GPU's block size T (`ops.THREADS`). The vocabulary every
`serial` function of the device steps (steps.py, convert.py) is written in."""

from __future__ import annotations

from .ops import THREADS

T = THREADS


def ceil_div(a: int, b: int) -> int:
    """ceil(a / b) for a positive b."""
    return -(-int(a) // int(b))


def log2_threads(n: int = THREADS) -> int:
    """ceil(log2(n)), 0 for n <= 1: the rounds of a shared-memory scan or tree reduction over n threads (a
    block's by default), or the steps of a binary search over n items."""
    return max(0, int(n) - 1).bit_length()


def block_steps(items: int, walks: int = 1, scans: int = 0, threads: int = THREADS) -> int:
    """A block's threads sharing `items` evenly (striding over them, or each a contiguous run), walked `walks`
    times, with `scans` shared-memory scans or reductions over the threads: walks * ceil(items / T) +
    scans * log2(T)."""
    return walks * ceil_div(max(0, items), threads) + scans * log2_threads(threads)


def block_runs_steps(items: int, scans: int = 1, threads: int = THREADS) -> int:
    """A block whose threads each own a contiguous run of the items (`run_bounds` in kernels/block_cuda.py),
    walked twice (sum, then write) around `scans` scans over the threads (`block_scan`): 2 * ceil(items / T) +
    scans * log2(T)."""
    return block_steps(items, 2, scans, threads)
