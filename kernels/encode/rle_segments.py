"""What one thread of the block-per-page RLE encoder (`rle_cuda`) computes for its segment of a page.

The sequential `rle.rle_encode` (parquet-java's RunLengthBitPackingHybridEncoder) cuts a page into items at
"group boundaries": at a boundary g, if the 8 values from g are equal, a repeat run covers g up to the end
of that run of equal values, whose end is the next boundary; otherwise the 8 values from g are a bit-packed
group and g + 8 is the next boundary. Consecutive groups form bit-packed runs of at most 63 groups. So
boundaries step by 8 from an "anchor" (the page start, or the end of the last repeat run), and a repeat run
can only start inside a "long run" (8+ equal values in a row). The only state carried from one long run to
the next is the anchor's phase (anchor mod 8): a segment's effect on it is a table of 8 phases, and tables
compose, so a block scan gives every thread its incoming phase. Positions here are relative to the page
start; thread t owns the positions [lo, hi) of its segment and the items (runs, groups) starting there,
except that a repeat run belongs to the thread owning the start of its long run.
Each function is plain numba Python: `jit` for CPU tests, `_jit.device` for the CUDA kernel.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .bits import pack_padded
from .rle_state import MAX_GROUPS, bitpacked_header, repeat_bytes, write_repeat

IDENTITY = 0o76543210  # the phase table mapping every phase to itself (3 bits per phase, phase 0 lowest)


@jit
def segment_bounds(n: int, t: int, threads: int) -> tuple:
    """(lo, hi) of thread t's segment when `threads` threads split n values into equal contiguous parts."""
    per = (n + threads - 1) // threads
    lo = min(t * per, n)
    return lo, min(lo + per, n)


@jit
def next_run_start(values: np.ndarray, start: int, i: int, hi: int, after: int) -> int:
    """The first position > i (below hi) where the value changes, else `after` (the next change past hi)."""
    j = i + 1
    while j < hi:
        if values[start + j] != values[start + j - 1]:
            return j
        j += 1
    return after


@jit
def first_run_start(values: np.ndarray, start: int, lo: int, hi: int, n: int) -> int:
    """The first position in [lo, hi) where a run of equal values starts, or n when there is none."""
    if lo >= hi:
        return n
    if lo == 0 or values[start + lo] != values[start + lo - 1]:
        return lo
    return next_run_start(values, start, lo, hi, n)


@jit
def repeat_start(a: int, b: int, phase: int) -> int:
    """Where the long run [a, b) starts a repeat run when boundaries have `phase`, or -1 when it does not.

    SPEC: RunLengthBitPackingHybridEncoder.writeInt: a repeat run needs 8 equal values from a group boundary.
    """
    g = a + ((phase - a) & 7)  # the first boundary at or after a
    if g + 8 <= b:
        return g
    return -1


@jit
def compose(first: int, then: int) -> int:
    """The phase table of applying `first`, then `then`."""
    out = 0
    for p in range(8):
        x = (first >> (3 * p)) & 7
        out |= ((then >> (3 * x)) & 7) << (3 * p)
    return out


@jit
def segment_table(values: np.ndarray, start: int, hi: int, first: int, after: int) -> int:
    """Phase table of the long runs starting in [first, hi): incoming anchor phase -> outgoing anchor phase.

    `first` is the segment's first run start (from `first_run_start`), `after` the first run start past hi.
    """
    table = IDENTITY
    a = first
    while a < hi:
        b = next_run_start(values, start, a, hi, after)
        if b - a >= 8:
            out = 0
            for p in range(8):
                x = (table >> (3 * p)) & 7
                if repeat_start(a, b, x) >= 0:
                    x = b & 7
                out |= x << (3 * p)
            table = out
        a = b
    return table


@jit
def segment_repeats(values: np.ndarray, start: int, n: int, hi: int, first: int, after: int,
                    phase: int) -> tuple:
    """With boundaries entering at `phase`: (end of the segment's last repeat run or -1, start of its first or n)."""
    last = -1
    first_repeat = n
    a = first
    while a < hi:
        b = next_run_start(values, start, a, hi, after)
        if b - a >= 8:
            g = repeat_start(a, b, phase)
            if g >= 0:
                if first_repeat == n:
                    first_repeat = g
                last = b
                phase = b & 7
        a = b
    return last, first_repeat


@jit
def _groups(values: np.ndarray, start: int, n: int, anchor: int, q: int, limit: int, region_end: int,
            width: int, out: np.ndarray, pos: int, write: bool) -> int:
    """Bit-packed groups at q, q+8, .. below `limit` of the run region [anchor, region_end); return the end.

    A group whose index in the region is a multiple of MAX_GROUPS opens a run and writes its header byte.
    SPEC: RunLengthBitPackingHybridEncoder: at most 63 groups per bit-packed run, the last group zero-padded.
    """
    while q < limit:
        if ((q - anchor) >> 3) % MAX_GROUPS == 0:
            if write:
                out[pos] = bitpacked_header(min(MAX_GROUPS, (region_end - q + 7) >> 3))
            pos += 1
        if write:
            pos = pack_padded(values, start + q, min(8, n - q), 8, width, out, pos)
        else:
            pos += width
        q += 8
    return pos


@jit
def _repeat(values: np.ndarray, i: int, count: int, width: int, out: np.ndarray, pos: int, write: bool) -> int:
    """A repeat run of `count` copies of values[i] (`rle_state.write_repeat`), or only its bytes counted."""
    value_bytes = (width + 7) // 8
    if write:
        return write_repeat(out, pos, count, np.uint64(values[i]), value_bytes)
    return pos + repeat_bytes(count, value_bytes)


@jit
def segment_emit(values: np.ndarray, start: int, n: int, lo: int, hi: int, first: int, after: int,
                 anchor: int, region_end: int, width: int, out: np.ndarray, pos: int, write: bool) -> int:
    """Write (or, when not `write`, only count) the items this segment owns at out[pos:]; return the end.

    `anchor` is the end of the last repeat run before the segment (0 if none), `region_end` the start of
    the first repeat run owned by a later segment (n if none), `first`/`after` as in `segment_table`.
    """
    q = anchor
    if q < lo:
        q += (lo - anchor + 7) // 8 * 8  # the first group boundary of the segment
    a = first
    while a < hi:
        b = next_run_start(values, start, a, hi, after)
        if b - a >= 8:
            g = repeat_start(a, b, anchor & 7)
            if g >= 0:
                pos = _groups(values, start, n, anchor, q, g, g, width, out, pos, write)
                pos = _repeat(values, start + g, b - g, width, out, pos, write)
                anchor = b
                q = b
        a = b
    return _groups(values, start, n, anchor, q, hi, region_end, width, out, pos, write)
