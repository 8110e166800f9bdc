"""kernels/compact: one-pass compaction of present values against NumPy's gather, boolean index and cast."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.compact import compact_words
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
