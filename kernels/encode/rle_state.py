"""The decisions of parquet-java's RLE / bit-packed hybrid encoder (RunLengthBitPackingHybridEncoder), written
once: when a bit-packed group closes or opens a run, the bytes it adds, and the bytes of a repeated run.

The encoder (`rle.rle_encode`), its counters (`rle.rle_size`, `rle.rle_emitted_size`), the batch level meters
(`level_meter`) and the block encoder's segments (`rle_segments`) call these. They are `jit_inline`: numba
inlines them into the CPU kernels, and `_jit.device` gives their CUDA forms (NVVM inlines those itself).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit_inline
from .bits import uleb_len, write_uleb

# SPEC: RunLengthBitPackingHybridEncoder: a bit-packed run's header byte counts at most 63 groups of 8 values.
MAX_GROUPS = 63


@jit_inline
def next_group(open_run: bool, groups: int) -> tuple:
    """Before one more bit-packed group, with `groups` groups in the open run (if `open_run`): (whether that
    run closes first, at MAX_GROUPS; whether a run opens for the group, its header byte reserved; the groups
    in the group's run once it is in). SPEC: RunLengthBitPackingHybridEncoder.writeOrAppendBitPackedRun."""
    if groups >= MAX_GROUPS:
        return True, True, 1
    return False, not open_run, groups + 1


@jit_inline
def bitpacked_header(groups: int) -> np.uint8:
    """The header byte of a bit-packed run of `groups` groups (groups << 1 | 1, ULEB128 of one byte: at most
    MAX_GROUPS). SPEC: RunLengthBitPackingHybridEncoder.endPreviousBitPackedRun."""
    return np.uint8((groups << 1) | 1)


@jit_inline
def count_group(size: int, open_run: int, groups: int, width: int) -> tuple:
    """`next_group` counted: (bytes, run open (1), groups in the run) after one more bit-packed group of 8
    values at `width` bits, its run's header byte included when it opens one."""
    _, opens, groups = next_group(open_run != 0, groups)
    if opens:
        size += 1
    return size + width, 1, groups


@jit_inline
def repeat_bytes(count: int, value_bytes: int) -> int:
    """Bytes of a repeated run of `count` values: its header (count << 1 as ULEB128), then the value in
    `value_bytes` ((width + 7) // 8) little-endian bytes. SPEC: RunLengthBitPackingHybridEncoder.writeRleRun."""
    return uleb_len(np.uint64(count << 1)) + value_bytes


@jit_inline
def write_repeat(out: np.ndarray, pos: int, count: int, value: np.uint64, value_bytes: int) -> int:
    """A repeated run of `count` copies of `value` at out[pos:] (`repeat_bytes` of them); returns the end."""
    pos = write_uleb(out, pos, np.uint64(count << 1))
    for k in range(value_bytes):
        out[pos] = np.uint8((value >> np.uint64(8 * k)) & np.uint64(0xFF))
        pos += 1
    return pos


# A simulated encoder between calls (int64[6], zeros for a fresh one; `rle.rle_emitted_size` and the level
# meters take the same): the last value, how many times it repeats, values buffered (of 8), whether a
# bit-packed run is open, its groups, and the bytes emitted so far.
ST_PREV, ST_REPEAT, ST_BUFFERED, ST_OPEN, ST_GROUPS, ST_SIZE = range(6)


@jit_inline
def load_state(state: np.ndarray) -> tuple:
    """(prev, repeat, buffered, open_run, groups, size) of a simulated encoder."""
    return (state[ST_PREV], state[ST_REPEAT], state[ST_BUFFERED], state[ST_OPEN], state[ST_GROUPS],
            state[ST_SIZE])


@jit_inline
def store_state(state: np.ndarray, prev: int, repeat: int, buffered: int, open_run: int, groups: int,
                size: int) -> int:
    """Save a simulated encoder into `state`; returns its bytes emitted (`size`)."""
    state[ST_PREV] = prev
    state[ST_REPEAT] = repeat
    state[ST_BUFFERED] = buffered
    state[ST_OPEN] = open_run
    state[ST_GROUPS] = groups
    state[ST_SIZE] = size
    return size


@jit_inline
def buffer_value(v: int, prev: int, repeat: int, buffered: int) -> tuple:
    """One more value into the encoder's buffer of 8 (SPEC: RunLengthBitPackingHybridEncoder.writeInt): the
    repeat count grows while the value stays, restarts at 1 on a new one. (prev, repeat, buffered)."""
    if v == prev:
        return prev, repeat + 1, buffered + 1
    return v, 1, buffered + 1


@jit_inline
def scan_runs(values: np.ndarray, start: int, end: int, width: int, previous: np.uint64, repeat: int, nbuf: int,
              open_run: int, groups: int, size: int) -> tuple:
    """The encoder's run choices over values[start:end], counted, not written: from the state (previous value,
    repeat count, buffered values, open bit-packed run, its groups, bytes emitted) to the state after them.
    Emitted bytes only: the up to 8 buffered values and a repeated run still open are not counted yet (what
    parquet-java's level writers report mid-page; `rle.rle_size` adds the final flush)."""
    value_bytes = (width + 7) // 8
    for i in range(start, end):
        v = np.uint64(values[i])
        if v == previous:
            repeat += 1
            if repeat >= 8:
                continue
        else:
            if repeat >= 8:
                size += repeat_bytes(repeat, value_bytes)
                open_run = 0
                groups = 0
                nbuf = 0
            repeat = 1
            previous = v
        nbuf += 1
        if nbuf == 8:
            size, open_run, groups = count_group(size, open_run, groups, width)
            nbuf = 0
            repeat = 0
    return previous, repeat, nbuf, open_run, groups, size
