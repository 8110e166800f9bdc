"""The dictionaries of every column of a row group at once, value-parallel on a GPU, sequential here (the twins).

Entries are numbered in first-occurrence order and sized as parquet-java sizes them, exactly as the
sequential insert (`dictionary.fixed_insert` / `bytes_insert`) does; but instead of stopping at the value
that overflows the limit, every value is numbered and the per-value running totals let each page's decision
be read off afterwards: the entries and dictionary bytes after any value, and the first value whose entry
pushed the bytes past the limit.

Work is cut into chunks (`chunks`, int64[K, 3]: column, first value, values) of one column's values; the
column table (`kernels/plan/layout.py`) gives each dictionary column's hash table region (CT_TAB, CT_TABN), the
base of its per-value arrays (CT_KEYS) and of its per-entry arrays (CT_ENT, CT_ENTN entries). Device memory is
what bounds the design: the table has 4-byte slots (value indexes), keys are recomputed from the values instead
of being stored, the per-value arrays are int32 and share storage (`slot` becomes `first` in place, `first`
becomes `ids`), and the per-entry arrays hold only the entries a dictionary can have before it passes its byte
limit (SPEC: parquet-java DictionaryValuesWriter's maxDictionaryByteSize): later entries are never written to a
dictionary page. Steps, each one launch over all chunks (CUDA forms in `row_group_cuda.py`):

1. `dict_insert`: every table slot ends up holding the smallest value index with its key; `slot` per value.
2. `dict_first`: `first` per value (the smallest index with its key) and the chunk's new entries and bytes.
3. `dict_bases`: per column, exclusive sums of the chunks' new entries and bytes.
4. `dict_number`: entry number of each first occurrence (into `rank`), the value of each entry (`efirst`) and
   the dictionary bytes once it is in (`ebytes`), within the column's entry room, and the overflow value per
   column (the first value whose entry took the bytes past the limit).
5. `dict_ids`: id of each value = the number of its first occurrence.

The entries and bytes after any value i follow from `efirst` (ascending): the entries whose first value is at
most i (`entries_before`).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from ..encode.plain import canonical32, canonical64
from ..plan.layout import (
    CT_ENT,
    CT_ENTB,
    CT_ENTN,
    CT_KEYS,
    CT_KIND,
    CT_OFFS,
    CT_PHYSICAL,
    CT_TAB,
    CT_TABN,
    CT_VALS,
    CT_WIDTH,
    K_DOUBLE,
    K_FLOAT,
    K_INT32,
    K_INT64,
)
from .by_page import _bytes_equal, hash_bytes

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
NO_OVERFLOW = np.int64(2**63 - 1)
BYTE_ARRAY_TYPE = 6  # parquet Type.BYTE_ARRAY: entries cost their length plus a 4-byte length prefix
CHUNK = 4096  # values per chunk


@jit
def fixed_key(cols: np.ndarray, c: int, i: int, v32: np.ndarray, v64: np.ndarray) -> np.int64:
    """The dictionary key of value i of fixed-width column c (floats: canonical IEEE bits)."""
    kind = cols[c, CT_KIND]
    base = cols[c, CT_VALS]
    if kind == K_INT32:
        return np.int64(v32[base + i])
    if kind == K_FLOAT:
        return canonical32(np.int64(v32[base + i]))
    if kind == K_DOUBLE:
        return canonical64(np.int64(v64[base + i]))
    return np.int64(v64[base + i])


@jit
def is_fixed(cols: np.ndarray, c: int) -> bool:
    """Whether column c's dictionary keys are its values (fixed width) rather than hashes of bytes."""
    kind = cols[c, CT_KIND]
    return kind == K_INT32 or kind == K_INT64 or kind == K_FLOAT or kind == K_DOUBLE


@jit
def value_key(cols: np.ndarray, c: int, i: int, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray,
              dat: np.ndarray) -> np.int64:
    """Key (fixed width) or hash (byte values) of value i of column c."""
    if is_fixed(cols, c):
        return fixed_key(cols, c, i, v32, v64)
    o = cols[c, CT_OFFS]
    return np.int64(hash_bytes(dat, idx[o + i], idx[o + i + 1]))


