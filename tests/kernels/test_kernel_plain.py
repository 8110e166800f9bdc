"""kernels/plain: the canonical-NaN scan agrees with the canonical copy, so `canonical_bits` may skip the copy."""

from __future__ import annotations

import numpy as np
import pytest
from gpuwrite.kernels.encode.plain import all_canonical, canonical_float_bits32, canonical_float_bits64
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.encode.rules import canonical_bits

# (kind, bits dtype, canonical copy, NaN bit patterns: Java's canonical one, others, negative ones)
_KINDS = {
    "double": (np.int64, canonical_float_bits64,
               [0x7FF8000000000000, 0x7FF0000000000001, -0x0008000000000000, 0x7FFFFFFFFFFFFFFF]),
    "float": (np.int32, canonical_float_bits32, [0x7FC00000, 0x7F800001, -0x00400000, 0x7FFFFFFF]),
}


@pytest.mark.parametrize("kind", sorted(_KINDS))
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_all_canonical_is_copy_equality(kind: str, data: st.DataObject) -> None:
    dtype, copy, nans = _KINDS[kind]
    bound = 2 ** (8 * np.dtype(dtype).itemsize - 1)
    bits = data.draw(st.lists(st.one_of(st.integers(-bound, bound - 1), st.sampled_from(nans)), max_size=60))
    arr = np.array(bits, dtype=dtype)
    assert all_canonical(arr, kind == "double") == bool(np.array_equal(copy(arr), arr))
    as_float = arr.view(np.float64 if kind == "double" else np.float32)
    assert canonical_bits(kind, as_float).tolist() == copy(arr).tolist()  # type: ignore[arg-type]


def test_canonical_values_are_not_copied() -> None:
    values = np.array([1.5, -0.0, float("inf"), float("nan")], dtype=np.float64)
    assert np.shares_memory(canonical_bits("double", values), values)  # the NaN here is Java's canonical one
    odd = np.array([0x7FF0000000000001], dtype=np.int64).view(np.float64)
    assert not np.shares_memory(canonical_bits("double", odd), odd)
