"""Page and chunk statistics with parquet-java's comparators and its rules for which fields are written."""

from __future__ import annotations

import struct
from operator import attrgetter
from typing import Any

import numpy as np

from gpuwrite.kernels.convert.levels import level_counts
from gpuwrite.kernels.encode.stats import (
    bytes_minmax,
    bytes_minmax_ids,
    float_stats,
)

from ..page_model import PageStats
from ..pipeline.leafdata import LeafData
from ..schema import BOOLEAN, BYTE_ARRAY, DOUBLE, FIXED_LEN_BYTE_ARRAY, FLOAT, INT32, INT64, Leaf

MAX_STATS_SIZE = 4096  # SPEC: ParquetMetadataConverter.MAX_STATS_SIZE
# PLAIN bytes of an INT32 / INT64 / BOOLEAN bound
PACKERS = {INT32: struct.Struct("<i").pack, INT64: struct.Struct("<q").pack, BOOLEAN: struct.Struct("<B").pack}


def level_histogram(levels: np.ndarray, ea: int, eb: int, max_level: int) -> list[int]:
    """How many of the level entries ea..eb are at each level 0..max_level: a page's SizeStatistics histogram
    (one compiled pass over the uint8 levels; np.bincount would first widen them to intp)."""
    counts = np.zeros(max_level + 1, dtype=np.int64)
    level_counts(levels, ea, eb, counts)
    return counts.tolist()


def repetition_histogram(levels: np.ndarray, ea: int, eb: int, rows: int, max_rep: int) -> list[int]:
    """`level_histogram` of a page's repetition levels, the page holding `rows` whole rows: each row's first entry
    is at level 0 and no other is, so with max level 1 the histogram is (rows, the other entries), uncounted."""
    if max_rep == 1:
        return [rows, eb - ea - rows]
    return level_histogram(levels, ea, eb, max_rep)


def _canonical(bits: int, width: int) -> int:
    """Unsigned IEEE bits of a float (`width` 32) or double (64) with any NaN as Java's floatToIntBits /
    doubleToLongBits give it (`kernels/plain.canonical32/64` for two values, without a kernel call)."""
    exponent = 0x7F800000 if width == 32 else 0x7FF0000000000000
    magnitude = (1 << (width - 1)) - 1
    if bits & magnitude > exponent:
        return 0x7FC00000 if width == 32 else 0x7FF8000000000000
    return bits


def _float_key(bits: int, width: int) -> int:
    """Java Float/Double.compare order as a signed integer key of canonical bits."""
    sign = 1 << (width - 1)
    signed = bits - (1 << width) if bits & sign else bits
    return signed if signed >= 0 else signed ^ (sign - 1)


def page_stats(leaf: Leaf, data: LeafData, va: int, vb: int, nulls: int,
               ids: tuple[np.ndarray, int] | None = None) -> PageStats:
    """Min/max of values va..vb of `data` with the leaf's comparator. `ids`: the values' dictionary ids and the
    dictionary's size, when the page is dictionary-encoded (byte values are then compared once per id)."""
    if vb <= va:
        return PageStats(null_count=nulls, num_values=0)
    same = True
    if leaf.physical in (INT32, INT64, BOOLEAN):
        vals = data.value_array[va:vb]
        imin, imax = va + int(vals.argmin()), va + int(vals.argmax())
    elif leaf.physical in (FLOAT, DOUBLE):
        wide = leaf.physical == DOUBLE
        imin, imax, nans, top = float_stats(data.value_array.view(np.int64 if wide else np.int32), va, vb, wide)
        return stats_at(leaf, data, vb - va, nulls, imin=int(imin), imax=int(imax), same=True,
                        nan=(int(nans), int(top)))
    elif ids is not None:
        seen = np.zeros(ids[1], dtype=np.uint8)
        imin, imax, same = bytes_minmax_ids(data.byte_offsets, data.byte_data, va, ids[0], seen, leaf.is_decimal)
    else:
        imin, imax, same = bytes_minmax(data.byte_offsets, data.byte_data, va, vb, leaf.is_decimal)
    return stats_at(leaf, data, vb - va, nulls, imin=int(imin), imax=int(imax), same=bool(same))


