"""CUDA forms of the per-page bookkeeping steps (twins and shared logic: `page_layout.py`).

`dict_info_thread`, `page_headers_thread`, `dictionary_headers_thread`: one thread per page (or column).
`dictionary_pages_block`: one block per dictionary column, threads over its entries (each entry's position is
known from the running dictionary bytes, so entries are written independently).
`exclusive_scan_block`: one block scans the whole array, each thread a contiguous run of it (the runs' sums
scanned Hillis-Steele in shared memory: `block_cuda.block_scan`). Importing this module imports numba.cuda.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._jit import cuda_kernel, device
from ..block_cuda import block_scan, run_bounds
from .page_layout import (
    dictionary_header,
    entry_position,
    flush_size,
    page_extremes,
    page_header,
    page_info,
    stored_choice,
    write_entry,
)

MAX_THREADS = 128
_page_info = device(page_info)
_stored_choice = device(stored_choice)
_page_extremes = device(page_extremes)
_page_header = device(page_header)
_flush_size = device(flush_size)
_dictionary_header = device(dictionary_header)
_entry_position = device(entry_position)
_write_entry = device(write_entry)


@cuda_kernel
def pages_info_thread(n: int, col: np.ndarray, a: np.ndarray, va: np.ndarray, vb: np.ndarray, cols: np.ndarray,
                      idx: np.ndarray, ids: np.ndarray, efirst: np.ndarray, ebytes: np.ndarray, overflow: np.ndarray,
                      info: np.ndarray) -> None:
    """Thread p: page p's dictionary state, value bytes, id width and first-page test (a chunk's first page
    sizes its ids sequentially: one thread per column's first page)."""
    p = cuda.grid(1)
    if p < n:
        _page_info(p, col, a, va, vb, cols, idx, ids, efirst, ebytes, overflow, info)


@cuda_kernel
def stored_choices_thread(n: int, val_len: np.ndarray, comp_len: np.ndarray, identity: bool, fields: np.ndarray,
                          stored_len: np.ndarray, copy_len: np.ndarray, body_len: np.ndarray) -> None:
    """Thread p: compressed or raw values for page p, and its header sizes."""
    p = cuda.grid(1)
    if p < n:
        _stored_choice(p, val_len, comp_len, identity, fields, stored_len, copy_len, body_len)


@cuda_kernel
def pages_extremes_thread(n: int, col: np.ndarray, bounds: np.ndarray, ext_in: np.ndarray, cols: np.ndarray,
                          v8: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray, out: np.ndarray) -> None:
    """Thread p: page p's min and max values (fixed kinds) or their places in `dat` (byte kinds), and its NaN
    count and largest non-NaN value (floats; a sequential pass over the page)."""
    p = cuda.grid(1)
    if p < n:
        _page_extremes(p, col, bounds, ext_in, cols, v8, v32, v64, idx, out)


@cuda_kernel
def page_headers_thread(n: int, fields: np.ndarray, crc: np.ndarray, has_crc: bool, out: np.ndarray,
                        out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Thread p: page p's DATA_PAGE_V2 header."""
    p = cuda.grid(1)
    if p < n:
        _page_header(p, fields, crc, has_crc, out, out_off, sizes)


@cuda_kernel
def dictionary_headers_thread(n: int, fields: np.ndarray, stored: np.ndarray, crc: np.ndarray, has_crc: bool,
                              out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Thread c: column c's DICTIONARY_PAGE header."""
    c = cuda.grid(1)
    if c < n:
        _dictionary_header(c, fields, stored, crc, has_crc, out, out_off, sizes)


@cuda_kernel
def dictionary_pages_block(dcol: np.ndarray, count: np.ndarray, cols: np.ndarray, efirst: np.ndarray,
                           ebytes: np.ndarray, v32: np.ndarray, v64: np.ndarray, idx: np.ndarray, dat: np.ndarray,
                           out: np.ndarray, out_off: np.ndarray) -> None:
    """Block k: the PLAIN dictionary page of column dcol[k]; threads stride over its count[k] entries."""
    k = cuda.blockIdx.x
    c = dcol[k]
    for e in range(cuda.threadIdx.x, count[k], cuda.blockDim.x):
        _write_entry(cols, c, e, efirst, v32, v64, idx, dat, out,
                     out_off[k] + _entry_position(cols, c, e, efirst, ebytes, idx))


@cuda_kernel
def exclusive_scan_block(values: np.ndarray, n: int, out: np.ndarray) -> None:
    """One block (a grid of 1): out[i] = sum of values[:i] for i <= n (values int64[>= n], out int64[>= n + 1]);
    twin: `page_layout.exclusive_scan`. Thread t owns the contiguous run of ceil(n / T) items from t * ceil(n / T):
    it sums them, a Hillis-Steele scan of the T sums in shared memory gives the run its start, and it writes
    its run's prefixes. Serial steps per thread: 2 * ceil(n / T) + log2(T)."""
    sh = cuda.shared.array((1, MAX_THREADS), np.int64)
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    lo, hi = run_bounds(0, n, t, threads)
    total = np.int64(0)
    for i in range(lo, hi):
        total += values[i]
    run, _ = block_scan(sh, total, np.int64(0), t, threads)
    for i in range(lo, hi):
        out[i] = run
        run += values[i]
    if t == threads - 1:
        out[n] = sh[0, t]


@cuda_kernel
def flush_sizes_thread(n: int, pos: np.ndarray, header_len: np.ndarray, body_len: np.ndarray, out: np.ndarray) -> None:
    """Thread j: planned page j's stored size (header + body), for the row-group replay."""
    j = cuda.grid(1)
    if j < n:
        _flush_size(j, pos, header_len, body_len, out)
