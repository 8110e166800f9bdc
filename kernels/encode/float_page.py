"""One compiled call per page of a flat FLOAT / DOUBLE column (the wide tables' commonest page): its definition
levels, its statistics (min, max, NaN count, largest non-NaN value) and, while the chunk keeps its dictionary,
its values inserted and written as ids, where one call per section cost a GIL hand-off (and its Python around
it) each. Without the dictionary the page's PLAIN values are the input's own bits (no NaN) and are not copied
here: the caller compresses them straight from the input.

Geometry: sequential, CPU only; one call per page. It calls the section kernels (int_page.flat_levels,
stats.float_bounds, int_page.page_ids: dictionary.fixed_insert then rle.rle_encode) in turn, so its bytes are
theirs: those called one by one are its reference (tests/encode/test_float_pages.py).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .int_page import flat_levels, page_ids
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