def stats_at(leaf: Leaf, data: LeafData, count: int, nulls: int, *, imin: int, imax: int, same: bool,
             nan: tuple[int, int] = (0, -1)) -> PageStats:
    """Page statistics from the indices of its min and max value (found by a CPU kernel); `nan` is the page's
    NaN count and the index of its largest non-NaN value (float / double pages)."""
    if count <= 0:
        return PageStats(null_count=nulls, num_values=count)
    if leaf.fixed_width:
        values = data.value_array
        if leaf.kind in ("float", "double"):
            bits = values.view(np.int32 if leaf.kind == "float" else np.int64)
            top = int(bits[nan[1]]) if nan[0] and nan[1] >= 0 else None
            return stats_of(leaf, count, nulls, (int(bits[imin]), int(bits[imax])), same, (nan[0], top))
        return stats_of(leaf, count, nulls, (int(values[imin]), int(values[imax])), same)
    off, raw = data.byte_offsets, data.byte_data
    return stats_of(leaf, count, nulls, (raw[off[imin]:off[imin + 1]].tobytes(),
                                         raw[off[imax]:off[imax + 1]].tobytes()), same)


def stats_of(leaf: Leaf, count: int, nulls: int, extremes: tuple[Any, Any], same: bool,
             nan: tuple[int, int | None] = (0, None)) -> PageStats:
    """Page statistics from its min and max values: integers (booleans 0 / 1), raw IEEE bits of floats (signed or
    unsigned; NaN payloads are canonicalised here, as Java's floatToIntBits does), or bytes; for floats, `nan` is the NaN
    count and the raw bits of the largest non-NaN value (None when there is none)."""
    st = PageStats(null_count=nulls, num_values=count)
    if count <= 0:
        return st
    lo, hi = extremes
    packer = PACKERS.get(leaf.physical)
    if packer is not None:
        st.min_key, st.max_key = int(lo), int(hi)
        st.min_bytes, st.max_bytes = packer(st.min_key), packer(st.max_key)
    elif leaf.physical in (FLOAT, DOUBLE):
        width = 32 if leaf.physical == FLOAT else 64
        mask = (1 << width) - 1
        lo, hi = _canonical(int(lo) & mask, width), _canonical(int(hi) & mask, width)
        st.min_key, st.max_key = _float_key(lo, width), _float_key(hi, width)
        st.min_bytes, st.max_bytes = lo.to_bytes(width // 8, "little"), hi.to_bytes(width // 8, "little")
        st.nan_count, top = nan
        if st.nan_count and top is not None:
            bits = int(top) & mask  # a non-NaN value: its raw bits are canonical
            st.max_not_nan_key, st.max_not_nan_bytes = _float_key(bits, width), bits.to_bytes(width // 8, "little")
    else:
        st.min_bytes, st.max_bytes = bytes(lo), bytes(hi)
        st.all_same = same
        if leaf.is_decimal:
            st.min_key = int.from_bytes(st.min_bytes, "big", signed=True)
            st.max_key = int.from_bytes(st.max_bytes, "big", signed=True)
        else:
            st.min_key, st.max_key = st.min_bytes, st.max_bytes
    return st


_MIN_KEY, _MAX_KEY = attrgetter("min_key"), attrgetter("max_key")


def merge(pages: list[PageStats]) -> PageStats:
    """Chunk statistics: the merge of its pages' statistics (one pass over them: a wide table merges thousands
    of pages a write)."""
    nulls = values = nans = 0
    filled: list[PageStats] = []
    same = True
    for p in pages:
        nulls += p.null_count
        if p.has_values:
            values += p.num_values
            nans += p.nan_count
            same = same and p.all_same and (not filled or p.min_bytes == filled[0].min_bytes)
            filled.append(p)
    out = PageStats(null_count=nulls, num_values=values)
    if not filled:
        return out
    lo = min(filled, key=_MIN_KEY)
    hi = max(filled, key=_MAX_KEY)
    out.min_key, out.min_bytes = lo.min_key, lo.min_bytes
    out.max_key, out.max_bytes = hi.max_key, hi.max_bytes
    out.all_same = same
    out.nan_count = nans
    if out.nan_count:
        tops = [(p.max_not_nan_key, p.max_not_nan_bytes) if p.nan_count else (p.max_key, p.max_bytes)
                for p in filled if p.num_values > p.nan_count]
        if tops:
            out.max_not_nan_key, out.max_not_nan_bytes = max(tops, key=lambda t: t[0])
    return out


def truncatable(leaf: Leaf) -> bool:
    """Whether BinaryTruncator shortens this leaf's values (byte arrays without DECIMAL; never INT96)."""
    return leaf.physical in (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY) and not leaf.is_decimal
