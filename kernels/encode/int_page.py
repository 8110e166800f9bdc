"""One compiled call per page of a flat INT32 / INT64 column, the CPU path's commonest page (keys, dates,
timestamps, decimals up to 18 digits): its definition levels, its values as dictionary ids (inserted as they
go) or, without the dictionary, as DELTA_BINARY_PACKED, and its minimum and maximum, where one call per
section cost a GIL hand-off (and its Python around it) each; and one call for a column's batch of such pages
(`int_pages`).

Geometry: sequential, CPU only; one call per page, or per column batch. It calls the section kernels
(rle.rle_encode, dictionary.fixed_insert, delta.delta_encode) in turn, the dictionary's two through page_ids
(float_page's too), so its bytes are theirs: those called one by one are its reference (tests/encode/
test_int_pages.py), and int_page page by page is int_pages' (tests/kernels/test_kernel_flat_pages.py).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from ..dictionary.by_page import fixed_insert
from .bits import bit_width_u64
from .delta import delta_encode
from .rle import rle_encode
from .rle_state import bitpacked_header, write_repeat


@jit
def flat_levels(valid: np.ndarray, a: int, b: int, present: int, out: np.ndarray) -> int:
    """The definition levels of rows a..b of a flat nullable leaf (bit width 1, from `valid`, one flag byte per
    row; NO_ROWS when every row holds a value) at the start of `out`, `present` of the rows holding a value: one
    repeated run when all of them do (8 rows or more), as parquet-java's encoder makes it. Returns their end."""
    rows = b - a
    if present == rows and rows >= 8:  # every row holds a value: one repeated run of level 1
        return write_repeat(out, 0, rows, np.uint64(1), 1)
    if valid.shape[0] == 0:  # fewer than 8 rows, all with a value: one zero-padded bit-packed group
        if rows > 0:
            out[0] = bitpacked_header(1)
            out[1] = np.uint8((1 << rows) - 1)
            return 2
        return 0
    return rle_encode(valid, a, b, 1, out, 0)


@jit
def page_ids(values: np.ndarray, va: int, vb: int, table: np.ndarray, entry_keys: np.ndarray, n_entries: int,
             entry_size: int, dict_bytes: int, limit: int, ids: np.ndarray, out: np.ndarray, pos: int) -> tuple:
    """Insert values va..vb into the dictionary (fixed_insert's arguments) and, unless it overflowed, write their
    ids at `pos` of `out`: a bit-width byte then the RLE / bit-packed runs. Returns (n_entries, dict_bytes,
    as_ids, end): as_ids False (and end `pos`) when the dictionary overflowed."""
    n_entries, dict_bytes, overflow = fixed_insert(values, va, vb, table, entry_keys, n_entries, entry_size,
                                                   dict_bytes, limit, ids)
    if overflow >= 0:
        return n_entries, dict_bytes, False, pos
    width = 32 if n_entries == 0 else int(bit_width_u64(np.uint64(n_entries - 1)))
    out[pos] = width
    return n_entries, dict_bytes, True, rle_encode(ids, 0, vb - va, width, out, pos + 1)


@jit
def int_page(valid: np.ndarray, a: int, b: int, levels: bool, values: np.ndarray, va: int, vb: int,
             use_dictionary: bool, table: np.ndarray, entry_keys: np.ndarray, n_entries: int, entry_size: int,
             dict_bytes: int, limit: int, ids: np.ndarray, is32: bool, out: np.ndarray) -> tuple:
    """Encode rows a..b (values va..vb) of a flat leaf into `out`: its definition levels (when `levels`: bit
    width 1, from `valid`, one flag byte per row, empty when every row holds a value), then its values.

    With `use_dictionary`, the values are inserted into the dictionary (fixed_insert's arguments) and, unless
    it overflowed, written as ids: a bit-width byte then the RLE / bit-packed runs; otherwise, or without the
    dictionary, as DELTA_BINARY_PACKED (32-bit deltas when `is32`). Returns (levels_end, values_end,
    n_entries, dict_bytes, as_ids, minimum, maximum); minimum > maximum when the page holds no value.
    """
    pos = flat_levels(valid, a, b, vb - va, out) if levels else 0
    levels_end = pos
    as_ids = False
    if use_dictionary:
        n_entries, dict_bytes, as_ids, pos = page_ids(values, va, vb, table, entry_keys, n_entries, entry_size,
                                                      dict_bytes, limit, ids, out, pos)
    if not as_ids:
        pos = delta_encode(values, va, vb, is32, out, pos)
    lo = np.int64(1)
    hi = np.int64(0)
    if vb > va:
        lo = np.int64(values[va])
        hi = lo
        for i in range(np.uint64(va + 1), np.uint64(vb)):  # unsigned: the loop vectorizes
            v = np.int64(values[i])
            lo = min(lo, v)
            hi = max(hi, v)
    return levels_end, pos, n_entries, dict_bytes, as_ids, lo, hi


