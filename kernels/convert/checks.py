"""Value checks run before a batch is written: decimals within their precision, byte values within a length.

Each kernel scans from `start` and returns the index of the first valid (non-null) value that fails, or -1.
Validity is Arrow's bitmap as bytes (`valid_bits`, bit `bit_offset + i` for value i; empty when every value is
valid), so nothing is unpacked or copied. Decimals are tested a block at a time without branches (the loops
run over a block's slice from 0 so that LLVM vectorises them); only a block with a hit is scanned value by
value. CPU only: the writer checks host Arrow data before converting it.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

BLOCK = 4096


@jit
def is_valid_at(valid_bits: np.ndarray, bit_offset: int, i: int) -> bool:
    """Whether value i is valid under an Arrow validity bitmap (empty: every value is)."""
    if valid_bits.size == 0:
        return True
    j = bit_offset + i
    return (valid_bits[j >> 3] >> (j & 7)) & 1 == 1


@jit
def decimal_outside(words: np.ndarray, width: int, i: int, bound: np.ndarray) -> bool:
    """Whether value i lies outside [-B, B]: v + B, as an unsigned 128-bit number, exceeds 2B (see
    decimal_first_outside for `bound`); for decimal256 the upper words must also extend the sign."""
    lo = np.uint64(words[i * width])
    hi = np.uint64(words[i * width + 1])
    slo = lo + bound[1]
    shi = hi + bound[0] + np.uint64(slo < lo)
    out = shi > bound[2] or (shi == bound[2] and slo > bound[3])
    sign = np.int64(words[i * width + 1]) >> np.int64(63)
    for k in range(2, width):
        if words[i * width + k] != sign:
            out = True
    return out


@jit
def _block_outside_64(seg: np.ndarray, width: int, small: np.int64) -> np.int64:
    """Non-zero when a value of the block falls outside [-small, small] or does not fit in 64 bits."""
    hit = np.int64(0)
    span = np.uint64(2 * small)
    if width == 2:
        for j in range(seg.shape[0] // 2):
            lo = seg[2 * j]
            hit |= (np.uint64(lo + small) > span) | (seg[2 * j + 1] != (lo >> 63))
    else:
        for j in range(seg.shape[0] // 4):
            lo = seg[4 * j]
            sign = lo >> 63
            hit |= ((np.uint64(lo + small) > span) | (seg[4 * j + 1] != sign) | (seg[4 * j + 2] != sign)
                    | (seg[4 * j + 3] != sign))
    return hit


@jit
def _block_outside_128(seg: np.ndarray, width: int, bound: np.ndarray) -> np.uint64:
    """Non-zero when a value of the block falls outside [-B, B] (128-bit bound; see decimal_outside)."""
    b_hi, b_lo, s_hi, s_lo = bound[0], bound[1], bound[2], bound[3]
    hit = np.uint64(0)
    for j in range(seg.shape[0] // width):
        lo = np.uint64(seg[width * j])
        hi = np.uint64(seg[width * j + 1])
        t_lo = lo + b_lo
        t_hi = hi + b_hi + np.uint64(t_lo < lo)
        hit |= np.uint64(t_hi > s_hi) | (np.uint64(t_hi == s_hi) & np.uint64(t_lo > s_lo))
        if width == 4:
            sign = np.uint64(seg[width * j + 1] >> 63)
            hit |= np.uint64(np.uint64(seg[width * j + 2]) != sign) | np.uint64(np.uint64(seg[width * j + 3]) != sign)
    return hit


@jit
def decimal_first_outside(words: np.ndarray, width: int, valid_bits: np.ndarray, bit_offset: int, start: int,
                          bound: np.ndarray) -> int:
    """First valid value at or after `start` whose decimal lies outside [-B, B], or -1.

    `words`: the values' little-endian 64-bit words, flat (`width` = 2 per decimal128 value, 4 per
    decimal256); `bound`: uint64 [B_hi, B_lo, (2B)_hi, (2B)_lo] with 0 <= B < 2**127 (10**precision - 1).
    """
    n = words.shape[0] // width
    small = bound[0] == 0 and bound[1] < np.uint64(1 << 62)
    for b in range(start, n, BLOCK):
        e = min(b + BLOCK, n)
        seg = words[b * width:e * width]
        if small:
            hit = _block_outside_64(seg, width, np.int64(bound[1])) != 0
        else:
            hit = _block_outside_128(seg, width, bound) != 0
        if hit:
            for i in range(b, e):
                if decimal_outside(words, width, i, bound) and is_valid_at(valid_bits, bit_offset, i):
                    return i
    return -1


@jit
def first_longer(offsets: np.ndarray, valid_bits: np.ndarray, bit_offset: int, start: int, limit: np.int64) -> int:
    """First valid value at or after `start` longer than `limit` bytes (offsets: n + 1 entries), or -1."""
    n = offsets.shape[0] - 1
    for i in range(start, n):
        if np.int64(offsets[i + 1]) - np.int64(offsets[i]) > limit and is_valid_at(valid_bits, bit_offset, i):
            return i
    return -1


ASCII_BLOCK = 1 << 16
_HIGH_BITS = np.uint64(0x8080808080808080)


@jit
def _high_byte_in(data: np.ndarray, a: int, b: int) -> bool:
    """Whether any of data[a:b] is 0x80 or above: the bytes OR-ed eight at a time as words (a byte loop does
    not vectorise: 5 GB/s against about 20), the ends byte by byte."""
    acc = np.uint64(0)
    head = min(b, a + (-a) % 8)
    for j in range(a, head):
        acc |= np.uint64(data[j])
    words = (b - head) // 8
    if words > 0:
        view = data[head:head + 8 * words].view(np.uint64)
        for k in range(words):
            acc |= view[k]
    for j in range(head + 8 * words, b):
        acc |= np.uint64(data[j])
    return (acc & _HIGH_BITS) != 0


@jit
def ascii_strings(offsets: np.ndarray, data: np.ndarray, start: int) -> bool:
    """Whether the byte values start..n (offsets: n + 1 entries into `data`) are all ASCII with offsets in
    order and within `data`: then every value is valid UTF-8 without a per-value decode.

    False says nothing about validity (a non-ASCII byte, or offsets to check otherwise). The offsets are
    compared without an early exit (vectorised), the bytes tested a block at a time (a hit stops the scan).
    """
    n = offsets.shape[0] - 1
    if start >= n:
        return True
    unordered = False
    for i in range(start, n):
        unordered |= offsets[i + 1] < offsets[i]
    if unordered:
        return False
    a = np.int64(offsets[start])
    b = np.int64(offsets[n])
    if a < 0 or b > data.shape[0]:
        return False
    for lo in range(a, b, ASCII_BLOCK):
        if _high_byte_in(data, lo, min(lo + ASCII_BLOCK, b)):
            return False
    return True
