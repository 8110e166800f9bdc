"""CUDA forms of the bloom filter steps (shared sources and sequential twins: `bloom.py`).

All four are one thread per item over a row group's filtered chunks: `bloom_hash_thread` one thread per value
(XXH64 of it); `bloom_insert_thread`, `bloom_first_thread`, `bloom_count_thread` one thread per (filter, hash)
item of the job table. Inserting is an atomic OR of 8 bits, so the bits do not depend on the threads' order;
AdaptiveBlockSplitBloomFilter's distinct count (how many hashes were not yet found when inserted, which does
depend on order) is found order-free: an atomic min keeps, per filter bit, the first hash that sets it, and a
hash was found before its insertion exactly when each of its 8 bits was first set by an earlier hash.
Importing this module imports numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from .bloom import (
    JB_BASE,
    JB_BLOCKS,
    JB_HASH,
    JB_START,
    SG_KIND,
    SG_OUT,
    SG_SRC,
    WORDS_PER_BLOCK,
    bloom_bit,
    bloom_block,
    find_row,
    first_slot,
    found_before,
    hash_value,
)

_find_row = device(find_row)
_hash_value = device(hash_value)
_block = device(bloom_block)
_bit = device(bloom_bit)
_first_slot = device(first_slot)
_found_before = device(found_before)


@cuda_kernel
def bloom_hash_thread(n: int, segs: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray,
                      dat: np.ndarray, hashes: np.ndarray) -> None:
    """Thread t < n: hashes[t], the XXH64 of the value its segment places at t. Twin: `bloom.hash_segments`."""
    t = cuda.grid(1)
    if t < n:
        s = _find_row(segs, SG_OUT, segs.shape[0], t)
        hashes[t] = _hash_value(segs[s, SG_KIND], segs[s, SG_SRC] + t - segs[s, SG_OUT], v32, v64, idx, dat)


@cuda_kernel
def bloom_insert_thread(n: int, jobs: np.ndarray, hashes: np.ndarray, words: np.ndarray) -> None:
    """Thread t < n: item t's hash OR-ed into its job's filter (8 atomic ORs). Twin: `bloom.insert_jobs`."""
    t = cuda.grid(1)
    if t < n:
        r = _find_row(jobs, JB_START, jobs.shape[0], t)
        h = hashes[jobs[r, JB_HASH] + t - jobs[r, JB_START]]
        base = jobs[r, JB_BASE] + _block(h, jobs[r, JB_BLOCKS]) * WORDS_PER_BLOCK
        for i in range(WORDS_PER_BLOCK):
            cuda.atomic.or_(words, base + i, np.uint32(1 << _bit(h, i)))


@cuda_kernel
def bloom_first_thread(n: int, jobs: np.ndarray, hashes: np.ndarray, first: np.ndarray) -> None:
    """Thread t < n: atomic min of its hash's number (within its job) into the first-setter slot of each of its
    8 bits. Twin: `bloom.first_setters`."""
    t = cuda.grid(1)
    if t < n:
        r = _find_row(jobs, JB_START, jobs.shape[0], t)
        k = t - jobs[r, JB_START]
        h = hashes[jobs[r, JB_HASH] + k]
        for i in range(WORDS_PER_BLOCK):
            cuda.atomic.min(first, _first_slot(h, i, jobs[r, JB_BASE], jobs[r, JB_BLOCKS]), np.int32(k))


@cuda_kernel
def bloom_count_thread(n: int, jobs: np.ndarray, hashes: np.ndarray, first: np.ndarray,
                       counts: np.ndarray) -> None:
    """Thread t < n: counts[job] += 1 when its hash was not found before its insertion. Twin: `bloom.count_fresh`."""
    t = cuda.grid(1)
    if t < n:
        r = _find_row(jobs, JB_START, jobs.shape[0], t)
        k = t - jobs[r, JB_START]
        if not _found_before(hashes[jobs[r, JB_HASH] + k], k, jobs[r, JB_BASE], jobs[r, JB_BLOCKS], first):
            cuda.atomic.add(counts, r, 1)
