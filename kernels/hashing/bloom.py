"""XXH64 hashing and split-block bloom filter insertion, as parquet-java's BlockSplitBloomFilter does them.

Hashes are XXH64 (the 64-bit xxHash) of a value's little-endian bytes; the filter is an array of 32-byte blocks
viewed as little-endian uint32 words (8 per block). A hash picks its block from its high 32 bits and sets one
bit in each of the block's 8 words from its low 32 bits times 8 odd salts. Everything is scalar loops over
preallocated buffers, so the same source compiles for CUDA. Helper results and arguments are cast to uint64
(a no-op when compiled) so that the `.py_func` bodies, which get Python ints back from the compiled helpers
(and numba takes Python ints as int64), compute the same values.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

P1 = np.uint64(0x9E3779B185EBCA87)
P2 = np.uint64(0xC2B2AE3D27D4EB4F)
P3 = np.uint64(0x165667B19E3779F9)
P4 = np.uint64(0x85EBCA77C2B2AE63)
P5 = np.uint64(0x27D4EB2F165667C5)
MASK32 = np.uint64(0xFFFFFFFF)
# SPEC: BlockSplitBloomFilter.SALT, one odd constant per 32-bit word of a block.
SALTS = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31],
                 dtype=np.uint64)
WORDS_PER_BLOCK = 8


@jit
def _rotl(x: np.uint64, r: int) -> np.uint64:
    """Rotate a 64-bit value left by r (0 < r < 64)."""
    x = np.uint64(x)
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


@jit
def _round(acc: np.uint64, lane: np.uint64) -> np.uint64:
    """XXH64 round: acc + lane * P2, rotated by 31, times P1."""
    acc = np.uint64(acc) + np.uint64(lane) * P2
    return np.uint64(_rotl(acc, 31)) * P1


@jit
def _merge(h: np.uint64, v: np.uint64) -> np.uint64:
    """XXH64 merge of one accumulator into the hash."""
    h = np.uint64(h) ^ np.uint64(_round(np.uint64(0), np.uint64(v)))
    return h * P1 + P4


@jit
def _avalanche(h: np.uint64) -> np.uint64:
    """XXH64 final mix."""
    h = np.uint64(h)
    h = h ^ (h >> np.uint64(33))
    h = h * P2
    h = h ^ (h >> np.uint64(29))
    h = h * P3
    return h ^ (h >> np.uint64(32))


@jit
def _read_le(data: np.ndarray, p: int, nbytes: int) -> np.uint64:
    """`nbytes` (4 or 8) bytes at data[p:] as a little-endian unsigned integer."""
    v = np.uint64(0)
    for k in range(nbytes):
        v = v | (np.uint64(data[p + k]) << np.uint64(8 * k))
    return v


@jit
def xxhash64(data: np.ndarray, start: int, end: int, seed: np.uint64) -> np.uint64:
    """XXH64 of the bytes data[start:end] (a uint8 array) with the given seed."""
    seed = np.uint64(seed)
    n = end - start
    p = start
    if n >= 32:
        v1 = seed + P1 + P2
        v2 = seed + P2
        v3 = seed
        v4 = seed - P1
        while p + 32 <= end:
            v1 = np.uint64(_round(v1, np.uint64(_read_le(data, p, 8))))
            v2 = np.uint64(_round(v2, np.uint64(_read_le(data, p + 8, 8))))
            v3 = np.uint64(_round(v3, np.uint64(_read_le(data, p + 16, 8))))
            v4 = np.uint64(_round(v4, np.uint64(_read_le(data, p + 24, 8))))
            p += 32
        h = np.uint64(_rotl(v1, 1)) + np.uint64(_rotl(v2, 7)) + np.uint64(_rotl(v3, 12)) + np.uint64(_rotl(v4, 18))
        h = np.uint64(_merge(h, v1))
        h = np.uint64(_merge(h, v2))
        h = np.uint64(_merge(h, v3))
        h = np.uint64(_merge(h, v4))
    else:
        h = seed + P5
    h = h + np.uint64(n)
    while p + 8 <= end:
        h = h ^ np.uint64(_round(np.uint64(0), np.uint64(_read_le(data, p, 8))))
        h = np.uint64(_rotl(h, 27)) * P1 + P4
        p += 8
    if p + 4 <= end:
        h = h ^ (np.uint64(_read_le(data, p, 4)) * P1)
        h = np.uint64(_rotl(h, 23)) * P2 + P3
        p += 4
    while p < end:
        h = h ^ (np.uint64(data[p]) * P5)
        h = np.uint64(_rotl(h, 11)) * P1
        p += 1
    return _avalanche(h)


@jit
def xxhash64_u32(value: np.uint64, seed: np.uint64) -> np.uint64:
    """XXH64 of a 32-bit value's 4 little-endian bytes (value given as its unsigned bits)."""
    h = np.uint64(seed) + P5 + np.uint64(4)
    h = h ^ ((np.uint64(value) & MASK32) * P1)
    h = np.uint64(_rotl(h, 23)) * P2 + P3
    return _avalanche(h)


