"""Per-page bookkeeping of the device pipeline: dictionary state at page ends, page headers, dictionary pages
and scans — sequential CPU twins and the shared per-item logic (CUDA forms in `page_layout_cuda.py`).

Page arrays are per page of a batch: column `col[p]`, level entries `ea[p]..eb[p]` and non-null values
`va[p]..vb[p]` relative to the column (as the window numbers them).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from ..dictionary.row_group import dictionary_bytes, entries_before, fixed_key
from ..encode.bits import bit_width_u64, write_uleb, zigzag64
from ..encode.fallback import keeps_dictionary, raw_size
from ..encode.rle import rle_size
from ..encode.stats import float_nans
from .layout import (
    CT_DICT,
    CT_ENT,
    CT_KEYS,
    CT_KIND,
    CT_OFFS,
    CT_PHYSICAL,
    K_BOOL,
    K_BYTES,
    K_DOUBLE,
    K_FLBA,
    K_FLOAT,
    K_INT64,
    K_INT96,
)

BYTE_ARRAY_TYPE = 6
# header fields of each page: int64[F_COUNT, P], one row per field (rows are contiguous)
(F_NUM_VALUES, F_NUM_NULLS, F_NUM_ROWS, F_ENCODING, F_DEF_LEN, F_REP_LEN, F_COMPRESSED, F_UNCOMPRESSED,
 F_COMPRESSED_SIZE) = range(9)
F_COUNT = 9
HEADER_BOUND = 64  # bytes a DATA_PAGE_V2 / DICTIONARY_PAGE header can take at most
# compact protocol field types
_CT_TRUE, _CT_FALSE, _CT_I32, _CT_STRUCT = 1, 2, 5, 12
_DATA_PAGE_V2, _DICTIONARY_PAGE = 3, 2  # PageType
_PLAIN = 0  # Encoding


# info columns of `page_info`
I_ENTRIES, I_BYTES, I_OVERFLOWED, I_VALUE_BYTES, I_WIDTH, I_KEEPS = range(6)
I_COUNT = 6


@jit
def page_info(p: int, col: np.ndarray, a: np.ndarray, va: np.ndarray, vb: np.ndarray, cols: np.ndarray,
              idx: np.ndarray, ids: np.ndarray, efirst: np.ndarray, ebytes: np.ndarray, overflow: np.ndarray,
              info: np.ndarray) -> None:
    """What the host needs to choose page p's encoding, in info[p]: dictionary entries and bytes once its
    values are inserted, whether the overflow value precedes its end, its values' bytes (byte kinds), the
    bit width of its ids, and, for a chunk's first page, parquet-java's first-page test (SPEC:
    DictionaryValuesWriter.isCompressionSatisfying, `fallback.keeps_dictionary`)."""
    c = col[p]
    kind = cols[c, CT_KIND]
    nbytes = np.int64(0)
    if kind == K_BYTES or kind == K_FLBA or kind == K_INT96:
        o = cols[c, CT_OFFS]
        nbytes = idx[o + vb[p]] - idx[o + va[p]]
    info[p, I_VALUE_BYTES] = nbytes
    info[p, I_KEEPS] = 1
    if cols[c, CT_DICT] == 0:
        info[p, I_ENTRIES] = 0
        info[p, I_BYTES] = 0
        info[p, I_OVERFLOWED] = 0
        info[p, I_WIDTH] = 0
        return
    base = cols[c, CT_KEYS]
    entries = np.int64(entries_before(cols, c, vb[p], efirst))  # exact unless the page is past the overflow
    dbytes = np.int64(dictionary_bytes(cols, c, entries, ebytes))
    info[p, I_ENTRIES] = entries
    info[p, I_BYTES] = dbytes
    over = overflow[c] < vb[p]
    info[p, I_OVERFLOWED] = 1 if over else 0
    width = 32
    if entries > 0:
        width = bit_width_u64(np.uint64(entries - 1))
    info[p, I_WIDTH] = width
    if a[p] == 0 and not over:
        n = vb[p] - va[p]
        encoded = 1 + rle_size(ids, base + va[p], base + vb[p], width)
        info[p, I_KEEPS] = 1 if keeps_dictionary(encoded, dbytes, raw_size(kind, n, nbytes)) else 0


@jit
def pages_info(n: int, col: np.ndarray, a: np.ndarray, va: np.ndarray, vb: np.ndarray, cols: np.ndarray,
               idx: np.ndarray, ids: np.ndarray, efirst: np.ndarray, ebytes: np.ndarray, overflow: np.ndarray,
               info: np.ndarray) -> None:
    """Twin: page_info of every page (one thread per page on a GPU)."""
    for p in range(n):
        page_info(p, col, a, va, vb, cols, idx, ids, efirst, ebytes, overflow, info)


@jit
def stored_choice(p: int, val_len: np.ndarray, comp_len: np.ndarray, identity: bool, fields: np.ndarray,
                  stored_len: np.ndarray, copy_len: np.ndarray, body_len: np.ndarray) -> None:
    """Whether page p keeps its compressed values (only when smaller, as parquet-java does) and the header
    fields that follow: fields[F_COMPRESSED / F_UNCOMPRESSED / F_COMPRESSED_SIZE, p] from the levels' bytes
    (fields[F_DEF_LEN / F_REP_LEN, p]) and the values' sizes. copy_len[p]: raw bytes to copy to the stored
    buffer (values kept uncompressed)."""
    levels = fields[F_DEF_LEN, p] + fields[F_REP_LEN, p]
    n = val_len[p]
    if identity:
        stored = n
        compressed = 1 if n > 0 else 0
        copy = np.int64(0)
    elif n > 0 and comp_len[p] < n:
        stored = comp_len[p]
        compressed = 1
        copy = np.int64(0)
    else:
        stored = n
        compressed = 0
        copy = n
    fields[F_COMPRESSED, p] = compressed
    fields[F_UNCOMPRESSED, p] = levels + n
    fields[F_COMPRESSED_SIZE, p] = levels + stored
    stored_len[p] = stored
    copy_len[p] = copy
    body_len[p] = levels + stored


@jit
def stored_choices(n: int, val_len: np.ndarray, comp_len: np.ndarray, identity: bool, fields: np.ndarray,
                   stored_len: np.ndarray, copy_len: np.ndarray, body_len: np.ndarray) -> None:
    """Twin: stored_choice of every page."""
    for p in range(n):
        stored_choice(p, val_len, comp_len, identity, fields, stored_len, copy_len, body_len)


@jit
def page_extremes(p: int, col: np.ndarray, bounds: np.ndarray, ext_in: np.ndarray, cols: np.ndarray,
                  v8: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray, out: np.ndarray) -> None:
    """Page p's min and max (value positions ext_in[0 / 1, p] from the min / max kernels, -1 when the page has
    no values; its values are bounds[0, p]..bounds[1, p] of its arena): out[p] = (min, max, NaN count, largest
    non-NaN value) as raw value bits for fixed kinds (the last two for floats only), or (min offset, min length,
    max offset, max length) into `dat` for byte kinds."""
    c = col[p]
    kind = cols[c, CT_KIND]
    lo = ext_in[0, p]
    hi = ext_in[1, p]
    for k in range(4):
        out[p, k] = 0
    if lo < 0:
        return
    if kind == K_BYTES or kind == K_FLBA or kind == K_INT96:
        out[p, 0] = idx[lo]
        out[p, 1] = idx[lo + 1] - idx[lo]
        out[p, 2] = idx[hi]
        out[p, 3] = idx[hi + 1] - idx[hi]
        return
    if kind == K_BOOL:
        out[p, 0] = v8[lo]
        out[p, 1] = v8[hi]
    elif kind == K_INT64 or kind == K_DOUBLE:
        out[p, 0] = v64[lo]
        out[p, 1] = v64[hi]
    else:
        out[p, 0] = v32[lo]
        out[p, 1] = v32[hi]
    if kind == K_FLOAT or kind == K_DOUBLE:
        if kind == K_FLOAT:
            nans, top = float_nans(v32, bounds[0, p], bounds[1, p], True)
            if top >= 0:
                out[p, 3] = v32[top]
        else:
            nans, top = float_nans(v64, bounds[0, p], bounds[1, p], False)
            if top >= 0:
                out[p, 3] = v64[top]
        out[p, 2] = nans


@jit
def pages_extremes(n: int, col: np.ndarray, bounds: np.ndarray, ext_in: np.ndarray, cols: np.ndarray,
                   v8: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray, out: np.ndarray) -> None:
    """Twin: page_extremes of every page."""
    for p in range(n):
        page_extremes(p, col, bounds, ext_in, cols, v8, v32, v64, idx, out)


@jit
def _field(out: np.ndarray, pos: int, delta: int, ctype: int) -> int:
    """A short-form compact field header."""
    out[pos] = np.uint8((delta << 4) | ctype)
    return pos + 1


@jit
def _i32(out: np.ndarray, pos: int, value: int) -> int:
    """A zigzag varint i32 (an i32 value's zigzag64 is its zigzag32; the mask keeps any other to 5 bytes)."""
    return write_uleb(out, pos, zigzag64(np.int64(value)) & np.uint64(0xFFFFFFFF))


@jit
def _signed32(v: int) -> int:
    """An unsigned 32-bit CRC (the CRC step's output) as Thrift's signed i32."""
    return v - (1 << 32) if v >= (1 << 31) else v


@jit
def _next_i32(out: np.ndarray, pos: int, value: int) -> int:
    """The next field (id + 1) as an i32: its short-form header, then the value as a zigzag varint."""
    return _i32(out, _field(out, pos, 1, _CT_I32), value)


@jit
def _header_start(out: np.ndarray, pos: int, page_type: int, uncompressed: int, compressed_size: int,
                  has_crc: bool, crc: int, struct_field: int) -> int:
    """PageHeader's fields every page type starts with (type, both sizes, the crc when `has_crc`), then the
    header of the page type's own struct, field `struct_field` (8: DataPageHeaderV2, 7: DictionaryPageHeader)."""
    pos = _next_i32(out, pos, page_type)
    pos = _next_i32(out, pos, uncompressed)
    pos = _next_i32(out, pos, compressed_size)
    last = 3
    if has_crc:
        pos = _next_i32(out, pos, crc)
        last = 4
    return _field(out, pos, struct_field - last, _CT_STRUCT)


@jit
def data_page_v2_header(out: np.ndarray, pos: int, uncompressed: int, compressed_size: int, has_crc: bool,
                        crc: int, num_values: int, num_nulls: int, num_rows: int, encoding: int, def_len: int,
                        rep_len: int, is_compressed: bool) -> int:
    """A DATA_PAGE_V2 PageHeader in compact Thrift at out[pos:]; returns its end. The one writer of these
    bytes, for both backends (tests/format/test_page_header.py checks it against the generic Thrift writer).

    uncompressed_page_size, compressed_page_size, the signed i32 `crc` when `has_crc`, then DataPageHeaderV2:
    num_values, num_nulls, num_rows, encoding, definition_levels_byte_length, repetition_levels_byte_length,
    is_compressed. No statistics in the header (parquet-java writes them to the column index only). Values
    are written as i32: the caller checks their range (format.page_header raises for one outside).
    """
    pos = _header_start(out, pos, _DATA_PAGE_V2, uncompressed, compressed_size, has_crc, crc, 8)
    pos = _next_i32(out, pos, num_values)
    pos = _next_i32(out, pos, num_nulls)
    pos = _next_i32(out, pos, num_rows)
    pos = _next_i32(out, pos, encoding)
    pos = _next_i32(out, pos, def_len)
    pos = _next_i32(out, pos, rep_len)
    pos = _field(out, pos, 1, _CT_TRUE if is_compressed else _CT_FALSE)
    out[pos] = 0
    out[pos + 1] = 0
    return pos + 2


@jit
def page_header(p: int, fields: np.ndarray, crc: np.ndarray, has_crc: bool, out: np.ndarray, out_off: np.ndarray,
                sizes: np.ndarray) -> None:
    """Page p's serialized PageHeader at out[out_off[p]:], a DATA_PAGE_V2 header as assemble.pages writes it,
    from fields[F_*, p] and crc[p] (unsigned; written as Thrift's i32)."""
    end = data_page_v2_header(out, out_off[p], fields[F_UNCOMPRESSED, p], fields[F_COMPRESSED_SIZE, p], has_crc,
                              _signed32(crc[p]) if has_crc else 0, fields[F_NUM_VALUES, p],
                              fields[F_NUM_NULLS, p], fields[F_NUM_ROWS, p], fields[F_ENCODING, p],
                              fields[F_DEF_LEN, p], fields[F_REP_LEN, p], fields[F_COMPRESSED, p] != 0)
    sizes[p] = end - out_off[p]


@jit
def page_headers(n: int, fields: np.ndarray, crc: np.ndarray, has_crc: bool, out: np.ndarray, out_off: np.ndarray,
                 sizes: np.ndarray) -> None:
    """Twin: every page's header (one thread per page on a GPU)."""
    for p in range(n):
        page_header(p, fields, crc, has_crc, out, out_off, sizes)


@jit
def dictionary_page_header(out: np.ndarray, pos: int, uncompressed: int, compressed_size: int, has_crc: bool,
                           crc: int, num_values: int) -> int:
    """A DICTIONARY_PAGE PageHeader (PLAIN entries, is_sorted unset) in compact Thrift at out[pos:]; returns its
    end. The one writer of these bytes, for both backends (as `data_page_v2_header`; the caller checks that the
    values are i32)."""
    pos = _header_start(out, pos, _DICTIONARY_PAGE, uncompressed, compressed_size, has_crc, crc, 7)
    pos = _next_i32(out, pos, num_values)
    pos = _next_i32(out, pos, _PLAIN)
    out[pos] = 0
    out[pos + 1] = 0
    return pos + 2


@jit
def dictionary_header(c: int, fields: np.ndarray, stored: np.ndarray, crc: np.ndarray, has_crc: bool,
                      out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Column c's DICTIONARY_PAGE header (PLAIN entries): fields[0 / 1, c] = entries, uncompressed size;
    stored[c] its stored (compressed) size; crc[c] unsigned."""
    end = dictionary_page_header(out, out_off[c], fields[1, c], stored[c], has_crc,
                                 _signed32(crc[c]) if has_crc else 0, fields[0, c])
    sizes[c] = end - out_off[c]


@jit
def dictionary_headers(n: int, fields: np.ndarray, stored: np.ndarray, crc: np.ndarray, has_crc: bool,
                       out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Twin: every dictionary page header (one thread per column on a GPU)."""
    for c in range(n):
        dictionary_header(c, fields, stored, crc, has_crc, out, out_off, sizes)


@jit
def entry_position(cols: np.ndarray, c: int, e: int, efirst: np.ndarray, ebytes: np.ndarray, idx: np.ndarray) -> int:
    """Where entry e of column c starts in its PLAIN dictionary page: the bytes of the entries before it
    (parquet-java's accounted size of an entry is its PLAIN size)."""
    return dictionary_bytes(cols, c, e, ebytes)


@jit
def write_entry(cols: np.ndarray, c: int, e: int, efirst: np.ndarray, v32: np.ndarray, v64: np.ndarray,
                idx: np.ndarray, dat: np.ndarray, out: np.ndarray, pos: int) -> None:
    """Entry e of column c in PLAIN at out[pos:]: 4 / 8 little-endian bytes of its key, or its bytes (with a
    4-byte length first for BYTE_ARRAY)."""
    i = efirst[cols[c, CT_ENT] + e]
    kind = cols[c, CT_KIND]
    if kind == K_BYTES or kind == K_FLBA or kind == K_INT96:
        o = cols[c, CT_OFFS]
        s = idx[o + i]
        t = idx[o + i + 1]
        if cols[c, CT_PHYSICAL] == BYTE_ARRAY_TYPE:
            ln = t - s
            for k in range(4):
                out[pos + k] = np.uint8((ln >> (8 * k)) & 0xFF)
            pos += 4
        for j in range(t - s):
            out[pos + j] = dat[s + j]
        return
    key = np.uint64(fixed_key(cols, c, i, v32, v64))
    width = 8 if kind == K_INT64 or kind == K_DOUBLE else 4
    for k in range(width):
        out[pos + k] = np.uint8((key >> np.uint64(8 * k)) & np.uint64(0xFF))


@jit
def dictionary_pages(n: int, dcol: np.ndarray, count: np.ndarray, cols: np.ndarray, efirst: np.ndarray,
                     ebytes: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray, dat: np.ndarray,
                     out: np.ndarray, out_off: np.ndarray) -> None:
    """Twin: the PLAIN dictionary page of each column dcol[k] (its first count[k] entries) at out_off[k]. On a
    GPU one block per column, threads over its entries."""
    for k in range(n):
        c = dcol[k]
        for e in range(count[k]):
            write_entry(cols, c, e, efirst, v32, v64, idx, dat, out,
                        out_off[k] + entry_position(cols, c, e, efirst, ebytes, idx))


@jit
def exclusive_scan(blocks: int, values: np.ndarray, n: int, out: np.ndarray) -> None:
    """out[i] = values[0] + ... + values[i - 1] for i <= n (out[n]: the total); one block on a GPU."""
    total = np.int64(0)
    for i in range(n):
        out[i] = total
        total += values[i]
    out[n] = total


@jit
def flush_size(j: int, pos: np.ndarray, header_len: np.ndarray, body_len: np.ndarray, out: np.ndarray) -> None:
    """Stored size (header + body) of planned page j, found at batch position pos[j]."""
    out[j] = header_len[pos[j]] + body_len[pos[j]]


@jit
def flush_sizes(n: int, pos: np.ndarray, header_len: np.ndarray, body_len: np.ndarray, out: np.ndarray) -> None:
    """Twin: every planned page's stored size, in the planner's order (one thread per page on a GPU)."""
    for j in range(n):
        flush_size(j, pos, header_len, body_len, out)
