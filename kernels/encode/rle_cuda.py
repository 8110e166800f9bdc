"""Block-per-page RLE / bit-packed hybrid encoder for the GPU: one launch encodes every page of a row group.

Geometry: block p encodes page p, values[page_start[p]:page_end[p]]; its threads (at most MAX_THREADS, any
count, 128 in production) split the page into equal contiguous segments (`rle_segments.segment_bounds`).
Each thread finds the runs of equal values and the phase table of its segment; block scans in shared memory
(Hillis-Steele, syncthreads only) give each thread the anchor of the bit-packed groups entering its segment,
the start of the next repeat run after it, and the output offset of the items it owns; then every thread
writes its own items. The bytes equal the sequential CPU twin `kernels.rle.rle_encode` (with the width byte
first when `width_byte` is set, as `pages.page_dict_ids`). Importing this module imports numba.cuda.

Launch: `rle_sizes_block[n_pages, 128](values, page_start, page_end, width, width_byte, out_size)` for exact
sizes, then `rle_encode_block[n_pages, 128](values, page_start, page_end, width, width_byte, out, out_off,
out_size)` with out_off from their running sum (or any non-overlapping upper bounds: `rle.rle_max_size` + 1
per page); the encoder also writes out_size, so one launch with upper-bound offsets works too.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from .rle_segments import (
    IDENTITY,
    compose,
    first_run_start,
    segment_bounds,
    segment_emit,
    segment_repeats,
    segment_table,
)

MAX_THREADS = 128  # the size of the shared scan arrays: the most threads a block may have

_bounds = device(segment_bounds)
_first = device(first_run_start)
_compose = device(compose)
_table = device(segment_table)
_repeats = device(segment_repeats)
_emit = device(segment_emit)

_SUM, _MAX, _MIN, _COMPOSE = 0, 1, 2, 3


@cuda.jit(device=True)
def _combine(earlier: int, later: int, op: int) -> int:
    """The scan operator: sum, max, min, or the phase table of `earlier` then `later`."""
    if op == _SUM:
        return earlier + later
    if op == _MAX:
        return max(earlier, later)
    if op == _MIN:
        return min(earlier, later)
    return _compose(earlier, later)  # type: ignore[no-any-return]


@cuda.jit(device=True)
def _scan(sh: np.ndarray, t: int, threads: int, value: int, op: int, reverse: bool) -> int:
    """Inclusive scan of every thread's `value` in the block; thread t gets the result over threads <= t
    (over threads >= t when `reverse`). Every thread of the block must call it; sh holds MAX_THREADS int64."""
    i = threads - 1 - t if reverse else t
    sh[i] = value
    cuda.syncthreads()  # type: ignore[call-arg]
    d = 1
    while d < threads:
        x = sh[i]
        if i >= d:  # sh[i - d] holds an earlier thread's partial (a later one's when reverse)
            x = _combine(x, sh[i - d], op) if reverse else _combine(sh[i - d], x, op)
        cuda.syncthreads()  # type: ignore[call-arg]
        sh[i] = x
        cuda.syncthreads()  # type: ignore[call-arg]
        d *= 2
    return sh[i]  # type: ignore[no-any-return]


@cuda.jit(device=True)
def _exclusive(sh: np.ndarray, t: int, threads: int, empty: int, reverse: bool) -> int:
    """After `_scan`: the result over threads < t (> t when `reverse`), or `empty` when there are none."""
    i = threads - 1 - t if reverse else t
    return sh[i - 1] if i > 0 else empty  # type: ignore[no-any-return]


@cuda.jit(device=True)
def _geometry() -> tuple:
    """(page = block index, thread index, threads in the block)."""
    return cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x


@cuda.jit(device=True)
def _page(values: np.ndarray, start: int, n: int, width: int, out: np.ndarray, pos: int, write: bool,
          sh: np.ndarray) -> int:
    """Encode (or size, when not `write`) the page values[start:start+n] at out[pos:] with the whole block;
    every thread returns the page's size. sh: int64[5, MAX_THREADS] shared scan space."""
    _, t, threads = _geometry()
    lo, hi = _bounds(n, t, threads)
    first = _first(values, start, lo, hi, n)
    _scan(sh[0], t, threads, first, _MIN, True)
    after = _exclusive(sh[0], t, threads, n, True)  # the first run start past the segment
    _scan(sh[1], t, threads, _table(values, start, hi, first, after), _COMPOSE, False)
    phase = _exclusive(sh[1], t, threads, IDENTITY, False) & 7  # boundaries start at 0: phase 0 in
    last, first_repeat = _repeats(values, start, n, hi, first, after, phase)
    _scan(sh[2], t, threads, max(last, 0), _MAX, False)
    anchor = _exclusive(sh[2], t, threads, 0, False)
    region_end = n
    if write:
        _scan(sh[3], t, threads, first_repeat, _MIN, True)
        region_end = _exclusive(sh[3], t, threads, n, True)
    size = _emit(values, start, n, lo, hi, first, after, anchor, region_end, width, out, 0, False)
    offset = _scan(sh[4], t, threads, size, _SUM, False) - size
    if write:
        _emit(values, start, n, lo, hi, first, after, anchor, region_end, width, out, pos + offset, True)
    return sh[4][threads - 1]  # type: ignore[no-any-return]


@cuda_kernel
def rle_sizes_block(values: np.ndarray, page_start: np.ndarray, page_end: np.ndarray, width: np.ndarray,
                    width_byte: bool, out_size: np.ndarray) -> None:
    """out_size[p] = bytes of page p as `rle_encode` writes them (CPU twin), plus 1 for the width byte if set.

    Block p (grid >= n pages; spare blocks return) owns page p; with at most MAX_THREADS threads, thread t
    owns the t-th equal contiguous segment of the page and the runs and groups starting in it.
    values: any integer array; page_start, page_end, width (bits per value, 0-32), out_size: int64[n pages].
    """
    p, t, _ = _geometry()
    if p >= page_start.shape[0]:
        return
    sh = cuda.shared.array((5, MAX_THREADS), np.int64)
    start = page_start[p]
    size = _page(values, start, page_end[p] - start, width[p], values, 0, False, sh)  # out unused: sizes only
    if t == 0:
        out_size[p] = size + (1 if width_byte else 0)


@cuda_kernel
def rle_encode_block(values: np.ndarray, page_start: np.ndarray, page_end: np.ndarray, width: np.ndarray,
                     width_byte: bool, out: np.ndarray, out_off: np.ndarray, out_size: np.ndarray) -> None:
    """Write page p at out[out_off[p]:] (the width byte first if `width_byte`) and its size to out_size[p].

    Geometry and arguments as `rle_sizes_block`; out: uint8, out_off: int64[n pages]. CPU twin: `rle_encode`.
    """
    p, t, _ = _geometry()
    if p >= page_start.shape[0]:
        return
    sh = cuda.shared.array((5, MAX_THREADS), np.int64)
    start = page_start[p]
    pos = out_off[p]
    w = width[p]
    if width_byte:
        if t == 0:
            out[pos] = np.uint8(w)
        pos += 1
    size = _page(values, start, page_end[p] - start, w, out, pos, True, sh)
    if t == 0:
        out_size[p] = pos + size - out_off[p]
