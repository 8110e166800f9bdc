"""Bytes parquet-java's RLE / bit-packed level encoder has emitted, measured 8 levels at a time.

`rle.rle_emitted_size` steps the encoder value by value. This is the same machine (same state layout, same
result for every split of the input into calls) stepping whole buffers instead: parquet-java's encoder
buffers values 8 at a time from a group boundary, and a buffer either fills (one bit-packed group emitted)
or holds 8 equal values (an RLE run starts, emitted when a different value ends it). So at a buffer boundary
the next values only need comparing, and inside a run they only need skipping; both compare 8 levels per
64-bit word. The page planner feeds every level of a row group through it, where value-by-value branches
dominated its time.
Geometry: one thread feeds one column's levels; nothing is allocated. Input: uint8 levels and the same
bytes as little-endian uint64 words (`words`, at least one word past the last level). CPU twin:
rle.rle_emitted_size.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

_ONES = np.uint64(0x0101010101010101)


@jit
def _uleb_len(v: int) -> int:
    """Bytes of v as an unsigned LEB128 varint."""
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


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
    prev = state[0]
    repeat = state[1]
    nbuf = state[2]
    open_run = state[3]
    groups = state[4]
    size = state[5]
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
            size += _uleb_len(repeat << 1) + value_bytes
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
                if groups >= 63:
                    open_run = 0
                    groups = 0
                if open_run == 0:
                    size += 1
                    open_run = 1
                size += width
                groups += 1
                prev = values[i + need - 1]
                repeat = 0
                nbuf = 0
            i += need
            continue
        # fewer values left than the buffer needs: they wait in it
        v = values[i]
        if v == prev:
            repeat += 1
        else:
            repeat = 1
            prev = v
        nbuf += 1
        i += 1
    state[0] = prev
    state[1] = repeat
    state[2] = nbuf
    state[3] = open_run
    state[4] = groups
    state[5] = size
    return size
