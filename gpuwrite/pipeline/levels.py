"""A nested leaf's levels and value positions: walks its Arrow steps with the Dremel kernels (kernels/convert/levels.py).

Starting from one slot per row, each step of the leaf (`schema.Leaf.steps`) either checks a node's validity
or enters struct fields, list elements or map entries; what is left are the entries of the leaf column, with
their repetition and definition levels, and the positions of the present values in the leaf's Arrow array.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from gpuwrite.kernels.convert.levels import count_all, expand_all, optional_all, present_index

from ..errors import GpuwriteError
from ..schema import Leaf

NO_LEVELS = np.zeros(0, dtype=np.uint8)  # `present_index`'s rep for a leaf without repetition


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


@dataclass
class EntryIndex:
    """A leaf's slots indexed: the present values' positions in the leaf array, the values before each entry
    (entries + 1), the entry where each row starts (rows + 1), and whether the positions are 0, 1, 2, ..
    (the leaf's values are then taken as they are, with no gather)."""

    at: np.ndarray
    values_before: np.ndarray
    row_entry: np.ndarray
    in_order: bool


@dataclass
class LevelMemo:
    """What sibling leaves of one Arrow array share: the walk's state before each struct field (by step prefix),
    the entry index of each such state that a leaf's walk ended at with its slot positions unchanged, and the
    definition levels of such a state after optional nodes without nulls (the fields of a struct without nulls
    of their own: indexed and leveled once for all of them, one array each, which the encoders see as the same
    levels: `encode.chunk.SharedLevels`)."""

    walked: dict[tuple, Walked] = field(default_factory=dict)
    indexed: dict[tuple, EntryIndex] = field(default_factory=dict)
    counted: dict[tuple[tuple, int], np.ndarray] = field(default_factory=dict)  # (state, levels added): dfn


def walk(arr: pa.Array, leaf: Leaf, memo: LevelMemo | None = None) -> tuple[Walked, tuple | None]:
    """((slot positions in the leaf array, -1 where no value; repetition levels; definition levels; leaf
    array), the key of a `memo` state with the same slot positions, or None).

    With `memo` (one per Arrow array), the state reached before each struct field is kept, and a sibling leaf
    walked later starts from the longest step prefix it shares (its list expansions are not done again). Kept
    arrays are shared, never changed: a step that would change one in place copies it first."""
    n = len(arr)
    pos = np.arange(n, dtype=np.int64)
    rep = np.zeros(n, dtype=np.uint8)
    dfn = np.zeros(n, dtype=np.uint8)
    bad = np.zeros(1, dtype=np.int64)
    cur = arr
    first = 0
    shared_pos = shared_dfn = False  # pos, dfn are a memo state's (copied before they change)
    same: tuple | None = None  # the memo state whose positions pos still equals
    bumps = 0  # optional nodes without nulls since that state: each added a level to every live slot
    if memo is not None:
        for k in range(len(leaf.steps) - 1, 0, -1):
            hit = memo.walked.get(leaf.steps[:k])
            if hit is not None:
                pos, rep, dfn, cur = hit
                first, shared_pos, shared_dfn, same, bumps = k, True, True, leaf.steps[:k], 0
                break
    for k in range(first, len(leaf.steps)):
        step = leaf.steps[k]
        kind = step[0]
        if memo is not None and kind == "field" and leaf.steps[:k] not in memo.walked:
            memo.walked[leaf.steps[:k]] = (pos, rep, dfn, cur)
            shared_pos, shared_dfn, same, bumps = True, True, leaf.steps[:k], 0
        if kind == "node":
            valid, nullable = _valid(cur), step[1]
            if memo is not None and same is not None and nullable and not len(valid):
                # the state's slots with `bumps` levels added: the same levels for every leaf that gets here
                bumps += 1
                counted = memo.counted.get((same, bumps))
                if counted is None:
                    counted = dfn.copy() if shared_dfn else dfn
                    optional_all(pos, counted, valid, False, bad)
                    memo.counted[(same, bumps)] = counted
                dfn, shared_dfn = counted, True
                continue
            if nullable and shared_dfn:  # an optional node counts a level in place
                dfn, shared_dfn = dfn.copy(), False
            if nullable and len(valid):  # and its nulls end slots in place
                pos, shared_pos, same = pos.copy() if shared_pos else pos, False, None
            optional_all(pos, dfn, valid, not nullable, bad)
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
            pos, rep, dfn, shared_pos, shared_dfn, same = new_pos, new_rep, new_dfn, False, False, None
            cur = cur.values
    return (pos, rep, dfn, cur), same


def entry_index(pos: np.ndarray, rep: np.ndarray | None, rows: int, memo: LevelMemo | None = None,
                same: tuple | None = None) -> EntryIndex:
    """The entry index of a leaf's slots over `rows` rows (`rep` None: no repetition, an entry per row), one
    compiled pass; shared through `memo` by the leaves whose walk ended at the positions of its state `same`."""
    if memo is not None and same is not None and same in memo.indexed:
        return memo.indexed[same]
    at = np.empty(len(pos), dtype=np.int64)
    values_before = np.empty(len(pos) + 1, dtype=np.int64)
    row_entry = np.empty(rows + 1, dtype=np.int64)
    count, starts, in_order = present_index(pos, NO_LEVELS if rep is None else rep, at, values_before, row_entry)
    if starts != rows:
        raise AssertionError(f"{starts} row starts among the levels of {rows} rows")
    index = EntryIndex(at[:count], values_before, row_entry, bool(in_order))
    if memo is not None and same is not None:
        memo.indexed[same] = index
    return index
