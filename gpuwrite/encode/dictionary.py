"""A column chunk's dictionary: first-occurrence order, parquet-java's byte accounting, grown page by page."""

from __future__ import annotations

import numpy as np

from gpuwrite.kernels.dictionary import bytes_insert, bytes_rehash, fixed_insert, fixed_rehash
from gpuwrite.kernels.plain import canonical_float_bits32, canonical_float_bits64, plain_byte_array

from ..columns import LeafData
from ..schema import BYTE_ARRAY, Leaf

# SPEC: DictionaryValuesWriter: an entry costs 4 (INT32/FLOAT), 8 (INT64/DOUBLE), 12 (INT96),
# the type length (FIXED_LEN_BYTE_ARRAY) or 4 + length (BINARY).
_FIXED_ENTRY_SIZE = {"int32": 4, "float": 4, "int64": 8, "double": 8}


def dictionary_keys(leaf: Leaf, data: LeafData, va: int, vb: int) -> np.ndarray:
    """Values va..vb as int64 keys: integers as is, floats as canonical IEEE bits (all NaNs one key)."""
    vals = data.values[va:vb]
    if leaf.kind == "float":
        return canonical_float_bits32(vals.view(np.int32)).astype(np.int64)
    if leaf.kind == "double":
        return canonical_float_bits64(vals.view(np.int64))
    return vals.astype(np.int64, copy=False)


def _next_pow2(n: int) -> int:
    """Smallest power of two >= n (at least 64)."""
    p = 64
    while p < n:
        p <<= 1
    return p


class Dictionary:
    """Entries of one chunk's dictionary and the hash table over them."""

    def __init__(self, leaf: Leaf, limit: int) -> None:
        self.leaf = leaf
        self.limit = limit
        self.fixed = leaf.kind in _FIXED_ENTRY_SIZE
        self.size = 0
        self.byte_size = 0
        self.table = np.full(64, -1, dtype=np.int32)
        if self.fixed:
            self.entry_size = _FIXED_ENTRY_SIZE[leaf.kind]
            self.keys = np.empty(32, dtype=np.int64)
        else:
            self.overhead = 4 if leaf.physical == BYTE_ARRAY else 0
            self.hashes = np.empty(32, dtype=np.uint64)
            self.offsets = np.zeros(33, dtype=np.int64)
            self.data = np.empty(256, dtype=np.uint8)

    def _reserve(self, count: int, nbytes: int) -> None:
        """Make room for `count` more entries (and `nbytes` more entry bytes)."""
        need = self.size + count
        if 2 * need > len(self.table):
            self.table = np.full(_next_pow2(2 * need), -1, dtype=np.int32)
            if self.fixed:
                fixed_rehash(self.keys, self.size, self.table)
            else:
                bytes_rehash(self.hashes, self.size, self.table)
        if self.fixed:
            if need > len(self.keys):
                self.keys = np.resize(self.keys, _next_pow2(need))
            return
        if need > len(self.hashes):
            cap = _next_pow2(need)
            self.hashes = np.resize(self.hashes, cap)
            offsets = np.zeros(cap + 1, dtype=np.int64)
            offsets[: self.size + 1] = self.offsets[: self.size + 1]
            self.offsets = offsets
        used = int(self.offsets[self.size])
        if used + nbytes > len(self.data):
            self.data = np.resize(self.data, _next_pow2(used + nbytes))

    def insert(self, data: LeafData, va: int, vb: int) -> tuple[np.ndarray, int]:
        """Ids of values va..vb; the second result is the offset of the value that overflowed the limit, or -1."""
        ids = np.empty(vb - va, dtype=np.int32)
        if self.fixed:
            keys = dictionary_keys(self.leaf, data, va, vb)
            self._reserve(vb - va, 0)
            self.size, self.byte_size, overflow = fixed_insert(
                keys, 0, len(keys), self.table, self.keys, self.size, self.entry_size, self.byte_size,
                self.limit, ids)
        else:
            nbytes = int(data.offsets[vb] - data.offsets[va])
            self._reserve(vb - va, nbytes)
            self.size, self.byte_size, overflow = bytes_insert(
                data.offsets, data.data, va, vb, self.table, self.hashes, self.offsets, self.data, self.size,
                self.overhead, self.byte_size, self.limit, ids)
        return ids, int(overflow)

    def plain_page(self, count: int) -> bytes:
        """The PLAIN dictionary page body holding the first `count` entries."""
        if self.fixed:
            keys = self.keys[:count]
            dtype = {"int32": "<i4", "float": "<i4", "int64": "<i8", "double": "<i8"}[self.leaf.kind]
            return keys.astype(dtype).tobytes()
        if self.overhead == 0:
            return self.data[: self.offsets[count]].tobytes()
        out = np.empty(int(self.offsets[count]) + 4 * count, dtype=np.uint8)
        end = plain_byte_array(self.offsets, self.data, 0, count, out, 0)
        return out[:end].tobytes()

    def page_bytes(self, count: int) -> int:
        """Byte size parquet-java accounts for the first `count` entries."""
        if self.fixed:
            return count * self.entry_size
        return int(self.offsets[count]) + self.overhead * count
