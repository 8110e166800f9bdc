"""Min/max kernels with parquet-java's comparators: Java float order, unsigned or signed byte order."""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from .byteops import bswap64, common_prefix, compare_bytes, load_tail, load_u64, low_bytes_mask


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


@jit_inline
def _word_at(data: np.ndarray, s: np.uint64, k: np.uint64, last: np.uint64) -> np.uint64:
    """load_tail(data, s, k), without its bounds test when s <= last (8 bytes from s lie within data)."""
    if s <= last:
        return load_u64(data, s) & low_bytes_mask(k)
    return load_tail(data, s, k)


@jit_inline
def _keyed(data: np.ndarray, s: int, t: int, skip: np.uint64, r0: np.uint64, r1: np.uint64,
           last: np.uint64) -> tuple:
    """(shares, key) of value data[s:t]: whether its first `skip` bytes (0, 8 or 16) are the page's reference
    words r0, r1 (the prefix the page's first and last values share), and the number that orders its next
    (up to) 8 bytes as they do (big-endian, zero past its end). Between two values that both share the
    prefix, a smaller key means a smaller value, a larger key a larger one; equal keys decide nothing."""
    us = np.uint64(s)
    n = np.uint64(t - s)
    shares = n >= skip
    if shares and skip >= np.uint64(8):
        shares = _word_at(data, us, np.uint64(8), last) == r0
        if shares and skip >= np.uint64(16):
            shares = _word_at(data, us + np.uint64(8), np.uint64(8), last) == r1
    if not shares:
        return False, np.uint64(0)
    return True, bswap64(_word_at(data, us + skip, min(n - skip, np.uint64(8)), last))


@jit_inline
def _order_after_key(data: np.ndarray, a0: int, a1: int, b0: int, b1: int, skip: int) -> int:
    """compare_bytes of two values that share the page's prefix and whose keys are equal: from byte skip + 8
    when both are that long (their bytes before are then the same)."""
    if a1 - a0 >= skip + 8 and b1 - b0 >= skip + 8:
        return compare_bytes(data, a0 + skip + 8, a1, b0 + skip + 8, b1, False)
    return compare_bytes(data, a0, a1, b0, b1, False)