@jit
def home_slot(cols: np.ndarray, c: int, key: np.int64) -> np.int64:
    """First slot probed for `key` in column c's table of CT_TABN slots (any size: the mixed key's top 32 bits
    scaled to the size, so the table need not be rounded up to a power of two)."""
    h = np.uint64(key) * _GOLDEN
    return np.int64(((h >> np.uint64(32)) * np.uint64(cols[c, CT_TABN])) >> np.uint64(32))


@jit
def next_slot(cols: np.ndarray, c: int, s: np.int64) -> np.int64:
    """The slot probed after `s` in column c's table (linear probing, wrapping at its end)."""
    s += 1
    if s == cols[c, CT_TABN]:
        return np.int64(0)
    return s


@jit
def same_value(cols: np.ndarray, c: int, i: int, key: np.int64, j: int, v32: np.ndarray, v64: np.ndarray,
               idx: np.ndarray, dat: np.ndarray) -> bool:
    """Whether value j of column c equals value i, whose key is `key` (fixed widths: the keys are the values;
    byte values compared byte by byte: no per-value key array is kept)."""
    if is_fixed(cols, c):
        return fixed_key(cols, c, j, v32, v64) == key
    o = cols[c, CT_OFFS]
    return _bytes_equal(dat, idx[o + i], idx[o + i + 1], dat, idx[o + j], idx[o + j + 1])


@jit
def entry_size(cols: np.ndarray, c: int, i: int, idx: np.ndarray) -> np.int64:
    """Bytes parquet-java counts for value i of column c as a new entry (SPEC: DictionaryValuesWriter: 4 / 8
    for fixed widths, the length plus 4 for BYTE_ARRAY, the length for FIXED_LEN_BYTE_ARRAY and INT96)."""
    kind = cols[c, CT_KIND]
    if kind == K_INT32 or kind == K_FLOAT:
        return np.int64(4)
    if kind == K_INT64 or kind == K_DOUBLE:
        return np.int64(8)
    o = cols[c, CT_OFFS]
    n = idx[o + i + 1] - idx[o + i]
    if cols[c, CT_PHYSICAL] == BYTE_ARRAY_TYPE:
        return np.int64(n + 4)
    return np.int64(n)


@jit
def dict_insert(n: int, chunks: np.ndarray, cols: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray,
                dat: np.ndarray, tab: np.ndarray, slot: np.ndarray) -> None:
    """Step 1 twin: values in order into their column's table (open addressing, linear probing, 4-byte slots
    holding value indexes, -1 empty); a slot keeps the first (smallest) value index with its key;
    slot[CT_KEYS + i] = the slot of value i's key."""
    for k in range(n):
        c = chunks[k, 0]
        base = cols[c, CT_KEYS]
        t0 = cols[c, CT_TAB]
        for i in range(chunks[k, 1], chunks[k, 1] + chunks[k, 2]):
            key = value_key(cols, c, i, v32, v64, idx, dat)
            s = home_slot(cols, c, key)
            while True:
                cur = tab[t0 + s]
                if cur < 0:
                    tab[t0 + s] = i
                    break
                if same_value(cols, c, i, key, cur, v32, v64, idx, dat):
                    if i < cur:
                        tab[t0 + s] = i
                    break
                s = next_slot(cols, c, s)
            slot[base + i] = s


@jit
def dict_first(n: int, chunks: np.ndarray, cols: np.ndarray, idx: np.ndarray, tab: np.ndarray,
               slot: np.ndarray, first: np.ndarray, totals: np.ndarray) -> None:
    """Step 2 twin: first[CT_KEYS + i] = the first value with value i's key; totals[k] = (new entries, their
    bytes) in chunk k. `first` may be `slot` itself (each value's slot is read before its first is written)."""
    for k in range(n):
        c = chunks[k, 0]
        base = cols[c, CT_KEYS]
        t0 = cols[c, CT_TAB]
        count = np.int64(0)
        nbytes = np.int64(0)
        for i in range(chunks[k, 1], chunks[k, 1] + chunks[k, 2]):
            f = tab[t0 + slot[base + i]]
            first[base + i] = f
            if f == i:
                count += 1
                nbytes += entry_size(cols, c, i, idx)
        totals[k, 0] = count
        totals[k, 1] = nbytes