@jit
def xxhash64_u64(value: np.uint64, seed: np.uint64) -> np.uint64:
    """XXH64 of a 64-bit value's 8 little-endian bytes (value given as its unsigned bits)."""
    h = np.uint64(seed) + P5 + np.uint64(8)
    h = h ^ np.uint64(_round(np.uint64(0), np.uint64(value)))
    h = np.uint64(_rotl(h, 27)) * P1 + P4
    return _avalanche(h)


@jit
def hash_u32(values: np.ndarray, start: int, end: int, out: np.ndarray) -> None:
    """out[i - start] = XXH64 (seed 0) of values[i] for i in start..end; values is a uint32 array."""
    for i in range(start, end):
        out[i - start] = xxhash64_u32(np.uint64(values[i]), np.uint64(0))


@jit
def hash_u64(values: np.ndarray, start: int, end: int, out: np.ndarray) -> None:
    """out[i - start] = XXH64 (seed 0) of values[i] for i in start..end; values is a uint64 array."""
    for i in range(start, end):
        out[i - start] = xxhash64_u64(np.uint64(values[i]), np.uint64(0))


@jit
def hash_byte_arrays(offsets: np.ndarray, data: np.ndarray, start: int, end: int, out: np.ndarray) -> None:
    """out[i - start] = XXH64 (seed 0) of value i's bytes data[offsets[i]:offsets[i + 1]]."""
    for i in range(start, end):
        out[i - start] = xxhash64(data, offsets[i], offsets[i + 1], np.uint64(0))


@jit
def bloom_block(h: np.uint64, num_blocks: int) -> int:
    """Block a hash falls in: (high 32 bits * num_blocks) >> 32."""
    return int(((np.uint64(h) >> np.uint64(32)) * np.uint64(num_blocks)) >> np.uint64(32))


@jit
def bloom_bit(h: np.uint64, i: int) -> int:
    """Bit set in word i of the block: (low 32 bits * SALT[i]) mod 2^32, top 5 bits."""
    key = np.uint64(h) & MASK32
    return int(((key * SALTS[i]) & MASK32) >> np.uint64(27))


@jit
def bloom_insert(h: np.uint64, words: np.ndarray, num_blocks: int) -> None:
    """Insert one hash into the filter `words` (uint32 array, 8 words per block)."""
    base = bloom_block(h, num_blocks) * WORDS_PER_BLOCK
    for i in range(WORDS_PER_BLOCK):
        words[base + i] = words[base + i] | np.uint32(1 << bloom_bit(h, i))


@jit
def bloom_find(h: np.uint64, words: np.ndarray, num_blocks: int) -> bool:
    """Whether every bit of one hash is set (parquet-java's findHash)."""
    base = bloom_block(h, num_blocks) * WORDS_PER_BLOCK
    for i in range(WORDS_PER_BLOCK):
        if (words[base + i] & np.uint32(1 << bloom_bit(h, i))) == 0:
            return False
    return True


@jit
def bloom_insert_many(hashes: np.ndarray, start: int, end: int, words: np.ndarray, num_blocks: int) -> None:
    """Insert hashes[start:end] into the filter."""
    for j in range(start, end):
        bloom_insert(hashes[j], words, num_blocks)


@jit
def bloom_insert_counting(hashes: np.ndarray, start: int, end: int, words: np.ndarray, num_blocks: int) -> int:
    """Insert hashes[start:end] one by one; return how many were not already found before their insertion.

    This is AdaptiveBlockSplitBloomFilter's distinct-value estimate, taken on its largest candidate.
    """
    fresh = 0
    for j in range(start, end):
        h = hashes[j]
        if not bloom_find(h, words, num_blocks):
            fresh += 1
        bloom_insert(h, words, num_blocks)
    return fresh


# -- The device steps' shared sources and sequential CPU twins (CUDA forms: kernels/hashing/bloom_cuda.py) ----------------
#
# A row group's filters are built in one pass over every value of every filtered chunk. Segment table `segs`
# (int64[S, SG_COUNT]): one row per run of a chunk's values in one arena; hashes are laid back to back in segment
# order (SG_OUT..SG_END), so value order within a chunk is kept. Job table `jobs` (int64[J, JB_COUNT]): one row per
# (filter, run of hashes); a job's items are its hashes, numbered across jobs by JB_START..JB_END.

