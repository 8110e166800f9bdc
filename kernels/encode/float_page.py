"""One compiled call per page of a flat FLOAT / DOUBLE column (the wide tables' commonest page): its definition
levels, its statistics (min, max, NaN count, largest non-NaN value) and, while the chunk keeps its dictionary,
its values inserted and written as ids, where one call per section cost a GIL hand-off (and its Python around
it) each. Without the dictionary the page's PLAIN values are the input's own bits (no NaN) and are not copied
here: the caller compresses them straight from the input.

Geometry: sequential, CPU only; one call per page (`float_page`), or per column batch (`float_pages`). It
calls the section kernels (int_page.flat_levels, stats.float_bounds, int_page.page_ids: dictionary.fixed_insert
then rle.rle_encode) in turn, so its bytes are theirs: those called one by one are its reference
(tests/encode/test_float_pages.py).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .int_page import flat_levels, no_room, page_ids, record_page
from .stats import float_bounds


@jit
def float_page(valid: np.ndarray, a: int, b: int, levels: bool, bits: np.ndarray, va: int, vb: int, wide: bool,
               use_dictionary: bool, table: np.ndarray, entry_keys: np.ndarray, n_entries: int, entry_size: int,
               dict_bytes: int, limit: int, ids: np.ndarray, out: np.ndarray) -> tuple:
    """Encode rows a..b (values va..vb, as raw IEEE bits: int32 floats, or int64 doubles when `wide`) of a flat
    leaf into `out`: its definition levels (when `levels`: see int_page.flat_levels), then, with
    `use_dictionary` and no NaN in the page, its values inserted into the dictionary (fixed_insert's arguments,
    the raw bits being the canonical keys) and, unless it overflowed, written as ids (a bit-width byte then the
    RLE / bit-packed runs). A page holding a NaN is not inserted (its keys need the canonical copy).

    Returns (levels_end, values_end, n_entries, dict_bytes, as_ids, lo, hi, nans, top, has_top): the canonical
    bits of the page's min and max under Java's Float/Double.compare (a NaN bound as Java's one NaN), its NaN
    count and the bits of its largest non-NaN value (`has_top`: there is one), as float_bounds finds them; lo,
    hi and top are 0 for a page without values.
    """
    pos = flat_levels(valid, a, b, vb - va, out) if levels else 0
    levels_end = pos
    lo = np.int64(0)
    hi = np.int64(0)
    top = np.int64(0)
    has_top = False
    nans = 0
    if vb > va:
        lo, hi, nans, top, has_top = float_bounds(bits, va, vb, wide)
    as_ids = False
    if use_dictionary and nans == 0:
        n_entries, dict_bytes, as_ids, pos = page_ids(bits, va, vb, table, entry_keys, n_entries, entry_size,
                                                      dict_bytes, limit, ids, out, pos)
    return levels_end, pos, n_entries, dict_bytes, as_ids, lo, hi, nans, top, has_top


@jit
def float_pages(valid: np.ndarray, a: np.ndarray, b: np.ndarray, va: np.ndarray, vb: np.ndarray, levels: bool,
                bits: np.ndarray, wide: bool, use_dictionary: bool, table: np.ndarray, entry_keys: np.ndarray,
                n_entries: int, entry_size: int, dict_bytes: int, limit: int, ids: np.ndarray, out: np.ndarray,
                res: np.ndarray) -> int:
    """`float_page` of a column's pages j = 0.. in turn (rows a[j]..b[j], values va[j]..vb[j]), each written into
    `out` where the last ended, its results in res[j, R_*] (int_page's columns; lo and hi the canonical bits):
    one call for a column's batch of pages. `ids` holds the largest page's values; `out` every page's bound.

    Stops before a page the dictionary has no room for (as int_pages), before a page holding a NaN (its
    statistics and keys need the per-page path; float_page leaves the dictionary as it was for it) and after a
    page the dictionary overflowed on. Returns the pages done. Sequential, CPU; its reference is float_page
    page by page.
    """
    pos = 0
    for j in range(a.shape[0]):
        if use_dictionary and no_room(n_entries, vb[j] - va[j], table, entry_keys):
            return j
        levels_end, end, entries, nbytes, as_ids, lo, hi, nans, top, has_top = float_page(
            valid, a[j], b[j], levels, bits, va[j], vb[j], wide, use_dictionary, table, entry_keys, n_entries,
            entry_size, dict_bytes, limit, ids, out[pos:])
        if nans > 0:
            return j
        n_entries, dict_bytes = entries, nbytes
        record_page(res, j, pos, levels_end, end, n_entries, dict_bytes, as_ids, lo, hi)
        pos += end
        if use_dictionary and not as_ids:
            return j + 1
    return a.shape[0]
