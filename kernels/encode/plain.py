"""PLAIN value encoders that need more than a memory view: length-prefixed byte arrays and canonical NaNs."""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_alloc
from .byteops import copy_bytes


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
        copy_bytes(out, pos, data, s, n)
        pos += n
    return pos


@jit
def canonical32(b: np.int64) -> np.int64:
    """Float bits (sign-extended int32) with any NaN as 0x7FC00000, as Java's floatToIntBits gives them."""
    if (b & 0x7F800000) == 0x7F800000 and (b & 0x007FFFFF) != 0:
        return np.int64(0x7FC00000)
    return b


@jit
def canonical64(b: np.int64) -> np.int64:
    """Double bits with any NaN as 0x7FF8000000000000, as Java's doubleToLongBits gives them."""
    if (b & 0x7FF0000000000000) == 0x7FF0000000000000 and (b & 0x000FFFFFFFFFFFFF) != 0:
        return np.int64(0x7FF8000000000000)
    return b


@jit
def all_canonical(bits: np.ndarray, wide: bool) -> bool:
    """Whether every float's (int32 bits) or double's (int64 bits, `wide`) bits are already as Java's
    floatToIntBits / doubleToLongBits give them (no NaN, or only the canonical one): then they need no
    canonical copy. Sequential, CPU; counts the non-canonical ones branch-free."""
    odd = 0
    for i in range(bits.shape[0]):
        b = np.int64(bits[i])
        odd += (canonical64(b) if wide else canonical32(b)) != b
    return odd == 0


@jit_alloc
def canonical_float_bits32(bits: np.ndarray) -> np.ndarray:
    """IEEE bits with every NaN replaced by 0x7FC00000, as Java's floatToIntBits writes them."""
    out = bits.copy()
    for i in range(bits.shape[0]):
        out[i] = canonical32(np.int64(bits[i]))
    return out


@jit_alloc
def canonical_float_bits64(bits: np.ndarray) -> np.ndarray:
    """IEEE bits with every NaN replaced by 0x7FF8000000000000, as Java's doubleToLongBits writes them."""
    out = bits.copy()
    for i in range(bits.shape[0]):
        out[i] = canonical64(np.int64(bits[i]))
    return out


@jit
def write_le(out: np.ndarray, pos: int, v: np.int64, nbytes: int) -> int:
    """Write the low `nbytes` bytes of v little-endian at out[pos:]; return the new position."""
    u = np.uint64(v)
    for k in range(nbytes):
        out[pos + k] = np.uint8((u >> np.uint64(8 * k)) & np.uint64(0xFF))
    return pos + nbytes
