"""The block-per-page kernels (kernels/encode/pages_cuda.py), run by numba's CUDA simulator, against their sequential
twins: every page of a batch in one launch, blocks of 1 to 128 threads, pages of 0, 1, fewer than a block and
many values per thread; outputs compared byte for byte, untouched bytes included."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from gpuwrite.kernels.encode import pages as K
from gpuwrite.kernels.encode import pages_cuda as B
from gpuwrite.kernels.encode.plain import plain_byte_array
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
THREADS = st.sampled_from([1, 3, 32, 128])
# page lengths: empty, one value, shorter than a block, several values per thread of a 32-thread block
PAGE_LENGTHS = st.lists(st.sampled_from([0, 1]) | st.integers(2, 40) | st.integers(100, 300), min_size=1,
                        max_size=6)
SEEDS = st.integers(0, 2**32 - 1)
FILL = 0xA5  # both outputs start with it, so a stray or missing write shows
SPECIAL32 = [0x7FC00000, 0x7FC00001, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7F800000, 0xFF800000, 0x00000000,
             0x80000000, 0x3F800000, 0xBF800000, 0x00000001]
SPECIAL64 = [0x7FF8000000000000, 0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF,
             0x7FF0000000000000, 0xFFF0000000000000, 0, 1 << 63, 0x3FF0000000000000, 0xBFF0000000000000, 1]


def _ranges(lengths: list[int], skip: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Page value ranges of the given lengths, back to back after `skip` values; (va, vb, values needed)."""
    bounds = skip + np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return bounds[:-1].copy(), bounds[1:].copy(), int(bounds[-1])


def _regions(bounds: np.ndarray) -> tuple[np.ndarray, int]:
    """Output offsets of pages with the given byte bounds, 3 spare bytes after each; (offsets, buffer size)."""
    ends = np.cumsum(bounds + 3).astype(np.int64)
    return np.concatenate(([0], ends[:-1])).astype(np.int64), int(ends[-1]) if len(ends) else 1


def _encode_both(twin, block, threads: int, args: tuple, bounds: np.ndarray) -> None:
    """Run a twin per page and the block kernel once over all pages; assert equal bytes and sizes."""
    n = len(bounds)
    out_off, size = _regions(bounds)
    results = []
    for run_block in (False, True):
        out = np.full(size, FILL, dtype=np.uint8)
        sizes = np.full(n, -7, dtype=np.int64)
        if run_block:
            B.launch(block, n, threads, *args, out, out_off, sizes)
        else:
            for p in range(n):
                twin(p, *args, out, out_off, sizes)
        results.append((out, sizes))
    (cpu_out, cpu_sizes), (dev_out, dev_sizes) = results
    assert np.array_equal(cpu_sizes, dev_sizes), (block, cpu_sizes, dev_sizes)
    assert np.array_equal(cpu_out, dev_out), block
    assert (cpu_sizes <= bounds).all()  # the regions were large enough for the comparison to mean anything


def _words(rng: np.random.Generator, n: int, alphabet: int, longest: int) -> list[bytes]:
    """n byte strings of 0..longest bytes over a small alphabet (so ties and shared prefixes are common)."""
    return [bytes(rng.integers(0, alphabet, rng.integers(0, longest + 1)).astype(np.uint8) * 61) for _ in range(n)]


