"""Block-per-page CUDA kernels: one launch handles every page of a row group, thread block b owning page b.

Each kernel is the cooperative form of a sequential per-page twin in `pages.py` / `plain.py` and writes the
same bytes and sizes: the twin's page index p is `cuda.blockIdx.x`, its arguments are the twin's after p.
Geometry common to all: grid = one block per page (launch with exactly n_pages blocks, see `launch`),
T = blockDim.x threads with 1 <= T <= MAX_THREADS (128 is the intended size; shared arrays are sized for it).
Per-page arrays (va, vb, out_off, sizes, imin, ...) are int64 of shape (n_pages,).

Device-only: importing this module imports numba.cuda. The kernels are module-level dispatchers, built once
per process and compiled once per argument types. Pure helpers are @jit functions run through
`_jit.device`, so under numba's CUDA simulator they are plain Python, as the per-page kernels' helpers are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device, jit
from .crc32 import combine, fill_powers
from .pages import _float_key
from .plain import canonical32, canonical64, write_le
from .stats import _compare

MAX_THREADS = 128  # the most threads a block may have: the size of every per-thread shared array

# comparators of the min/max reduction
_INT = 0  # signed (or unsigned-byte) integer order of the values themselves
_FLOAT32 = 1  # Java's Float.compare on canonical bits
_FLOAT64 = 2  # Java's Double.compare on canonical bits
_BYTES = 3  # unsigned lexicographic byte order
_DECIMAL = 4  # byte order with the first byte signed (big-endian two's complement decimals)


@jit
def strided_copy(src: np.ndarray, s: int, n: int, out: np.ndarray, pos: int, first: int, step: int) -> None:
    """out[pos + j] = src[s + j] for j = first, first + step, ... < n: one thread's share of a block copy."""
    for j in range(first, n, step):
        out[pos + j] = src[s + j]


@jit
def value_at(ends: np.ndarray, m: int, d: int) -> int:
    """The first k < m with ends[k] > d: the value holding data byte d, given the values' end offsets."""
    lo = 0
    hi = m - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] > d:
            hi = mid
        else:
            lo = mid + 1
    return lo


@jit
def order(mode: int, values: np.ndarray, data: np.ndarray, i: int, j: int) -> int:
    """-1, 0 or 1 as value i sorts before, with or after value j under comparator `mode`.

    For _BYTES / _DECIMAL `values` are the offsets into `data`; otherwise `data` is not read.
    """
    if mode == _BYTES or mode == _DECIMAL:
        return _compare(data, values[i], values[i + 1], values[j], values[j + 1], mode == _DECIMAL)
    if mode == _INT:
        x = np.int64(values[i])
        y = np.int64(values[j])
    else:
        x = _float_key(np.int64(values[i]), mode == _FLOAT32)
        y = _float_key(np.int64(values[j]), mode == _FLOAT32)
    if x < y:
        return -1
    if x > y:
        return 1
    return 0


@jit
def pick(mode: int, values: np.ndarray, data: np.ndarray, a: int, b: int, sign: int) -> int:
    """Of candidate indices a and b (-1: none) the smaller (sign -1) or larger (sign 1) value; ties go to the
    lower index, so a reduction in any order finds the first extreme as the sequential twins do."""
    if a < 0:
        return b
    if b < 0:
        return a
    c = order(mode, values, data, b, a) * sign
    if c > 0:
        return b
    if c < 0:
        return a
    return min(a, b)


_strided_copy = device(strided_copy)
_value_at = device(value_at)
_order = device(order)
_pick = device(pick)
_canonical32 = device(canonical32)
_canonical64 = device(canonical64)
_write_le = device(write_le)
_combine = device(combine)
_fill_powers = device(fill_powers)


@cuda.jit(device=True)
def _geometry() -> tuple[int, int, int]:
    """(page = block index, thread index, threads per block) of the calling thread."""
    return cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x  # type: ignore[return-value]


