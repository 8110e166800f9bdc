"""DELTA_BINARY_PACKED and DELTA_BYTE_ARRAY encoders with parquet-java's block layout (128 values, 4 miniblocks).

Unused miniblock widths and miniblock padding are written as zeros; parquet-java leaves stale bytes from the
previous block there. Readers ignore both (docs/compatibility.md).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from .bits import bit_width_u64, flush_bits, put_bits, put_bits32, write_uleb, zigzag64
from .byteops import common_prefix, common_prefix_inside, copy_bytes

BLOCK = 128
MINIBLOCKS = 4
MINI = 32


def delta_max_size(n: int) -> int:
    """Upper bound on DELTA_BINARY_PACKED output for n values."""
    return 40 + ((n + BLOCK - 1) // BLOCK) * (16 + BLOCK * 8)


@jit_inline
def _delta_at(values: np.ndarray, k: int, is32: bool) -> np.int64:
    """values[k] - values[k-1] with 64-bit wrap-around (32-bit when is32)."""
    u = np.uint64(k)  # unsigned: no negative-index wrap-around test per load, so the loops vectorize
    d = np.int64(np.uint64(np.int64(values[u])) - np.uint64(np.int64(values[u - np.uint64(1)])))
    if is32:
        d = np.int64(np.int32(np.uint32(np.uint64(d) & np.uint64(0xFFFFFFFF))))
    return d


@jit
def _pack_miniblock(values: np.ndarray, first: int, valid: int, mn: np.int64, is32: bool, width: int,
                    out: np.ndarray, pos: int) -> int:
    """Pack 32 adjusted deltas (those ending at values[first:first+valid] minus the block minimum, then
    zeros) LSB first at `width` bits: 4 * width bytes."""
    if width == 0:
        return pos
    end = pos + 4 * width
    umn = np.uint64(mn)
    acc = np.uint64(0)
    nbits = 0
    if width > 32:
        mask = np.uint64(0xFFFFFFFFFFFFFFFF) if width == 64 else (np.uint64(1) << np.uint64(width)) - np.uint64(1)
        for j in range(valid):
            v = (np.uint64(_delta_at(values, first + j, is32)) - umn) & mask
            pos, acc, nbits = put_bits(out, pos, acc, nbits, v, width)
    else:
        mask = (np.uint64(1) << np.uint64(width)) - np.uint64(1)
        for j in range(valid):
            v = (np.uint64(_delta_at(values, first + j, is32)) - umn) & mask
            pos, acc, nbits = put_bits32(out, pos, acc, nbits, v, width)
    pos = flush_bits(out, pos, acc, nbits)
    while pos < end:
        out[pos] = 0
        pos += 1
    return end


@jit
def delta_encode(values: np.ndarray, start: int, end: int, is32: bool, out: np.ndarray, pos: int) -> int:
    """Encode values[start:end] (integers; INT32 data when is32, with 32-bit wrapping deltas) at out[pos:].

    Deltas are recomputed from the input in each pass over a block instead of staged, so the encoder
    allocates nothing and the same source is a CUDA device function. A miniblock's width is that of its
    largest delta minus the block minimum (the same as the width of all of them OR-ed, as none is negative),
    so one pass finds the minimum and the widths, and a second packs.
    """
    n = end - start
    pos = write_uleb(out, pos, np.uint64(BLOCK))
    pos = write_uleb(out, pos, np.uint64(MINIBLOCKS))
    pos = write_uleb(out, pos, np.uint64(n))
    first = np.int64(0)
    if n > 0:
        first = np.int64(values[start])
    pos = write_uleb(out, pos, zigzag64(first))
    if n <= 1:
        return pos
    lim = np.uint64(0xFFFFFFFF) if is32 else np.uint64(0xFFFFFFFFFFFFFFFF)
    i = start + 1
    while i < end:
        count = min(BLOCK, end - i)
        used = (count + MINI - 1) // MINI
        mn = _delta_at(values, i, is32)
        mx0 = mn
        mx1 = mn
        mx2 = mn
        mx3 = mn
        for m in range(used):
            a = i + m * MINI
            b = i + min(count, (m + 1) * MINI)
            lo = _delta_at(values, a, is32)
            hi = lo
            for k in range(a + 1, b):
                d = _delta_at(values, k, is32)
                lo = min(lo, d)
                hi = max(hi, d)
            mn = min(mn, lo)
            if m == 0:
                mx0 = hi
            elif m == 1:
                mx1 = hi
            elif m == 2:
                mx2 = hi
            else:
                mx3 = hi
        pos = write_uleb(out, pos, zigzag64(mn))
        width_pos = pos
        umn = np.uint64(mn)
        out[width_pos] = bit_width_u64((np.uint64(mx0) - umn) & lim)
        out[width_pos + 1] = bit_width_u64((np.uint64(mx1) - umn) & lim) if used > 1 else 0
        out[width_pos + 2] = bit_width_u64((np.uint64(mx2) - umn) & lim) if used > 2 else 0
        out[width_pos + 3] = bit_width_u64((np.uint64(mx3) - umn) & lim) if used > 3 else 0
        pos = width_pos + MINIBLOCKS
        for m in range(used):
            valid = min(MINI, count - m * MINI)
            pos = _pack_miniblock(values, i + m * MINI, valid, mn, is32, int(out[width_pos + m]), out, pos)
        i += count
    return pos


@jit
def byte_array_prefixes(offsets: np.ndarray, data: np.ndarray, start: int, end: int,
                        prefix: np.ndarray, suffix: np.ndarray) -> int:
    """Prefix length (shared with the previous value; 0 for the first) and suffix length of each value.

    Returns the total number of suffix bytes. A value that ends 8 bytes before the end of `data` (all but the
    last few) finds its prefix by whole words (common_prefix_inside).
    """
    total = 0
    last = np.int64(data.shape[0]) - 8
    for i in range(start, end):
        s = offsets[i]
        t = offsets[i + 1]
        p = 0
        if i > start:
            ps = offsets[i - 1]
            n = min(t - s, s - ps)
            if t <= last:
                p = common_prefix_inside(data, s, ps, n)
            else:
                p = common_prefix(data, s, ps, n)
        prefix[i - start] = p
        suffix[i - start] = (t - s) - p
        total += (t - s) - p
    return total


@jit
def gather_suffixes(offsets: np.ndarray, data: np.ndarray, start: int, end: int, prefix: np.ndarray,
                    out: np.ndarray, pos: int) -> int:
    """Append each value's suffix bytes (after its shared prefix) to out[pos:].

    Suffixes lie back to back in `data` wherever the next value shares no prefix, so each run of such values
    is one copy (free text, where few values share a prefix, is nearly one copy per page).
    """
    i = start
    while i < end:
        s = offsets[i] + prefix[i - start]
        i += 1
        while i < end and prefix[i - start] == 0:
            i += 1
        n = offsets[i] - s
        copy_bytes(out, pos, data, s, n)
        pos += n
    return pos


# CPU twins of the block-per-page CUDA encoders (delta_cuda.py): what the GPU backend's stand-in runs.
@jit
def delta_pages(n: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, is32: bool, out: np.ndarray,
                out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Twin of `delta_cuda.delta_pages`: DELTA_BINARY_PACKED of values va[p]..vb[p] of each page."""
    for p in range(n):
        sizes[p] = delta_encode(values, va[p], vb[p], is32, out, out_off[p]) - out_off[p]


@jit
def delta_bytes_pages(n: int, offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                      prefix: np.ndarray, suffix: np.ndarray, out: np.ndarray, out_off: np.ndarray,
                      sizes: np.ndarray) -> None:
    """Twin of `delta_cuda.delta_bytes_pages`: DELTA_BYTE_ARRAY of values va[p]..vb[p] (prefix / suffix
    lengths as scratch at the values' own positions)."""
    for p in range(n):
        a = va[p]
        b = vb[p]
        pre = prefix[a:b]
        suf = suffix[a:b]
        byte_array_prefixes(offsets, data, a, b, pre, suf)
        pos = out_off[p]
        end = delta_encode(pre, 0, b - a, True, out, pos)
        end = delta_encode(suf, 0, b - a, True, out, end)
        sizes[p] = gather_suffixes(offsets, data, a, b, pre, out, end) - pos
