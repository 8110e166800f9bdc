"""Min/max kernels with parquet-java's comparators: Java float order, unsigned or signed byte order."""

from __future__ import annotations

import numpy as np

from ._jit import jit, jit_inline
from .byteops import compare_bytes


@jit
def total_order_minmax(bits: np.ndarray, start: int, end: int, magnitude: np.int64) -> tuple:
    """Indices of min and max of canonical IEEE bits under Java's Float/Double.compare.

    -0.0 < 0.0 and NaN is the largest; `magnitude` is 0x7FFFFFFF for floats, 0x7FFF...FF for doubles.
    """
    imin = start
    imax = start
    kmin = np.int64(0)
    kmax = np.int64(0)
    for i in range(start, end):
        b = np.int64(bits[i])
        k = b if b >= 0 else b ^ magnitude
        if i == start or k < kmin:
            kmin = k
            imin = i
        if i == start or k > kmax:
            kmax = k
            imax = i
    return imin, imax


@jit
def total_order_minmax32(bits: np.ndarray, start: int, end: int) -> tuple:
    """total_order_minmax for float bits (int32)."""
    return total_order_minmax(bits, start, end, np.int64(0x7FFFFFFF))


@jit
def total_order_minmax64(bits: np.ndarray, start: int, end: int) -> tuple:
    """total_order_minmax for double bits (int64)."""
    return total_order_minmax(bits, start, end, np.int64(0x7FFFFFFFFFFFFFFF))


@jit
def _compare(data: np.ndarray, a0: int, a1: int, b0: int, b1: int, signed_first: bool) -> int:
    """Lexicographic compare of two byte ranges; the first byte is signed when signed_first (decimals)."""
    return compare_bytes(data, a0, a1, b0, b1, signed_first)


@jit_inline
def _extremes_with(offsets: np.ndarray, data: np.ndarray, i: int, imin: int, imax: int, signed_first: bool) -> tuple:
    """(imin, imax) once value i is compared with the current min and max (ties keep the earlier index)."""
    s = offsets[i]
    t = offsets[i + 1]
    if _compare(data, s, t, offsets[imin], offsets[imin + 1], signed_first) < 0:
        imin = i
    if _compare(data, s, t, offsets[imax], offsets[imax + 1], signed_first) > 0:
        imax = i
    return imin, imax


@jit
def bytes_minmax(offsets: np.ndarray, data: np.ndarray, start: int, end: int, signed_first: bool) -> tuple:
    """Indices of min and max values among start..end, and whether all values are identical."""
    imin = start
    imax = start
    same = True
    for i in range(start + 1, end):
        imin, imax = _extremes_with(offsets, data, i, imin, imax, signed_first)
        if same and _compare(data, offsets[i], offsets[i + 1], offsets[start], offsets[start + 1], False) != 0:
            same = False
    return imin, imax, same


@jit
def bytes_minmax_ids(offsets: np.ndarray, data: np.ndarray, start: int, ids: np.ndarray, seen: np.ndarray,
                     signed_first: bool) -> tuple:
    """bytes_minmax of the values start..start+len(ids) of a dictionary-encoded page, given their dictionary
    ids (equal bytes, equal id): only the first value of each id is compared, so a page of a few distinct
    values costs a few comparisons. Same result as bytes_minmax (the first index of the min and of the max,
    and whether every value is the same). `seen`: zeros, one per dictionary entry (left set for the ids met).
    """
    n = ids.shape[0]
    imin = start
    imax = start
    if n == 0:
        return imin, imax, True
    seen[ids[0]] = 1
    distinct = 1
    for k in range(1, n):
        e = ids[k]
        if seen[e] != 0:
            continue
        seen[e] = 1
        distinct += 1
        imin, imax = _extremes_with(offsets, data, start + k, imin, imax, signed_first)
    return imin, imax, distinct == 1


@jit
def float_nans(bits: np.ndarray, start: int, end: int, is32: bool) -> tuple:
    """NaN count of IEEE bits start..end (int32 floats / int64 doubles, any NaN payload), and the index of
    the largest non-NaN value under Java's Float/Double.compare (-1 when every value is NaN or none)."""
    nans = 0
    imax = -1
    kmax = np.int64(0)
    for i in range(start, end):
        b = np.int64(bits[i])
        if is32:
            nan = (b & 0x7F800000) == 0x7F800000 and (b & 0x007FFFFF) != 0
            k = b if b >= 0 else b ^ np.int64(0x7FFFFFFF)
        else:
            nan = (b & 0x7FF0000000000000) == 0x7FF0000000000000 and (b & 0x000FFFFFFFFFFFFF) != 0
            k = b if b >= 0 else b ^ np.int64(0x7FFFFFFFFFFFFFFF)
        if nan:
            nans += 1
        elif imax < 0 or k > kmax:
            imax = i
            kmax = k
    return nans, imax