def _pack(words: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Arrow-style offsets and data."""
    offsets = np.concatenate(([0], np.cumsum([len(w) for w in words]))).astype(np.int64)
    data = np.frombuffer(b"".join(words) + b"\0", dtype=np.uint8).copy()
    return offsets, data


def _float_bits(rng: np.random.Generator, n: int, is32: bool) -> np.ndarray:
    """IEEE bits, a third of them specials (NaN payloads of either sign, -0.0, infinities), some repeated."""
    special = np.array(SPECIAL32 if is32 else SPECIAL64, dtype=np.uint32 if is32 else np.uint64)
    if is32:
        raw = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        signed = raw.view(np.int32)
    else:
        raw = rng.integers(0, 2**63, n, dtype=np.uint64) | (rng.integers(0, 2, n, dtype=np.uint64) << 63)
        signed = raw.view(np.int64)
    pick = rng.random(n) < 0.35
    raw[pick] = special[rng.integers(0, len(special), int(pick.sum()))]
    repeat = rng.random(n) < 0.2
    raw[repeat] = raw[rng.integers(0, max(n, 1), int(repeat.sum()))]
    return signed.copy()


@SETTINGS
@given(PAGE_LENGTHS, THREADS, SEEDS)
def test_plain_fixed_and_bool_equal_twins(lengths, threads, seed):
    rng = np.random.default_rng(seed)
    va, vb, n = _ranges(lengths, int(rng.integers(0, 5)))
    counts = vb - va
    bits32, bits64 = _float_bits(rng, n, True), _float_bits(rng, n, False)
    ints = rng.integers(-2**62, 2**62, n)
    bools = (rng.random(n) < 0.5).astype(np.uint8)
    for values, nbytes, canon in [(bits32, 4, 4), (bits64, 8, 8), (ints, 8, 0), (ints.astype(np.int32), 4, 0)]:
        _encode_both(K.page_plain_fixed, B.block_plain_fixed, threads, (values, va, vb, nbytes, canon),
                     counts * nbytes)
    _encode_both(K.page_plain_bool, B.block_plain_bool, threads, (bools, va, vb), (counts + 7) // 8)


def _plain_byte_array_page(p: int, *arrays: np.ndarray) -> None:
    """The dictionary-page twin in the per-page kernel form (offsets, data, va, vb, out, out_off, sizes):
    plain.plain_byte_array over page p's values."""
    offsets, data, va, vb, out, out_off, sizes = arrays
    sizes[p] = plain_byte_array(offsets, data, va[p], vb[p], out, out_off[p]) - out_off[p]


@SETTINGS
@given(PAGE_LENGTHS, THREADS, SEEDS, st.sampled_from([0, 3, 12, 90]))
def test_byte_copies_equal_twins(lengths, threads, seed, longest):
    rng = np.random.default_rng(seed)
    va, vb, n = _ranges(lengths, int(rng.integers(0, 5)))
    offsets, data = _pack(_words(rng, n, 4, longest))
    nbytes = offsets[vb] - offsets[va]
    _encode_both(_plain_byte_array_page, B.block_plain_byte_array, threads, (offsets, data, va, vb),
                 nbytes + 4 * (vb - va))
    _encode_both(K.page_copy_bytes, B.block_copy_bytes, threads, (offsets, data, va, vb), nbytes)
    int96 = np.arange(n + 1, dtype=np.int64) * 12  # fixed 12-byte values
    raw = rng.integers(0, 256, 12 * n + 1).astype(np.uint8)
    _encode_both(K.page_copy_bytes, B.block_copy_bytes, threads, (int96, raw, va, vb), (vb - va) * 12)


def _minmax_both(twin, block, threads: int, args: tuple, n_pages: int, outputs: int) -> list[np.ndarray]:
    """Per-page twin and one block launch writing `outputs` (n_pages,) int64 arrays; assert them equal."""
    results = []
    for run_block in (False, True):
        outs = [np.full(n_pages, -7, dtype=np.int64) for _ in range(outputs)]
        if run_block:
            B.launch(block, n_pages, threads, *args, *outs)
        else:
            for p in range(n_pages):
                twin(p, *args, *outs)
        results.append(outs)
    for cpu, dev in zip(*results, strict=True):
        assert np.array_equal(cpu, dev), (block, cpu, dev)
    return results[1]


@SETTINGS
@given(PAGE_LENGTHS, THREADS, SEEDS)
def test_int_and_float_minmax_equal_twins(lengths, threads, seed):
    rng = np.random.default_rng(seed)
    va, vb, n = _ranges(lengths, int(rng.integers(0, 5)))
    count = len(lengths)
    few = rng.integers(-3, 4, n)  # many ties: the first extreme must win
    for values in (few.astype(np.int32), few.astype(np.int64), rng.integers(-2**63, 2**63 - 1, n),
                   (few > 0).astype(np.uint8)):
        imin, imax = _minmax_both(K.page_int_minmax, B.block_int_minmax, threads, (values, va, vb), count, 2)
        for p in range(count):
            if vb[p] > va[p]:
                page = values[va[p]:vb[p]].tolist()
                assert imin[p] == va[p] + page.index(min(page)) and imax[p] == va[p] + page.index(max(page))
            else:
                assert imin[p] == imax[p] == -1
    for is32 in (True, False):
        bits = _float_bits(rng, n, is32)
        _minmax_both(K.page_float_minmax, B.block_float_minmax, threads, (bits, va, vb, is32), count, 2)


@SETTINGS
@given(PAGE_LENGTHS, THREADS, SEEDS, st.booleans())
def test_bytes_minmax_equal_twin(lengths, threads, seed, decimal):
    rng = np.random.default_rng(seed)
    va, vb, n = _ranges(lengths, int(rng.integers(0, 5)))
    count = len(lengths)
    ints = rng.integers(-5, 5, n) * int(rng.choice([1, 1000, 1 << 20]))
    p = int(rng.integers(0, count))
    uniform = vb[p] > va[p] and rng.random() < 0.3  # page p of identical values
    if uniform:
        ints[va[p]:vb[p]] = ints[va[p]]
    if decimal:  # 3-byte big-endian two's complement: the first byte orders by sign
        words = [int(v).to_bytes(3, "big", signed=True) for v in ints]
    else:  # first bytes around the sign boundary, then short strings over a small alphabet
        words = [bytes([(0, 0x7F, 0x80, 0xFF)[v % 4]]) + w for v, w in zip(ints, _words(rng, n, 3, 3), strict=True)]
        if uniform:
            words[va[p]:vb[p]] = [words[va[p]]] * int(vb[p] - va[p])
    offsets, data = _pack(words)
    imin, imax, same = _minmax_both(K.page_bytes_minmax, B.block_bytes_minmax, threads,
                                    (offsets, data, va, vb, decimal), count, 3)
    for p in range(count):
        page = words[va[p]:vb[p]]
        assert same[p] == (len(set(page)) <= 1)
        key = ints[va[p]:vb[p]].tolist() if decimal else page  # decimals order as their integers
        if page:
            assert imin[p] == va[p] + key.index(min(key)) and imax[p] == va[p] + key.index(max(key))


@SETTINGS
@given(st.lists(st.integers(0, 3) | st.integers(4, 300) | st.integers(600, 2000), min_size=1, max_size=5),
       THREADS, SEEDS)
def test_gather_and_crc32_equal_twins_and_zlib(lengths, threads, seed):
    rng = np.random.default_rng(seed)
    count = len(lengths)
    split = [sorted(rng.integers(0, n + 1, 2).tolist()) for n in lengths]  # rep / def / values sections
    rep_len = np.array([s[0] for s in split], dtype=np.int64)
    lev_len = np.array([s[1] - s[0] for s in split], dtype=np.int64)
    val_len = np.array(lengths, dtype=np.int64) - rep_len - lev_len
    sections = []
    for lens in (rep_len, lev_len, val_len):
        buf = rng.integers(0, 256, int(lens.sum()) + 7).astype(np.uint8)
        starts = (np.cumsum(lens) - lens + rng.integers(0, 3, count)).astype(np.int64)  # not back to back
        sections += [buf, starts, lens]
    body_off, size = _regions(np.array(lengths, dtype=np.int64))
    bodies = []
    for run_block in (False, True):
        out = np.full(size, FILL, dtype=np.uint8)
        if run_block:
            B.launch(B.block_gather, count, threads, *sections, out, body_off)
        else:
            for p in range(count):
                K.page_gather(p, *sections, out, body_off)
        bodies.append(out)
    assert np.array_equal(bodies[0], bodies[1])
    body_len = np.array(lengths, dtype=np.int64)
    table = K.crc32_table()
    twin, dev = np.zeros(count, np.int64), np.full(count, -1, np.int64)
    for p in range(count):
        K.page_crc32(p, bodies[1], body_off, body_len, table, twin)
    B.launch(B.block_crc32, count, threads, bodies[1], body_off, body_len, table, dev)
    assert np.array_equal(twin, dev)
    for p in range(count):
        assert dev[p] == zlib.crc32(bodies[1][body_off[p]:body_off[p] + body_len[p]].tobytes())


@pytest.mark.parametrize("threads", [32, 128])
def test_edge_pages_in_one_launch(threads):
    """Pages of 0, 1, T - 1, T, T + 1 and 5T + 3 values, all equal or all NaN, in one launch per kernel."""
    lengths = [0, 1, threads - 1, threads, threads + 1, 5 * threads + 3]
    va, vb, n = _ranges(lengths, 2)
    count = len(lengths)
    nans = np.array([0x7FC00001, 0xFFC00000, 0x7F800001] * n, dtype=np.uint32)[:n].view(np.int32)
    imin, imax = _minmax_both(K.page_float_minmax, B.block_float_minmax, threads, (nans, va, vb, True), count, 2)
    expect = np.where(vb > va, va, -1)
    assert np.array_equal(imin, expect) and np.array_equal(imax, expect)  # all NaNs compare equal: the first
    zeros = np.tile(np.array([0.0, -0.0], dtype=np.float64), n)[:n].view(np.int64)
    imin, imax = _minmax_both(K.page_float_minmax, B.block_float_minmax, threads, (zeros, va, vb, False), count, 2)
    for p in range(2, count):  # -0.0 < 0.0 in Java's order
        assert (imin[p], imax[p]) == (va[p] + 1 - va[p] % 2, va[p] + va[p] % 2)
    offsets, data = _pack([b"same"] * n)
    _, _, same = _minmax_both(K.page_bytes_minmax, B.block_bytes_minmax, threads,
                              (offsets, data, va, vb, False), count, 3)
    assert (same == 1).all()
    _encode_both(_plain_byte_array_page, B.block_plain_byte_array, threads, (offsets, data, va, vb),
                 8 * (vb - va))
    _encode_both(K.page_plain_fixed, B.block_plain_fixed, threads, (nans, va, vb, 4, 4), 4 * (vb - va))
    _encode_both(K.page_plain_bool, B.block_plain_bool, threads, ((np.arange(n) % 3 == 0).astype(np.uint8),
                                                                    va, vb), (vb - va + 7) // 8)


def test_launch_rejects_oversized_blocks():
    with pytest.raises(ValueError, match="threads per block"):
        B.launch(B.block_crc32, 1, B.MAX_THREADS + 1)
