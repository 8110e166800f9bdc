"""The dictionary fallback rules both backends share: the fallback encodings (the device's table is derived
from the host's), the raw (PLAIN-equivalent) value sizes and the first-page dictionary test."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.encode.fallback import PLAIN_WIDTH, keeps_dictionary, raw_size
from gpuwrite.kernels.encode.plain import plain_byte_array
from gpuwrite.kernels.plan.layout import (
    K_BOOL,
    K_BYTES,
    K_DOUBLE,
    K_FLBA,
    K_FLOAT,
    K_INT32,
    K_INT64,
    K_INT96,
    KIND_CODES,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.encode.rules import FALLBACK, fallback_codes, fallback_encoding
from gpuwrite.format.enums import Encoding


def test_the_device_fallback_table_is_the_host_rule_by_kind_code() -> None:
    """SPEC: DefaultV2ValuesWriterFactory: DELTA_BINARY_PACKED for INT32 / INT64, DELTA_BYTE_ARRAY for
    BINARY / FIXED_LEN_BYTE_ARRAY, PLAIN otherwise; "plain" mode: PLAIN for every kind."""
    delta, plain = fallback_codes("delta"), fallback_codes("plain")
    assert set(FALLBACK) == set(KIND_CODES) and len(delta) == len(plain) == len(KIND_CODES)
    for kind, code in KIND_CODES.items():
        assert delta[code] == fallback_encoding(kind, "delta") and plain[code] == Encoding.PLAIN
    assert [Encoding(delta[k]) for k in (K_INT32, K_INT64)] == [Encoding.DELTA_BINARY_PACKED] * 2
    assert [Encoding(delta[k]) for k in (K_BYTES, K_FLBA)] == [Encoding.DELTA_BYTE_ARRAY] * 2
    assert {Encoding(delta[k]) for k in (K_BOOL, K_FLOAT, K_DOUBLE, K_INT96)} == {Encoding.PLAIN}


@settings(deadline=None)  # the first examples compile (or load) the kernels
@given(st.integers(0, 10_000))
def test_raw_size_of_fixed_kinds_is_their_plain_size(n: int) -> None:
    """The PLAIN bytes of n values as NumPy writes them little-endian; booleans count whole packed bytes."""
    for kind, dtype in ((K_INT32, "<i4"), (K_FLOAT, "<f4"), (K_INT64, "<i8"), (K_DOUBLE, "<f8")):
        assert raw_size(kind, n, 0) == len(np.zeros(n, dtype=dtype).tobytes()) == PLAIN_WIDTH[kind] * n
    assert raw_size(K_BOOL, n, 0) == n // 8


@settings(deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=60))
def test_raw_size_of_byte_kinds_is_the_plain_byte_array_size(values: list[bytes]) -> None:
    """BYTE_ARRAY's PLAIN form (4-byte length, then the bytes), which parquet-java also counts for
    FIXED_LEN_BYTE_ARRAY and INT96."""
    offsets = np.cumsum([0, *map(len, values)]).astype(np.int64)
    data = np.frombuffer(b"".join(values) + b"\0", dtype=np.uint8)
    out = np.zeros(int(offsets[-1]) + 4 * len(values) + 1, dtype=np.uint8)
    plain = plain_byte_array(offsets, data, 0, len(values), out, 0)
    for kind in (K_BYTES, K_FLBA, K_INT96):
        assert raw_size(kind, len(values), int(offsets[-1])) == plain


def test_the_dictionary_stays_only_when_strictly_smaller() -> None:
    """SPEC: DictionaryValuesWriter.isCompressionSatisfying: encoded + dictionary bytes < raw bytes."""
    assert keeps_dictionary(10, 5, 16)
    assert not keeps_dictionary(10, 6, 16)
    assert not keeps_dictionary(0, 0, 0)
