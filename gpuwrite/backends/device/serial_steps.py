"""Serial-step formulas of the device kernels (`Kernel.serial`): the longest sequential loop one thread of a
launch runs, from host-side sizes only, for the GPU's block size (`ops.THREADS`)."""

from __future__ import annotations

from .ops import THREADS


def log2_threads(threads: int = THREADS) -> int:
    """Rounds of a shared-memory scan or tree reduction over a block's threads: ceil(log2(threads))."""
    return max(0, (threads - 1).bit_length())


def block_runs_steps(items: int, scans: int = 1, threads: int = THREADS) -> int:
    """A block whose threads each own a contiguous run of ceil(items / threads) items, walked twice (sum, then
    write), with `scans` shared-memory scans or reductions over the threads between: 2 * ceil(items / T) +
    scans * log2(T)."""
    return 2 * -(-max(0, items) // threads) + scans * log2_threads(threads)