def launch(kernel: Any, n_pages: int, threads: int, *args: Any) -> None:
    """Run `kernel` over n_pages pages, one block of `threads` threads each (nothing for no pages)."""
    if not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"threads per block must be 1..{MAX_THREADS}, got {threads}")
    if n_pages > 0:
        kernel[n_pages, threads](*args)


# -- PLAIN values and byte copies -------------------------------------------------------------------------


@cuda_kernel
def block_plain_fixed(values: np.ndarray, va: np.ndarray, vb: np.ndarray, nbytes: int, canon: int,
                      out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """PLAIN values of `nbytes` each, canon 4 / 8 canonicalising float / double NaNs as Java does.

    Twin: pages.page_plain_fixed. Thread t writes values va[b] + t, + T, ... each at out_off[b] + k * nbytes
    (k its index in the page); thread 0 writes sizes[b]. values: (n_values,) int32 / int64 (float bits as
    signed ints); out: uint8.
    """
    p, t, step = _geometry()
    a = va[p]
    pos = out_off[p]
    for i in range(a + t, vb[p], step):
        bits = np.int64(values[i])
        if canon == 4:
            bits = _canonical32(bits)
        elif canon == 8:
            bits = _canonical64(bits)
        _write_le(out, pos + (i - a) * nbytes, bits, nbytes)
    if t == 0:
        sizes[p] = max(vb[p] - a, 0) * nbytes


@cuda_kernel
def block_plain_bool(values: np.ndarray, va: np.ndarray, vb: np.ndarray, out: np.ndarray, out_off: np.ndarray,
                     sizes: np.ndarray) -> None:
    """PLAIN booleans, one bit per value LSB first, the last byte zero-padded.

    Twin: pages.page_plain_bool. Thread t owns output bytes t, t + T, ... of the page (the 8 values each packs),
    so no two threads write the same byte; thread 0 writes sizes[b]. values: (n_values,) uint8 0/1.
    """
    p, t, step = _geometry()
    a = va[p]
    pos = out_off[p]
    n = vb[p] - a
    nb = (n + 7) // 8
    for k in range(t, nb, step):
        acc = 0
        for j in range(8):
            i = k * 8 + j
            if i < n and values[a + i] != 0:
                acc |= 1 << j
        out[pos + k] = np.uint8(acc)
    if t == 0:
        sizes[p] = nb


@cuda_kernel
def block_copy_bytes(offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray, out: np.ndarray,
                     out_off: np.ndarray, sizes: np.ndarray) -> None:
    """The page's value bytes back to back (INT96 / FIXED_LEN_BYTE_ARRAY PLAIN).

    Twin: pages.page_copy_bytes. Thread t copies bytes t, t + T, ... of data[offsets[va[b]]:offsets[vb[b]]];
    thread 0 writes sizes[b]. offsets: (n_values + 1,) int64; data, out: uint8.
    """
    p, t, step = _geometry()
    s = offsets[va[p]]
    n = offsets[vb[p]] - s
    _strided_copy(data, s, n, out, out_off[p], t, step)
    if t == 0:
        sizes[p] = n


@cuda_kernel
def block_plain_byte_array(offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                           out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """PLAIN BYTE_ARRAY: each value as a 4-byte little-endian length then its bytes (dictionary pages).

    Twin: plain.plain_byte_array(offsets, data, va[b], vb[b], out, out_off[b]) - out_off[b] = sizes[b].
    The block walks the page in tiles of T values: thread t writes the length of the tile's value t and keeps
    its end offset in shared memory; then thread t copies the tile's data bytes t, t + T, ..., finding each
    byte's value by binary search over those ends, so long and short values spread evenly over the threads.
    offsets: (n_values + 1,) int64; data, out: uint8.
    """
    ends = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    p, t, step = _geometry()
    a = va[p]
    b = vb[p]
    pos = out_off[p]
    s = offsets[a]
    for first in range(a, b, step):  # the same trip count on every thread: the barriers below are uniform
        m = min(step, b - first)
        if t < m:
            i = first + t
            ends[t] = offsets[i + 1]
            n = offsets[i + 1] - offsets[i]
            q = pos + 4 * (i - a) + (offsets[i] - s)
            out[q] = n & 0xFF
            out[q + 1] = (n >> 8) & 0xFF
            out[q + 2] = (n >> 16) & 0xFF
            out[q + 3] = (n >> 24) & 0xFF
        cuda.syncthreads()  # type: ignore[call-arg]
        base = pos + 4 * (first - a + 1) - s  # + data position + 4 per earlier value of the tile
        for d in range(offsets[first] + t, offsets[first + m], step):
            k = _value_at(ends, m, d)
            out[base + 4 * k + d] = data[d]
        # the next tile overwrites `ends`
        cuda.syncthreads()  # type: ignore[call-arg]
    if t == 0:
        sizes[p] = 4 * max(b - a, 0) + (offsets[b] - s if b > a else 0)


@cuda_kernel
def block_gather(reps: np.ndarray, rep_off: np.ndarray, rep_len: np.ndarray, levels: np.ndarray,
                 lev_off: np.ndarray, lev_len: np.ndarray, values: np.ndarray, val_off: np.ndarray,
                 val_len: np.ndarray, out: np.ndarray, out_off: np.ndarray) -> None:
    """Page body = repetition levels, definition levels, then the stored values, at out_off[b].

    Twin: pages.page_gather. Each section is a block copy: thread t copies its bytes t, t + T, ...
    reps / levels / values / out: uint8 buffers; the *_off / *_len arrays: (n_pages,) int64.
    """
    p, t, step = _geometry()
    pos = out_off[p]
    _strided_copy(reps, rep_off[p], rep_len[p], out, pos, t, step)
    pos += rep_len[p]
    _strided_copy(levels, lev_off[p], lev_len[p], out, pos, t, step)
    pos += lev_len[p]
    _strided_copy(values, val_off[p], val_len[p], out, pos, t, step)


# -- min / max -------------------------------------------------------------------------------------------


@cuda.jit(device=True)
def _block_minmax(mode: int, values: np.ndarray, data: np.ndarray, a: int, b: int, lows: np.ndarray,
                  highs: np.ndarray) -> tuple:
    """(first min index, first max index) of values a..b, -1 when none, on every thread of the block.

    Thread t scans values a + t, a + t + T, ...; the T candidates then halve in shared memory (`lows`,
    `highs`: MAX_THREADS int64), `pick` breaking ties toward the lower index.
    """
    _, t, step = _geometry()
    lo = -1
    hi = -1
    for i in range(a + t, b, step):
        lo = _pick(mode, values, data, lo, i, -1)
        hi = _pick(mode, values, data, hi, i, 1)
    lows[t] = lo
    highs[t] = hi
    cuda.syncthreads()  # type: ignore[call-arg]
    width = step
    while width > 1:  # slots t < width hold candidates; fold the upper half onto the lower
        half = (width + 1) // 2
        if t < width - half:
            lows[t] = _pick(mode, values, data, lows[t], lows[t + half], -1)
            highs[t] = _pick(mode, values, data, highs[t], highs[t + half], 1)
        cuda.syncthreads()  # type: ignore[call-arg]
        width = half
    return lows[0], highs[0]


@cuda_kernel
def block_int_minmax(values: np.ndarray, va: np.ndarray, vb: np.ndarray, imin: np.ndarray,
                     imax: np.ndarray) -> None:
    """Indices of the first smallest and first largest value of the page (signed order); -1 when empty.

    Twin: pages.page_int_minmax. Block reduction (see _block_minmax); thread 0 writes imin[b], imax[b].
    values: (n_values,) int32 / int64 / uint8.
    """
    lows = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    highs = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    p, t, _ = _geometry()
    lo, hi = _block_minmax(_INT, values, values, va[p], vb[p], lows, highs)
    if t == 0:
        imin[p] = lo
        imax[p] = hi


@cuda_kernel
def block_float_minmax(bits: np.ndarray, va: np.ndarray, vb: np.ndarray, is32: bool, imin: np.ndarray,
                       imax: np.ndarray) -> None:
    """Indices of the first min and max under Java's Float/Double.compare of canonical bits; -1 when empty.

    Twin: pages.page_float_minmax. Block reduction (see _block_minmax); thread 0 writes imin[b], imax[b].
    bits: (n_values,) int32 (is32) or int64 IEEE bits.
    """
    lows = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    highs = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    p, t, _ = _geometry()
    mode = _FLOAT32 if is32 else _FLOAT64
    lo, hi = _block_minmax(mode, bits, bits, va[p], vb[p], lows, highs)
    if t == 0:
        imin[p] = lo
        imax[p] = hi


@cuda_kernel
def block_bytes_minmax(offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                       signed_first: bool, imin: np.ndarray, imax: np.ndarray, same: np.ndarray) -> None:
    """First min / max indices in unsigned byte order (first byte signed when signed_first: decimals), and
    same[b] = 1 when every value of the page is identical (also for an empty page); -1 indices when empty.

    Twin: pages.page_bytes_minmax. Block reduction (see _block_minmax); all values are equal exactly when the
    min and the max are. Thread 0 writes the results. offsets: (n_values + 1,) int64; data: uint8.
    """
    lows = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    highs = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    p, t, _ = _geometry()
    mode = _DECIMAL if signed_first else _BYTES
    lo, hi = _block_minmax(mode, offsets, data, va[p], vb[p], lows, highs)
    if t == 0:
        imin[p] = lo
        imax[p] = hi
        eq = lo < 0 or _order(mode, offsets, data, lo, hi) == 0
        same[p] = 1 if eq else 0


# -- CRC-32 ----------------------------------------------------------------------------------------------


@cuda_kernel
def block_crc32(buf: np.ndarray, off: np.ndarray, length: np.ndarray, table: np.ndarray,
                crc: np.ndarray) -> None:
    """CRC-32 (zlib's polynomial) of buf[off[b]:off[b] + length[b]] into crc[b] (0..2^32-1 as int64).

    Twin: pages.page_crc32 (same `table`, pages.crc32_table()). Thread t CRCs the contiguous segment
    [t * L, (t + 1) * L) of the page, L = ceil(length / T); the T segment CRCs are then merged pairwise in a
    shared-memory tree, neighbours in order, with zlib's crc32_combine (crc32.combine: a multiplication by
    x^(8 * right length) mod P from a 32-entry power table that thread 0 builds in shared memory).
    buf: uint8; table: (256,) uint32.
    """
    tab = cuda.shared.array(256, dtype=np.uint32)
    powers = cuda.shared.array(32, dtype=np.uint32)
    crcs = cuda.shared.array(MAX_THREADS, dtype=np.uint32)
    lens = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    p, t, step = _geometry()
    for k in range(t, 256, step):
        tab[k] = table[k]
    if t == 0:
        _fill_powers(powers)
    cuda.syncthreads()  # type: ignore[call-arg]
    n = length[p]
    seg = (n + step - 1) // step
    first = min(t * seg, n)
    last = min(first + seg, n)
    s = off[p]
    c = np.uint32(0xFFFFFFFF)
    for j in range(s + first, s + last):
        c = tab[(c ^ np.uint32(buf[j])) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
    crcs[t] = c ^ np.uint32(0xFFFFFFFF)
    lens[t] = last - first
    cuda.syncthreads()  # type: ignore[call-arg]
    gap = 1
    while gap < step:  # slot t (a multiple of 2 * gap) absorbs its right neighbour group, t + gap
        if t % (2 * gap) == 0 and t + gap < step and lens[t + gap] > 0:
            crcs[t] = _combine(crcs[t], crcs[t + gap], lens[t + gap], powers)
            lens[t] += lens[t + gap]
        cuda.syncthreads()  # type: ignore[call-arg]
        gap *= 2
    if t == 0:
        crc[p] = np.int64(crcs[0])
