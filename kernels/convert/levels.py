"""Dremel repetition and definition levels from Arrow offsets and validity, one nesting step at a time.

A leaf's levels are built over "slots": one per entry the leaf will have. Each slot holds the position it
points at in the current node's array (-1 once a null or an empty list has ended it), its repetition level
and its definition level. Walking from the top-level column down to the leaf:

* an optional node (struct, list, map, leaf) ends the slots where it is null and adds one definition level
  to the others (`slot_optional`);
* a repeated node (the list / key_value level) turns each live slot into one slot per element: the first keeps
  the slot's repetition level, the others take the list's; all add one definition level; an empty list ends
  its slot (`slot_count` then, after a prefix sum, `slot_expand`).

Each `slot_*` function handles item i; the `*_all` loops run them on the CPU (inlined there: a call per
slot cost more than the slot's work), and `_jit.page_kernel` runs the same functions on a GPU with one thread
per slot.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from ..plan.level_meter import popcount


@jit_inline
def slot_optional(i: int, pos: np.ndarray, dfn: np.ndarray, valid: np.ndarray, required: bool,
                  bad: np.ndarray) -> None:
    """Optional node: end slot i if its node is null, else count the level. A required node must not be null
    where it is reached (bad[0] receives such a slot + 1)."""
    p = pos[i]
    if p < 0:
        return
    if valid.shape[0] > 0 and valid[p] == 0:
        if required:
            bad[0] = i + 1
            return
        pos[i] = -1
        return
    if not required:
        dfn[i] += 1


@jit_inline
def slot_count(i: int, pos: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> None:
    """Slots that slot i becomes at a repeated node: its element count, at least one."""
    p = pos[i]
    n = 1
    if p >= 0:
        n = offsets[p + 1] - offsets[p]
        if n < 1:
            n = 1
    counts[i] = n


@jit_inline
def slot_expand(i: int, pos: np.ndarray, rep: np.ndarray, dfn: np.ndarray, offsets: np.ndarray,
                start: np.ndarray, level: int, new_pos: np.ndarray, new_rep: np.ndarray, new_dfn: np.ndarray) -> None:
    """Write slot i's slots at start[i]: one per element (or one ended slot for a null or empty list)."""
    s = start[i]
    p = pos[i]
    if p < 0 or offsets[p + 1] == offsets[p]:
        new_pos[s] = -1
        new_rep[s] = rep[i]
        new_dfn[s] = dfn[i]
        return
    first = offsets[p]
    for k in range(offsets[p + 1] - first):
        new_pos[s + k] = first + k
        new_rep[s + k] = rep[i] if k == 0 else level
        new_dfn[s + k] = dfn[i] + 1


@jit
def optional_all(pos: np.ndarray, dfn: np.ndarray, valid: np.ndarray, required: bool, bad: np.ndarray) -> None:
    """slot_optional over every slot."""
    for i in range(pos.shape[0]):
        slot_optional(i, pos, dfn, valid, required, bad)


@jit
def count_all(pos: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> None:
    """slot_count over every slot."""
    for i in range(pos.shape[0]):
        slot_count(i, pos, offsets, counts)


@jit
def expand_all(pos: np.ndarray, rep: np.ndarray, dfn: np.ndarray, offsets: np.ndarray, start: np.ndarray,
               level: int, new_pos: np.ndarray, new_rep: np.ndarray, new_dfn: np.ndarray) -> None:
    """slot_expand over every slot."""
    for i in range(pos.shape[0]):
        slot_expand(i, pos, rep, dfn, offsets, start, level, new_pos, new_rep, new_dfn)


@jit
def level_counts(levels: np.ndarray, start: int, end: int, counts: np.ndarray) -> None:
    """counts[v] += number of levels[start:end] equal to v (a page's level histogram; counts is zeroed by the
    caller and has one slot per level up to the maximum). Sequential, CPU: one pass over uint8 levels where
    np.bincount would first widen them to intp. Levels up to 3 (most columns') are counted from their power
    sums, three running totals with no store per level (a histogram's increments of one slot wait on each
    other): about twice as fast."""
    n = counts.shape[0]
    if n > 4:
        for i in range(start, end):
            counts[levels[i]] += 1
        return
    s1 = 0
    s2 = 0
    s3 = 0
    for i in range(start, end):
        v = np.int64(levels[i])
        s1 += v
        s2 += v * v
        s3 += v * v * v
    # s_k = c1 + 2^k c2 + 3^k c3, solved for the counts of 3, 2 and 1
    c3 = (s3 - 3 * s2 + 2 * s1) // 6
    c2 = (s2 - s1 - 6 * c3) // 2
    c1 = s1 - 2 * c2 - 3 * c3
    counts[0] += (end - start) - c1 - c2 - c3
    if n > 1:
        counts[1] += c1
    if n > 2:
        counts[2] += c2
    if n > 3:
        counts[3] += c3


@jit
def block_counts(flags: np.ndarray, block: int, counts: np.ndarray) -> None:
    """counts[k] = number of nonzero flags[k * block:(k + 1) * block] for each k < len(counts) (the running
    non-null counts a page's first value index is found from). Sequential, CPU: one pass over uint8 flags where
    np.count_nonzero(axis=1) sums them through a widened copy."""
    for k in range(counts.shape[0]):
        total = 0
        for i in range(k * block, (k + 1) * block):
            total += flags[i]
        counts[k] = total


@jit
def bit_block_counts(words: np.ndarray, block_words: int, counts: np.ndarray) -> None:
    """`block_counts` from packed bits: counts[k] = set bits of words[k * block_words:(k + 1) * block_words]
    (uint64 words of a little-endian bitmap; a block of 4096 rows is 64 words), an eighth of the bytes the
    flag form reads. Sequential, CPU."""
    for k in range(counts.shape[0]):
        total = 0
        for i in range(k * block_words, (k + 1) * block_words):
            total += popcount(words[i])
        counts[k] = total


@jit
def present_index(pos: np.ndarray, rep: np.ndarray, at: np.ndarray, values_before: np.ndarray,
                  row_entry: np.ndarray) -> tuple[int, int, bool]:
    """A nested leaf's entries indexed in one pass (six NumPy passes and their temporaries before): at[:k] the
    present slots' positions in the leaf array (pos >= 0); values_before[i] the present slots before entry i
    (n + 1 values); row_entry the entries where rows start (rep == 0, or every entry when rep is empty: no
    repetition), then n. Returns (k, the row starts found (only len(row_entry) - 1 are stored: the caller
    checks the count), whether at[:k] is 0, 1, .., k - 1: the values need no gather). Sequential, CPU."""
    n = pos.shape[0]
    rows = row_entry.shape[0] - 1
    k = 0
    r = 0
    in_order = True
    # without branches on the data (a row start every 2-3 entries, at random, mispredicted half the time): each
    # slot written unconditionally, its counter advanced by the test
    if rep.shape[0] > 0:
        for i in range(n):
            values_before[i] = k
            row_entry[min(r, rows)] = i
            r += rep[i] == 0
            p = pos[i]
            at[k] = p
            in_order &= (p == k) | (p < 0)
            k += p >= 0
    else:
        for i in range(n):
            values_before[i] = k
            p = pos[i]
            at[k] = p
            in_order &= (p == k) | (p < 0)
            k += p >= 0
        r = n
        for i in range(min(n, rows)):
            row_entry[i] = i
    values_before[n] = k
    row_entry[rows] = n
    return k, r, in_order
