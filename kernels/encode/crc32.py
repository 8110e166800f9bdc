"""CRC-32 of a concatenation from the CRCs of its parts, as zlib's `crc32_combine` computes it.

crc(A + B) = crc(A) * x^(8 |B|) ^ crc(B) modulo the CRC-32 polynomial (the pre- and post-conditioning
cancel). Polynomials are 32-bit words in reflected order (bit 31 is x^0), as in zlib; `powers[k]` holds
x^(2^k) mod P, so x^n needs one multiplication per set bit of n. Every function here is a @jit kernel, so a
block-parallel CRC on a GPU (`pages_block.block_crc32`) runs the same source through `_jit.device`.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

_POLY = np.uint64(0xEDB88320)  # zlib's reflected polynomial
_X0 = np.uint64(0x80000000)  # the polynomial 1 (x^0) in reflected order
_X1 = np.uint64(0x40000000)  # the polynomial x


@jit
def multmodp(a: np.uint64, b: np.uint64) -> np.uint64:
    """a(x) * b(x) modulo the CRC-32 polynomial, both reflected 32-bit words (zlib's multmodp)."""
    x = np.uint64(a)
    y = np.uint64(b)
    m = _X0
    prod = np.uint64(0)
    for _ in range(32):
        if x & m:
            prod ^= y
        m = m >> np.uint64(1)
        if y & np.uint64(1):
            y = (y >> np.uint64(1)) ^ _POLY
        else:
            y = y >> np.uint64(1)
    return prod


@jit
def fill_powers(powers: np.ndarray) -> None:
    """powers[k] = x^(2^k) mod P for k < 32 (zlib's x2n_table); powers has 32 uint32 entries."""
    p = _X1
    for k in range(32):
        powers[k] = p
        p = multmodp(p, p)


@jit
def x2nmodp(n: int, k: int, powers: np.ndarray) -> np.uint64:
    """x^(n * 2^k) mod P (zlib's x2nmodp); n >= 0."""
    p = _X0
    nn = np.int64(n)
    kk = np.int64(k)
    while nn > 0:
        if nn & 1:
            p = multmodp(np.uint64(powers[kk & 31]), p)
        nn >>= 1
        kk += 1
    return p


@jit
def combine(crc1: np.uint64, crc2: np.uint64, len2: int, powers: np.ndarray) -> np.uint64:
    """CRC-32 of A + B from crc1 = crc(A), crc2 = crc(B) and len2 = |B| in bytes (zlib's crc32_combine)."""
    return multmodp(x2nmodp(len2, 3, powers), np.uint64(crc1)) ^ np.uint64(crc2)


def crc32_powers() -> np.ndarray:
    """The 32-entry table of x^(2^k) mod P that `combine` and `x2nmodp` take."""
    powers = np.zeros(32, dtype=np.uint32)
    fill_powers(powers)
    return powers


_POWERS = crc32_powers()


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """zlib.crc32(a + b) given crc1 = zlib.crc32(a), crc2 = zlib.crc32(b) and len2 = len(b) (host)."""
    if len2 < 0:
        raise ValueError(f"len2 must be >= 0, got {len2}")
    return int(combine(np.uint64(crc1 & 0xFFFFFFFF), np.uint64(crc2 & 0xFFFFFFFF), len2, _POWERS))
