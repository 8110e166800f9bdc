"""Column index and offset index of a column chunk, as parquet-java 1.17 builds them from its pages.

SPEC: ColumnIndexBuilder / BinaryTruncator / OffsetIndexBuilder; ParquetMetadataConverter.toParquetColumnIndex.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from ..encode.stats import MAX_STATS_SIZE, truncatable
from ..encode.truncate import truncate_max, truncate_min
from ..format.enums import BoundaryOrder
from ..format.structs import ColumnIndex, OffsetIndex, PageLocation
from ..page_model import EncodedPage
from ..schema import BOOLEAN, BYTE_ARRAY, DOUBLE, FLOAT, INT32, INT64, INT96, Leaf

_NEG_ZERO = {FLOAT: struct.pack("<f", -0.0), DOUBLE: struct.pack("<d", -0.0)}
_POS_ZERO = {FLOAT: struct.pack("<f", 0.0), DOUBLE: struct.pack("<d", 0.0)}
_NAN = {FLOAT: 0x7FC00000, DOUBLE: 0x7FF8000000000000}


def _float_bounds(leaf: Leaf, lo: bytes, hi: bytes) -> tuple[bytes, bytes] | None:
    """Zero-normalised float bounds (min +0.0 -> -0.0, max -0.0 -> +0.0); None when either is NaN."""
    width = 4 if leaf.physical == FLOAT else 8
    if int.from_bytes(lo, "little") == _NAN[leaf.physical] or int.from_bytes(hi, "little") == _NAN[leaf.physical]:
        return None
    if lo == _POS_ZERO[leaf.physical]:
        lo = _NEG_ZERO[leaf.physical]
    if hi == _NEG_ZERO[leaf.physical]:
        hi = _POS_ZERO[leaf.physical]
    assert len(lo) == len(hi) == width
    return lo, hi


def _sort_key(leaf: Leaf, value: bytes) -> Any:
    """The column comparator as a Python sort key for one PLAIN-encoded bound."""
    if leaf.physical in (FLOAT, DOUBLE):
        width = 32 if leaf.physical == FLOAT else 64
        bits = int.from_bytes(value, "little")
        signed = bits - (1 << width) if bits >> (width - 1) else bits
        return signed if signed >= 0 else signed ^ ((1 << (width - 1)) - 1)
    if leaf.physical in (INT32, INT64):
        return int.from_bytes(value, "little", signed=True)
    if leaf.physical == BOOLEAN:
        return value[0]
    if leaf.is_decimal:
        return int.from_bytes(value, "big", signed=True)
    return value


def _boundary_order(keys: Sequence[tuple[Any, Any]]) -> int:
    """ASCENDING / DESCENDING / UNORDERED over the non-null pages' (min, max) keys."""
    pairs = list(zip(keys, keys[1:], strict=False))
    if all(a[0] <= b[0] and a[1] <= b[1] for a, b in pairs):
        return BoundaryOrder.ASCENDING
    if all(a[0] >= b[0] and a[1] >= b[1] for a, b in pairs):
        return BoundaryOrder.DESCENDING
    return BoundaryOrder.UNORDERED


def column_index(leaf: Leaf, pages: Sequence[EncodedPage], truncate_length: int) -> ColumnIndex | None:
    """The chunk's ColumnIndex, or None where parquet-java writes none (INT96, NaN bounds, oversize)."""
    if leaf.physical == INT96 or not pages:
        return None
    null_pages, mins, maxs, keys = [], [], [], []
    for page in pages:
        st = page.stats
        if not st.has_values:
            null_pages.append(True)
            mins.append(b"")
            maxs.append(b"")
            continue
        lo, hi = st.min_bytes, st.max_bytes
        if leaf.physical in (FLOAT, DOUBLE):
            bounds = _float_bounds(leaf, lo, hi)
            if bounds is None:
                return None
            lo, hi = bounds
        elif truncatable(leaf):
            lo, hi = truncate_min(lo, truncate_length), truncate_max(hi, truncate_length)
        null_pages.append(False)
        mins.append(lo)
        maxs.append(hi)
        if leaf.physical in (INT32, INT64, BOOLEAN):  # the statistics' keys already are the comparator's
            keys.append((st.min_key, st.max_key))
        else:
            keys.append((_sort_key(leaf, lo), _sort_key(leaf, hi)))
    if sum(len(v) for v in mins) + sum(len(v) for v in maxs) > len(pages) * MAX_STATS_SIZE:
        return None
    index = ColumnIndex(null_pages=null_pages, min_values=mins, max_values=maxs,
                        boundary_order=_boundary_order(keys), null_counts=[p.num_nulls for p in pages])
    # SPEC: ColumnIndexBuilder appends each page's level histograms where SizeStatistics has them.
    if leaf.max_rep > 0:
        index.repetition_level_histograms = [n for p in pages for n in (p.rep_histogram or [])]
    if leaf.max_def > 1:
        index.definition_level_histograms = [n for p in pages for n in (p.def_histogram or [])]
    return index


def offset_index(leaf: Leaf, pages: Sequence[EncodedPage], offsets: Sequence[int]) -> OffsetIndex:
    """Where each data page starts (header included), its size on disk and its first row in the group."""
    locations = [PageLocation(off, page.size, page.first_row) for page, off in zip(pages, offsets, strict=True)]
    sizes = None
    if leaf.physical == BYTE_ARRAY:
        sizes = [page.byte_array_bytes or 0 for page in pages]
    return OffsetIndex(page_locations=locations, unencoded_byte_array_data_bytes=sizes)
