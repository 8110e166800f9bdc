"""Min/max kernels with parquet-java's comparators: Java float order, unsigned or signed byte order."""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from .byteops import compare_bytes


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


_KEY_LOWEST = np.int64(-0x7FFFFFFFFFFFFFFF - 1)  # below every float / double key (stands in for "no value")
_KEY_HIGHEST = np.int64(0x7FFFFFFFFFFFFFFF)


@jit
def float_stats(bits: np.ndarray, start: int, end: int, wide: bool) -> tuple:
    """A float / double page's statistics from its raw IEEE bits start..end (int32 floats, or int64 doubles
    when `wide`; NaNs of any payload): (imin, imax, nans, itop), the first index of the min and of the max
    under Java's Float/Double.compare of the canonical bits (-0.0 < 0.0, every NaN equal and above +Infinity),
    the NaN count, and the first index of the largest non-NaN value (-1 when there is none); (start, start, 0,
    -1) for an empty range. Sequential, CPU: one call per page, two branch-free passes that LLVM vectorises
    (the canonical copy, total-order min / max and float_nans it replaces were three scalar passes)."""
    if wide:
        mag = np.int64(0x7FFFFFFFFFFFFFFF)
        inf = np.int64(0x7FF0000000000000)
        cnan = np.int64(0x7FF8000000000000)
    else:
        mag = np.int64(0x7FFFFFFF)
        inf = np.int64(0x7F800000)
        cnan = np.int64(0x7FC00000)
    vals = bits[start:end]
    n = vals.shape[0]
    if n == 0:
        return start, start, 0, -1
    # Pass 1: the extreme keys and the NaN count, branch-free (selects by masks) so that it vectorises.
    kmin = _KEY_HIGHEST
    kmax = _KEY_LOWEST
    ktop = _KEY_LOWEST
    nans = np.int64(0)
    for i in range(n):
        b = np.int64(vals[i])
        nan = (inf - (b & mag)) >> 63  # -1 for a NaN (magnitude above infinity's), else 0
        nans -= nan
        c = (cnan & nan) | (b & ~nan)  # Java's canonical bits
        k = c ^ ((c >> 63) & mag)  # their order as a signed integer
        kmin = k if k < kmin else kmin
        kmax = k if k > kmax else kmax
        kt = (_KEY_LOWEST & nan) | (k & ~nan)
        ktop = kt if kt > ktop else ktop
    # Pass 2: the first index of each extreme key, as minimum reductions (no NaN has ktop's key).
    imin = n
    imax = n
    itop = n
    for i in range(n):
        b = np.int64(vals[i])
        nan = (inf - (b & mag)) >> 63
        c = (cnan & nan) | (b & ~nan)
        k = c ^ ((c >> 63) & mag)
        j = i if k == kmin else n
        imin = j if j < imin else imin
        j = i if k == kmax else n
        imax = j if j < imax else imax
        j = i if k == ktop else n
        itop = j if j < itop else itop
    return start + imin, start + imax, nans, (start + itop if ktop != _KEY_LOWEST else -1)