# int_pages' results per page (columns of its `res`): where the page's levels start and end and its values end
# in `out`, the dictionary's entries and bytes after it, whether its values are ids, its minimum and maximum
R_START, R_LEVELS_END, R_END, R_ENTRIES, R_DICT_BYTES, R_AS_IDS, R_LO, R_HI = range(8)
R_COUNT = 8


@jit_inline
def no_room(n_entries: int, count: int, table: np.ndarray, entry_keys: np.ndarray) -> bool:
    """Whether `count` more entries may not fit the dictionary's table and keys (Dictionary.reserve's test): a
    batch of pages stops there for the caller to grow it."""
    need = n_entries + count
    return 2 * need > table.shape[0] or need > entry_keys.shape[0]


@jit_inline
def record_page(res: np.ndarray, j: int, pos: int, levels_end: int, end: int, n_entries: int, dict_bytes: int,
                as_ids: bool, lo: np.int64, hi: np.int64) -> None:
    """Page j's results in res[j, R_*], its levels and values ends made absolute from `pos`, where it starts."""
    res[j, R_START] = pos
    res[j, R_LEVELS_END] = pos + levels_end
    res[j, R_END] = pos + end
    res[j, R_ENTRIES] = n_entries
    res[j, R_DICT_BYTES] = dict_bytes
    res[j, R_AS_IDS] = 1 if as_ids else 0
    res[j, R_LO] = lo
    res[j, R_HI] = hi


@jit
def int_pages(valid: np.ndarray, a: np.ndarray, b: np.ndarray, va: np.ndarray, vb: np.ndarray, levels: bool,
              values: np.ndarray, use_dictionary: bool, table: np.ndarray, entry_keys: np.ndarray, n_entries: int,
              entry_size: int, dict_bytes: int, limit: int, ids: np.ndarray, is32: bool, out: np.ndarray,
              res: np.ndarray) -> int:
    """`int_page` of a column's pages j = 0.. in turn (rows a[j]..b[j], values va[j]..vb[j]), each written into
    `out` where the last ended, its results in res[j, R_*]: one call for a column's batch of pages where a
    call a page cost its Python around it. `ids` holds the largest page's values; `out` every page's bound.

    Stops before a page the dictionary has no room for (2 * entries > len(table) or entries > len(entry_keys),
    as Dictionary.reserve decides: the caller grows it and goes on) and after a page the dictionary overflowed
    on (the chunk falls back). Returns the pages done. Sequential, CPU; its reference is int_page page by page.
    """
    pos = 0
    for j in range(a.shape[0]):
        if use_dictionary and no_room(n_entries, vb[j] - va[j], table, entry_keys):
            return j
        levels_end, end, n_entries, dict_bytes, as_ids, lo, hi = int_page(
            valid, a[j], b[j], levels, values, va[j], vb[j], use_dictionary, table, entry_keys, n_entries, entry_size,
            dict_bytes, limit, ids, is32, out[pos:])
        record_page(res, j, pos, levels_end, end, n_entries, dict_bytes, as_ids, lo, hi)
        pos += end
        if use_dictionary and not as_ids:
            return j + 1
    return a.shape[0]
