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
from ..format.thrift import (
    CT_I32,
    CT_I64,
    CT_LIST,
    CT_STOP,
    CT_STRUCT,
    out_of_range,
    put_i64_list,
    put_list_header,
)
from ..page_model import EncodedPage
from ..schema import BOOLEAN, BYTE_ARRAY, DOUBLE, FLOAT, INT32, INT64, INT96, Leaf

_NEG_ZERO = {FLOAT: struct.pack("<f", -0.0), DOUBLE: struct.pack("<d", -0.0)}
_POS_ZERO = {FLOAT: struct.pack("<f", 0.0), DOUBLE: struct.pack("<d", 0.0)}
_NAN = {FLOAT: 0x7FC00000, DOUBLE: 0x7FF8000000000000}
_I32_MAX, _I64_MAX = (1 << 31) - 1, (1 << 63) - 1


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
    """ASCENDING / DESCENDING / UNORDERED over the non-null pages' (min, max) keys (one pass: both orders are
    followed until neither holds)."""
    ascending = descending = True
    prev_lo, prev_hi = keys[0] if keys else (None, None)
    for lo, hi in keys[1:]:
        if ascending and not (prev_lo <= lo and prev_hi <= hi):
            ascending = False
        if descending and not (prev_lo >= lo and prev_hi >= hi):
            descending = False
        if not (ascending or descending):
            return BoundaryOrder.UNORDERED
        prev_lo, prev_hi = lo, hi
    return BoundaryOrder.ASCENDING if ascending else BoundaryOrder.DESCENDING


def column_index(leaf: Leaf, pages: Sequence[EncodedPage], truncate_length: int) -> ColumnIndex | None:
    """The chunk's ColumnIndex, or None where parquet-java writes none (INT96, NaN bounds, oversize)."""
    if leaf.physical == INT96 or not pages:
        return None
    null_pages, mins, maxs, keys = [], [], [], []
    is_float = leaf.physical in (FLOAT, DOUBLE)
    if is_float:  # SPEC: ColumnIndexBuilder's float / double builders (as _float_bounds, per page)
        width = 4 if leaf.physical == FLOAT else 8
        nan = _NAN[leaf.physical].to_bytes(width, "little")
        pos_zero, neg_zero = _POS_ZERO[leaf.physical], _NEG_ZERO[leaf.physical]
    for page in pages:
        st = page.stats
        if not st.has_values:
            null_pages.append(True)
            mins.append(b"")
            maxs.append(b"")
            continue
        lo, hi = st.min_bytes, st.max_bytes
        if is_float:  # the statistics' keys are the comparator's; only the zero normalisation moves them
            if lo == nan or hi == nan:
                return None
            lo_key, hi_key = st.min_key, st.max_key
            if lo == pos_zero:
                lo, lo_key = neg_zero, -1
            if hi == neg_zero:
                hi, hi_key = pos_zero, 0
            null_pages.append(False)
            mins.append(lo)
            maxs.append(hi)
            keys.append((lo_key, hi_key))
            continue
        if truncatable(leaf):
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


_LOCATIONS = (1 << 4) | CT_LIST  # OffsetIndex field 1 header: list<PageLocation>
_UNENCODED = (1 << 4) | CT_LIST  # field 2 header (delta 1 from field 1)
_OFFSET = (1 << 4) | CT_I64  # PageLocation.offset (field 1)
_SIZE = (1 << 4) | CT_I32  # PageLocation.compressed_page_size (field 2)
_FIRST_ROW = (1 << 4) | CT_I64  # PageLocation.first_row_index (field 3)


def offset_index_bytes(leaf: Leaf, pages: Sequence[EncodedPage], offsets: Sequence[int]) -> bytes:
    """serialize(offset_index(...)): the same bytes, each page's location written straight as its three varint
    fields (no PageLocation objects nor the generic struct writer: a third of the Python calls)."""
    if len(pages) != len(offsets):
        raise ValueError(f"{len(pages)} pages but {len(offsets)} offsets")
    buf = bytearray((_LOCATIONS,))
    put_list_header(buf, CT_STRUCT, len(pages))
    append = buf.append
    for off, page in zip(offsets, pages, strict=True):
        size, first = len(page.header) + len(page.sections.body), page.first_row
        if not (0 <= off <= _I64_MAX and 0 <= size <= _I32_MAX and 0 <= first <= _I64_MAX):
            bad = ("i64", off) if not 0 <= off <= _I64_MAX else ("i32", size) if not 0 <= size <= _I32_MAX \
                else ("i64", first)
            raise out_of_range(*bad)
        for header, n in ((_OFFSET, off << 1), (_SIZE, size << 1), (_FIRST_ROW, first << 1)):  # zigzag of >= 0
            append(header)
            while n > 0x7F:
                append((n & 0x7F) | 0x80)
                n >>= 7
            append(n)
        append(CT_STOP)
    if leaf.physical == BYTE_ARRAY:
        buf.append(_UNENCODED)
        put_i64_list(buf, [page.byte_array_bytes or 0 for page in pages])
    buf.append(CT_STOP)
    return bytes(buf)
