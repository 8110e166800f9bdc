"""Each CUDA kernel, run by numba's simulator, against its CPU twin: the per-page kernels against the same
@jit functions compiled for the CPU, the value-parallel dictionary against the sequential CPU insert."""

from __future__ import annotations

import numpy as np
import pytest
from gpuwrite.kernels._jit import page_kernel
from gpuwrite.kernels.convert import levels as L
from gpuwrite.kernels.dictionary import by_page as cpu_dict
from gpuwrite.kernels.dictionary import value_parallel_cuda as D
from gpuwrite.kernels.encode import pages as K
from gpuwrite.kernels.encode.delta import delta_max_size
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numba import cuda

THREADS = 32


def _pages(n_values: int, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` consecutive page ranges covering 0..n_values (some empty)."""
    cuts = np.sort(rng.integers(0, n_values + 1, count - 1))
    bounds = np.concatenate(([0], cuts, [n_values])).astype(np.int64)
    return bounds[:-1].copy(), bounds[1:].copy()


def _run_both(kernel, n_pages: int, out_size: int, *args):
    """Run `kernel` for every page on the CPU (its @jit form) and under the simulator; return both outputs."""
    results = []
    for device in (False, True):
        out = np.zeros(out_size, dtype=np.uint8)
        sizes = np.zeros(n_pages, dtype=np.int64)
        full = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        call = [*full[:-1], out, full[-1], sizes]  # the last arg before out/sizes is out_off by convention
        if device:
            page_kernel(kernel)[(n_pages + THREADS - 1) // THREADS, THREADS](n_pages, *call)
        else:
            for p in range(n_pages):
                kernel(p, *call)
        results.append((out, sizes))
    return results


def _offsets(sizes_bound: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(sizes_bound)[:-1])).astype(np.int64)


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 600), st.integers(1, 6), st.integers(0, 2**32 - 1))
@example(4, 1, 166854)  # 4 values with ~41-bit deltas: a padded DELTA miniblock overran a 20-bytes-a-value slot
def test_levels_ids_delta_plain_match_cpu(n, count, seed):
    rng = np.random.default_rng(seed)
    va, vb = _pages(n, rng, count)
    # a page's slot holds any kernel's output for all n values: DELTA pads a miniblock to 32 values of up to 64
    # bits, so a few values need delta_max_size's bound, not 20 bytes each (a short slot was written past)
    slot = max(20 * n + 64, delta_max_size(n))
    off = _offsets(np.full(count, slot))
    size = int(off[-1] + slot)
    levels = (rng.random(n) < 0.7).astype(np.uint8)
    ids = rng.integers(0, rng.integers(1, 300), n).astype(np.int32)
    entries = np.full(count, int(ids.max()) + 1, dtype=np.int64)
    ints = rng.integers(-2**40, 2**40, n)
    bits = rng.integers(-2**31, 2**31, n).astype(np.int32)
    bits[::7] = 0x7FC00001  # NaNs with payloads: canonicalised on both sides
    bools = (rng.random(n) < 0.5).astype(np.uint8)
    cases = [
        (K.page_levels, (levels, va, vb, 1, off)),
        (K.page_levels, (ids.astype(np.uint8) % 5, va, vb, 3, off)),
        (K.page_dict_ids, (ids, va, vb, entries, off)),
        (K.page_delta, (ints, va, vb, False, off)),
        (K.page_delta, (ints.astype(np.int32), va, vb, True, off)),
        (K.page_plain_fixed, (bits, va, vb, 4, 4, off)),
        (K.page_plain_fixed, (ints, va, vb, 8, 0, off)),
        (K.page_plain_bool, (bools, va, vb, off)),
    ]
    for kernel, args in cases:
        (cpu_out, cpu_sizes), (dev_out, dev_sizes) = _run_both(kernel, count, size, *args)
        assert np.array_equal(cpu_sizes, dev_sizes), kernel
        assert np.array_equal(cpu_out, dev_out), kernel


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 300), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_byte_array_kernels_match_cpu(n, count, seed):
    rng = np.random.default_rng(seed)
    words = [bytes(rng.integers(0, 4, rng.integers(0, 9)).astype(np.uint8) + 97) for _ in range(n)]
    data = np.frombuffer(b"".join(words) + b"\0", dtype=np.uint8)[:-1].copy() if words else np.zeros(0, np.uint8)
    offsets = np.concatenate(([0], np.cumsum([len(w) for w in words]))).astype(np.int64)
    va, vb = _pages(n, rng, count)
    bound = 2 * (40 + (n // 128 + 1) * 1040) + len(data) + 64
    off = _offsets(np.full(count, bound))
    size = int(off[-1] + bound)
    prefix, suffix = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for kernel, args in [(K.page_delta_bytes, (offsets, data, va, vb, prefix, suffix, off)),
                         (K.page_copy_bytes, (offsets, data, va, vb, off))]:
        (cpu_out, cpu_sizes), (dev_out, dev_sizes) = _run_both(kernel, count, size, *args)
        assert np.array_equal(cpu_sizes, dev_sizes)
        assert np.array_equal(cpu_out, dev_out)
    # statistics and CRC
    for device in (False, True):
        imin, imax, same = (np.zeros(count, np.int64) for _ in range(3))
        args = (offsets, data, va, vb, False, imin, imax, same)
        if device:
            page_kernel(K.page_bytes_minmax)[1, THREADS](count, *args)
            got_dev = (imin.copy(), imax.copy(), same.copy())
        else:
            for p in range(count):
                K.page_bytes_minmax(p, *args)
            got_cpu = (imin.copy(), imax.copy(), same.copy())
    for a, b in zip(got_cpu, got_dev, strict=True):
        assert np.array_equal(a, b)
    for p in range(count):
        if vb[p] > va[p]:
            page = words[va[p]:vb[p]]
            assert words[got_dev[0][p]] == min(page) and words[got_dev[1][p]] == max(page)


def test_crc32_matches_zlib():
    import zlib

    rng = np.random.default_rng(1)
    buf = rng.integers(0, 256, 5000).astype(np.uint8)
    off = np.array([0, 10, 10, 3000], dtype=np.int64)
    length = np.array([10, 0, 2990, 2000], dtype=np.int64)
    crc = np.zeros(4, dtype=np.int64)
    page_kernel(K.page_crc32)[1, THREADS](4, buf, off, length, K.crc32_table(), crc)
    for p in range(4):
        assert crc[p] == zlib.crc32(buf[off[p]:off[p] + length[p]].tobytes())


def _device_first(keys: np.ndarray) -> np.ndarray:
    """First-occurrence index of every key by the value-parallel CUDA insert."""
    n = len(keys)
    size = 1 << max(6, int(2 * n).bit_length())
    table = np.full(size, -1, dtype=np.int64)
    slot_of = np.zeros(n, dtype=np.int64)
    blocks = (n + THREADS - 1) // THREADS
    D.insert_fixed[blocks, THREADS](keys, 0, n, table, 64 - (size.bit_length() - 1), slot_of)
    first = np.zeros(n, dtype=np.int64)
    D.first_of[blocks, THREADS](slot_of, table, 0, n, first)
    return first


@pytest.mark.parametrize("distinct", [1, 7, 200, 5000])
def test_fixed_dictionary_first_occurrence_equals_cpu_twin(distinct):
    rng = np.random.default_rng(distinct)
    keys = rng.integers(-distinct, distinct, 1500).astype(np.int64)
    first = _device_first(keys)
    _, where = np.unique(keys, return_index=True)
    expected = where[np.searchsorted(np.unique(keys), keys)]
    assert np.array_equal(first, expected)
    # entry ids in first-occurrence order equal the sequential CPU insert's ids
    is_new = first == np.arange(len(keys))
    rank = np.cumsum(is_new) - 1
    ids_dev = rank[first]
    table = np.full(4096, -1, dtype=np.int32)
    entry_keys = np.zeros(len(keys), dtype=np.int64)
    ids_cpu = np.zeros(len(keys), dtype=np.int32)
    cpu_dict.fixed_insert(keys, 0, len(keys), table, entry_keys, 0, 8, 0, 1 << 40, ids_cpu)
    assert np.array_equal(ids_dev, ids_cpu)


def test_bytes_dictionary_first_occurrence():
    rng = np.random.default_rng(3)
    words = [b"k%d" % v for v in rng.integers(0, 60, 700)] + [b""] * 3
    data = np.frombuffer(b"".join(words), dtype=np.uint8).copy()
    offsets = np.concatenate(([0], np.cumsum([len(w) for w in words]))).astype(np.int64)
    n = len(words)
    hashes = np.zeros(n, dtype=np.uint64)
    blocks = (n + THREADS - 1) // THREADS
    D.hash_values[blocks, THREADS](offsets, data, 0, n, hashes)
    table = np.full(4096, -1, dtype=np.int64)
    slot_of = np.zeros(n, dtype=np.int64)
    D.insert_bytes[blocks, THREADS](offsets, data, hashes, 0, n, table, slot_of)
    first = np.zeros(n, dtype=np.int64)
    D.first_of[blocks, THREADS](slot_of, table, 0, n, first)
    seen: dict[bytes, int] = {}
    for i, w in enumerate(words):
        seen.setdefault(w, i)
    assert first.tolist() == [seen[w] for w in words]


def test_simulator_is_active():
    from numba.core import config

    assert config.ENABLE_CUDASIM
    assert cuda.is_available()  # the simulator stands in for a device


def test_dremel_steps_match_cpu():
    """The per-slot level kernels under the simulator equal their CPU loops, step by step."""
    rng = np.random.default_rng(5)
    n = 300
    pos = np.where(rng.random(n) < 0.1, -1, rng.integers(0, 200, n)).astype(np.int64)
    valid = (rng.random(200) < 0.8).astype(np.uint8)
    lengths = rng.integers(0, 4, 200)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    blocks = (n + THREADS - 1) // THREADS
    for required in (False, True):
        cpu_pos, dev_pos = pos.copy(), pos.copy()
        cpu_dfn, dev_dfn = np.ones(n, np.uint8), np.ones(n, np.uint8)
        cpu_bad, dev_bad = np.zeros(1, np.int64), np.zeros(1, np.int64)
        L.optional_all(cpu_pos, cpu_dfn, valid, required, cpu_bad)
        page_kernel(L.slot_optional)[blocks, THREADS](n, dev_pos, dev_dfn, valid, required, dev_bad)
        assert np.array_equal(cpu_pos, dev_pos) and np.array_equal(cpu_dfn, dev_dfn)
        assert bool(cpu_bad[0]) == bool(dev_bad[0]) == (required and bool((valid[pos[pos >= 0]] == 0).any()))
    cpu_counts, dev_counts = np.zeros(n, np.int64), np.zeros(n, np.int64)
    L.count_all(pos, offsets, cpu_counts)
    page_kernel(L.slot_count)[blocks, THREADS](n, pos, offsets, dev_counts)
    assert np.array_equal(cpu_counts, dev_counts)
    start = np.concatenate(([0], np.cumsum(cpu_counts)[:-1])).astype(np.int64)
    total = int(cpu_counts.sum())
    rep, dfn = rng.integers(0, 2, n).astype(np.uint8), rng.integers(0, 3, n).astype(np.uint8)
    outs = []
    for device in (False, True):
        new = (np.zeros(total, np.int64), np.zeros(total, np.uint8), np.zeros(total, np.uint8))
        if device:
            page_kernel(L.slot_expand)[blocks, THREADS](n, pos, rep, dfn, offsets, start, 2, *new)
        else:
            L.expand_all(pos, rep, dfn, offsets, start, 2, *new)
        outs.append(new)
    for a, b in zip(*outs, strict=True):
        assert np.array_equal(a, b)
