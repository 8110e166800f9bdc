"""Min/max kernels against Python's sorted() with parquet-java's comparators."""

from __future__ import annotations

import math

import numpy as np
from gpuwrite.kernels.encode.plain import canonical_float_bits32, canonical_float_bits64
from gpuwrite.kernels.encode.stats import (
    bytes_minmax,
    bytes_minmax_ids,
    float_bounds,
    float_nans,
    float_stats,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SPECIAL32 = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF,
             0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001, 0x3F800000, 0xBF800000]
SPECIAL64 = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
             0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 1, (1 << 63) | 1]


def java_float_key(x: float) -> tuple[int, float, float]:
    """Sort key of Float.compare / Double.compare: -0.0 < 0.0, every NaN equal and above +Infinity."""
    if math.isnan(x):
        return (1, 0.0, 0.0)
    return (0, x, math.copysign(1.0, x))


@st.composite
def windows(draw: st.DrawFn, n: int) -> tuple[int, int]:
    """A non-empty [start, end) inside range(n)."""
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start + 1, n))
    return start, end


def _pack(values: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """Arrow-style offsets and data for byte strings."""
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in values])
    data = np.frombuffer(b"".join(values) + b"\0", dtype=np.uint8).copy()
    return offsets, data


byte_values = (st.binary(max_size=8) | st.sampled_from([b"", b"\x00", b"\x7f", b"\x80", b"\xff", b"\xff\x00"])
               | st.text(max_size=4).map(lambda s: s.encode("utf-8")))


@SETTINGS
@given(st.data(), st.lists(byte_values, min_size=1, max_size=100))
def test_bytes_minmax_unsigned(data: st.DataObject, values: list[bytes]) -> None:
    """BINARY min/max: unsigned lexicographic bytes (a prefix sorts first); `same` iff all equal."""
    offsets, raw = _pack(values)
    start, end = data.draw(windows(len(values)))
    imin, imax, same = bytes_minmax(offsets, raw, start, end, False)
    part = values[start:end]
    assert values[imin] == min(part)
    assert values[imax] == max(part)
    assert imin == start + part.index(min(part)) and imax == start + part.index(max(part))  # first of ties
    assert bool(same) == (len(set(part)) == 1)


@SETTINGS
@given(st.data(), st.integers(1, 17))
def test_bytes_minmax_decimal(data: st.DataObject, width: int) -> None:
    """FIXED_LEN_BYTE_ARRAY decimals: big-endian two's-complement order (signed first byte, rest unsigned)."""
    lo, hi = -(1 << (8 * width - 1)), (1 << (8 * width - 1)) - 1
    ints = data.draw(st.lists(st.integers(lo, hi) | st.sampled_from([lo, hi, 0, -1, 1]), min_size=1,
                              max_size=60))
    values = [v.to_bytes(width, "big", signed=True) for v in ints]
    offsets, raw = _pack(values)
    start, end = data.draw(windows(len(values)))
    imin, imax, same = bytes_minmax(offsets, raw, start, end, True)
    part = ints[start:end]
    assert ints[imin] == min(part)
    assert ints[imax] == max(part)
    assert imin == start + part.index(min(part)) and imax == start + part.index(max(part))  # first of ties
    assert bool(same) == (len(set(part)) == 1)


@SETTINGS
@given(st.data(), st.lists(byte_values, min_size=1, max_size=8), st.booleans())
def test_bytes_minmax_ids_matches_bytes_minmax(data: st.DataObject, pool: list[bytes], signed_first: bool) -> None:
    """A dictionary-encoded page's min/max from each id's first value equals bytes_minmax over every value
    (same first indices of the min and the max, same `same`), for the ids a first-occurrence dictionary gives."""
    values = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=120))
    numbering: dict[bytes, int] = {}
    ids_all = np.array([numbering.setdefault(v, len(numbering)) for v in values], dtype=np.int32)
    offsets, raw = _pack(values)
    start, end = data.draw(windows(len(values)))
    seen = np.zeros(len(numbering), dtype=np.uint8)
    got = bytes_minmax_ids(offsets, raw, start, ids_all[start:end], seen, signed_first)
    assert got == bytes_minmax(offsets, raw, start, end, signed_first)
    assert set(np.flatnonzero(seen).tolist()) == set(ids_all[start:end].tolist())


def test_bytes_minmax_fixed() -> None:
    """Hand-picked: b'' < b'\\x00' < b'a' < b'\\xff'; decimal -1 (0xff) < 0 (0x00) < 127 (0x7f)."""
    offsets, raw = _pack([b"a", b"\xff", b"", b"\x00"])
    assert bytes_minmax(offsets, raw, 0, 4, False) == (2, 1, False)
    offsets, raw = _pack([b"\x00", b"\xff", b"\x7f", b"\x80"])
    assert bytes_minmax(offsets, raw, 0, 4, True) == (3, 2, False)
    offsets, raw = _pack([b"xy", b"xy", b"xy"])
    assert bytes_minmax(offsets, raw, 0, 3, False) == (0, 0, True)


@SETTINGS
@given(st.data(), st.lists(st.integers(0, 2**32 - 1) | st.sampled_from(SPECIAL32), min_size=1, max_size=200),
       st.booleans())
