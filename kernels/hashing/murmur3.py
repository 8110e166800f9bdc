"""Murmur3_x86_32: Spark's (seed 42 for buckets, legacy byte tail) and the standard one (Iceberg's buckets).

The fold_* functions update `hashes` (int32 per row) in place from one column, skipping null rows, exactly as
Spark's `hash(col1, col2, ...)` folds columns: the running hash is the seed of the next column.
`hash_bytes_x86_32` is the reference algorithm (Guava's murmur3_32_fixed, mmh3): tail bytes form one
little-endian block.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


@jit
def _rotl(x: np.uint32, r: int) -> np.uint32:
    """32-bit rotate left."""
    return np.uint32((x << np.uint32(r)) | (x >> np.uint32(32 - r)))


@jit
def _mix_k1(k1: np.uint32) -> np.uint32:
    """Murmur3 block scramble."""
    k1 = np.uint32(k1 * _C1)
    k1 = _rotl(k1, 15)
    return np.uint32(k1 * _C2)


@jit
def _mix_h1(h1: np.uint32, k1: np.uint32) -> np.uint32:
    """Murmur3 state update."""
    h1 = np.uint32(h1 ^ k1)
    h1 = _rotl(h1, 13)
    return np.uint32(h1 * np.uint32(5) + np.uint32(0xE6546B64))


@jit
def _fmix(h1: np.uint32, length: int) -> np.uint32:
    """Murmur3 finaliser."""
    h1 = np.uint32(h1 ^ np.uint32(length))
    h1 = np.uint32(h1 ^ (h1 >> np.uint32(16)))
    h1 = np.uint32(h1 * np.uint32(0x85EBCA6B))
    h1 = np.uint32(h1 ^ (h1 >> np.uint32(13)))
    h1 = np.uint32(h1 * np.uint32(0xC2B2AE35))
    return np.uint32(h1 ^ (h1 >> np.uint32(16)))


@jit
def hash_int(value: np.int32, seed: np.int32) -> np.int32:
    """Murmur3_x86_32.hashInt."""
    h1 = _mix_h1(np.uint32(seed), _mix_k1(np.uint32(value)))
    return np.int32(_fmix(h1, 4))


@jit
def hash_long(value: np.int64, seed: np.int32) -> np.int32:
    """Murmur3_x86_32.hashLong: low word, then high word."""
    v = np.uint64(value)
    low = np.uint32(v & np.uint64(0xFFFFFFFF))
    high = np.uint32(v >> np.uint64(32))
    h1 = _mix_h1(np.uint32(seed), _mix_k1(low))
    h1 = _mix_h1(h1, _mix_k1(high))
    return np.int32(_fmix(h1, 8))


@jit
def hash_bytes(data: np.ndarray, start: int, end: int, seed: np.int32) -> np.int32:
    """Spark's hashUnsafeBytes: 4-byte little-endian blocks, then each tail byte sign-extended as a block."""
    length = end - start
    aligned = length - length % 4
    h1 = np.uint32(seed)
    for i in range(start, start + aligned, 4):
        word = (np.uint32(data[i]) | (np.uint32(data[i + 1]) << np.uint32(8))
                | (np.uint32(data[i + 2]) << np.uint32(16)) | (np.uint32(data[i + 3]) << np.uint32(24)))
        h1 = _mix_h1(h1, _mix_k1(word))
    for i in range(start + aligned, end):
        b = np.int32(np.int8(data[i]))
        h1 = _mix_h1(h1, _mix_k1(np.uint32(b)))
    return np.int32(_fmix(h1, length))


@jit
def hash_bytes_x86_32(data: np.ndarray, start: int, end: int, seed: np.int32) -> np.int32:
    """Standard murmur3_x86_32 of data[start:end]: 4-byte little-endian blocks, then the 1-3 tail bytes as one
    block mixed into the state without the block round (SPEC: Iceberg BucketUtil via Guava murmur3_32_fixed)."""
    length = end - start
    aligned = length - length % 4
    h1 = np.uint32(seed)
    for i in range(start, start + aligned, 4):
        word = (np.uint32(data[i]) | (np.uint32(data[i + 1]) << np.uint32(8))
                | (np.uint32(data[i + 2]) << np.uint32(16)) | (np.uint32(data[i + 3]) << np.uint32(24)))
        h1 = _mix_h1(h1, _mix_k1(word))
    tail = start + aligned
    rest = end - tail
    if rest > 0:
        k1 = np.uint32(0)
        if rest >= 3:
            k1 = np.uint32(k1 ^ (np.uint32(data[tail + 2]) << np.uint32(16)))
        if rest >= 2:
            k1 = np.uint32(k1 ^ (np.uint32(data[tail + 1]) << np.uint32(8)))
        k1 = np.uint32(k1 ^ np.uint32(data[tail]))
        h1 = np.uint32(h1 ^ _mix_k1(k1))
    return np.int32(_fmix(h1, length))


@jit
def fold_int(values: np.ndarray, valid: np.ndarray, hashes: np.ndarray) -> None:
    """hashes[i] = hashInt(values[i], hashes[i]) where valid (int8/16/32, dates, booleans as 0/1)."""
    for i in range(values.shape[0]):
        if valid[i]:
            hashes[i] = hash_int(np.int32(values[i]), hashes[i])


@jit
def fold_long(values: np.ndarray, valid: np.ndarray, hashes: np.ndarray) -> None:
    """hashes[i] = hashLong(values[i], hashes[i]) where valid (longs, timestamps, decimals p <= 18)."""
    for i in range(values.shape[0]):
        if valid[i]:
            hashes[i] = hash_long(np.int64(values[i]), hashes[i])


@jit
def fold_bytes(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, hashes: np.ndarray) -> None:
    """hashes[i] = hashUnsafeBytes(value i, hashes[i]) where valid (strings, binary, wide decimals)."""
    for i in range(valid.shape[0]):
        if valid[i]:
            hashes[i] = hash_bytes(data, offsets[i], offsets[i + 1], hashes[i])


@jit
def java_big_integer_bytes(lo: np.ndarray, hi: np.ndarray, offsets: np.ndarray, data: np.ndarray) -> int:
    """BigInteger.toByteArray of 128-bit two's-complement values (lo/hi words): minimal big-endian bytes.

    offsets gets n + 1 entries; data must hold 16 bytes per value. Returns the bytes used.
    """
    pos = 0
    for i in range(lo.shape[0]):
        offsets[i] = pos
        neg = hi[i] < 0
        fill = np.uint8(0xFF) if neg else np.uint8(0)
        b = data[pos:pos + 16]
        for k in range(8):
            b[15 - k] = np.uint8((np.uint64(lo[i]) >> np.uint64(8 * k)) & np.uint64(0xFF))
            b[7 - k] = np.uint8((np.uint64(hi[i]) >> np.uint64(8 * k)) & np.uint64(0xFF))
        start = 0
        while start < 15 and b[start] == fill and ((b[start + 1] & 0x80) != 0) == neg:
            start += 1
        length = 16 - start
        for k in range(length):
            data[pos + k] = b[start + k]
        pos += length
    offsets[lo.shape[0]] = pos
    return pos
