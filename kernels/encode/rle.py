"""RLE / bit-packed hybrid encoder, mirroring parquet-java's RunLengthBitPackingHybridEncoder run by run.

Used for v2 repetition/definition levels (no length prefix) and dictionary indices (after a bit-width byte).
The run choices are parquet-java's exactly (runs of 8+ repeats counted from a group boundary, bit-packed runs
of at most 63 groups, zero padding of the last group), so our level and index bytes equal its bytes.
The encoder allocates nothing (the 8 buffered values are always the last 8 inputs), so the same source is
a CUDA device function.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from .bits import pack8, pack_padded, write_uleb


def rle_max_size(n: int, width: int) -> int:
    """Upper bound on the encoded size of n values at `width` bits (for sizing output buffers)."""
    return (n // 8 + 2) * (max(width, 9) + 2) + 16


@jit_inline
def _end_bitpacked(out: np.ndarray, header_pos: int, groups: int) -> None:
    """Fill in the header byte of the open bit-packed run."""
    if header_pos >= 0:
        out[header_pos] = np.uint8((groups << 1) | 1)


@jit_inline
def _group_slot(out: np.ndarray, pos: int, header_pos: int, groups: int) -> tuple:
    """Before one more bit-packed group: close the open run at 63 groups (the most its header byte counts,
    SPEC: RunLengthBitPackingHybridEncoder), open a run (header byte reserved) if none is. (pos, header_pos,
    groups)."""
    if groups >= 63:
        _end_bitpacked(out, header_pos, groups)
        header_pos = -1
        groups = 0
    if header_pos == -1:
        out[pos] = 0
        header_pos = pos
        pos += 1
    return pos, header_pos, groups


@jit
def rle_encode(values: np.ndarray, start: int, end: int, width: int, out: np.ndarray, pos: int) -> int:
    """Encode values[start:end] at `width` bits into out[pos:]; return the end position.

    parquet-java's encoder, value by value, makes a group of the 8 values after each group boundary (the start,
    the end of a bit-packed group, the value that ended a repeated run): when all 8 are equal they start a
    repeated run, which goes on while the value does; otherwise the group is bit-packed. This loop takes
    those decisions a group at a time (same bytes, tests/kernels/test_kernel_rle.py).
    """
    header_pos = -1
    groups = 0
    value_bytes = (width + 7) // 8
    i = start
    while i + 8 <= end:
        u0 = np.uint64(i)  # unsigned indices: no negative-index wrap-around test per load
        v = values[u0]
        same = True
        for k in range(1, 8):
            if values[u0 + np.uint64(k)] != v:
                same = False
                break
        if same:
            j = i + 8
            while j < end and values[np.uint64(j)] == v:
                j += 1
            _end_bitpacked(out, header_pos, groups)
            header_pos = -1
            groups = 0
            pos = write_uleb(out, pos, np.uint64((j - i) << 1))
            u = np.uint64(v)
            for k in range(value_bytes):
                out[pos] = np.uint8((u >> np.uint64(8 * k)) & np.uint64(0xFF))
                pos += 1
            i = j
            continue
        pos, header_pos, groups = _group_slot(out, pos, header_pos, groups)
        if width <= 32:
            pos = pack8(values, i, width, out, pos)
        else:
            pos = pack_padded(values, i, 8, 8, width, out, pos)
        groups += 1
        i += 8
    if i < end:  # a last, partial group (fewer than 8 values, so never a repeated run): bit-packed, zero-padded
        pos, header_pos, groups = _group_slot(out, pos, header_pos, groups)
        pos = pack_padded(values, i, end - i, 8, width, out, pos)
        groups += 1
    _end_bitpacked(out, header_pos, groups)
    return pos


@jit
def rle_emitted_size(values: np.ndarray, start: int, end: int, width: int, state: np.ndarray) -> int:
    """Feed values[start:end] to a simulated parquet-java encoder; return the bytes it has emitted so far.

    This is what its level writers report as buffered size during page-size checks: flushed RLE runs and
    bit-packed groups (with their header byte), not the up to 8 values still pending. `state` (int64[6],
    zeros for a fresh encoder) carries the encoder between calls, so a page is scanned once.
    """
    previous = np.uint64(state[0])
    repeat = state[1]
    nbuf = state[2]
    open_run = state[3]
    groups = state[4]
    size = state[5]
    value_bytes = (width + 7) // 8
    for i in range(start, end):
        v = np.uint64(values[i])
        if v == previous:
            repeat += 1
            if repeat >= 8:
                continue
        else:
            if repeat >= 8:
                open_run = 0
                groups = 0
                r = np.uint64(repeat << 1)
                size += 1
                while r >= np.uint64(0x80):
                    r = r >> np.uint64(7)
                    size += 1
                size += value_bytes
                nbuf = 0
            repeat = 1
            previous = v
        nbuf += 1
        if nbuf == 8:
            if groups >= 63:
                open_run = 0
                groups = 0
            if open_run == 0:
                size += 1
                open_run = 1
            size += width
            nbuf = 0
            repeat = 0
            groups += 1
    state[0] = np.int64(previous)
    state[1] = repeat
    state[2] = nbuf
    state[3] = open_run
    state[4] = groups
    state[5] = size
    return size


@jit
def _uleb_len(v: np.uint64) -> int:
    """Bytes of v as unsigned LEB128."""
    n = 1
    while v >= np.uint64(0x80):
        v = v >> np.uint64(7)
        n += 1
    return n


@jit
def rle_size(values: np.ndarray, start: int, end: int, width: int) -> int:
    """Bytes `rle_encode` writes for values[start:end] at `width`, without writing them (the same run choices,
    counted); allocation-free, so a GPU thread can size a page before anything is encoded."""
    size = 0
    nbuf = 0
    previous = np.uint64(0)
    repeat = 0
    open_run = False
    groups = 0
    value_bytes = (width + 7) // 8
    for i in range(start, end):
        v = np.uint64(values[i])
        if v == previous:
            repeat += 1
            if repeat >= 8:
                continue
        else:
            if repeat >= 8:
                open_run = False
                groups = 0
                size += _uleb_len(np.uint64(repeat << 1)) + value_bytes
                nbuf = 0
            repeat = 1
            previous = v
        nbuf += 1
        if nbuf == 8:
            if groups >= 63:
                open_run = False
                groups = 0
            if not open_run:
                size += 1
                open_run = True
            size += width
            nbuf = 0
            repeat = 0
            groups += 1
    if repeat >= 8:
        size += _uleb_len(np.uint64(repeat << 1)) + value_bytes
    elif nbuf > 0:
        if groups >= 63:
            open_run = False
        if not open_run:
            size += 1
        size += width
    return size
