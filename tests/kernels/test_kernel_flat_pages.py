"""kernels int_pages / float_pages (a column's batch of flat pages in one call) against their sequential
reference, int_page / float_page called page by page: the same bytes, dictionary states and statistics, and
the same page where each stops (the dictionary full, a fallback, a float page holding a NaN)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gpuwrite.kernels.encode.delta import delta_max_size
from gpuwrite.kernels.encode.float_page import float_page, float_pages
from gpuwrite.kernels.encode.int_page import R_COUNT, int_page, int_pages
from gpuwrite.kernels.encode.rle import rle_max_size
from hypothesis import given, settings
from hypothesis import strategies as st

_CASE = st.tuples(
    st.integers(1, 1500),  # rows
    st.integers(0, 2**32 - 1),  # seed
    st.sampled_from([1, 9, 200, 1 << 40]),  # distinct values (about)
    st.sampled_from([0.0, 0.1, 0.9]),  # nulls
    st.lists(st.integers(1, 400), min_size=1, max_size=6),  # page lengths, cycled
    st.sampled_from([64, 4096, 1 << 20]),  # dictionary byte limit
    st.sampled_from([16, 1 << 14]),  # the dictionary's table size (small: the batch stops to grow it)
    st.booleans(),  # use the dictionary
)


def _pages(rows: int, lengths: list[int], valid: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Adjoining pages over the rows: a, b, and their first and last value indexes."""
    bounds = [0]
    while bounds[-1] < rows:
        bounds.append(min(rows, bounds[-1] + lengths[len(bounds) % len(lengths)]))
    a, b = np.array(bounds[:-1], np.int64), np.array(bounds[1:], np.int64)
    before = np.concatenate([[0], np.cumsum(valid)]) if valid is not None else np.arange(rows + 1)
    return a, b, before[a].astype(np.int64), before[b].astype(np.int64)


def _dictionary(table_size: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(table_size, -1, np.int32), np.zeros(table_size // 2, np.int64)


def _compare(one_page: Any, batch: Any, case: tuple, values: np.ndarray, extra: tuple[tuple, tuple],
             bound: np.ndarray) -> None:
    """`batch` against `one_page` called page by page; `extra`: the arguments each takes after the values'
    bounds (floats' `wide`) and before `out` (ints' `is32`)."""
    mid, tail = extra
    rows, seed, _, nulls, lengths, limit, table_size, use_dictionary = case
    rng = np.random.default_rng(seed + 1)
    valid = (rng.random(rows) >= nulls) if nulls else None
    flags = valid.view(np.uint8) if valid is not None else np.zeros(0, np.uint8)
    a, b, va, vb = _pages(rows, lengths, valid)
    entry_size = values.dtype.itemsize
    ids = np.empty(max(1, int((vb - va).max())), np.int32)

    table, keys = _dictionary(table_size)
    expected, entries, nbytes = [], 0, 0
    for j in range(len(a)):
        need = entries + int(vb[j] - va[j])
        if use_dictionary and (2 * need > len(table) or need > len(keys)):
            break
        out = np.zeros(int(bound[j]), np.uint8)
        r = one_page(flags, int(a[j]), int(b[j]), valid is not None, values, int(va[j]), int(vb[j]), *mid,
                     use_dictionary, table, keys, entries, entry_size, nbytes, limit, ids, *tail, out)
        levels_end, end, new_entries, new_bytes, as_ids, lo, hi = r[:7]
        if len(r) > 7 and r[7] > 0:  # a NaN page: not done by the batch
            break
        entries, nbytes = new_entries, new_bytes
        expected.append((bytes(out[:levels_end]), bytes(out[levels_end:end]), entries, nbytes, bool(as_ids),
                         int(lo), int(hi)))
        if use_dictionary and not as_ids:
            break
    ref_table, ref_keys = table, keys

    table, keys = _dictionary(table_size)
    out = np.zeros(int(bound.sum()), np.uint8)
    res = np.zeros((len(a), R_COUNT), np.int64)
    k = batch(flags, a, b, va, vb, valid is not None, values, *mid, use_dictionary, table, keys, 0, entry_size, 0,
              limit, ids, *tail, out, res)
    got = [(bytes(out[s:le]), bytes(out[le:e]), n, nb, bool(ai), lo, hi) for s, le, e, n, nb, ai, lo, hi in res[:k].tolist()]
    assert got == expected
    assert np.array_equal(table, ref_table) and np.array_equal(keys[:entries], ref_keys[:entries])
    if k:
        assert res[0, 0] == 0 and all(res[j + 1, 0] == res[j, 2] for j in range(k - 1))  # one after another


@settings(max_examples=80, deadline=None)
@given(_CASE, st.booleans())
def test_int_pages_are_int_page_page_by_page(case: tuple, is32: bool) -> None:
    rows, seed, distinct = case[:3]
    rng = np.random.default_rng(seed)
    values = rng.integers(-distinct, distinct, rows).astype(np.int32 if is32 else np.int64)
    a, b, va, vb = _pages(rows, case[4], None)
    counts = vb - va
    bound = rle_max_size(b - a, 1) + np.maximum(rle_max_size(counts, 32) + 1, delta_max_size(counts))

    _compare(int_page, int_pages, case, values, ((), (is32,)), bound)


_SPECIAL = np.array([0x7FF8000000000000, 0x8000000000000000, 0x7FF0000000000000, 0], np.uint64).view(np.float64)


@settings(max_examples=80, deadline=None)
@given(_CASE, st.booleans(), st.sampled_from([0.0, 0.002, 0.05]))
def test_float_pages_are_float_page_page_by_page(case: tuple, wide: bool, special: float) -> None:
    rows, seed, distinct = case[:3]
    rng = np.random.default_rng(seed)
    doubles = rng.integers(-min(distinct, 1 << 20), min(distinct, 1 << 20), rows) / 8.0
    odd = rng.random(rows) < special  # NaNs, -0.0, infinities, 0.0
    doubles[odd] = _SPECIAL[rng.integers(0, len(_SPECIAL), int(odd.sum()))]
    bits = doubles.view(np.int64) if wide else doubles.astype(np.float32).view(np.int32)
    a, b, va, vb = _pages(rows, case[4], None)
    bound = rle_max_size(b - a, 1) + rle_max_size(vb - va, 32) + 1

    _compare(float_page, float_pages, case, bits, ((wide,), ()), bound)