@jit
def dict_bases(n: int, col_chunks: np.ndarray, totals: np.ndarray, bases: np.ndarray) -> None:
    """Step 3 twin (on a GPU `dict_bases_block`: a block per column, a block scan over its chunks): bases[k] =
    new entries and bytes of the column's chunks before chunk k; col_chunks[c] = (first chunk, chunks) of column c (chunks of a column are consecutive)."""
    for c in range(n):
        e = np.int64(0)
        b = np.int64(0)
        for k in range(col_chunks[c, 0], col_chunks[c, 0] + col_chunks[c, 1]):
            bases[k, 0] = e
            bases[k, 1] = b
            e += totals[k, 0]
            b += totals[k, 1]


@jit
def dict_number(n: int, chunks: np.ndarray, cols: np.ndarray, idx: np.ndarray, limit: int, bases: np.ndarray,
                first: np.ndarray, rank: np.ndarray, efirst: np.ndarray, ebytes: np.ndarray,
                overflow: np.ndarray) -> None:
    """Step 4 twin: for each first occurrence its entry number (rank[CT_KEYS + i]); for each entry e within the
    column's room (CT_ENTN) its value (efirst[CT_ENT + e]) and, where entries differ in size, the dictionary
    bytes once it is in (ebytes[CT_ENTB + e]); overflow[c] = the first value whose entry took the bytes past `limit` (NO_OVERFLOW when
    none; the caller fills it)."""
    for k in range(n):
        c = chunks[k, 0]
        base = cols[c, CT_KEYS]
        ent = cols[c, CT_ENT]
        room = cols[c, CT_ENTN]
        eb = cols[c, CT_ENTB]
        e = bases[k, 0]
        b = bases[k, 1]
        for i in range(chunks[k, 1], chunks[k, 1] + chunks[k, 2]):
            if first[base + i] == i:
                rank[base + i] = e
                b += entry_size(cols, c, i, idx)
                if e < room:
                    efirst[ent + e] = i
                    if eb >= 0:
                        ebytes[eb + e] = b
                e += 1
                if b > limit and i < overflow[c]:
                    overflow[c] = i


@jit
def dict_ids(n: int, chunks: np.ndarray, cols: np.ndarray, first: np.ndarray, rank: np.ndarray,
             ids: np.ndarray) -> None:
    """Step 5 twin: ids[CT_KEYS + i] = the entry number of value i's first occurrence. `ids` may be `first`
    itself (each value's first is read before its id is written; ranks are read from `rank`)."""
    for k in range(n):
        c = chunks[k, 0]
        base = cols[c, CT_KEYS]
        for i in range(chunks[k, 1], chunks[k, 1] + chunks[k, 2]):
            ids[base + i] = rank[base + first[base + i]]


@jit
def entries_before(cols: np.ndarray, c: int, end: int, efirst: np.ndarray) -> int:
    """Entries of column c's dictionary once values 0..end-1 are inserted: the entries whose first value is
    below `end` (binary search: `efirst` ascends; unwritten room holds 2**31 - 1, above any value index). Exact while the dictionary
    is within its byte limit; capped at the room (CT_ENTN) past it."""
    ent = cols[c, CT_ENT]
    lo = np.int64(0)
    hi = np.int64(cols[c, CT_ENTN])
    while lo < hi:
        mid = (lo + hi) // 2
        if efirst[ent + mid] < end:
            lo = mid + 1
        else:
            hi = mid
    return int(lo)


@jit
def fixed_entry_size(cols: np.ndarray, c: int) -> int:
    """Bytes of every dictionary entry of column c when they are all the same size (`entry_size`), else 0
    (BYTE_ARRAY: each entry its length plus 4)."""
    kind = cols[c, CT_KIND]
    if kind == K_INT32 or kind == K_FLOAT:
        return 4
    if kind == K_INT64 or kind == K_DOUBLE:
        return 8
    if cols[c, CT_PHYSICAL] == BYTE_ARRAY_TYPE or cols[c, CT_WIDTH] <= 0:
        return 0
    return int(cols[c, CT_WIDTH])


@jit
def dictionary_bytes(cols: np.ndarray, c: int, entries: int, ebytes: np.ndarray) -> int:
    """Dictionary bytes of column c's first `entries` entries (within its room): their count times the entry
    size, or the bytes kept once the last of them was in (BYTE_ARRAY)."""
    if entries <= 0:
        return 0
    size = fixed_entry_size(cols, c)
    if size > 0:
        return entries * size
    return int(ebytes[cols[c, CT_ENTB] + entries - 1])
