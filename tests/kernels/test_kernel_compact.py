"""kernels/compact: one-pass compaction of present values against NumPy's gather, boolean index and cast."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.convert.compact import compact_decimal_words, compact_words
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), st.booleans()), max_size=200), st.integers(1, 4),
       st.sampled_from([np.int32, np.int64]), st.booleans())
def test_compact_words_is_gather_mask_cast(rows: list[tuple[int, bool]], stride: int, dtype: type,
                                           nulls: bool) -> None:
    """The first word of each present value, cast as astype casts it (wrapping), in row order."""
    words = np.zeros((len(rows), stride), dtype=np.int64)
    words[:, 0] = [v for v, _ in rows]
    if stride > 1:
        words[:, 1:] = -7  # higher words are never read
    valid = np.array([ok for _, ok in rows], dtype=np.bool_)
    flat = words.reshape(-1)
    if nulls:
        out = np.full(int(valid.sum()) + 1, 99, dtype=dtype)
        n = compact_words(flat, stride, valid.view(np.uint8), out)
        expected = words[:, 0][valid].astype(dtype)
    else:
        out = np.full(len(rows), 99, dtype=dtype)
        n = compact_words(flat, stride, np.zeros(0, dtype=np.uint8), out)
        expected = words[:, 0].astype(dtype)
    assert n == len(expected)
    assert out[:n].tolist() == expected.tolist()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=True, width=64), max_size=100), st.data())
def test_compact_words_keeps_float_bits(values: list[float], data: st.DataObject) -> None:
    """Floats (NaN payloads and signed zeros included) are moved bit for bit."""
    raw = np.array(values, dtype=np.float64)
    valid = np.array(data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values))), np.bool_)
    out = np.empty(int(valid.sum()) + 1, dtype=np.float64)
    n = compact_words(raw, 1, valid.view(np.uint8), out)
    assert out[:n].view(np.int64).tolist() == raw[valid].view(np.int64).tolist()


def _decimal_words(values: list[int], stride: int) -> np.ndarray:
    """Two's-complement little-endian words of each value, `stride` per value (decimal128: 2, decimal256: 4)."""
    words = np.zeros((len(values), stride), dtype=np.uint64)
    for i, v in enumerate(values):
        u = v % (1 << (64 * stride))
        for k in range(stride):
            words[i, k] = (u >> (64 * k)) & ((1 << 64) - 1)
    return words.view(np.int64).reshape(-1)


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 18), st.sampled_from([1, 2, 4]), st.sampled_from([np.int32, np.int64]), st.booleans(),
       st.data())
def test_compact_decimal_words_checks_each_present_value(precision: int, stride: int, dtype: type, nulls: bool,
                                                         data: st.DataObject) -> None:
    """Values within +-(10**p - 1) are compacted as compact_words compacts them; one present value outside
    (by a digit, or beyond 64 bits) gives -1, and anything under a null slot is ignored. Stride 1 is decimal64
    (one word a value: its values are all of int64, out to its ends)."""
    if precision > 9:
        dtype = np.int64  # INT32 holds precision <= 9 only
    bound = 10 ** precision - 1
    inside = st.integers(-bound, bound)
    far = (1 << 63) - 1 if stride == 1 else 1 << 100
    outside = st.integers(bound + 1, far) | st.integers(-far - (stride == 1), -bound - 1)
    rows = data.draw(st.lists(st.tuples(inside | outside, st.booleans()), max_size=5000 if stride == 2 else 300))
    values = [v for v, _ in rows]
    valid = np.array([ok or not nulls for _, ok in rows], dtype=np.bool_)
    words = _decimal_words(values, stride)
    out = np.full(len(rows) + 1, 99, dtype=dtype)
    n = compact_decimal_words(words, stride, valid.view(np.uint8) if nulls else np.zeros(0, np.uint8), out,
                              np.int64(bound))
    wide = any(abs(v) > bound for v, ok in zip(values, valid, strict=True) if ok)
    if wide:
        assert n == -1
        return
    reference = np.full(len(rows) + 1, 99, dtype=dtype)
    m = compact_words(words, stride, valid.view(np.uint8) if nulls else np.zeros(0, np.uint8), reference)
    assert n == m and out[:n].tolist() == reference[:m].tolist() == [v for v, ok in zip(values, valid,
                                                                                        strict=True) if ok]


def test_compact_decimal_words_finds_one_wide_value_in_any_block() -> None:
    """A single wide value at a block's first, last or a middle row, among many, is found."""
    bound = 10 ** 7 - 1
    for at in (0, 2047, 2048, 5000, 9999):
        values = [12345] * 10_000
        values[at] = bound + 1
        out = np.empty(10_001, dtype=np.int32)
        assert compact_decimal_words(_decimal_words(values, 2), 2, np.zeros(0, np.uint8), out, np.int64(bound)) == -1
        valid = np.ones(10_000, dtype=np.bool_)
        valid[at] = False  # the same value under a null slot is no value
        assert compact_decimal_words(_decimal_words(values, 2), 2, valid.view(np.uint8), out, np.int64(bound)) \
            == 9_999


def test_compact_decimal64_range_ends() -> None:
    """decimal64 (stride 1): +-bound pass; +-(bound + 1) and int64's own ends fail, also after a null slot; a
    wide value under a null slot is no value."""
    bound = 10 ** 9 - 1
    ok = np.array([bound, -bound, 0], dtype=np.int64)
    out = np.empty(4, dtype=np.int32)
    assert compact_decimal_words(ok, 1, np.zeros(0, np.uint8), out, np.int64(bound)) == 3
    assert out[:3].tolist() == [bound, -bound, 0]
    for wide in (bound + 1, -bound - 1, 2**63 - 1, -2**63):
        words = np.array([5, wide], dtype=np.int64)
        assert compact_decimal_words(words, 1, np.zeros(0, np.uint8), out, np.int64(bound)) == -1
        valid = np.array([1, 1], dtype=np.uint8)
        assert compact_decimal_words(words, 1, valid, out, np.int64(bound)) == -1
        valid[1] = 0
        assert compact_decimal_words(words, 1, valid, out, np.int64(bound)) == 1 and out[0] == 5
