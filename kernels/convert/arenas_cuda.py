"""CUDA forms of the window conversion (kernels/convert/arenas.py: layout, launches, twins).

Block kernels: grid = one block per chunk (launch with exactly K blocks), T = blockDim.x threads with
1 <= T <= MAX_THREADS; the per-value logic is convert.py's @jit helpers run through `_jit.device`. The scan
over a column's chunks is `scan_columns_block` (one block per column). Importing this module imports
numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from ..block_cuda import block_scan, run_bounds
from ..plan.layout import (
    CT_DEF,
    CT_KIND,
    CT_OFFS,
    CT_VALS,
    CT_VIDX,
    CV_BYTES,
    ER_MIN,
    ST_COL,
    ST_CONV,
    ST_FIRST,
    ST_OUTW,
)
from . import arenas as C

MAX_THREADS = 128  # the size of the per-thread shared arrays

_byte_span = device(C.byte_span)


@cuda.jit(device=True)
def _mark_row(lev: np.ndarray, idx: np.ndarray, dpos: int, vidx: int, r: int, ok: bool, v: int) -> None:
    """`arenas.mark_row` on a GPU: the 64 rows of a value-index group are different threads' (and, where an Arrow
    chunk starts inside a group, different blocks'), so each sets its mask bit with an atomic OR."""
    if dpos >= 0:
        lev[dpos + r] = 1 if ok else 0
    if vidx >= 0:
        g = vidx + 2 * (r >> 6)
        if r & 63 == 0:
            idx[g] = v
        if ok:
            cuda.atomic.or_(idx, g + 1, np.int64(1) << np.int64(r & 63))  # type: ignore[call-arg]

_close_column = device(C.close_column)
_count_row = device(C.count_row)
_first_above = device(C.first_above)
_piece = device(C.piece)
_put_value = device(C.put_value)
_quick_count = device(C.quick_count)
_row_valid = device(C.row_valid)
_switch_of = device(C.switch_of)


@cuda_kernel
def count_chunks(chunks: np.ndarray, srct: np.ndarray, src: np.ndarray, counts: np.ndarray) -> None:
    """Launch 1; twin: convert.count_chunks. Block k owns chunk k; thread t counts rows a + t, a + t + T, ...
    and thread 0 combines the per-thread counts (shared arrays) into counts[k]."""
    k: int = cuda.blockIdx.x  # type: ignore[assignment]
    t: int = cuda.threadIdx.x  # type: ignore[assignment]
    nt: int = cuda.blockDim.x  # type: ignore[assignment]
    sh_values = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    sh_bytes = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    sh_low = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    sh_flags = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    sh_row = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    sh_first = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    p = _piece(srct, chunks[k, C.CK_PIECE])
    a = chunks[k, C.CK_ROW]
    b = a + chunks[k, C.CK_ROWS]
    quick, values, nbytes = _quick_count(p, src, a, b)
    if quick:  # the same for every thread of the block: no barrier is skipped by some only
        if t == 0:
            counts[k, C.CC_VALUES] = values
            counts[k, C.CC_BYTES] = nbytes
            counts[k, C.CC_MIN] = C.INT64_MAX
            counts[k, C.CC_FLAGS] = 0
            counts[k, C.CC_FIRST_ROW] = -1
            counts[k, C.CC_FIRST] = 0
        return
    switch = _switch_of(p[ST_CONV])
    low = np.int64(C.INT64_MAX)
    flags = np.int64(0)
    first_row = np.int64(-1)
    first = np.int64(0)
    for i in range(a + t, b, nt):
        n, m, v, f = _count_row(p, src, i)
        values += n
        nbytes += m
        flags |= f
        low = min(low, v)
        if v < switch and first_row < 0:
            first_row = i
            first = v
    sh_values[t] = values
    sh_bytes[t] = nbytes
    sh_low[t] = low
    sh_flags[t] = flags
    sh_row[t] = first_row
    sh_first[t] = first
    cuda.syncthreads()  # type: ignore[call-arg]
    if t == 0:
        for j in range(1, nt):
            values += sh_values[j]
            nbytes += sh_bytes[j]
            low = min(low, sh_low[j])
            flags |= sh_flags[j]
            if sh_row[j] >= 0 and (first_row < 0 or sh_row[j] < first_row):
                first_row = sh_row[j]
                first = sh_first[j]
        counts[k, C.CC_VALUES] = values
        counts[k, C.CC_BYTES] = nbytes
        counts[k, C.CC_MIN] = low
        counts[k, C.CC_FLAGS] = flags
        counts[k, C.CC_FIRST_ROW] = first_row
        counts[k, C.CC_FIRST] = first


