"""PLAIN value encoders that need more than a memory view: length-prefixed byte arrays and canonical NaNs."""

from __future__ import annotations

import numpy as np

from ._jit import jit


@jit
def plain_byte_array(offsets: np.ndarray, data: np.ndarray, start: int, end: int, out: np.ndarray,
                     pos: int) -> int:
    """Write values start..end as 4-byte little-endian length + bytes; return the end position."""
    for i in range(start, end):
        s = offsets[i]
        t = offsets[i + 1]
        n = t - s
        out[pos] = n & 0xFF
        out[pos + 1] = (n >> 8) & 0xFF
        out[pos + 2] = (n >> 16) & 0xFF
        out[pos + 3] = (n >> 24) & 0xFF
        pos += 4
        for j in range(n):
            out[pos + j] = data[s + j]
        pos += n
    return pos


@jit
def canonical_float_bits32(bits: np.ndarray) -> np.ndarray:
    """IEEE bits with every NaN replaced by 0x7FC00000, as Java's floatToIntBits writes them."""
    out = bits.copy()
    for i in range(bits.shape[0]):
        b = bits[i]
        if (b & 0x7F800000) == 0x7F800000 and (b & 0x007FFFFF) != 0:
            out[i] = 0x7FC00000
    return out


@jit
def canonical_float_bits64(bits: np.ndarray) -> np.ndarray:
    """IEEE bits with every NaN replaced by 0x7FF8000000000000, as Java's doubleToLongBits writes them."""
    out = bits.copy()
    for i in range(bits.shape[0]):
        b = bits[i]
        if (b & 0x7FF0000000000000) == 0x7FF0000000000000 and (b & 0x000FFFFFFFFFFFFF) != 0:
            out[i] = 0x7FF8000000000000
    return out
