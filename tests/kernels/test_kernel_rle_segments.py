"""The block-per-page RLE encoder's decomposition, on the CPU: a model of the block (the per-thread segment
steps of `rle_segments`, with the block scans done one thread after another) must write exactly the bytes of
the sequential `rle_encode` for any page and any thread count, on inputs far larger than the simulator runs."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.encode.rle import rle_encode, rle_max_size
from gpuwrite.kernels.encode.rle_segments import (
    IDENTITY,
    compose,
    first_run_start,
    segment_bounds,
    segment_emit,
    segment_repeats,
    segment_table,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rle_cases import WIDTHS, rle_values

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def encode_model(values: np.ndarray, start: int, end: int, width: int, threads: int, *, out: np.ndarray,
                 pos: int) -> int:
    """The block kernel's algorithm with `threads` threads, scans run sequentially; returns the end position."""
    n = end - start
    bounds = [segment_bounds(n, t, threads) for t in range(threads)]
    first = [first_run_start(values, start, lo, hi, n) for lo, hi in bounds]
    after = [min(first[t + 1:], default=n) for t in range(threads)]
    phases, prefix = [], IDENTITY
    for t, (_, hi) in enumerate(bounds):
        phases.append(prefix & 7)
        prefix = compose(prefix, segment_table(values, start, hi, first[t], after[t]))
    repeats = [segment_repeats(values, start, n, hi, first[t], after[t], phases[t]) for t, (_, hi) in enumerate(bounds)]
    anchors = [max([0] + [last for last, _ in repeats[:t]]) for t in range(threads)]
    region_ends = [min([n] + [fr for _, fr in repeats[t + 1:]]) for t in range(threads)]
    assert [a & 7 for a in anchors] == phases  # the phase scan and the anchor scan agree
    args = [(values, start, n, lo, hi, first[t], after[t], anchors[t], region_ends[t], width)
            for t, (lo, hi) in enumerate(bounds)]
    sizes = [segment_emit(*a, out, 0, False) for a in args]
    for t, a in enumerate(args):
        at = pos + sum(sizes[:t])
        assert segment_emit(*a, out, at, True) == at + sizes[t]  # counted and written sizes agree
    return pos + sum(sizes)


def _check(values: np.ndarray, width: int, threads: int, start: int = 0, end: int | None = None) -> None:
    end = len(values) if end is None else end
    expected = np.zeros(rle_max_size(end - start, width) + 8, dtype=np.uint8)
    got = np.zeros_like(expected)
    want = rle_encode(values, start, end, width, expected, 3)
    assert encode_model(values, start, end, width, threads, out=got, pos=3) == want
    assert np.array_equal(got, expected)


def test_phase_table_composition():
    shift_all = sum(((p + 3) & 7) << (3 * p) for p in range(8))
    assert compose(IDENTITY, shift_all) == shift_all == compose(shift_all, IDENTITY)
    twice = compose(shift_all, shift_all)
    assert [(twice >> (3 * p)) & 7 for p in range(8)] == [(p + 6) & 7 for p in range(8)]


@SETTINGS
@given(st.sampled_from(WIDTHS).flatmap(lambda w: st.tuples(st.just(w), rle_values(w, 40_000, 5_000))),
       st.sampled_from([1, 2, 3, 7, 32, 128]))
def test_model_equals_rle_encode(case, threads):
    width, values = case
    _check(values, width, threads)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 5, 32, 128]))
def test_model_equals_rle_encode_on_page_slices(seed, threads):
    # A page inside a longer array: runs that continue across the page's edges must not leak in.
    rng = np.random.default_rng(seed)
    values = np.repeat(rng.integers(0, 3, 400), rng.integers(1, 30, 400)).astype(np.uint8)
    a, b = sorted(rng.integers(0, len(values) + 1, 2))
    _check(values, 2, threads, int(a), int(b))


def test_model_on_a_million_values():
    rng = np.random.default_rng(7)
    runs = np.repeat(rng.integers(0, 4, 60_000), rng.choice([1, 2, 7, 8, 9, 15, 16, 40, 700], 60_000))
    for threads in (128, 33):
        _check(runs.astype(np.uint8), 2, threads)
    _check(rng.integers(0, 1 << 17, 1_000_000).astype(np.int32), 17, 128)
