"""The device value checks' per-value tests (kernels/convert/value_checks.py) against independent references: Python's
strict UTF-8 decoder, and decimal bounds in Python integers."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.convert.value_checks import CHK_COUNT, DECIMAL, decimal_outside_at, utf8_valid
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.pipeline.validate import decimal_bound

# byte strings that hit every branch of a UTF-8 decoder: lead bytes of each length, boundary continuations,
# overlong forms, surrogates, values above U+10FFFF, truncations
_EDGES = [b"\xc2\x80", b"\xc1\xbf", b"\xe0\xa0\x80", b"\xe0\x9f\xbf", b"\xed\x9f\xbf", b"\xed\xa0\x80",
          b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80",
          b"\xf5\x80\x80\x80", b"\xff", b"\x80", b"\xe2\x82", b"\xf0\x9f\x98", b"a", b"\x00"]
_PIECES = st.one_of(st.sampled_from(_EDGES), st.binary(max_size=6), st.text(max_size=4).map(str.encode))


def _python_valid(raw: bytes) -> bool:
    try:
        raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(_PIECES, max_size=6), pad=st.binary(max_size=3))
def test_utf8_matches_pythons_strict_decoder(parts, pad):
    raw = b"".join(parts)
    data = np.frombuffer(pad + raw + pad, dtype=np.uint8)
    assert utf8_valid(data, len(pad), len(pad) + len(raw)) == _python_valid(raw)


@settings(max_examples=300, deadline=None)
@given(precision=st.integers(1, 38), width=st.sampled_from([4, 8, 16, 32]), data=st.data())
def test_decimal_bound_matches_python_integers(precision, width, data):
    """decimal32 / 64 / 128 / 256 (width in bytes)."""
    bound = 10 ** precision - 1
    top = (1 << (8 * width - 1)) - 1
    edges = [v for v in (bound, -bound, bound + 1, -bound - 1, 0) if -top - 1 <= v <= top]
    value = data.draw(st.one_of(st.integers(max(-bound - 2, -top - 1), min(bound + 2, top)),
                                st.integers(-top - 1, top), st.sampled_from(edges)))
    row = np.zeros(CHK_COUNT, dtype=np.int64)
    row[0] = DECIMAL
    row[1:] = decimal_bound(precision).view(np.int64)
    src = np.concatenate([np.zeros(3, np.uint8), np.frombuffer(value.to_bytes(width, "little", signed=True),
                                                                  dtype=np.uint8)])
    assert decimal_outside_at(src, 3, width, row) == (abs(value) > bound)
