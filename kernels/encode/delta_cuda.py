"""Block-per-page CUDA encoders for DELTA_BINARY_PACKED and DELTA_BYTE_ARRAY, byte-identical to the sequential
kernels (`delta.delta_encode` through `pages.page_delta`, and `pages.page_delta_bytes`).

Every page of a batch is encoded by one launch: grid = one thread block per page, any block size (128 is the
intended one; fewer, e.g. 32, works too). A block walks its page's 128-value DELTA blocks one after another;
inside one, each thread owns the values j = threadIdx, threadIdx + blockDim, ... of it: it computes their
deltas, the block minimum and each miniblock's OR are reduced with shared-memory atomics (min and OR are
order-free, so the result is deterministic), the miniblock byte offsets follow from the widths (a 4-entry
exclusive scan each thread does itself), and each thread writes whole output bytes, so no two threads write
the same byte. Page output goes to out[out_off[p]:], which the caller spaces by an upper bound
(`delta.delta_max_size(n)`; DELTA_BYTE_ARRAY: 2 * delta_max_size(n) + the page's bytes); the exact size comes
back in sizes[p]. Importing this module imports numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from .bits import uleb_len, write_uleb, zigzag64
from .delta import BLOCK, MINI, MINIBLOCKS, _delta_at

_write_uleb = device(write_uleb)
_uleb_len = device(uleb_len)
_zigzag = device(zigzag64)
_delta = device(_delta_at)
_INT64_MAX = np.int64(0x7FFFFFFFFFFFFFFF)
_OR_SLOTS = 2 * MINIBLOCKS  # a shared array's shape must be a constant, not an expression


@cuda.jit(device=True)
def _width(v: np.uint64) -> int:
    """Number of bits needed for the unsigned value v (0 for 0); a 6-step search instead of a 64-step loop."""
    n = 0
    if (v >> np.uint64(32)) != np.uint64(0):
        v = v >> np.uint64(32)
        n += 32
    if (v >> np.uint64(16)) != np.uint64(0):
        v = v >> np.uint64(16)
        n += 16
    if (v >> np.uint64(8)) != np.uint64(0):
        v = v >> np.uint64(8)
        n += 8
    if (v >> np.uint64(4)) != np.uint64(0):
        v = v >> np.uint64(4)
        n += 4
    if (v >> np.uint64(2)) != np.uint64(0):
        v = v >> np.uint64(2)
        n += 2
    if (v >> np.uint64(1)) != np.uint64(0):
        v = v >> np.uint64(1)
        n += 1
    if v != np.uint64(0):
        n += 1
    return n


@cuda.jit(device=True)
def _packed_byte(adj: np.ndarray, base: int, width: int, b: int) -> np.uint8:
    """Byte b of the miniblock adj[base:base+32] bit-packed LSB first at `width` (> 0) bits a value.

    Every adjusted delta fits its miniblock's width, so no masking is needed; bits past a byte are dropped.
    """
    s = 8 * b
    k = base + s // width
    off = s % width
    got = 0
    acc = np.uint64(0)
    while got < 8:
        acc |= (adj[k] >> np.uint64(off)) << np.uint64(got)
        got += width - off
        off = 0
        k += 1
    return np.uint8(acc & np.uint64(0xFF))


@cuda.jit(device=True)
def _dbp(values: np.ndarray, start: int, end: int, is32: bool, out: np.ndarray, pos: int, delta: np.ndarray,
         adj: np.ndarray, mins: np.ndarray, ors: np.ndarray) -> int:
    """DELTA_BINARY_PACKED of values[start:end] at out[pos:], by the whole thread block; returns the end.

    Same bytes as `delta.delta_encode(values, start, end, is32, out, pos)`. Every thread of the block must
    call it (it synchronises) and every thread gets the same end position. Shared scratch: delta (int64[128])
    and adj (uint64[128]) hold one DELTA block's deltas and adjusted deltas; mins (int64[2]) and ors
    (uint64[8]) hold the block minimum and miniblock ORs, double-buffered by block parity so that one sync
    per phase suffices: a slot is reset one phase after its last reader has passed a sync.
    """
    tid: int = cuda.threadIdx.x  # type: ignore[assignment]
    nt: int = cuda.blockDim.x  # type: ignore[assignment]
    # a previous call's threads may still read the scratch, and the input may have just been written
    cuda.syncthreads()  # type: ignore[call-arg]
    n = end - start
    first = np.int64(0)
    if n > 0:
        first = np.int64(values[start])
    zz = _zigzag(first)
    if tid == 0:
        h = _write_uleb(out, pos, np.uint64(BLOCK))
        h = _write_uleb(out, h, np.uint64(MINIBLOCKS))
        h = _write_uleb(out, h, np.uint64(n))
        _write_uleb(out, h, zz)
        mins[0] = _INT64_MAX
        for m in range(MINIBLOCKS):
            ors[m] = np.uint64(0)
    pos += _uleb_len(np.uint64(BLOCK)) + _uleb_len(np.uint64(MINIBLOCKS)) + _uleb_len(np.uint64(n)) + _uleb_len(zz)
    cuda.syncthreads()  # type: ignore[call-arg]
    i = start + 1
    s = 0  # this DELTA block's slot in mins / ors
    while i < end:
        count = min(BLOCK, end - i)
        # 1: deltas and the block minimum
        lo = _INT64_MAX
        for j in range(tid, count, nt):
            d = _delta(values, i + j, is32)
            delta[j] = d
            if d < lo:
                lo = d
        if tid < count:
            cuda.atomic.min(mins, s, lo)  # type: ignore[call-arg]
        cuda.syncthreads()  # type: ignore[call-arg]
        # 2: adjusted deltas (zeros past count: miniblock padding) and each miniblock's OR; reset the next slot
        mn = mins[s]
        if tid == 0:
            mins[1 - s] = _INT64_MAX
            for m in range(MINIBLOCKS):
                ors[(1 - s) * MINIBLOCKS + m] = np.uint64(0)
        for j in range(tid, BLOCK, nt):
            a = np.uint64(0)
            if j < count:
                a = np.uint64(delta[j]) - np.uint64(mn)
                if is32:
                    a = a & np.uint64(0xFFFFFFFF)
                if a != np.uint64(0):
                    cuda.atomic.or_(ors, s * MINIBLOCKS + j // MINI, a)  # type: ignore[call-arg]
            adj[j] = a
        cuda.syncthreads()  # type: ignore[call-arg]
        # 3: min delta, the 4 widths (unused miniblocks OR to 0: width 0, no bytes), packed miniblocks
        zmn = _zigzag(mn)
        mlen = _uleb_len(zmn)
        w0 = _width(ors[s * MINIBLOCKS])
        w1 = _width(ors[s * MINIBLOCKS + 1])
        w2 = _width(ors[s * MINIBLOCKS + 2])
        w3 = _width(ors[s * MINIBLOCKS + 3])
        e0 = 4 * w0  # 32 values * width bits = 4 * width bytes; e0..total: the miniblocks' end offsets
        e1 = e0 + 4 * w1
        e2 = e1 + 4 * w2
        total = e2 + 4 * w3
        if tid == 0:
            h = _write_uleb(out, pos, zmn)
            out[h] = np.uint8(w0)
            out[h + 1] = np.uint8(w1)
            out[h + 2] = np.uint8(w2)
            out[h + 3] = np.uint8(w3)
        body = pos + mlen + MINIBLOCKS
        for q in range(tid, total, nt):
            if q < e0:
                byte = _packed_byte(adj, 0, w0, q)
            elif q < e1:
                byte = _packed_byte(adj, MINI, w1, q - e0)
            elif q < e2:
                byte = _packed_byte(adj, 2 * MINI, w2, q - e1)
            else:
                byte = _packed_byte(adj, 3 * MINI, w3, q - e2)
            out[body + q] = byte
        pos = body + total
        i += count
        s = 1 - s
    return pos


@cuda.jit(device=True)
def _gather(offsets: np.ndarray, data: np.ndarray, suffix: np.ndarray, a: int, b: int, out: np.ndarray,
            pos: int, scan: np.ndarray) -> int:
    """Suffix bytes of values a..b (suffix[i] = the last suffix[i] bytes of value i) at out[pos:]; returns the end.

    Same bytes as `delta.gather_suffixes`. 128 values at a time: their suffix lengths are scanned
    (Hillis-Steele over scan, int64[2, 128], double-buffered), then each thread writes output bytes
    q = threadIdx, threadIdx + blockDim, ..., finding its value by binary search in the inclusive scan.
    """
    tid: int = cuda.threadIdx.x  # type: ignore[assignment]
    nt: int = cuda.blockDim.x  # type: ignore[assignment]
    c = a
    while c < b:
        cnt = min(BLOCK, b - c)
        cuda.syncthreads()  # type: ignore[call-arg]  # the previous chunk's readers are done with scan
        for j in range(tid, BLOCK, nt):
            v = 0
            if j < cnt:
                v = suffix[c + j]
            scan[0, j] = v
        cuda.syncthreads()  # type: ignore[call-arg]
        src = 0
        d = 1
        while d < BLOCK:
            for j in range(tid, BLOCK, nt):
                v = scan[src, j]
                if j >= d:
                    v += scan[src, j - d]
                scan[1 - src, j] = v
            cuda.syncthreads()  # type: ignore[call-arg]
            src = 1 - src
            d *= 2
        total = scan[src, BLOCK - 1]
        for q in range(tid, total, nt):
            lo = 0
            hi = cnt - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if scan[src, mid] > q:
                    hi = mid
                else:
                    lo = mid + 1
            out[pos + q] = data[offsets[c + lo + 1] - (scan[src, lo] - q)]
        pos += total
        c += cnt
    return pos


@cuda_kernel
def delta_pages(values: np.ndarray, va: np.ndarray, vb: np.ndarray, is32: bool, out: np.ndarray,
                out_off: np.ndarray, sizes: np.ndarray) -> None:
    """DELTA_BINARY_PACKED of every page: block p encodes values[va[p]:vb[p]] at out[out_off[p]:].

    Geometry: grid = len(va) blocks, one per page; any block size (128 intended). A thread owns values
    j = threadIdx (mod blockDim) of each 128-value DELTA block and output bytes q = threadIdx (mod blockDim)
    of its miniblocks. values: int32 (is32, 32-bit wrapping deltas) or int64; va, vb, out_off: int64[pages];
    out: uint8, out_off spaced by at least `delta.delta_max_size(vb[p] - va[p])`; sizes: int64[pages]
    receives each page's byte count. CPU twin: `pages.page_delta`.
    """
    p: int = cuda.blockIdx.x  # type: ignore[assignment]
    if p >= va.shape[0]:
        return
    delta = cuda.shared.array(BLOCK, np.int64)
    adj = cuda.shared.array(BLOCK, np.uint64)
    mins = cuda.shared.array(2, np.int64)
    ors = cuda.shared.array(_OR_SLOTS, np.uint64)
    pos = out_off[p]
    end = _dbp(values, va[p], vb[p], is32, out, pos, delta, adj, mins, ors)
    if cuda.threadIdx.x == 0:
        sizes[p] = end - pos


@cuda_kernel
def delta_bytes_pages(offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                      prefix: np.ndarray, suffix: np.ndarray, out: np.ndarray, out_off: np.ndarray,
                      sizes: np.ndarray) -> None:
    """DELTA_BYTE_ARRAY of every page: block p encodes values va[p]..vb[p] (bytes data[offsets[i]:offsets[i+1]]).

    Geometry: grid = len(va) blocks, one per page; any block size (128 intended). A thread owns values
    i = va[p] + threadIdx (mod blockDim) for their prefix / suffix lengths (shared with the previous value;
    0 for the page's first), then both lengths go through the block DELTA_BINARY_PACKED encoder (32-bit), then
    the suffix bytes are gathered by output byte (`_gather`). offsets: int64[values + 1]; data: uint8;
    prefix, suffix: int64 scratch indexed by value (at least max(vb) long); out: uint8, out_off spaced by at
    least 2 * delta_max_size(n) + the page's bytes; sizes: int64[pages] receives the byte counts.
    CPU twin: `pages.page_delta_bytes`.
    """
    p: int = cuda.blockIdx.x  # type: ignore[assignment]
    if p >= va.shape[0]:
        return
    tid: int = cuda.threadIdx.x  # type: ignore[assignment]
    nt: int = cuda.blockDim.x  # type: ignore[assignment]
    delta = cuda.shared.array(BLOCK, np.int64)
    adj = cuda.shared.array(BLOCK, np.uint64)
    mins = cuda.shared.array(2, np.int64)
    ors = cuda.shared.array(_OR_SLOTS, np.uint64)
    scan = cuda.shared.array((2, BLOCK), np.int64)
    a = va[p]
    b = vb[p]
    for i in range(a + tid, b, nt):
        s = offsets[i]
        t = offsets[i + 1]
        k = 0
        if i > a:
            ps = offsets[i - 1]
            lim = min(t - s, s - ps)
            while k < lim and data[s + k] == data[ps + k]:
                k += 1
        prefix[i] = k
        suffix[i] = (t - s) - k
    pos = out_off[p]
    end = _dbp(prefix, a, b, True, out, pos, delta, adj, mins, ors)  # _dbp syncs before reading
    end = _dbp(suffix, a, b, True, out, end, delta, adj, mins, ors)
    end = _gather(offsets, data, suffix, a, b, out, end, scan)
    if tid == 0:
        sizes[p] = end - pos
