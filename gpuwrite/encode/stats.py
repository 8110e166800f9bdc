"""Page and chunk statistics with parquet-java's comparators and its rules for which fields are written."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuwrite.kernels.plain import canonical_float_bits32, canonical_float_bits64
from gpuwrite.kernels.stats import bytes_minmax, total_order_minmax32, total_order_minmax64

from ..columns import LeafData
from ..format.structs import Statistics
from ..options import INT_MAX
from ..schema import BOOLEAN, BYTE_ARRAY, DOUBLE, FIXED_LEN_BYTE_ARRAY, FLOAT, INT32, INT64, INT96, Leaf
from .truncate import truncate_max, truncate_min

MAX_STATS_SIZE = 4096  # SPEC: ParquetMetadataConverter.MAX_STATS_SIZE


@dataclass
class PageStats:
    """Statistics of one page: null count, and min/max as comparable keys plus their PLAIN bytes."""

    null_count: int
    num_values: int
    min_key: Any = None
    max_key: Any = None
    min_bytes: bytes = b""
    max_bytes: bytes = b""
    all_same: bool = True  # every non-null value identical (INT96 only writes min/max then)

    @property
    def has_values(self) -> bool:
        """Whether the page holds at least one non-null value."""
        return self.num_values > 0


def _float_key(bits: int, width: int) -> int:
    """Java Float/Double.compare order as a signed integer key of canonical bits."""
    sign = 1 << (width - 1)
    signed = bits - (1 << width) if bits & sign else bits
    return signed if signed >= 0 else signed ^ (sign - 1)


def page_stats(leaf: Leaf, data: LeafData, va: int, vb: int, nulls: int) -> PageStats:
    """Min/max of values va..vb of `data` with the leaf's comparator."""
    if vb <= va:
        return PageStats(null_count=nulls, num_values=0)
    same = True
    if leaf.physical in (INT32, INT64, BOOLEAN):
        vals = data.values[va:vb]
        imin, imax = va + int(vals.argmin()), va + int(vals.argmax())
    elif leaf.physical == FLOAT:
        imin, imax = total_order_minmax32(canonical_float_bits32(data.values[va:vb].view(np.int32)), 0, vb - va)
        imin, imax = va + imin, va + imax
    elif leaf.physical == DOUBLE:
        imin, imax = total_order_minmax64(canonical_float_bits64(data.values[va:vb].view(np.int64)), 0, vb - va)
        imin, imax = va + imin, va + imax
    else:
        imin, imax, same = bytes_minmax(data.offsets, data.data, va, vb, leaf.is_decimal)
    return stats_at(leaf, data, vb - va, nulls, int(imin), int(imax), bool(same))


def stats_at(leaf: Leaf, data: LeafData, count: int, nulls: int, imin: int, imax: int, same: bool) -> PageStats:
    """Page statistics from the indices of its min and max value (found by a CPU or GPU kernel)."""
    st = PageStats(null_count=nulls, num_values=count)
    if count <= 0:
        return st
    if leaf.physical in (INT32, INT64, BOOLEAN):
        lo, hi = int(data.values[imin]), int(data.values[imax])
        fmt = {INT32: "<i", INT64: "<q", BOOLEAN: "<B"}[leaf.physical]
        st.min_key, st.max_key = lo, hi
        st.min_bytes, st.max_bytes = struct.pack(fmt, lo), struct.pack(fmt, hi)
    elif leaf.physical in (FLOAT, DOUBLE):
        width = 32 if leaf.physical == FLOAT else 64
        canon = canonical_float_bits32 if width == 32 else canonical_float_bits64
        view = np.int32 if width == 32 else np.int64
        pair = canon(np.array([data.values[imin], data.values[imax]]).view(view))
        mask = (1 << width) - 1
        lo, hi = int(pair[0]) & mask, int(pair[1]) & mask
        st.min_key, st.max_key = _float_key(lo, width), _float_key(hi, width)
        st.min_bytes, st.max_bytes = lo.to_bytes(width // 8, "little"), hi.to_bytes(width // 8, "little")
    else:
        off, raw = data.offsets, data.data
        st.min_bytes = raw[off[imin]:off[imin + 1]].tobytes()
        st.max_bytes = raw[off[imax]:off[imax + 1]].tobytes()
        st.all_same = same
        if leaf.is_decimal:
            st.min_key = int.from_bytes(st.min_bytes, "big", signed=True)
            st.max_key = int.from_bytes(st.max_bytes, "big", signed=True)
        else:
            st.min_key, st.max_key = st.min_bytes, st.max_bytes
    return st


def merge(pages: list[PageStats]) -> PageStats:
    """Chunk statistics: the merge of its pages' statistics."""
    out = PageStats(null_count=sum(p.null_count for p in pages), num_values=sum(p.num_values for p in pages))
    filled = [p for p in pages if p.has_values]
    if not filled:
        return out
    lo = min(filled, key=lambda p: p.min_key)
    hi = max(filled, key=lambda p: p.max_key)
    out.min_key, out.min_bytes = lo.min_key, lo.min_bytes
    out.max_key, out.max_bytes = hi.max_key, hi.max_bytes
    out.all_same = all(p.all_same for p in filled) and len({p.min_bytes for p in filled}) == 1
    return out


def _signed_legacy_order(leaf: Leaf) -> bool:
    """Whether the deprecated min/max fields apply (legacy sort order SIGNED)."""
    if leaf.is_decimal or leaf.physical == INT96:
        return False
    return leaf.physical in (BOOLEAN, INT32, INT64, FLOAT, DOUBLE)


def truncatable(leaf: Leaf) -> bool:
    """Whether BinaryTruncator shortens this leaf's values (byte arrays without DECIMAL; never INT96)."""
    return leaf.physical in (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY) and not leaf.is_decimal


def to_thrift(leaf: Leaf, st: PageStats, truncate_length: int = INT_MAX) -> Statistics:
    """The ColumnMetaData.statistics parquet-java writes (ParquetMetadataConverter.toParquetStatistics)."""
    if not st.has_values:
        return Statistics(null_count=st.null_count)
    lo, hi = st.min_bytes, st.max_bytes
    binary = leaf.physical in (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY)
    cut = binary and truncate_length != INT_MAX
    size = (min(len(lo), truncate_length) + min(len(hi), truncate_length)) if cut else len(lo) + len(hi)
    if size >= MAX_STATS_SIZE:
        return Statistics()
    if leaf.physical == INT96 and not st.all_same:
        return Statistics(null_count=st.null_count)
    if cut and truncatable(leaf):
        lo, hi = truncate_min(lo, truncate_length), truncate_max(hi, truncate_length)
    equal = lo == hi
    out = Statistics(null_count=st.null_count)
    if _signed_legacy_order(leaf) or equal:
        out.min, out.max = lo, hi
    if leaf.physical != INT96 or equal:
        out.min_value, out.max_value = lo, hi
    return out
