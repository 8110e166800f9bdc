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
from .bits import pack8, pack_padded
from .rle_state import (
    bitpacked_header,
    count_group,
    load_state,
    next_group,
    repeat_bytes,
    scan_runs,
    store_state,
    write_repeat,
)


def rle_max_size(n: int, width: int) -> int:
    """Upper bound on the encoded size of n values at `width` bits (for sizing output buffers)."""
    return (n // 8 + 2) * (max(width, 9) + 2) + 16


@jit_inline
def _end_bitpacked(out: np.ndarray, header_pos: int, groups: int) -> None:
    """Fill in the header byte of the open bit-packed run."""
    if header_pos >= 0:
        out[header_pos] = bitpacked_header(groups)


@jit_inline
def _group_slot(out: np.ndarray, pos: int, header_pos: int, groups: int) -> tuple:
    """One more bit-packed group (`rle_state.next_group`): close the open run when it is full, open a run
    (header byte reserved) if none is. (pos, header_pos, groups in the run with the group)."""
    close, opens, after = next_group(header_pos >= 0, groups)
    if close:
        _end_bitpacked(out, header_pos, groups)
    if opens:
        out[pos] = 0
        header_pos = pos
        pos += 1
    return pos, header_pos, after


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
            pos = write_repeat(out, pos, j - i, np.uint64(v), value_bytes)
            i = j
            continue
        pos, header_pos, groups = _group_slot(out, pos, header_pos, groups)
        if width <= 32:
            pos = pack8(values, i, width, out, pos)
        else:
            pos = pack_padded(values, i, 8, 8, width, out, pos)
        i += 8
    if i < end:  # a last, partial group (fewer than 8 values, so never a repeated run): bit-packed, zero-padded
        pos, header_pos, groups = _group_slot(out, pos, header_pos, groups)
        pos = pack_padded(values, i, end - i, 8, width, out, pos)
    _end_bitpacked(out, header_pos, groups)
    return pos


@jit
def rle_emitted_size(values: np.ndarray, start: int, end: int, width: int, state: np.ndarray) -> int:
    """Feed values[start:end] to a simulated parquet-java encoder; return the bytes it has emitted so far.

    This is what its level writers report as buffered size during page-size checks: flushed RLE runs and
    bit-packed groups (with their header byte), not the up to 8 values still pending. `state` (int64[6],
    zeros for a fresh encoder) carries the encoder between calls, so a page is scanned once.
    """
    prev, repeat, nbuf, open_run, groups, size = load_state(state)
    previous, repeat, nbuf, open_run, groups, size = scan_runs(values, start, end, width, np.uint64(prev), repeat,
                                                               nbuf, open_run, groups, size)
    return store_state(state, np.int64(previous), repeat, nbuf, open_run, groups, size)


@jit
def rle_size(values: np.ndarray, start: int, end: int, width: int) -> int:
    """Bytes `rle_encode` writes for values[start:end] at `width`, without writing them (the same run choices,
    counted); allocation-free, so a GPU thread can size a page before anything is encoded."""
    previous, repeat, nbuf, open_run, groups, size = scan_runs(values, start, end, width, np.uint64(0), 0, 0, 0, 0, 0)
    value_bytes = (width + 7) // 8
    if repeat >= 8:
        size += repeat_bytes(repeat, value_bytes)
    elif nbuf > 0:  # the last, partial group
        size, open_run, groups = count_group(size, open_run, groups, width)
    return size


# CPU twin of the block-per-page CUDA encoder (rle_cuda.py): what the GPU backend's stand-in runs.
@jit
def rle_pages(n: int, values: np.ndarray, page_start: np.ndarray, page_end: np.ndarray, width: np.ndarray,
              width_byte: bool, out: np.ndarray, out_off: np.ndarray, out_size: np.ndarray) -> None:
    """Twin of `rle_cuda.rle_encode_block`: page p's values in the RLE / bit-packed hybrid at width[p] (the
    width as a leading byte when `width_byte`), at out[out_off[p]:]; its size to out_size[p]."""
    for p in range(n):
        pos = out_off[p]
        start = pos
        if width_byte:
            out[pos] = np.uint8(width[p])
            pos += 1
        out_size[p] = rle_encode(values, page_start[p], page_end[p], width[p], out, pos) - start
