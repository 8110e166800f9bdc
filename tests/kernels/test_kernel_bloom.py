"""XXH64 and split-block insertion kernels: published test vectors, a pure-Python model, and parquet-java itself.

The parquet-java answers come from `RefWriter --bloom` (tests/parity), which calls XxHash,
BlockSplitBloomFilter.hash and insertHash from the jars inside pyspark; without a JDK those tests skip (or
fail when CI is set).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from gpuwrite.kernels.hashing.bloom import (
    bloom_find,
    bloom_insert_counting,
    bloom_insert_many,
    hash_byte_arrays,
    hash_u32,
    hash_u64,
    xxhash64,
    xxhash64_u32,
    xxhash64_u64,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
M64 = (1 << 64) - 1
SALTS = (0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31)

# Published XXH64 vectors (xxHash's reference implementation, python-xxhash's README).
VECTORS = [
    (b"", 0, 0xEF46DB3751D8E999),
    (b"\x00", 0, 0xE934A84ADB052768),
    (b"a", 0, 0xD24EC4F1A98C6E5B),
    (b"abc", 0, 0x44BC2CF5AD770999),
    (b"xxhash", 0, 0x32DD38952C4BC720),
    (b"xxhash", 20141025, 0xB559B98D844E0635),
    (b"Nobody inspects the spammish repetition", 0, 0xFBCEA83C8A378BF1),
]


def _h(data: bytes, seed: int = 0) -> int:
    """The kernel's XXH64 of a bytes object."""
    return int(xxhash64(np.frombuffer(data, dtype=np.uint8), 0, len(data), np.uint64(seed)))


def model_insert(bitset: bytearray, h: int) -> None:
    """Pure-Python split-block insert, written from the Parquet spec (words little-endian)."""
    num_blocks = len(bitset) // 32
    block = ((h >> 32) * num_blocks) >> 32
    key = h & 0xFFFFFFFF
    for i, salt in enumerate(SALTS):
        bit = ((key * salt) & 0xFFFFFFFF) >> 27
        pos = block * 32 + 4 * i
        word = int.from_bytes(bitset[pos:pos + 4], "little") | (1 << bit)
        bitset[pos:pos + 4] = word.to_bytes(4, "little")


def _words(num_bytes: int) -> np.ndarray:
    """An empty bitset as uint32 words."""
    return np.zeros((num_bytes + 3) // 4, dtype=np.uint32)


def _bytes(words: np.ndarray, num_bytes: int) -> bytes:
    """The first num_bytes bytes of a word array."""
    return words.view(np.uint8)[:num_bytes].tobytes()


@pytest.mark.parametrize(("data", "seed", "expected"), VECTORS)
def test_xxhash64_vectors(data: bytes, seed: int, expected: int) -> None:
    """Published XXH64 values, compiled and pure-Python bodies alike."""
    assert _h(data, seed) == expected
    arr = np.frombuffer(data, dtype=np.uint8)
    with np.errstate(over="ignore"):
        assert int(xxhash64.py_func(arr, 0, len(data), np.uint64(seed))) == expected


@SETTINGS
@given(st.binary(max_size=80), st.binary(max_size=40), st.integers(0, M64))
def test_xxhash64_range_is_the_slice(data: bytes, prefix: bytes, seed: int) -> None:
    """Hashing data[start:end] inside a larger buffer equals hashing the slice on its own."""
    buf = np.frombuffer(prefix + data + b"tail", dtype=np.uint8)
    got = int(xxhash64(buf, len(prefix), len(prefix) + len(data), np.uint64(seed)))
    alone = np.frombuffer(data, dtype=np.uint8)
    assert got == int(xxhash64(alone, 0, len(data), np.uint64(seed)))


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(0, M64), st.integers(0, M64))
def test_fixed_width_fast_paths(v32: int, v64: int, seed: int) -> None:
    """xxhash64_u32 / _u64 equal XXH64 of the value's 4 / 8 little-endian bytes."""
    assert int(xxhash64_u32(np.uint64(v32), np.uint64(seed))) == _h(struct.pack("<I", v32), seed)
    assert int(xxhash64_u64(np.uint64(v64), np.uint64(seed))) == _h(struct.pack("<Q", v64), seed)


def test_batch_hashers() -> None:
    """hash_u32 / hash_u64 / hash_byte_arrays fill out[i - start] for i in start..end."""
    rng = np.random.default_rng(1)
    v32 = rng.integers(0, 2**32, 50, dtype=np.uint64).astype(np.uint32)
    v64 = rng.integers(0, 2**63, 50, dtype=np.int64).view(np.uint64)
    out = np.zeros(40, dtype=np.uint64)
    hash_u32(v32, 5, 45, out)
    assert [int(x) for x in out] == [_h(struct.pack("<I", int(v))) for v in v32[5:45]]
    hash_u64(v64, 10, 50, out)
    assert [int(x) for x in out] == [_h(struct.pack("<Q", int(v))) for v in v64[10:50]]
    values = [bytes(rng.integers(0, 256, k, dtype=np.uint8)) for k in rng.integers(0, 70, 45)]
    offsets = np.concatenate(([0], np.cumsum([len(v) for v in values]))).astype(np.int64)
    data = np.frombuffer(b"".join(values), dtype=np.uint8)
    hash_byte_arrays(offsets, data, 5, 45, out)
    assert [int(x) for x in out] == [_h(v) for v in values[5:45]]