@cuda_kernel
def scan_columns_block(ranges: np.ndarray, chunks: np.ndarray, srct: np.ndarray, cols: np.ndarray,
                       counts: np.ndarray, errs: np.ndarray, idx: np.ndarray) -> None:
    """Launch 2; twin: convert.scan_columns. Block c owns column c's chunks ranges[c, R_CHUNK0..R_CHUNK1]
    (counts int64[K, CC_COUNT]); thread t a contiguous run of ceil(chunks / T) of them. It sums its run's values
    and bytes, a block scan (shared) gives its run's start, and it writes counts[k, CC_VBEFORE / CC_BBEFORE];
    a tree reduction (shared) finds the column's smallest date / timestamp, its flags and its first chunk with
    a value before the switch; thread 0 writes errs[c] (int64[C, ER_COUNT]) and the closing idx entries.
    Serial steps per thread: 2 * ceil(chunks / T) + 3 * log2(T)."""
    c: int = cuda.blockIdx.x  # type: ignore[assignment]
    t: int = cuda.threadIdx.x  # type: ignore[assignment]
    nt: int = cuda.blockDim.x  # type: ignore[assignment]
    sh = cuda.shared.array((2, MAX_THREADS), dtype=np.int64)  # values, bytes
    sl = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    sf = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    sk = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    k0 = ranges[c, C.R_CHUNK0]
    lo, hi = run_bounds(k0, ranges[c, C.R_CHUNK1] - k0, t, nt)
    values = np.int64(0)
    nbytes = np.int64(0)
    low = np.int64(C.INT64_MAX)
    flags = np.int64(0)
    found = np.int64(C.INT64_MAX)  # the run's first chunk with a value before the switch
    for k in range(lo, hi):
        values += counts[k, C.CC_VALUES]
        nbytes += counts[k, C.CC_BYTES]
        low = min(low, counts[k, C.CC_MIN])
        flags |= counts[k, C.CC_FLAGS]
        if found == C.INT64_MAX and counts[k, C.CC_FIRST_ROW] >= 0:
            found = k
    v, b = block_scan(sh, values, nbytes, t, nt)
    for k in range(lo, hi):
        counts[k, C.CC_VBEFORE] = v
        counts[k, C.CC_BBEFORE] = b
        v += counts[k, C.CC_VALUES]
        b += counts[k, C.CC_BYTES]
    sl[t] = low
    sf[t] = flags
    sk[t] = found
    cuda.syncthreads()  # type: ignore[call-arg]
    d = 1
    while d < nt:
        if t % (2 * d) == 0 and t + d < nt:
            sl[t] = min(sl[t], sl[t + d])
            sf[t] |= sf[t + d]
            sk[t] = min(sk[t], sk[t + d])
        cuda.syncthreads()  # type: ignore[call-arg]
        d *= 2
    if t == 0:
        first = np.int64(0)
        if sk[0] != C.INT64_MAX:
            first = counts[sk[0], C.CC_FIRST]
        _close_column(c, ranges, chunks, srct, cols, errs, idx, sh[0, nt - 1], sh[1, nt - 1], sl[0], sf[0], first)


@cuda_kernel
def write_chunks(chunks: np.ndarray, srct: np.ndarray, src: np.ndarray, zones: np.ndarray, cols: np.ndarray,
                 ranges: np.ndarray, counts: np.ndarray, errs: np.ndarray, lev: np.ndarray, idx: np.ndarray,
                 v8: np.ndarray, v32: np.ndarray, v64: np.ndarray, dat: np.ndarray) -> None:
    """Launch 3; twin: convert.write_chunks. Block k owns chunk k and walks it in tiles of T rows, thread t
    owning row a + tile + t: a block scan of (present, value bytes) gives each present row its value index
    and dat position; it writes its level, row -> values entry and value (or offset, INT96 / FLBA bytes).
    String bytes are then copied byte-parallel: thread t copies tile bytes t, t + T, ..., finding its value
    by binary search over the scanned byte ends (shared)."""
    k: int = cuda.blockIdx.x  # type: ignore[assignment]
    t: int = cuda.threadIdx.x  # type: ignore[assignment]
    nt: int = cuda.blockDim.x  # type: ignore[assignment]
    sh = cuda.shared.array((2, MAX_THREADS), dtype=np.int64)  # present rows, value bytes
    sp = cuda.shared.array(MAX_THREADS, dtype=np.int64)
    p = _piece(srct, chunks[k, C.CK_PIECE])
    a = chunks[k, C.CK_ROW]
    b = a + chunks[k, C.CK_ROWS]
    c = p[ST_COL]
    conv = p[ST_CONV]
    outw = p[ST_OUTW]
    kind = cols[c, CT_KIND]
    row0 = p[ST_FIRST]  # the column's row of piece row i is row0 + i
    dpos = cols[c, CT_DEF]
    vidx = cols[c, CT_VIDX]
    slots = (cols[c, CT_VALS], cols[c, CT_OFFS])
    active = errs[c, ER_MIN] < _switch_of(conv)
    v0 = counts[k, C.CC_VBEFORE]
    d0 = ranges[c, C.R_DAT] + counts[k, C.CC_BBEFORE]
    for base in range(a, b, nt):
        i = base + t
        ok = False
        n = np.int64(0)
        at = np.int64(0)
        if i < b:
            ok = _row_valid(p, src, i)
            if ok:
                if conv == CV_BYTES:
                    at, n = _byte_span(p, src, i)
                else:
                    n = outw
        one = np.int64(1) if ok else np.int64(0)
        ev, eb = block_scan(sh, one, n, t, nt)
        total_v = sh[0, nt - 1]
        total_b = sh[1, nt - 1]
        if i < b:
            _mark_row(lev, idx, dpos, vidx, row0 + i, ok, v0 + ev)
            if ok:
                _put_value(p, src, i, zones, active, kind, slots, v0 + ev, d0 + eb, idx, v8, v32, v64,
                           dat, False)
        if conv == CV_BYTES:  # the same for the whole block
            sp[t] = at - eb  # the tile's output byte e of this row comes from src[sp[t] + e]
            cuda.syncthreads()  # type: ignore[call-arg]
            for e in range(t, total_b, nt):
                j = _first_above(sh[1], nt, e)
                dat[d0 + e] = src[sp[j] + e]
        # the tile's shared sums are read: the next tile may overwrite them
        cuda.syncthreads()  # type: ignore[call-arg]
        v0 += total_v
        d0 += total_b
