"""A column chunk's dictionary: first-occurrence order, parquet-java's byte accounting, grown page by page,
and its PLAIN dictionary page (the same bytes whichever backend found the entries)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpuwrite.kernels.dictionary.by_page import (
    bytes_insert,
    bytes_rehash,
    fixed_insert,
    fixed_rehash,
    touch_lines,
)
from gpuwrite.kernels.encode.plain import plain_byte_array

from ..pipeline.buffers import Arena
from ..pipeline.leafdata import Array, LeafData
from ..schema import BYTE_ARRAY, Leaf
from .rules import canonical_bits

ARENA_MIN_BYTES = 1 << 16  # smaller tables and keys come from malloc (a chunk's first ones: 256 bytes)
# SPEC: DictionaryValuesWriter: an entry costs 4 (INT32/FLOAT), 8 (INT64/DOUBLE), 12 (INT96),
# the type length (FIXED_LEN_BYTE_ARRAY) or 4 + length (BINARY).
FIXED_ENTRY_SIZE = {"int32": 4, "float": 4, "int64": 8, "double": 8}
_PLAIN_DTYPE = {"int32": "<i4", "float": "<i4", "int64": "<i8", "double": "<i8"}


def dictionary_keys(leaf: Leaf, values: Array) -> Array:
    """Fixed-width values as int32 / int64 keys, without a copy where it can: integers as they are, floats as
    canonical IEEE bits (all NaNs one key). The kernels widen a 32-bit key as int64 would hold it."""
    if leaf.kind in ("float", "double"):
        return canonical_bits(leaf.kind, values)
    return values


def plain_fixed_entries(leaf: Leaf, keys: Array) -> bytes:
    """PLAIN dictionary page body of fixed-width entries given as their int64 keys."""
    return keys.astype(_PLAIN_DTYPE[leaf.kind]).tobytes()


def plain_byte_entries(leaf: Leaf, offsets: Array, data: Array, count: int) -> bytes:
    """PLAIN dictionary page body of the first `count` byte entries (BYTE_ARRAY with 4-byte lengths)."""
    if leaf.physical != BYTE_ARRAY:
        return data[offsets[0]: offsets[count]].tobytes()
    out = np.empty(int(offsets[count] - offsets[0]) + 4 * count, dtype=np.uint8)
    end = plain_byte_array(offsets, data, 0, count, out, 0)
    return out[:end].tobytes()


def plain_page_of_values(leaf: Leaf, data: LeafData, first: Array) -> bytes:
    """PLAIN dictionary page body whose entries are the window's values at indices `first`, in order (the
    GPU backend numbers entries by their first occurrence)."""
    if leaf.fixed_width:
        return plain_fixed_entries(leaf, dictionary_keys(leaf, data.value_array[first]))
    offsets, raw = data.byte_offsets, data.byte_data
    starts, ends = offsets[first], offsets[first + 1]
    lengths = ends - starts
    gathered = np.zeros(len(first) + 1, dtype=np.int64)
    np.cumsum(lengths, out=gathered[1:])
    picks = np.repeat(starts - gathered[:-1], lengths) + np.arange(int(gathered[-1]), dtype=np.int64)
    return plain_byte_entries(leaf, gathered, raw[picks], len(first))


def _grown(array: Array, used: int, capacity: int, empty: Callable[[int, Any], Array] | None = None) -> Array:
    """`array` with room for `capacity` items (rows), its first `used` kept (the rest is never read: no fill,
    unlike np.resize, which tiles the old items over the new room); the new one from `empty(count, dtype)` when
    given (1-D arrays: `Dictionary._array`, the arena), else from NumPy."""
    if empty is not None:
        assert array.ndim == 1, "empty(count, dtype) makes 1-D arrays"
        out = empty(capacity, array.dtype)
    else:
        out = np.empty((capacity, *array.shape[1:]), dtype=array.dtype)
    out[:used] = array[:used]
    return out


def _next_pow2(n: int) -> int:
    """Smallest power of two >= n (at least 64)."""
    p = 64
    while p < n:
        p <<= 1
    return p


class Dictionary:
    """Entries of one chunk's dictionary and the hash table over them."""

    def __init__(self, leaf: Leaf, limit: int, arena: Arena | None = None) -> None:
        """`arena`: where hash tables and fixed-width keys of ARENA_MIN_BYTES or more come from (kept slabs:
        `buffers.Arena`; malloc when None)."""
        self.leaf = leaf
        self.limit = limit
        self.arena = arena
        self.fixed = leaf.kind in FIXED_ENTRY_SIZE
        self.size = 0
        self.byte_size = 0
        self.table = np.full(64, -1, dtype=np.int32)
        if self.fixed:
            self.entry_size = FIXED_ENTRY_SIZE[leaf.kind]
            self.keys = np.empty(32, dtype=np.int64)
        else:
            self.overhead = 4 if leaf.physical == BYTE_ARRAY else 0
            # per entry its hash and first two 8-byte words (bytes_insert's `entry_head`)
            self.hashes = np.empty((32, 3), dtype=np.uint64)
            self.offsets = np.zeros(33, dtype=np.int64)
            self.data = np.empty(256, dtype=np.uint8)

    def _reserve(self, count: int, nbytes: int) -> None:
        """Make room for `count` more entries (and `nbytes` more entry bytes)."""
        need = self.size + count
        if 2 * need > len(self.table):
            self.table = self._array(_next_pow2(2 * need), np.int32)
            self.table.fill(-1)
            self._rehash()
        if self.fixed:
            if need > len(self.keys):
                self.keys = _grown(self.keys, self.size, _next_pow2(need), self._array)
            return
        if need > len(self.hashes):
            cap = _next_pow2(need)
            self.hashes = _grown(self.hashes, self.size, cap)
            offsets = np.zeros(cap + 1, dtype=np.int64)
            offsets[: self.size + 1] = self.offsets[: self.size + 1]
            self.offsets = offsets
        used = int(self.offsets[self.size])
        if used + nbytes > len(self.data):
            self.data = _grown(self.data, used, _next_pow2(used + nbytes))

    def _array(self, count: int, dtype: Any) -> Array:
        """An uninitialised 1-D array for the table or the keys: from the arena when it is ARENA_MIN_BYTES or more
        (a wide table's 80 first pages made 40 MB of them a write, which another library's malloc_trim handed
        back to the system between writes: `buffers.Arena`)."""
        nbytes = count * np.dtype(dtype).itemsize
        if self.arena is None or nbytes < ARENA_MIN_BYTES:
            return np.empty(count, dtype=dtype)
        return self.arena.take(nbytes).view(dtype)

    def reserve(self, count: int) -> None:
        """Make room for `count` more fixed-width entries (before fixed_insert is called on them directly)."""
        need = self.size + count
        if 2 * need > len(self.table) or need > len(self.keys):  # (else nothing to do: a call a page saved)
            self._reserve(count, 0)

    def warm(self) -> None:
        """Read the hash table and the entries once, sequentially, before a run of pages is inserted: a
        streaming writer encodes each column's pages a step at a time, and its other columns' work evicts
        this dictionary in between, so each lookup of the step's first page would otherwise miss the cache
        (a fifth of the int pages' time in a Spark task)."""
        touch_lines(self.table.view(np.uint8), self.table.nbytes)
        if self.fixed:
            touch_lines(self.keys.view(np.uint8), 8 * self.size)
            return
        touch_lines(self.hashes.view(np.uint8).reshape(-1), self.hashes[:self.size].nbytes)
        touch_lines(self.offsets.view(np.uint8), 8 * (self.size + 1))
        touch_lines(self.data, int(self.offsets[self.size]))

    def _rehash(self) -> None:
        """Rebuild the hash table over the current entries."""
        if self.fixed:
            fixed_rehash(self.keys, self.size, self.table)
        else:
            bytes_rehash(self.hashes, self.size, self.table)

    def insert(self, data: LeafData, va: int, vb: int, no_nan: bool = False) -> tuple[Array, int]:
        """Ids of values va..vb; the second result is the offset of the value that overflowed the limit, or -1.
        `no_nan`: float / double values known to hold no NaN, whose bits are then the keys as they are."""
        ids = np.empty(vb - va, dtype=np.int32)
        if self.fixed:
            values = data.value_array[va:vb]
            keys = values.view(_PLAIN_DTYPE[self.leaf.kind]) if no_nan and self.leaf.kind in ("float", "double") \
                else dictionary_keys(self.leaf, values)
            self._reserve(vb - va, 0)
            self.size, self.byte_size, overflow = fixed_insert(
                keys, 0, len(keys), self.table, self.keys, self.size, self.entry_size, self.byte_size,
                self.limit, ids)
        else:
            offsets = data.byte_offsets
            # entries are copied only while the dictionary stays within its limit (see bytes_insert)
            nbytes = min(int(offsets[vb] - offsets[va]), max(0, self.limit - self.byte_size))
            self._reserve(vb - va, nbytes)
            self.size, self.byte_size, overflow = bytes_insert(
                offsets, data.byte_data, va, vb, self.table, self.hashes, self.offsets, self.data, self.size,
                self.overhead, self.byte_size, self.limit, ids)
        return ids, int(overflow)

    def truncate(self, size: int, byte_size: int) -> None:
        """Forget every entry after the first `size` (pages that added them were dropped); ids stay the same,
        as entries are numbered in first-occurrence order."""
        if size >= self.size:
            return
        self.size, self.byte_size = size, byte_size
        self.table.fill(-1)
        self._rehash()

    def plain_page(self, count: int) -> bytes:
        """The PLAIN dictionary page body holding the first `count` entries."""
        if self.fixed:
            return plain_fixed_entries(self.leaf, self.keys[:count])
        return plain_byte_entries(self.leaf, self.offsets, self.data, count)