SG_KIND, SG_SRC, SG_OUT, SG_END = range(4)  # hash kind, first value in its arena, first / end hash
SG_COUNT = 4
HK_U32, HK_U64, HK_BYTES = range(3)  # v32 bits, v64 bits, byte values (offsets in idx into dat)
JB_HASH, JB_START, JB_END, JB_BASE, JB_BLOCKS = range(5)  # first hash, first / end item, words base, blocks
JB_COUNT = 5
FIRST_PER_BLOCK = 256  # first-setter slots per filter block: 8 words x 32 bits
FIRST_UNSET = np.int32(2**31 - 1)


@jit
def find_row(table: np.ndarray, field: int, rows: int, t: int) -> int:
    """The last row r of `table` with table[r, field] <= t (the field ascends; rows > 0)."""
    lo, hi = 0, rows - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if table[mid, field] <= t:
            lo = mid
        else:
            hi = mid - 1
    return lo


@jit
def hash_value(kind: int, j: int, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray, dat: np.ndarray) -> np.uint64:
    """XXH64 (seed 0) of value j of an arena, as parquet-java hashes it: 4 / 8 little-endian bytes or the bytes."""
    if kind == HK_U32:
        return xxhash64_u32(np.uint64(v32[j]) & MASK32, np.uint64(0))
    if kind == HK_U64:
        return xxhash64_u64(np.uint64(v64[j]), np.uint64(0))
    return xxhash64(dat, idx[j], idx[j + 1], np.uint64(0))


@jit
def hash_segments(n: int, segs: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray, dat: np.ndarray,
                  hashes: np.ndarray) -> None:
    """Twin of `bloom_cuda.bloom_hash_thread`: hashes[t] for t < n, segment by segment."""
    for s in range(segs.shape[0]):
        src = segs[s, SG_SRC] - segs[s, SG_OUT]
        for t in range(segs[s, SG_OUT], min(segs[s, SG_END], n)):
            hashes[t] = hash_value(segs[s, SG_KIND], src + t, v32, v64, idx, dat)


@jit
def insert_jobs(n: int, jobs: np.ndarray, hashes: np.ndarray, words: np.ndarray) -> None:
    """Twin of `bloom_cuda.bloom_insert_thread`: each job's hashes inserted into its filter, in order (an OR of
    bits, so the order does not change the result)."""
    for r in range(jobs.shape[0]):
        base, blocks = jobs[r, JB_BASE], jobs[r, JB_BLOCKS]
        first = jobs[r, JB_HASH] - jobs[r, JB_START]
        for t in range(jobs[r, JB_START], min(jobs[r, JB_END], n)):
            bloom_insert(hashes[first + t], words[base:base + WORDS_PER_BLOCK * blocks], blocks)


@jit
def first_slot(h: np.uint64, i: int, base: int, blocks: int) -> int:
    """The first-setter slot of the bit a hash sets in word i of its block."""
    return base + bloom_block(h, blocks) * FIRST_PER_BLOCK + i * 32 + bloom_bit(h, i)


@jit
def first_setters(n: int, jobs: np.ndarray, hashes: np.ndarray, first: np.ndarray) -> None:
    """Twin of `bloom_cuda.bloom_first_thread`: per filter bit, the lowest hash number (within its job) that
    sets it (`first` starts at FIRST_UNSET; JB_BASE is the job's first slot)."""
    for r in range(jobs.shape[0]):
        base, blocks, start = jobs[r, JB_BASE], jobs[r, JB_BLOCKS], jobs[r, JB_START]
        for t in range(start, min(jobs[r, JB_END], n)):
            h = hashes[jobs[r, JB_HASH] + t - start]
            for i in range(WORDS_PER_BLOCK):
                s = first_slot(h, i, base, blocks)
                if first[s] > t - start:
                    first[s] = t - start


@jit
def found_before(h: np.uint64, k: int, base: int, blocks: int, first: np.ndarray) -> bool:
    """Whether hash number k was already in the filter when inserted: each of its bits set by an earlier hash."""
    for i in range(WORDS_PER_BLOCK):
        if first[first_slot(h, i, base, blocks)] >= k:
            return False
    return True


@jit
def count_fresh(n: int, jobs: np.ndarray, hashes: np.ndarray, first: np.ndarray, counts: np.ndarray) -> None:
    """Twin of `bloom_cuda.bloom_count_thread`: counts[r] += the hashes of job r not found before their
    insertion (`bloom_insert_counting`'s count, from the first setters: order-free)."""
    for r in range(jobs.shape[0]):
        base, blocks, start = jobs[r, JB_BASE], jobs[r, JB_BLOCKS], jobs[r, JB_START]
        for t in range(start, min(jobs[r, JB_END], n)):
            if not found_before(hashes[jobs[r, JB_HASH] + t - start], t - start, base, blocks, first):
                counts[r] += 1