@jit
def bytes_minmax(offsets: np.ndarray, data: np.ndarray, start: int, end: int, signed_first: bool) -> tuple:
    """Indices of min and max values among start..end (the first of equal ones), and whether all values are
    identical. In unsigned byte order each value is keyed by its 8 bytes after the prefix its page's first
    and last values share (0, 8 or 16 bytes: URLs share "https://"), and its key compared with the current
    min's and max's first; only equal keys, or a value without that prefix, compare bytes (most values of a
    page differ from both within those 8 bytes)."""
    if signed_first or data.shape[0] < 8:
        return _bytes_minmax_each(offsets, data, start, end, signed_first)
    imin = start
    imax = start
    same = True
    if end - start < 2:
        return imin, imax, same
    last = np.uint64(data.shape[0] - 8)  # words starting at or before it load unchecked
    s0 = offsets[start]
    t0 = offsets[start + 1]
    shared = common_prefix(data, s0, offsets[end - 1], min(t0 - s0, offsets[end] - offsets[end - 1]))
    skip = np.uint64(min(shared, 16) // 8 * 8)
    r0 = np.uint64(0)
    r1 = np.uint64(0)
    if skip >= np.uint64(8):
        r0 = load_tail(data, np.uint64(s0), np.uint64(8))
    if skip >= np.uint64(16):
        r1 = load_tail(data, np.uint64(s0) + np.uint64(8), np.uint64(8))
    keyed0, k0 = _keyed(data, s0, t0, skip, r0, r1, last)  # the first value shares the prefix: keyed0
    kmin = k0
    kmax = k0
    min_keyed = keyed0
    max_keyed = keyed0
    for i in range(start + 1, end):
        s = offsets[i]
        t = offsets[i + 1]
        keyed, k = _keyed(data, s, t, skip, r0, r1, last)
        if keyed and min_keyed:
            if k <= kmin:
                if k < kmin or _order_after_key(data, s, t, offsets[imin], offsets[imin + 1], skip) < 0:
                    imin = i
                    kmin = k
        elif _compare(data, s, t, offsets[imin], offsets[imin + 1], False) < 0:
            imin = i
            kmin = k
            min_keyed = keyed
        if keyed and max_keyed:
            if k >= kmax:
                if k > kmax or _order_after_key(data, s, t, offsets[imax], offsets[imax + 1], skip) > 0:
                    imax = i
                    kmax = k
        elif _compare(data, s, t, offsets[imax], offsets[imax + 1], False) > 0:
            imax = i
            kmax = k
            max_keyed = keyed
        if same and (not keyed or k != k0 or _compare(data, s, t, s0, t0, False) != 0):
            same = False
    return imin, imax, same


@jit
def _bytes_minmax_each(offsets: np.ndarray, data: np.ndarray, start: int, end: int, signed_first: bool) -> tuple:
    """bytes_minmax by a compare per value (the first byte signed when `signed_first`: two's-complement
    decimals; and data of under 8 bytes, where no word is read)."""
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


@jit_inline
def _float_constants(wide: bool) -> tuple:
    """(magnitude mask, infinity's bits, Java's NaN bits) of doubles (`wide`) or floats, as int64."""
    if wide:
        return np.int64(0x7FFFFFFFFFFFFFFF), np.int64(0x7FF0000000000000), np.int64(0x7FF8000000000000)
    return np.int64(0x7FFFFFFF), np.int64(0x7F800000), np.int64(0x7FC00000)


@jit_inline
def _float_key(b: np.int64, mag: np.int64, inf: np.int64, cnan: np.int64) -> tuple:
    """(key, nan) of raw IEEE bits `b`: the key orders Java's canonical bits as Float/Double.compare does, as a
    signed integer; nan is -1 for a NaN (magnitude above infinity's), else 0. Branch-free."""
    nan = (inf - (b & mag)) >> 63
    c = (cnan & nan) | (b & ~nan)  # Java's canonical bits
    return c ^ ((c >> 63) & mag), nan


@jit_inline
def _float_keys(vals: np.ndarray, mag: np.int64, inf: np.int64, cnan: np.int64) -> tuple:
    """One branch-free pass (selects by masks, so that it vectorises) over raw IEEE bits: (kmin, kmax, ktop,
    nans), the least and greatest key of their canonical bits in Java's Float/Double.compare order, the
    greatest key of a non-NaN value (_KEY_LOWEST when there is none) and the NaN count."""
    kmin = _KEY_HIGHEST
    kmax = _KEY_LOWEST
    ktop = _KEY_LOWEST
    nans = np.int64(0)
    for i in range(vals.shape[0]):
        k, nan = _float_key(np.int64(vals[i]), mag, inf, cnan)
        nans -= nan
        kmin = k if k < kmin else kmin
        kmax = k if k > kmax else kmax
        kt = (_KEY_LOWEST & nan) | (k & ~nan)
        ktop = kt if kt > ktop else ktop
    return kmin, kmax, ktop, nans


@jit
def float_stats(bits: np.ndarray, start: int, end: int, wide: bool) -> tuple:
    """A float / double page's statistics from its raw IEEE bits start..end (int32 floats, or int64 doubles
    when `wide`; NaNs of any payload): (imin, imax, nans, itop), the first index of the min and of the max
    under Java's Float/Double.compare of the canonical bits (-0.0 < 0.0, every NaN equal and above +Infinity),
    the NaN count, and the first index of the largest non-NaN value (-1 when there is none); (start, start, 0,
    -1) for an empty range. Sequential, CPU: one call per page, two branch-free passes that LLVM vectorises
    (the canonical copy, total-order min / max and float_nans it replaces were three scalar passes)."""
    mag, inf, cnan = _float_constants(wide)
    vals = bits[start:end]
    n = vals.shape[0]
    if n == 0:
        return start, start, 0, -1
    kmin, kmax, ktop, nans = _float_keys(vals, mag, inf, cnan)
    # Pass 2: the first index of each extreme key, as minimum reductions (no NaN has ktop's key).
    imin = n
    imax = n
    itop = n
    for i in range(n):
        k, _ = _float_key(np.int64(vals[i]), mag, inf, cnan)
        j = i if k == kmin else n
        imin = j if j < imin else imin
        j = i if k == kmax else n
        imax = j if j < imax else imax
        j = i if k == ktop else n
        itop = j if j < itop else itop
    return start + imin, start + imax, nans, (start + itop if ktop != _KEY_LOWEST else -1)


@jit
def float_bounds(bits: np.ndarray, start: int, end: int, wide: bool) -> tuple:
    """A float / double page's bounds from its raw IEEE bits start..end (int32 floats, or int64 doubles when
    `wide`), as values rather than float_stats' indices: (lo, hi, nans, top, has_top), the canonical bits of its
    min and max under Java's Float/Double.compare, its NaN count, and the bits of its largest non-NaN value
    (`has_top`: there is one; top 0 else); (0, 0, 0, 0, False) for an empty range. Sequential, CPU: one call
    per page, one branch-free pass (float_stats' first; its second only finds where those values first occur,
    and a key gives its bits back: a non-NaN value's raw bits are canonical). Reference: the bits at
    float_stats' indices, canonicalised (tests/kernels/test_kernel_stats.py)."""
    mag, inf, cnan = _float_constants(wide)
    vals = bits[start:end]
    if vals.shape[0] == 0:
        return np.int64(0), np.int64(0), 0, np.int64(0), False
    kmin, kmax, ktop, nans = _float_keys(vals, mag, inf, cnan)
    lo = kmin ^ ((kmin >> 63) & mag)  # a key's bits: the same flip undone
    hi = kmax ^ ((kmax >> 63) & mag)
    has_top = ktop != _KEY_LOWEST
    top = ktop ^ ((ktop >> 63) & mag) if has_top else np.int64(0)
    return lo, hi, int(nans), top, has_top
