"""The value-check kernels against Python integers: decimals within [-(10**p - 1), 10**p - 1], byte lengths."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.convert.checks import decimal_first_outside, first_longer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MASK = (1 << 64) - 1


def _bound(precision: int) -> np.ndarray:
    b = 10**precision - 1
    return np.array([b >> 64, b & MASK, (2 * b) >> 64, (2 * b) & MASK], dtype=np.uint64)


def _words(values: list[int], width: int) -> np.ndarray:
    """Two's-complement little-endian 64-bit words of each value, flattened (width words per value)."""
    out = np.empty(len(values) * width, dtype=np.uint64)
    for i, v in enumerate(values):
        u = v & ((1 << (64 * width)) - 1)
        for k in range(width):
            out[i * width + k] = (u >> (64 * k)) & MASK
    return out.view(np.int64)


def _bits(valid: list[bool], offset: int) -> np.ndarray:
    """An Arrow validity bitmap whose value i is bit offset + i."""
    return np.packbits(np.array([False] * offset + valid, dtype=bool), bitorder="little")


def _near(precision: int) -> st.SearchStrategy[int]:
    """Values at and around the bound, and anywhere in the 128/256-bit range."""
    b = 10**precision - 1
    return st.one_of(st.sampled_from([b, b + 1, -b, -b - 1, 0, -1]), st.integers(-b - 3, b + 3),
                     st.integers(-(2**127), 2**127 - 1), st.integers(-(2**200), 2**200))


@SETTINGS
@given(st.data(), st.integers(1, 38), st.sampled_from([2, 4]), st.integers(0, 7))
def test_decimal_first_outside(data: st.DataObject, precision: int, width: int, offset: int) -> None:
    """The first valid value outside the precision's range, from any start (decimal128 / decimal256)."""
    limit = 2**127 if width == 2 else 2**255
    values = data.draw(st.lists(_near(precision).filter(lambda v: -limit <= v < limit), min_size=1, max_size=40))
    valid = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    start = data.draw(st.integers(0, len(values)))
    b = 10**precision - 1
    expected = next((i for i in range(start, len(values)) if valid[i] and not -b <= values[i] <= b), -1)
    got = decimal_first_outside(_words(values, width), width, _bits(valid, offset), offset, start, _bound(precision))
    assert got == expected
    every = np.zeros(0, dtype=np.uint8)
    expected_all = next((i for i in range(start, len(values)) if not -b <= values[i] <= b), -1)
    assert decimal_first_outside(_words(values, width), width, every, 0, start, _bound(precision)) == expected_all


def test_decimal_first_outside_across_blocks() -> None:
    """A hit after many in-range values, in a later block, with an earlier hit under a null."""
    n = 10_000
    values = [5] * n
    values[100] = 10**9
    values[9_000] = -(10**9)
    valid = [True] * n
    valid[100] = False
    assert decimal_first_outside(_words(values, 2), 2, _bits(valid, 3), 3, 0, _bound(7)) == 9_000


@SETTINGS
@given(st.data(), st.lists(st.integers(0, 50), min_size=1, max_size=60), st.integers(0, 7))
def test_first_longer(data: st.DataObject, lengths: list[int], offset: int) -> None:
    """The first valid value longer than the limit, from any start, with 32- and 64-bit offsets."""
    valid = data.draw(st.lists(st.booleans(), min_size=len(lengths), max_size=len(lengths)))
    limit = data.draw(st.integers(0, 50))
    start = data.draw(st.integers(0, len(lengths)))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    expected = next((i for i in range(start, len(lengths)) if valid[i] and lengths[i] > limit), -1)
    for dtype in (np.int32, np.int64):
        got = first_longer(offsets.astype(dtype), _bits(valid, offset), offset, start, np.int64(limit))
        assert got == expected