def test_float_nans_count_and_largest_finite(data: st.DataObject, bits: list[int], canonical: bool) -> None:
    """NaN count and largest non-NaN value (Float.compare) over raw or canonical bits, against Python."""
    raw = np.asarray(bits, dtype=np.uint32).view(np.int32)
    arr = canonical_float_bits32(raw) if canonical else raw
    start, end = data.draw(windows(len(bits)))
    floats = raw.view(np.float32)[start:end].tolist()
    nans, top = float_nans(arr, start, end, True)
    assert nans == sum(math.isnan(x) for x in floats)
    finite = [x for x in floats if not math.isnan(x)]
    if not finite:
        assert top == -1
    else:
        best = max(finite, key=java_float_key)
        assert java_float_key(float(raw.view(np.float32)[top])) == java_float_key(best)
        assert top == start + [java_float_key(x) for x in floats].index(java_float_key(best))


@SETTINGS
@given(st.lists(st.integers(0, 2**64 - 1) | st.sampled_from(SPECIAL64), min_size=1, max_size=200))
def test_double_nans_count_and_largest_finite(bits: list[int]) -> None:
    raw = np.asarray(bits, dtype=np.uint64).view(np.int64)
    doubles = raw.view(np.float64).tolist()
    nans, top = float_nans(raw, 0, len(bits), False)
    assert nans == sum(math.isnan(x) for x in doubles)
    finite = [x for x in doubles if not math.isnan(x)]
    assert (top == -1) if not finite else java_float_key(doubles[top]) == java_float_key(max(finite, key=java_float_key))


def _float_stats_reference(values: list[float], start: int) -> tuple[int, int, int, int]:
    """float_stats in plain Python: first index of the min and of the max under Java's Float/Double.compare,
    the NaN count, and the first index of the largest non-NaN value (-1 when none)."""
    keys = [java_float_key(x) for x in values]
    imin = start + keys.index(min(keys))
    imax = start + keys.index(max(keys))
    finite = [k for k, x in zip(keys, values, strict=True) if not math.isnan(x)]
    top = start + keys.index(max(finite)) if finite else -1
    return imin, imax, sum(math.isnan(x) for x in values), top


def _bits_lists(special: list[int], width: int) -> st.SearchStrategy[list[int]]:
    """Raw IEEE bit patterns: any bits, the special values (zeros, infinities, NaNs of any payload and sign),
    or a few values drawn from a small pool (many ties), up to a few vector widths long."""
    one = st.integers(0, 2**width - 1) | st.sampled_from(special)
    return st.lists(one, min_size=1, max_size=300) | st.lists(one, min_size=1, max_size=4).flatmap(
        lambda pool: st.lists(st.sampled_from(pool), min_size=1, max_size=300))


def _check_float_stats(data: st.DataObject, bits: list[int], wide: bool) -> None:
    """float_stats over raw float (or double, `wide`) bits equals the Python reference, and float_nans (the GPU
    path's) over the canonical bits."""
    unsigned, signed, real = (np.uint64, np.int64, np.float64) if wide else (np.uint32, np.int32, np.float32)
    raw = np.asarray(bits, dtype=unsigned).view(signed)
    start, end = data.draw(windows(len(bits)))
    got = float_stats(raw, start, end, wide)
    assert got == _float_stats_reference(raw.view(real)[start:end].tolist(), start)
    canon = canonical_float_bits64(raw) if wide else canonical_float_bits32(raw)
    nans, top = float_nans(canon, start, end, not wide)
    assert got[2:] == (nans, top)
    # float_bounds (the CPU pages' one pass): the canonical bits at float_stats' indices
    imin, imax, _, itop = got
    expect = (int(canon[imin]), int(canon[imax]), nans, int(canon[itop]) if itop >= 0 else 0, itop >= 0) \
        if end > start else (0, 0, 0, 0, False)
    assert float_bounds(raw, start, end, wide) == expect


@SETTINGS
@given(st.data(), _bits_lists(SPECIAL32, 32))
def test_float_stats_floats(data: st.DataObject, bits: list[int]) -> None:
    _check_float_stats(data, bits, wide=False)


@SETTINGS
@given(st.data(), _bits_lists(SPECIAL64, 64))
def test_float_stats_doubles(data: st.DataObject, bits: list[int]) -> None:
    _check_float_stats(data, bits, wide=True)


def test_float_stats_fixed() -> None:
    """Hand-picked: -0.0 < 0.0 (first of ties), NaN of any payload is the max and never the top, all-NaN pages,
    a single value, infinities, an empty range."""
    d = np.array([0.0, -0.0, -0.0, np.inf, -np.inf, 2.0], dtype=np.float64).view(np.int64)
    assert float_stats(d, 0, 3, True) == (1, 0, 0, 0)
    assert float_stats(d, 0, 6, True) == (4, 3, 0, 3)
    nan = np.array([0x7FF0000000000001, 0xFFF8000000000000, 0x3FF0000000000000, 0x7FF8000000000000],
                   dtype=np.uint64).view(np.int64)
    assert float_stats(nan, 0, 4, True) == (2, 0, 3, 2)
    assert float_stats(nan, 0, 2, True) == (0, 0, 2, -1)  # all NaN: min and max are the first NaN
    assert float_stats(nan, 3, 4, True) == (3, 3, 1, -1)
    assert float_stats(nan, 2, 3, True) == (2, 2, 0, 2)  # a single value
    assert float_stats(nan, 1, 1, True) == (1, 1, 0, -1)  # empty
    f = np.array([0xFFC00001, 0x7F800000, 0x80000000, 0x00000000], dtype=np.uint32).view(np.int32)
    assert float_stats(f, 0, 4, False) == (2, 0, 1, 1)
    big = np.full(1000, -0.0)
    big[637] = 0.0
    big[901] = 0.0
    assert float_stats(big.view(np.int64), 0, 1000, True) == (0, 637, 0, 637)
