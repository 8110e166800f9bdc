"""Host conversion of Arrow values the CPU path keeps (nulls dropped): one pass where NumPy needs a strided
gather, a boolean index and a cast, each a full copy.

Geometry: sequential, CPU only (the device path converts in kernels/convert/arenas.py); each function walks the rows
of one Arrow array once. Inputs: the array's value words as flat int64 (`stride` words per value, the array's
offset already applied) and its validity (bool per row, or empty when no row is null); output: one value per
present row, in row order.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline


@jit
def compact_words(words: np.ndarray, stride: int, valid: np.ndarray, out: np.ndarray) -> int:
    """out[j] = words[i * stride] for the j-th present row i (all rows when `valid` is empty), cast to out's
    type (decimals of precision <= 9 or <= 18 as INT32 / INT64: their low word holds the value). With a
    validity, out needs one slot more than the present rows. Returns the number of values stored."""
    rows = words.shape[0] // stride
    j = 0
    if valid.shape[0] == 0:
        for i in range(rows):
            out[i] = words[i * stride]
        return rows
    for i in range(rows):  # branch-free: every row is stored, only present rows advance (out has a spare slot)
        out[j] = words[i * stride]
        j += valid[i]
    return j


@jit_inline
def _decimal_bad(words: np.ndarray, stride: int, i: int, bound: np.int64, span: np.uint64) -> np.int64:
    """1 when value i lies outside [-bound, bound] or its higher words do not extend its low word's sign."""
    lo = words[i * stride]
    sign = lo >> np.int64(63)
    bad = np.int64(np.uint64(lo + bound) > span) | np.int64(words[i * stride + 1] != sign)
    if stride == 4:
        bad |= np.int64(words[i * stride + 2] != sign) | np.int64(words[i * stride + 3] != sign)
    return bad


_CHECK_BLOCK = 2048  # rows checked, then compacted, while their words are in cache


@jit
def _compact_decimal128(words: np.ndarray, valid: np.ndarray, out: np.ndarray, bound: np.int64) -> int:
    """compact_decimal_words of decimal128 values (two words each) in one pass: the constant stride lets the
    check ride along the compaction's loads (a block checked then compacted reads each block twice). The test
    is `_decimal_bad`'s written out: through the helper, with the stride a constant, the loop runs ~1.5x
    slower."""
    rows = words.shape[0] // 2
    span = np.uint64(2 * bound)
    hit = np.int64(0)
    if valid.shape[0] == 0:
        for i in range(rows):
            lo = words[2 * i]
            out[i] = lo
            hit |= np.int64(np.uint64(lo + bound) > span) | np.int64(words[2 * i + 1] != (lo >> np.int64(63)))
        return -1 if hit != 0 else rows
    j = 0
    for i in range(rows):  # branch-free, as compact_words: every row stored, only present rows advance and count
        lo = words[2 * i]
        out[j] = lo
        present = np.int64(valid[i])
        hit |= (np.int64(np.uint64(lo + bound) > span)
                | np.int64(words[2 * i + 1] != (lo >> np.int64(63)))) & present
        j += present
    return -1 if hit != 0 else j


@jit
def _compact_decimal64(words: np.ndarray, valid: np.ndarray, out: np.ndarray, bound: np.int64) -> int:
    """compact_decimal_words of decimal64 values (one word each, the value itself: Spark's unscaled longs,
    cudf's DECIMAL64) in one pass, each present value checked against the bound as it is stored."""
    rows = words.shape[0]
    span = np.uint64(2 * bound)
    hit = np.int64(0)
    if valid.shape[0] == 0:
        for i in range(rows):
            lo = words[i]
            out[i] = lo
            hit |= np.int64(np.uint64(lo + bound) > span)
        return -1 if hit != 0 else rows
    j = 0
    for i in range(rows):  # branch-free, as compact_words
        lo = words[i]
        out[j] = lo
        present = np.int64(valid[i])
        hit |= np.int64(np.uint64(lo + bound) > span) & present
        j += present
    return -1 if hit != 0 else j


@jit
def compact_decimal_words(words: np.ndarray, stride: int, valid: np.ndarray, out: np.ndarray, bound: np.int64) -> int:
    """`compact_words` of decimal64 / 128 / 256 values stored as INT32 / INT64 (precision <= 18), checking
    that every present value lies within [-bound, bound] (bound = 10**precision - 1) and fits its low word:
    decimal128 in the compaction's own pass, decimal256 a block of rows at a time while their words are in
    cache. Returns the number of values stored, or -1 when a present value fails (the caller then reports
    it: validate.py)."""
    if stride == 1:
        return _compact_decimal64(words, valid, out, bound)
    if stride == 2:
        return _compact_decimal128(words, valid, out, bound)
    rows = words.shape[0] // stride
    span = np.uint64(2 * bound)
    j = 0
    for b in range(0, rows, _CHECK_BLOCK):
        e = min(b + _CHECK_BLOCK, rows)
        hit = np.int64(0)
        for i in range(b, e):
            hit |= _decimal_bad(words, stride, i, bound, span)
        if hit != 0:  # some row is out of range: fails only if that row holds a value
            for i in range(b, e):
                if _decimal_bad(words, stride, i, bound, span) != 0 and (valid.shape[0] == 0 or valid[i] != 0):
                    return -1
        if valid.shape[0] == 0:
            for i in range(b, e):
                out[i] = words[i * stride]
            j = e
        else:
            for i in range(b, e):
                out[j] = words[i * stride]
                j += valid[i]
    return j