@SETTINGS
@given(st.lists(st.integers(0, M64), max_size=100), st.sampled_from([32, 64, 96, 1000, 1024, 4096]))
def test_insert_matches_model(hashes: list[int], num_bytes: int) -> None:
    """bloom_insert_many sets exactly the model's bits (sizes that are not powers of two included), every
    inserted hash is then found, and the counting insert counts the hashes not found before insertion."""
    expected = bytearray(num_bytes)
    fresh = 0
    for h in hashes:
        before = bytes(expected)
        model_insert(expected, h)
        fresh += before != bytes(expected)
    arr = np.array(hashes, dtype=np.uint64)
    words = _words(num_bytes)
    bloom_insert_many(arr, 0, len(arr), words, num_bytes // 32)
    assert _bytes(words, num_bytes) == bytes(expected)
    assert all(bloom_find(np.uint64(h), words, num_bytes // 32) for h in hashes)
    counted = _words(num_bytes)
    # A hash is "not found" iff inserting it changes the filter.
    assert int(bloom_insert_counting(arr, 0, len(arr), counted, num_bytes // 32)) == fresh
    assert _bytes(counted, num_bytes) == bytes(expected)


def test_insert_pure_python_body_matches() -> None:
    """The .py_func bodies (the source a CUDA build compiles) agree with the compiled kernels."""
    hashes = np.array([0, 1, M64, 0x123456789ABCDEF0, 0xEF46DB3751D8E999], dtype=np.uint64)
    a, b = _words(64), _words(64)
    bloom_insert_many(hashes, 0, 5, a, 2)
    with np.errstate(over="ignore"):
        bloom_insert_many.py_func(hashes, 0, 5, b, 2)
        assert int(xxhash64_u64.py_func(np.uint64(7), np.uint64(0))) == int(xxhash64_u64(np.uint64(7), np.uint64(0)))
        assert int(xxhash64_u32.py_func(np.uint64(7), np.uint64(0))) == int(xxhash64_u32(np.uint64(7), np.uint64(0)))
    assert np.array_equal(a, b)


# -- parquet-java ---------------------------------------------------------------------------------------




def test_hashes_match_parquet_java(probe) -> None:
    """XxHash.hashBytes for lengths 0..100 and 1000, and BlockSplitBloomFilter.hash(int/long/float/double) of
    edge values (negative numbers, NaN payloads, both zeros) equal the kernels."""
    rng = np.random.default_rng(7)
    blobs = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in [*range(101), 1000]]
    ints = [0, 1, -1, 2**31 - 1, -(2**31), 123456789, -987654321]
    longs = [0, 1, -1, 2**63 - 1, -(2**63), 1_600_000_000_000_000, -123456789012345]
    floats = [0x00000000, 0x80000000, 0x7FC00000, 0x7FC00001, 0xFFC00000, 0x7F800000, 0x3F800000, 0x00000001]
    doubles = [0, 1 << 63, 0x7FF8000000000000, 0x7FF8000000000001, 0xFFF0000000000000, 0x3FF0000000000000]
    lines = ([f"bytes {b.hex() or '-'}" for b in blobs] + [f"int {v}" for v in ints] + [f"long {v}" for v in longs]
             + [f"float {v:x}" for v in floats] + [f"double {v:x}" for v in doubles])
    answers = [int(a, 16) for a in probe(lines)]
    ours = ([_h(b) for b in blobs]
            + [int(xxhash64_u32(np.uint64(v & 0xFFFFFFFF), np.uint64(0))) for v in ints]
            + [int(xxhash64_u64(np.uint64(v & M64), np.uint64(0))) for v in longs]
            + [int(xxhash64_u32(np.uint64(v), np.uint64(0))) for v in floats]
            + [int(xxhash64_u64(np.uint64(v), np.uint64(0))) for v in doubles])
    assert ours == answers


def test_insert_matches_parquet_java(probe) -> None:
    """BlockSplitBloomFilter.insertHash over random hashes gives the kernel's bitset, for power-of-two sizes and
    for a max.bytes that is neither a power of two nor a multiple of 32 (1000: 31 blocks, 8 spare bytes)."""
    rng = np.random.default_rng(8)
    cases = [(32, 32, 20), (1024, 1024, 300), (4096, 4096, 2000), (1000, 1000, 500), (5000, 1 << 20, 100)]
    lines, ours = [], []
    for num_bytes, max_bytes, n in cases:
        hashes = rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64) * np.uint64(2) + np.uint64(1)
        lines.append(f"filter {num_bytes} {max_bytes} " + ",".join(f"{int(h):x}" for h in hashes))
        size = num_bytes if num_bytes == max_bytes else 8192  # 5000 rounds up to the next power of two
        words = _words(size)
        bloom_insert_many(hashes, 0, n, words, size // 32)
        ours.append(_bytes(words, size).hex())
    assert probe(lines) == ours
