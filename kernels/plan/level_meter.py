"""Bytes parquet-java's RLE / bit-packed level encoder has emitted, measured many levels at a time.

`rle.rle_emitted_size` steps the encoder value by value. These are the same machine (same state layout, same
result for every split of the input into calls) stepping whole buffers instead: parquet-java's encoder
buffers values 8 at a time from a group boundary, and a buffer either fills (one bit-packed group emitted)
or holds 8 equal values (an RLE run starts, emitted when a different value ends it). So at a buffer boundary
the next values only need comparing, and inside a run they only need skipping. `levels_emitted_size` compares
8 byte levels per 64-bit word; `bits_emitted_size` takes width-1 levels (0 or 1: flat columns' validity)
packed as bits, skips runs 64 levels per word and settles 8 buffers per word (bit-packed groups up to the
first uniform byte). The page planner feeds every level of a row group through them, where value-by-value
branches dominated its time.
Geometry: one thread feeds one column's levels; nothing is allocated. Inputs: uint8 levels with the same
bytes as little-endian uint64 words (`words`), or a bit stream (uint64, bit i at bit i % 64 of word i // 64);
each with a spare word past the last level. CPU twin: rle.rle_emitted_size.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from ..encode.rle_state import buffer_value, count_group, load_state, repeat_bytes, store_state

_ONES = np.uint64(0x0101010101010101)


@jit
def _word_at(words: np.ndarray, i: int) -> np.uint64:
    """The 8 bytes from byte i, as a little-endian word."""
    q = i >> 3
    o = i & 7
    lo = words[q]
    if o == 0:
        return lo
    shift = np.uint64(8 * o)
    return (lo >> shift) | (words[q + 1] << (np.uint64(64) - shift))


@jit
def _low_bytes(n: int) -> np.uint64:
    """Mask of the n (1..8) low bytes of a word."""
    if n >= 8:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return (np.uint64(1) << np.uint64(8 * n)) - np.uint64(1)


@jit
def _equal_bytes(diff: np.uint64) -> int:
    """Low bytes of `diff` that are zero before the first non-zero one (8 when all are)."""
    if diff == np.uint64(0):
        return 8
    for k in range(8):
        if (diff >> np.uint64(8 * k)) & np.uint64(0xFF) != np.uint64(0):
            return k
    return 8


@jit
def levels_emitted_size(values: np.ndarray, words: np.ndarray, start: int, end: int, width: int,
                        state: np.ndarray) -> int:
    """Feed values[start:end] (uint8 levels) to the simulated encoder in `state` (int64[6], as
    rle_emitted_size: previous, repeat, buffered, run open, groups in run, bytes emitted); return the bytes
    emitted so far."""
    prev, repeat, nbuf, open_run, groups, size = load_state(state)
    value_bytes = (width + 7) // 8
    i = start
    while i < end:
        if repeat >= 8:
            # inside an RLE run: equal values only lengthen it; a different one ends it
            pattern = np.uint64(prev) * _ONES
            while i < end:
                n = min(8, end - i)
                same = _equal_bytes((_word_at(words, i) ^ pattern) & _low_bytes(n))
                if same > n:
                    same = n
                repeat += same
                i += same
                if same < n:
                    break
            if i == end:
                break
            size += repeat_bytes(repeat, value_bytes)
            open_run = 0
            groups = 0
            prev = values[i]
            repeat = 1
            nbuf = 1
            i += 1
            continue
        need = 8 - nbuf
        if i + need <= end:
            # the buffer fills now: 8 equal values from the buffer start begin a run, else a group is emitted
            target = values[i] if nbuf == 0 else prev
            if repeat == nbuf and (_word_at(words, i) ^ (np.uint64(target) * _ONES)) & _low_bytes(need) == 0:
                prev = target
                repeat = 8
                nbuf = 7
            else:
                size, open_run, groups = count_group(size, open_run, groups, width)
                prev = values[i + need - 1]
                repeat = 0
                nbuf = 0
            i += need
            continue
        # fewer values left than the buffer needs: they wait in it
        prev, repeat, nbuf = buffer_value(np.int64(values[i]), prev, repeat, nbuf)
        i += 1
    return store_state(state, prev, repeat, nbuf, open_run, groups, size)


# Width-1 levels (0 or 1: a flat optional column's, or a nested one's with max level 1) packed as bits.
_U1 = np.uint64(1)
_U63 = np.uint64(63)
_DEBRUIJN = np.uint64(0x03F79D71B4CA8B09)
_DEBRUIJN_TABLE = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _DEBRUIJN_TABLE[((1 << _i) * int(_DEBRUIJN) % (1 << 64)) >> 58] = _i


@jit
def _ctz(x: np.uint64) -> int:
    """Trailing zero bits of a non-zero word (de Bruijn multiplication)."""
    low = x & (~x + _U1)
    return int(_DEBRUIJN_TABLE[int((low * _DEBRUIJN) >> np.uint64(58))])


@jit
def _bit_mask(n: int) -> np.uint64:
    """The n (0..63) low bits."""
    return (_U1 << np.uint64(n)) - _U1


@jit
def _bits_at(bits: np.ndarray, i: int, n: int) -> np.uint64:
    """n (1..63) bits of the stream from bit i, as the low bits of a word."""
    q = i >> 6
    o = i & 63
    x = bits[q] >> np.uint64(o)
    if o + n > 64:
        x |= bits[q + 1] << np.uint64(64 - o)
    return x & _bit_mask(n)


@jit
def count_ones(bits: np.ndarray, start: int, end: int) -> int:
    """Set bits of the stream in start..end (a flat column's values among its levels)."""
    n = 0
    i = start
    while i < end and (i & 63) != 0:
        m = min(end - i, 64 - (i & 63))
        x = _bits_at(bits, i, m)
        n += popcount(x)
        i += m
    q = i >> 6
    while i + 64 <= end:
        n += popcount(bits[q])
        q += 1
        i += 64
    if i < end:
        n += popcount(_bits_at(bits, i, end - i))
    return n


@jit
def popcount(x: np.uint64) -> int:
    """Set bits of a word."""
    x = x - ((x >> _U1) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * _ONES) >> np.uint64(56))


