"""A nested leaf's levels and value positions: walks its Arrow steps with the Dremel kernels (kernels/convert/levels.py).

Starting from one slot per row, each step of the leaf (`schema.Leaf.steps`) either checks a node's validity
or enters struct fields, list elements or map entries; what is left are the entries of the leaf column, with
their repetition and definition levels, and the positions of the present values in the leaf's Arrow array.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from gpuwrite.kernels.convert.levels import count_all, expand_all, optional_all

from ..errors import GpuwriteError
from ..schema import Leaf


def _valid(arr: pa.Array) -> np.ndarray:
    """Validity per position as uint8 (empty when the array has no nulls)."""
    if arr.null_count == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.asarray(arr.is_valid()).view(np.uint8)


def _offsets(arr: pa.Array, step: tuple) -> np.ndarray:
    """Element offsets of a list, map or fixed-size list array, into its (unsliced) values."""
    if step[0] == "fixed":
        size = step[2]
        return (np.arange(len(arr) + 1, dtype=np.int64) + arr.offset) * size
    return np.asarray(arr.offsets).astype(np.int64)


Walked = tuple[np.ndarray, np.ndarray, np.ndarray, pa.Array]
"""Slot positions in the current array (-1 where no value), repetition levels, definition levels, the array."""


def walk(arr: pa.Array, leaf: Leaf, memo: dict[tuple, Walked] | None = None) -> Walked:
    """(slot positions in the leaf array, -1 where no value; repetition levels; definition levels; leaf array).

    With `memo` (one per Arrow array), the state reached before each struct field is kept, and a sibling leaf
    walked later starts from the longest step prefix it shares (its list expansions are not done again)."""
    n = len(arr)
    pos = np.arange(n, dtype=np.int64)
    rep = np.zeros(n, dtype=np.uint8)
    dfn = np.zeros(n, dtype=np.uint8)
    bad = np.zeros(1, dtype=np.int64)
    cur = arr
    first = 0
    if memo:
        for k in range(len(leaf.steps) - 1, 0, -1):
            hit = memo.get(leaf.steps[:k])
            if hit is not None:  # positions and definition levels change in place below: start from copies
                pos, rep, dfn, cur = hit[0].copy(), hit[1], hit[2].copy(), hit[3]
                first = k
                break
    for k in range(first, len(leaf.steps)):
        step = leaf.steps[k]
        kind = step[0]
        if memo is not None and kind == "field" and leaf.steps[:k] not in memo:
            memo[leaf.steps[:k]] = (pos.copy(), rep, dfn.copy(), cur)
        if kind == "node":
            optional_all(pos, dfn, _valid(cur), not step[1], bad)
            if bad[0]:
                raise GpuwriteError(f"column {leaf.dotted!r}: a non-nullable field holds a null (row entry "
                                    f"{int(bad[0]) - 1}); declare the field nullable or fill the nulls")
        elif kind == "field":
            cur = cur.field(step[1])
        else:
            offsets = _offsets(cur, step)
            counts = np.empty(len(pos), dtype=np.int64)
            count_all(pos, offsets, counts)
            start = np.zeros(len(pos), dtype=np.int64)
            np.cumsum(counts[:-1], out=start[1:])
            total = int(start[-1] + counts[-1]) if len(pos) else 0
            new_pos = np.empty(total, dtype=np.int64)
            new_rep = np.empty(total, dtype=np.uint8)
            new_dfn = np.empty(total, dtype=np.uint8)
            expand_all(pos, rep, dfn, offsets, start, step[1], new_pos, new_rep, new_dfn)
            pos, rep, dfn = new_pos, new_rep, new_dfn
            cur = cur.values
    return pos, rep, dfn, cur
