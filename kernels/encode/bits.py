"""Scalar helpers shared by the encoders: bit widths, zigzag, ULEB128 and LSB-first bit packing."""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline


@jit_inline
def bit_width_u64(v: np.uint64) -> int:
    """Number of bits needed for the unsigned value v (0 for 0)."""
    n = 0
    while v != 0:
        v = v >> np.uint64(1)
        n += 1
    return n


@jit_inline
def write_uleb(out: np.ndarray, pos: int, v: np.uint64) -> int:
    """Write v as unsigned LEB128 at out[pos:]; return the new position."""
    while True:
        b = v & np.uint64(0x7F)
        v = v >> np.uint64(7)
        if v != 0:
            out[pos] = np.uint8(b | np.uint64(0x80))
            pos += 1
        else:
            out[pos] = np.uint8(b)
            return pos + 1


@jit_inline
def uleb_len(v: np.uint64) -> int:
    """Bytes of v as unsigned LEB128 (what `write_uleb` writes)."""
    n = 1
    while v >= np.uint64(0x80):
        v = v >> np.uint64(7)
        n += 1
    return n


@jit_inline
def zigzag64(v: np.int64) -> np.uint64:
    """Zigzag-map a signed 64-bit value (same result as 32-bit zigzag for values in int32 range)."""
    return np.uint64((np.uint64(v) << np.uint64(1)) ^ np.uint64(v >> np.int64(63)))


@jit_inline
def put_bits(out: np.ndarray, pos: int, acc: np.uint64, nbits: int, v: np.uint64, width: int) -> tuple:
    """Append the low `width` bits of v to the LSB-first accumulator, flushing whole bytes to out[pos:].

    Returns (pos, acc, nbits); the shared step of every bit packer (RLE groups, DELTA miniblocks).
    """
    left = width
    while left > 0:
        take = min(left, 32)
        acc |= (v & ((np.uint64(1) << np.uint64(take)) - np.uint64(1))) << np.uint64(nbits)
        nbits += take
        v = v >> np.uint64(take)
        left -= take
        while nbits >= 8:
            out[pos] = np.uint8(acc & np.uint64(0xFF))
            pos += 1
            acc = acc >> np.uint64(8)
            nbits -= 8
    return pos, acc, nbits


@jit
def pack_padded(vals: np.ndarray, start: int, valid: int, count: int, width: int, out: np.ndarray,
                pos: int) -> int:
    """Bit-pack `count` slots LSB first: vals[start:start+valid], then zeros; return the new position.

    count * width must be a multiple of 8. Reads nothing past start+valid, so the last, partial group of
    an RLE run packs straight from the input without a staging buffer.
    """
    if width == 0:
        return pos
    acc = np.uint64(0)
    nbits = 0
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) if width == 64 else (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    for i in range(count):
        v = np.uint64(0)
        if i < valid:
            v = np.uint64(vals[start + i]) & mask
        pos, acc, nbits = put_bits(out, pos, acc, nbits, v, width)
    return pos


@jit_inline
def put_word32(out: np.ndarray, pos: int, acc: np.uint64) -> int:
    """Write the low 32 bits of acc little-endian at out[pos:]; return the new position."""
    p = np.uint64(pos)  # unsigned: no negative-index wrap-around test per store
    out[p] = np.uint8(acc & np.uint64(0xFF))
    out[p + np.uint64(1)] = np.uint8((acc >> np.uint64(8)) & np.uint64(0xFF))
    out[p + np.uint64(2)] = np.uint8((acc >> np.uint64(16)) & np.uint64(0xFF))
    out[p + np.uint64(3)] = np.uint8((acc >> np.uint64(24)) & np.uint64(0xFF))
    return pos + 4


@jit_inline
def put_bits32(out: np.ndarray, pos: int, acc: np.uint64, nbits: int, v: np.uint64, width: int) -> tuple:
    """Append v (below 2**width, width <= 32) to the LSB-first accumulator, writing a 32-bit word whenever one
    is full: the word-at-a-time form of `put_bits`. Returns (pos, acc, nbits); finish with `flush_bits`."""
    acc |= v << np.uint64(nbits)
    nbits += width
    if nbits >= 32:
        pos = put_word32(out, pos, acc)
        acc = acc >> np.uint64(32)
        nbits -= 32
    return pos, acc, nbits


@jit_inline
def flush_bits(out: np.ndarray, pos: int, acc: np.uint64, nbits: int) -> int:
    """Write the accumulator's remaining `nbits` bits as whole bytes (the last one zero-padded); the new
    position."""
    while nbits > 0:
        out[np.uint64(pos)] = np.uint8(acc & np.uint64(0xFF))
        pos += 1
        acc = acc >> np.uint64(8)
        nbits -= 8
    return pos


@jit_inline
def pack8(vals: np.ndarray, start: int, width: int, out: np.ndarray, pos: int) -> int:
    """Bit-pack the 8 values vals[start:start+8] LSB first at `width` <= 32 bits (one RLE group); return the
    new position. The same bytes as `pack_padded(vals, start, 8, 8, width, out, pos)`, a word at a time."""
    s = np.uint64(start)  # unsigned: no negative-index wrap-around test per load
    if width == 1:
        b = np.uint64(0)
        for k in range(8):
            b |= (np.uint64(vals[s + np.uint64(k)]) & np.uint64(1)) << np.uint64(k)
        out[np.uint64(pos)] = np.uint8(b)
        return pos + 1
    mask = (np.uint64(1) << np.uint64(width)) - np.uint64(1)
    acc = np.uint64(0)
    nbits = 0
    for k in range(8):
        pos, acc, nbits = put_bits32(out, pos, acc, nbits, np.uint64(vals[s + np.uint64(k)]) & mask, width)
    return flush_bits(out, pos, acc, nbits)
