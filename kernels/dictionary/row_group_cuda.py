"""CUDA forms of the all-columns dictionary steps (twins and the per-value logic: `row_group.py`).

Geometry: one thread block per chunk of one column's values (`chunks`, int64[K, 3]); threads stride over the
chunk's values, except in `dict_number_block`, where each thread owns a contiguous run of the chunk so entry
numbers follow value order (a shared-memory scan over the threads' counts gives each run its start), and in
`dict_bases_block`: one block per column, each thread a contiguous run of its chunks (the same scan).
Deterministic: a table slot keeps the smallest value index with its key (atomic compare-and-swap to claim,
atomic min to lower), so the numbering equals the sequential insert's whatever the threads' order.
Importing this module imports numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from ..block_cuda import block_scan, run_bounds
from ..plan.layout import CT_ENT, CT_ENTB, CT_ENTN, CT_KEYS, CT_TAB
from .row_group import entry_size, home_slot, next_slot, same_value, value_key

MAX_THREADS = 128
_value_key = device(value_key)
_home_slot = device(home_slot)
_next_slot = device(next_slot)
_same_value = device(same_value)
_entry_size = device(entry_size)


@cuda_kernel
def dict_insert_block(chunks: np.ndarray, cols: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray,
                      dat: np.ndarray, tab: np.ndarray, slot: np.ndarray) -> None:
    """Step 1: each value claims an empty slot (CAS) or lowers the slot holding its key to its index (min);
    int32 slots, keys recomputed from the values."""
    k = cuda.blockIdx.x
    t = cuda.threadIdx.x
    c = chunks[k, 0]
    base = cols[c, CT_KEYS]
    t0 = cols[c, CT_TAB]
    for i in range(chunks[k, 1] + t, chunks[k, 1] + chunks[k, 2], cuda.blockDim.x):
        key = _value_key(cols, c, i, v32, v64, idx, dat)
        s = _home_slot(cols, c, key)
        while True:
            cur = tab[t0 + s]
            if cur == -1:
                cur = cuda.atomic.cas(tab, t0 + s, np.int32(-1), np.int32(i))
            if cur == -1:
                break
            if _same_value(cols, c, i, key, cur, v32, v64, idx, dat):
                cuda.atomic.min(tab, t0 + s, np.int32(i))
                break
            s = _next_slot(cols, c, s)
        slot[base + i] = s


@cuda_kernel
def dict_first_block(chunks: np.ndarray, cols: np.ndarray, idx: np.ndarray, tab: np.ndarray, slot: np.ndarray,
                     first: np.ndarray, totals: np.ndarray) -> None:
    """Step 2: first occurrence of every value's key; the chunk's new entries and bytes (shared atomics)."""
    acc = cuda.shared.array(2, np.int64)
    k = cuda.blockIdx.x
    t = cuda.threadIdx.x
    if t == 0:
        acc[0] = 0
        acc[1] = 0
    cuda.syncthreads()
    c = chunks[k, 0]
    base = cols[c, CT_KEYS]
    t0 = cols[c, CT_TAB]
    count = np.int64(0)
    nbytes = np.int64(0)
    for i in range(chunks[k, 1] + t, chunks[k, 1] + chunks[k, 2], cuda.blockDim.x):
        f = tab[t0 + slot[base + i]]
        first[base + i] = f
        if f == i:
            count += 1
            nbytes += _entry_size(cols, c, i, idx)
    cuda.atomic.add(acc, 0, count)
    cuda.atomic.add(acc, 1, nbytes)
    cuda.syncthreads()
    if t == 0:
        totals[k, 0] = acc[0]
        totals[k, 1] = acc[1]


@cuda_kernel
def dict_bases_block(col_chunks: np.ndarray, totals: np.ndarray, bases: np.ndarray) -> None:
    """Step 3; twin: `row_group.dict_bases`. Block c owns dictionary column c's chunks col_chunks[c, 0] ..
    + col_chunks[c, 1]; thread t a contiguous run of ceil(chunks / T) of them: it sums its run's new entries
    and bytes (totals int64[K, 2]), a shared-memory scan over the T runs gives each run its start, and it
    writes bases[k] (int64[K, 2]) = entries and bytes of the column's chunks before k. Serial steps per
    thread: 2 * ceil(chunks / T) + log2(T)."""
    sh = cuda.shared.array((2, MAX_THREADS), np.int64)
    c = cuda.blockIdx.x
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    lo, hi = run_bounds(col_chunks[c, 0], col_chunks[c, 1], t, threads)
    e = np.int64(0)
    b = np.int64(0)
    for k in range(lo, hi):
        e += totals[k, 0]
        b += totals[k, 1]
    e, b = block_scan(sh, e, b, t, threads)
    for k in range(lo, hi):
        bases[k, 0] = e
        bases[k, 1] = b
        e += totals[k, 0]
        b += totals[k, 1]


@cuda_kernel
def dict_number_block(chunks: np.ndarray, cols: np.ndarray, idx: np.ndarray, limit: int, bases: np.ndarray,
                      first: np.ndarray, rank: np.ndarray, efirst: np.ndarray, ebytes: np.ndarray,
                      overflow: np.ndarray) -> None:
    """Step 4: thread t owns a contiguous run of the chunk; counts its new entries and bytes, scans the runs'
    counts across the block, then numbers its first occurrences in order and writes the entries (within the
    column's room)."""
    sh = cuda.shared.array((2, MAX_THREADS), np.int64)
    k = cuda.blockIdx.x
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    c = chunks[k, 0]
    base = cols[c, CT_KEYS]
    ent = cols[c, CT_ENT]
    room = cols[c, CT_ENTN]
    eb = cols[c, CT_ENTB]
    lo, hi = run_bounds(chunks[k, 1], chunks[k, 2], t, threads)
    count = np.int64(0)
    nbytes = np.int64(0)
    for i in range(lo, hi):
        if first[base + i] == i:
            count += 1
            nbytes += _entry_size(cols, c, i, idx)
    e, b = block_scan(sh, count, nbytes, t, threads)
    e += bases[k, 0]
    b += bases[k, 1]
    for i in range(lo, hi):
        if first[base + i] == i:
            rank[base + i] = e
            b += _entry_size(cols, c, i, idx)
            if e < room:
                efirst[ent + e] = i
                if eb >= 0:
                    ebytes[eb + e] = b
            e += 1
            if b > limit:
                cuda.atomic.min(overflow, c, np.int64(i))


@cuda_kernel
def dict_ids_block(chunks: np.ndarray, cols: np.ndarray, first: np.ndarray, rank: np.ndarray,
                   ids: np.ndarray) -> None:
    """Step 5: ids[CT_KEYS + i] = rank of value i's first occurrence (threads stride over the chunk)."""
    k = cuda.blockIdx.x
    t = cuda.threadIdx.x
    c = chunks[k, 0]
    base = cols[c, CT_KEYS]
    for i in range(chunks[k, 1] + t, chunks[k, 1] + chunks[k, 2], cuda.blockDim.x):
        ids[base + i] = rank[base + first[base + i]]
