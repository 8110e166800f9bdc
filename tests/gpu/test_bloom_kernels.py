"""The bloom filter steps' CUDA kernels (kernels/hashing/bloom_cuda.py, thread per value / per filter and hash) against
their sequential CPU twins and the sequential reference (`bloom_insert_many`, `bloom_insert_counting`,
`encode.bloom.hash_values`'s kernels), under the simulator, on small random inputs: runs of values in the
arenas, filters of a few blocks (so hashes collide and bits are shared), empty runs and several jobs."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.hashing import bloom as B
from gpuwrite.kernels.hashing import bloom_cuda as K
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

THREADS = 8
_SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _grid(kernel, n: int, *args) -> None:
    kernel[(n + THREADS - 1) // THREADS, THREADS](n, *args)


def _arenas(draw_ints: list[int], words: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    v64 = np.array(draw_ints, dtype=np.int64)
    v32 = v64.astype(np.int32)  # wraps: negative and large values both
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(w) for w in words])
    dat = np.frombuffer(b"".join(words) + b"\0" * 8, dtype=np.uint8).copy()
    return v32, v64, offsets, dat


@_SETTINGS
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=40),
       st.lists(st.binary(max_size=40), min_size=1, max_size=12), st.data())
def test_hash_kernel_matches_twin_and_reference(ints, words, data):
    v32, v64, idx, dat = _arenas(ints, words)
    segs, out = [], 0
    for kind, size in ((B.HK_U32, len(ints)), (B.HK_U64, len(ints)), (B.HK_BYTES, len(words))):
        a = data.draw(st.integers(0, size))
        b = data.draw(st.integers(a, size))
        segs.append((kind, a, out, out + b - a))
        out += b - a
    if out == 0:
        return
    segs_arr = np.array(segs, dtype=np.int64)
    got, twin = np.zeros(out, dtype=np.uint64), np.zeros(out, dtype=np.uint64)
    _grid(K.bloom_hash_thread, out, segs_arr, v32, v64, idx, dat, got)
    B.hash_segments(out, segs_arr, v32, v64, idx, dat, twin)
    ref = []
    for kind, a, s, e in segs:
        part = np.empty(e - s, dtype=np.uint64)
        if kind == B.HK_U32:
            B.hash_u32(v32.view(np.uint32), a, a + e - s, part)
        elif kind == B.HK_U64:
            B.hash_u64(v64.view(np.uint64), a, a + e - s, part)
        else:
            B.hash_byte_arrays(idx, dat, a, a + e - s, part)
        ref.append(part)
    assert np.array_equal(twin, np.concatenate(ref))
    assert np.array_equal(got, twin)


def _jobs(sizes: list[tuple[int, int]], n_hashes: int, data) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """Jobs (first hash, count, base, blocks) over a hash array of n_hashes, and their table."""
    rows, spec, items, base = [], [], 0, 0
    for blocks, _ in sizes:
        h0 = data.draw(st.integers(0, n_hashes))
        n = data.draw(st.integers(0, n_hashes - h0))
        rows.append((h0, items, items + n, base, blocks))
        spec.append((h0, n, base, blocks))
        items += n
        base += blocks * B.WORDS_PER_BLOCK
    return np.array(rows, dtype=np.int64).reshape(-1, B.JB_COUNT), spec


@_SETTINGS
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=60),
       st.lists(st.tuples(st.integers(1, 4), st.just(0)), min_size=1, max_size=3), st.data())
def test_insert_kernel_matches_sequential_insert(hashes, sizes, data):
    h = np.array(hashes, dtype=np.uint64)
    jobs, spec = _jobs(sizes, len(h), data)
    items = int(jobs[-1, B.JB_END])
    total = sum(blocks for _, _, _, blocks in spec) * B.WORDS_PER_BLOCK
    got, twin, ref = (np.zeros(total, dtype=np.uint32) for _ in range(3))
    _grid(K.bloom_insert_thread, items, jobs, h, got)
    B.insert_jobs(items, jobs, h, twin)
    for h0, n, base, blocks in spec:
        B.bloom_insert_many(h, h0, h0 + n, ref[base:base + blocks * B.WORDS_PER_BLOCK], blocks)
    assert np.array_equal(twin, ref)
    assert np.array_equal(got, ref)


@_SETTINGS
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=60),
       st.lists(st.tuples(st.integers(1, 3), st.just(0)), min_size=1, max_size=3), st.data())
def test_distinct_count_kernels_match_counting_insert(hashes, sizes, data):
    h = np.array(hashes, dtype=np.uint64)
    if data.draw(st.booleans()):  # repeated hashes: found before their insertion for certain
        h = np.concatenate([h, h[: len(h) // 2]])
    jobs, spec = _jobs(sizes, len(h), data)
    # first-setter slots instead of words
    jobs[:, B.JB_BASE] = np.concatenate([[0], np.cumsum(jobs[:-1, B.JB_BLOCKS])]) * B.FIRST_PER_BLOCK
    items = int(jobs[-1, B.JB_END])
    slots = int(jobs[:, B.JB_BLOCKS].sum()) * B.FIRST_PER_BLOCK
    first, first_twin = (np.full(slots, B.FIRST_UNSET, dtype=np.int32) for _ in range(2))
    counts, counts_twin = np.zeros(len(jobs), dtype=np.int64), np.zeros(len(jobs), dtype=np.int64)
    _grid(K.bloom_first_thread, items, jobs, h, first)
    _grid(K.bloom_count_thread, items, jobs, h, first, counts)
    B.first_setters(items, jobs, h, first_twin)
    B.count_fresh(items, jobs, h, first_twin, counts_twin)
    ref = [B.bloom_insert_counting(h, h0, h0 + n, np.zeros(blocks * B.WORDS_PER_BLOCK, dtype=np.uint32), blocks)
           for h0, n, _, blocks in spec]
    assert counts_twin.tolist() == ref
    assert np.array_equal(first, first_twin)
    assert counts.tolist() == ref