@jit
def _word64(bits: np.ndarray, i: int) -> np.uint64:
    """64 bits of the stream from bit i."""
    q = i >> 6
    o = i & 63
    if o == 0:
        return bits[q]
    return (bits[q] >> np.uint64(o)) | (bits[q + 1] << np.uint64(64 - o))


_LOW = np.uint64(0x0101010101010101)
_HIGH = np.uint64(0x8080808080808080)


@jit
def _zero_bytes(x: np.uint64) -> np.uint64:
    """High bit set in the lowest zero byte of x (higher flags may be spurious)."""
    return (x - _LOW) & ~x & _HIGH


@jit
def bits_emitted_size(bits: np.ndarray, start: int, end: int, state: np.ndarray) -> int:
    """levels_emitted_size for width-1 levels packed as bits (stream bits start..end)."""
    prev, repeat, nbuf, open_run, groups, size = load_state(state)
    i = start
    while i < end:
        if repeat >= 8:
            # inside an RLE run: equal levels only lengthen it; a different one ends it
            flip = np.uint64(0) - np.uint64(prev)  # all ones when the run is of ones
            while i < end:
                if i + 64 <= end:
                    m = 64
                    diff = _word64(bits, i) ^ flip
                else:
                    m = end - i
                    diff = (_bits_at(bits, i, m) ^ flip) & _bit_mask(m)
                if diff == 0:
                    repeat += m
                    i += m
                else:
                    t = _ctz(diff)
                    repeat += t
                    i += t
                    break
            if i == end:
                break
            size += repeat_bytes(repeat, 1)
            open_run = 0
            groups = 0
            repeat = 0  # a fresh buffer starts at the level that ended the run
            nbuf = 0
            continue
        if nbuf == 0 and i + 64 <= end:
            # 8 buffers at once: bit-packed groups up to the first uniform byte, which starts an RLE run
            w = _word64(bits, i)
            uniform = _zero_bytes(w) | _zero_bytes(~w)
            k = 8 if uniform == 0 else _ctz(uniform) >> 3
            for _ in range(k):
                size, open_run, groups = count_group(size, open_run, groups, 1)
            if k == 8:
                prev = int(w >> _U63)
                i += 64
            else:
                prev = int((w >> np.uint64(8 * k)) & _U1)
                repeat = 8
                nbuf = 7
                i += 8 * k + 8
            continue
        need = 8 - nbuf
        if i + need <= end:
            # the buffer fills now: 8 equal levels from the buffer start begin a run, else a group is emitted
            b = _bits_at(bits, i, need)
            target = int(b & _U1) if nbuf == 0 else prev
            if repeat == nbuf and b == (_bit_mask(need) if target != 0 else np.uint64(0)):
                prev = target
                repeat = 8
                nbuf = 7
            else:
                size, open_run, groups = count_group(size, open_run, groups, 1)
                prev = int((b >> np.uint64(need - 1)) & _U1)
                repeat = 0
                nbuf = 0
            i += need
            continue
        # fewer levels left than the buffer needs: they wait in it
        prev, repeat, nbuf = buffer_value(np.int64(_bits_at(bits, i, 1)), prev, repeat, nbuf)
        i += 1
    return store_state(state, prev, repeat, nbuf, open_run, groups, size)
