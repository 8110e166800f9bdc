"""The fast level meters (kernels/plan/level_meter.py) are parquet-java's RLE encoder as rle_emitted_size simulates
it value by value: the same bytes emitted and the same encoder state after every piece of any split."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.encode.rle import rle_emitted_size
from gpuwrite.kernels.plan.level_meter import bits_emitted_size, count_ones, levels_emitted_size, popcount
from hypothesis import given, settings
from hypothesis import strategies as st


def _padded(values: np.ndarray) -> np.ndarray:
    """The levels as bytes with a spare word."""
    out = np.zeros((len(values) // 8 + 1) * 8, dtype=np.uint8)
    out[:len(values)] = values
    return out


def _packed(values: np.ndarray, offset: int) -> np.ndarray:
    """0/1 levels as a bit stream starting at bit `offset` (ones before it), with a spare word."""
    bits = np.concatenate([np.ones(offset, dtype=np.uint8), values])
    packed = np.packbits(bits, bitorder="little")
    out = np.zeros((len(packed) // 8 + 2) * 8, dtype=np.uint8)
    out[:len(packed)] = packed
    return out.view(np.uint64)


def _pieces(cuts: list[int], n: int) -> list[tuple[int, int]]:
    """Consecutive pieces of 0..n split at `cuts`."""
    ends = [*sorted(min(c, n) for c in cuts), n]
    return list(zip([0, *ends[:-1]], ends, strict=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=400), st.integers(0, 6), st.lists(st.integers(0, 8000), max_size=6),
       st.integers(1, 20), st.integers(0, 2))
def test_levels_meter_equals_rle_emitted_size(raw: list[int], top: int, cuts: list[int], stretch: int,
                                              width_extra: int) -> None:
    """levels_emitted_size (bytes, 8 per word) after every piece of any split."""
    values = np.repeat(np.minimum(np.array(raw, dtype=np.uint8), top), stretch).astype(np.uint8)
    padded = _padded(values)
    width = max(1, top.bit_length()) + width_extra
    a, b = np.zeros(6, dtype=np.int64), np.zeros(6, dtype=np.int64)
    for start, end in _pieces(cuts, len(values)):
        assert levels_emitted_size(padded, padded.view(np.uint64), start, end, width, a) == \
            rle_emitted_size(values, start, end, width, b)
        assert a.tolist() == b.tolist()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.integers(0, 1), max_size=600), st.lists(st.integers(1, 90), min_size=1, max_size=600),
       st.integers(0, 200), st.lists(st.integers(0, 30_000), max_size=6))
def test_bits_meter_equals_rle_emitted_size(raw: list[int], repeats: list[int], offset: int,
                                            cuts: list[int]) -> None:
    """bits_emitted_size and count_ones (0/1 levels as bits, 64 per word) after every piece of any split,
    from any bit offset: runs of every length, groups, RLE runs ended anywhere in a word."""
    values = np.repeat(np.array(raw, dtype=np.uint8), np.resize(repeats, len(raw))).astype(np.uint8)
    bits = _packed(values, offset)
    a, b = np.zeros(6, dtype=np.int64), np.zeros(6, dtype=np.int64)
    for start, end in _pieces(cuts, len(values)):
        assert bits_emitted_size(bits, offset + start, offset + end, a) == \
            rle_emitted_size(values, start, end, 1, b)
        assert a.tolist() == b.tolist()
        assert count_ones(bits, offset + start, offset + end) == int(values[start:end].sum())


def test_long_levels() -> None:
    """Long streams: bit-packed runs past 63 groups, RLE runs with multi-byte lengths, sparse and dense nulls."""
    rng = np.random.default_rng(7)
    runs = np.repeat(rng.integers(0, 5, 3000), rng.integers(1, 900, 3000))
    noise = rng.integers(0, 2, 20_000)
    values = np.concatenate([noise, runs, noise]).astype(np.uint8)
    padded = _padded(values)
    for width in (3, 8):
        a, b = np.zeros(6, dtype=np.int64), np.zeros(6, dtype=np.int64)
        for lo, hi in _pieces([12345, 12346, 30001], len(values)):
            levels_emitted_size(padded, padded.view(np.uint64), lo, hi, width, a)
            rle_emitted_size(values, lo, hi, width, b)
            assert a.tolist() == b.tolist()
    for share in (0.5, 0.045, 0.0005):
        flags = np.concatenate([noise, rng.random(200_000) >= share, np.ones(5000), noise]).astype(np.uint8)
        bits = _packed(flags, 13)
        a, b = np.zeros(6, dtype=np.int64), np.zeros(6, dtype=np.int64)
        for lo, hi in _pieces([12345, 12346, 30001, 230_000], len(flags)):
            bits_emitted_size(bits, 13 + lo, 13 + hi, a)
            rle_emitted_size(flags, lo, hi, 1, b)
            assert a.tolist() == b.tolist()
            assert count_ones(bits, 13 + lo, 13 + hi) == int(flags[lo:hi].sum())


def test_popcount_counts_the_set_bits_of_a_word() -> None:
    """The SWAR popcount (count_ones' and convert.levels.bit_block_counts' per word) at the edges of a word."""
    assert [popcount(np.uint64(v)) for v in (0, 1, 2**63, 2**64 - 1, 0xF0F0)] == [0, 1, 1, 64, 8]
