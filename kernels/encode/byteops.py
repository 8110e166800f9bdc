"""Byte-range helpers for the byte-array kernels: copy, equality, common prefix and order of two ranges.

Indices are unsigned here on purpose: numba wraps a negative signed index around (`a[i]` with `i < 0` reads
`a[len + i]`), and that select in every access keeps LLVM from vectorising a byte loop (a copy ran at about
1 byte/ns with signed indices, several times faster unsigned). Comparisons skip equal 8-byte words first
(`load_u64`: eight byte loads that LLVM merges into one unaligned load on the CPU), then find the byte.
Short copies go a word at a time (`store_u64`, merged the same way), and `load_tail` reads a value's last
bytes as one masked word (bytes_insert's branch-free two-word match).
Sequential helpers (a CUDA thread or a CPU call owns one range); the same source compiles for CUDA through
`_jit.device`.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit_inline


@jit_inline
def copy_bytes(dst: np.ndarray, d: int, src: np.ndarray, s: int, n: int) -> None:
    """dst[d:d+n] = src[s:s+n] (the ranges do not overlap). Short ranges (8..63 bytes) go a word at a time, the
    last word overlapping the one before it (no byte tail, nothing written past d+n); others a byte loop,
    which LLVM vectorises for long ranges."""
    ud = np.uint64(d)
    us = np.uint64(s)
    un = np.uint64(n)
    if un >= np.uint64(8) and un < np.uint64(64):
        j = np.uint64(0)
        while j + np.uint64(8) < un:
            store_u64(dst, ud + j, load_u64(src, us + j))
            j += np.uint64(8)
        last = un - np.uint64(8)
        store_u64(dst, ud + last, load_u64(src, us + last))
        return
    for j in range(un):
        dst[ud + j] = src[us + j]


@jit_inline
def load_u64(a: np.ndarray, i: np.uint64) -> np.uint64:
    """The 8 bytes a[i:i+8] as a little-endian word (the caller keeps i + 8 within the array)."""
    return (np.uint64(a[i]) | (np.uint64(a[i + np.uint64(1)]) << np.uint64(8))
            | (np.uint64(a[i + np.uint64(2)]) << np.uint64(16)) | (np.uint64(a[i + np.uint64(3)]) << np.uint64(24))
            | (np.uint64(a[i + np.uint64(4)]) << np.uint64(32)) | (np.uint64(a[i + np.uint64(5)]) << np.uint64(40))
            | (np.uint64(a[i + np.uint64(6)]) << np.uint64(48)) | (np.uint64(a[i + np.uint64(7)]) << np.uint64(56)))


@jit_inline
def store_u64(a: np.ndarray, i: np.uint64, w: np.uint64) -> None:
    """a[i:i+8] = the 8 bytes of `w`, little-endian (eight byte stores that LLVM merges into one)."""
    for k in range(8):
        a[i + np.uint64(k)] = np.uint8((w >> np.uint64(8 * k)) & np.uint64(0xFF))


@jit_inline
def low_bytes_mask(k: np.uint64) -> np.uint64:
    """A word whose low k bytes (0 <= k <= 8) are 0xFF and the rest 0, without a branch (two shifts, each
    below 64 bits: a shift by 64 is undefined)."""
    r = np.uint64(64) - np.uint64(8) * k
    half = r >> np.uint64(1)
    return (np.uint64(0xFFFFFFFFFFFFFFFF) >> half) >> (r - half)


@jit_inline
def load_tail(a: np.ndarray, i: np.uint64, k: np.uint64) -> np.uint64:
    """The k bytes a[i:i+k] (0 <= k <= 8) as a little-endian word, zero above them: one word load, masked,
    where 8 bytes from i lie within the array, else byte by byte (only near the array's end)."""
    if i + np.uint64(8) <= np.uint64(a.shape[0]):
        return load_u64(a, i) & low_bytes_mask(k)
    w = np.uint64(0)
    for j in range(k):
        w |= np.uint64(a[i + np.uint64(j)]) << np.uint64(8 * j)
    return w


@jit_inline
def bswap64(x: np.uint64) -> np.uint64:
    """`x` with its bytes reversed: a little-endian word of bytes as a number that orders as the bytes do
    (unsigned, first byte most significant). LLVM turns the shifts into one bswap."""
    x = ((x & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8)) | ((x >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF))
    x = ((x & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16)) | ((x >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF))
    return (x << np.uint64(32)) | (x >> np.uint64(32))


@jit_inline
def _equal_words(a: np.ndarray, ua: np.uint64, b: np.ndarray, ub: np.uint64, un: np.uint64) -> np.uint64:
    """How many leading bytes of a[ua:ua+un] and b[ub:ub+un] lie in 8-byte words that are equal (a multiple
    of 8; the first unequal or partial word starts there)."""
    j = np.uint64(0)
    while j + np.uint64(8) <= un and load_u64(a, ua + j) == load_u64(b, ub + j):
        j += np.uint64(8)
    return j


@jit_inline
def same_bytes(a: np.ndarray, a0: int, b: np.ndarray, b0: int, n: int) -> bool:
    """Whether a[a0:a0+n] and b[b0:b0+n] hold the same bytes."""
    ua = np.uint64(a0)
    ub = np.uint64(b0)
    un = np.uint64(n)
    j = _equal_words(a, ua, b, ub, un)
    while j < un:
        if a[ua + j] != b[ub + j]:
            return False
        j += np.uint64(1)
    return True


@jit_inline
def common_prefix(data: np.ndarray, a0: int, b0: int, n: int) -> int:
    """Length of the common prefix of data[a0:a0+n] and data[b0:b0+n]."""
    ua = np.uint64(a0)
    ub = np.uint64(b0)
    un = np.uint64(n)
    j = _equal_words(data, ua, data, ub, un)
    while j < un and data[ua + j] == data[ub + j]:
        j += np.uint64(1)
    return np.int64(j)


@jit_inline
def first_set_byte(x: np.uint64) -> np.uint64:
    """Index (0..7) of the lowest non-zero byte of x != 0: of two little-endian words XOR-ed, the first byte
    where they differ (three branch-free halvings instead of a byte loop)."""
    k = np.uint64(0)
    low = np.uint64((x & np.uint64(0xFFFFFFFF)) == np.uint64(0))
    k += low * np.uint64(4)
    x >>= low * np.uint64(32)
    low = np.uint64((x & np.uint64(0xFFFF)) == np.uint64(0))
    k += low * np.uint64(2)
    x >>= low * np.uint64(16)
    return k + np.uint64((x & np.uint64(0xFF)) == np.uint64(0))


@jit_inline
def common_prefix_inside(data: np.ndarray, a0: int, b0: int, n: int) -> int:
    """common_prefix where 8 bytes past a0 + n and b0 + n still lie within `data`: whole words read (past n
    too, masked off by the min), the first differing byte read off their XOR, no byte loop."""
    ua = np.uint64(a0)
    ub = np.uint64(b0)
    un = np.uint64(n)
    j = np.uint64(0)
    while True:
        x = load_u64(data, ua + j) ^ load_u64(data, ub + j)
        if x != np.uint64(0) or j + np.uint64(8) >= un:
            break
        j += np.uint64(8)
    if x == np.uint64(0):
        return np.int64(un)
    return np.int64(min(j + first_set_byte(x), un))


@jit_inline
def compare_bytes(data: np.ndarray, a0: int, a1: int, b0: int, b1: int, signed_first: bool) -> int:
    """Lexicographic order (-1, 0, 1) of data[a0:a1] and data[b0:b1], bytes unsigned; the first byte is
    signed when `signed_first` (two's-complement decimals)."""
    la = a1 - a0
    lb = b1 - b0
    n = np.uint64(min(la, lb))
    ua = np.uint64(a0)
    ub = np.uint64(b0)
    j = np.uint64(0)
    if signed_first and n > np.uint64(0):
        x = np.int32(data[ua]) ^ 0x80
        y = np.int32(data[ub]) ^ 0x80
        if x != y:
            return -1 if x < y else 1
        j = np.uint64(1)
    j += _equal_words(data, ua + j, data, ub + j, n - j)
    while j < n:
        u = data[ua + j]
        v = data[ub + j]
        if u != v:
            return -1 if u < v else 1
        j += np.uint64(1)
    if la == lb:
        return 0
    return -1 if la < lb else 1
