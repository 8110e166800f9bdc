"""Value-parallel dictionary build on the GPU, deterministic: every slot ends up holding the smallest value
index with its key, so entries are numbered in first-occurrence order exactly as the sequential CPU kernels
(`dictionary.fixed_insert` / `bytes_insert`, their twins in the tests) number them.

One thread per value: claim an empty slot with an atomic compare-and-swap, or, on finding the same key,
lower the slot's index with an atomic min. Importing this module imports numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from ..encode.plain import canonical32, canonical64
from .by_page import _bytes_equal, hash_bytes

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_hash_bytes = device(hash_bytes)
_equal = device(_bytes_equal)


@cuda.jit(device=True)
def _claim(table: np.ndarray, slot: int, i: int) -> int:
    """-1 when value i takes the empty slot, else the index of the value already holding it."""
    cur = table[slot]
    if cur == -1:
        cur = cuda.atomic.cas(table, slot, np.int64(-1), np.int64(i))  # type: ignore[call-arg]
    return cur  # type: ignore[no-any-return]


@cuda.jit(device=True)
def _settle(table: np.ndarray, slot: int, i: int, slot_of: np.ndarray, claimed: bool) -> None:
    """Value i's key lives in `slot`: record it, and keep the slot's smallest index when i found it taken."""
    if not claimed:
        cuda.atomic.min(table, slot, np.int64(i))  # type: ignore[call-arg]
    slot_of[i] = slot


@cuda_kernel
def insert_fixed(keys: np.ndarray, lo: int, hi: int, table: np.ndarray, shift: int, slot_of: np.ndarray) -> None:
    """Insert value indices lo..hi keyed by keys[i]; slot_of[i] receives the slot holding the key."""
    i = cuda.grid(1) + lo  # type: ignore[call-arg]
    if i >= hi:
        return
    k = keys[i]
    mask = table.shape[0] - 1
    slot = np.int64((np.uint64(k) * _GOLDEN) >> np.uint64(shift))
    while True:
        cur = _claim(table, slot, i)
        if cur == -1 or keys[cur] == k:
            _settle(table, slot, i, slot_of, cur == -1)
            return
        slot = (slot + 1) & mask


@cuda_kernel
def hash_values(offsets: np.ndarray, data: np.ndarray, lo: int, hi: int, hashes: np.ndarray) -> None:
    """hashes[i] = hash of value i's bytes, for lo <= i < hi."""
    i = cuda.grid(1) + lo  # type: ignore[call-arg]
    if i < hi:
        hashes[i] = _hash_bytes(data, offsets[i], offsets[i + 1])


@cuda_kernel
def insert_bytes(offsets: np.ndarray, data: np.ndarray, hashes: np.ndarray, lo: int, hi: int,
                 table: np.ndarray, slot_of: np.ndarray) -> None:
    """insert_fixed for byte-string values data[offsets[i]:offsets[i+1]] (hashes precomputed)."""
    i = cuda.grid(1) + lo  # type: ignore[call-arg]
    if i >= hi:
        return
    h = hashes[i]
    mask = table.shape[0] - 1
    slot = np.int64(h & np.uint64(mask))
    while True:
        cur = _claim(table, slot, i)
        if cur == -1 or (hashes[cur] == h and _equal(data, offsets[cur], offsets[cur + 1], data, offsets[i],
                                                      offsets[i + 1])):
            _settle(table, slot, i, slot_of, cur == -1)
            return
        slot = (slot + 1) & mask


@cuda_kernel
def first_of(slot_of: np.ndarray, table: np.ndarray, lo: int, hi: int, first: np.ndarray) -> None:
    """first[i - lo] = the first index holding value i's key (read after every insert has finished)."""
    i = cuda.grid(1) + lo  # type: ignore[call-arg]
    if i < hi:
        first[i - lo] = table[slot_of[i]]


_canonical32 = device(canonical32)
_canonical64 = device(canonical64)


@cuda_kernel
def canonical_keys(bits: np.ndarray, lo: int, hi: int, is32: bool, keys: np.ndarray) -> None:
    """keys[i - lo] = the dictionary key of float / double bits[i]: IEEE bits with every NaN canonical, as
    Java's floatToIntBits / doubleToLongBits (the CPU form: `plain.canonical32` / `canonical64`)."""
    i = cuda.grid(1) + lo  # type: ignore[call-arg]
    if i < hi:
        if is32:
            keys[i - lo] = _canonical32(np.int64(bits[i]))
        else:
            keys[i - lo] = _canonical64(np.int64(bits[i]))
