"""crc32_combine (kernels/encode/crc32.py) against zlib.crc32 of the concatenation."""

from __future__ import annotations

import zlib

import numpy as np
from gpuwrite.kernels.encode.crc32 import crc32_combine, crc32_powers, multmodp, x2nmodp
from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_combine_of_two_parts_is_crc_of_concatenation(a: bytes, b: bytes) -> None:
    assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=64), min_size=1, max_size=12))
def test_left_fold_over_many_parts(parts: list[bytes]) -> None:
    """The fold a block's tree performs, in sequence: every prefix CRC is right, empty parts included."""
    crc = 0
    done = b""
    for part in parts:
        crc = crc32_combine(crc, zlib.crc32(part), len(part))
        done += part
        assert crc == zlib.crc32(done)


def test_long_right_part_and_known_value() -> None:
    b = bytes(range(256)) * 300  # len2 with many set bits
    assert crc32_combine(zlib.crc32(b"123456789"), zlib.crc32(b), len(b)) == zlib.crc32(b"123456789" + b)
    assert crc32_combine(zlib.crc32(b"1234"), zlib.crc32(b"56789"), 5) == 0xCBF43926  # the CRC-32 check value


def test_powers_are_repeated_squares_of_x() -> None:
    powers = crc32_powers()
    assert powers[0] == 1 << 30  # x, reflected
    assert powers[1] == 1 << 29  # x^2
    for k in range(1, 32):
        assert powers[k] == multmodp(np.uint64(powers[k - 1]), np.uint64(powers[k - 1]))
    # x^(n * 8) by powers equals n byte-steps of multiplying by x^8
    x8 = np.uint64(powers[3])
    acc = np.uint64(1 << 31)
    for n in range(1, 40):
        acc = multmodp(acc, x8)
        assert x2nmodp(np.int64(n), np.int64(3), powers) == acc
