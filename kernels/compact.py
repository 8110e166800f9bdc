"""Host conversion of Arrow values the CPU path keeps (nulls dropped): one pass where NumPy needs a strided
gather, a boolean index and a cast, each a full copy.

Geometry: sequential, CPU only (the device path converts in kernels/convert.py); each function walks the rows
of one Arrow array once. Inputs: the array's value words as flat int64 (`stride` words per value, the array's
offset already applied) and its validity (bool per row, or empty when no row is null); output: one value per
present row, in row order.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def compact_words(words: np.ndarray, stride: int, valid: np.ndarray, out: np.ndarray) -> int:
    """out[j] = words[i * stride] for the j-th present row i (all rows when `valid` is empty), cast to out's
    type (decimals of precision <= 9 or <= 18 as INT32 / INT64: their low word holds the value). With a
    validity, out needs one slot more than the present rows. Returns the number of values stored."""
    rows = words.shape[0] // stride
    j = 0
    if valid.shape[0] == 0:
        for i in range(rows):
            out[i] = words[i * stride]
        return rows
    for i in range(rows):  # branch-free: every row is stored, only present rows advance (out has a spare slot)
        out[j] = words[i * stride]
        j += valid[i]
    return j
