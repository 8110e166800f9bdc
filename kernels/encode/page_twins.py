"""Sequential CPU twins of the block-per-page kernels (`rle_block`, `delta_block`, `pages_block`): each runs
the per-page encoder every page's block runs, over all pages, with the kernel's own arguments.

A twin is what the GPU backend's stand-in device executes for the cost model, and the reference its CUDA form
is tested against. Geometry of the CUDA forms: one thread block per page.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .delta import byte_array_prefixes, delta_encode, gather_suffixes
from .pages import (
    page_bytes_minmax,
    page_copy_bytes,
    page_crc32,
    page_float_minmax,
    page_gather,
    page_int_minmax,
    page_plain_bool,
    page_plain_fixed,
)
from .plain import plain_byte_array
from .rle import rle_encode


@jit
def rle_pages(n: int, values: np.ndarray, page_start: np.ndarray, page_end: np.ndarray, width: np.ndarray,
              width_byte: bool, out: np.ndarray, out_off: np.ndarray, out_size: np.ndarray) -> None:
    """Twin of `rle_block.rle_encode_block`: page p's values in the RLE / bit-packed hybrid at width[p] (the
    width as a leading byte when `width_byte`), at out[out_off[p]:]; its size to out_size[p]."""
    for p in range(n):
        pos = out_off[p]
        start = pos
        if width_byte:
            out[pos] = np.uint8(width[p])
            pos += 1
        out_size[p] = rle_encode(values, page_start[p], page_end[p], width[p], out, pos) - start


@jit
def delta_pages(n: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, is32: bool, out: np.ndarray,
                out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Twin of `delta_block.delta_pages`: DELTA_BINARY_PACKED of values va[p]..vb[p] of each page."""
    for p in range(n):
        sizes[p] = delta_encode(values, va[p], vb[p], is32, out, out_off[p]) - out_off[p]


@jit
def delta_bytes_pages(n: int, offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                      prefix: np.ndarray, suffix: np.ndarray, out: np.ndarray, out_off: np.ndarray,
                      sizes: np.ndarray) -> None:
    """Twin of `delta_block.delta_bytes_pages`: DELTA_BYTE_ARRAY of values va[p]..vb[p] (prefix / suffix
    lengths as scratch at the values' own positions)."""
    for p in range(n):
        a = va[p]
        b = vb[p]
        pre = prefix[a:b]
        suf = suffix[a:b]
        byte_array_prefixes(offsets, data, a, b, pre, suf)
        pos = out_off[p]
        end = delta_encode(pre, 0, b - a, True, out, pos)
        end = delta_encode(suf, 0, b - a, True, out, end)
        sizes[p] = gather_suffixes(offsets, data, a, b, pre, out, end) - pos


@jit
def plain_fixed_pages(n: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, nbytes: int, canon: int,
                      out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Twin of `pages_block.block_plain_fixed`."""
    for p in range(n):
        page_plain_fixed(p, values, va, vb, nbytes, canon, out, out_off, sizes)


@jit
def plain_bool_pages(n: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, out: np.ndarray,
                     out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Twin of `pages_block.block_plain_bool`."""
    for p in range(n):
        page_plain_bool(p, values, va, vb, out, out_off, sizes)


@jit
def copy_bytes_pages(n: int, offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                     out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Twin of `pages_block.block_copy_bytes`."""
    for p in range(n):
        page_copy_bytes(p, offsets, data, va, vb, out, out_off, sizes)


@jit
def plain_byte_array_pages(n: int, offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                           out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Twin of `pages_block.block_plain_byte_array`: 4-byte lengths then bytes (dictionary pages)."""
    for p in range(n):
        sizes[p] = plain_byte_array(offsets, data, va[p], vb[p], out, out_off[p]) - out_off[p]


@jit
def gather_pages(n: int, reps: np.ndarray, rep_off: np.ndarray, rep_len: np.ndarray, levels: np.ndarray,
                 lev_off: np.ndarray, lev_len: np.ndarray, values: np.ndarray, val_off: np.ndarray,
                 val_len: np.ndarray, out: np.ndarray, out_off: np.ndarray) -> None:
    """Twin of `pages_block.block_gather`."""
    for p in range(n):
        page_gather(p, reps, rep_off, rep_len, levels, lev_off, lev_len, values, val_off, val_len, out, out_off)


@jit
def int_minmax_pages(n: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, imin: np.ndarray,
                     imax: np.ndarray) -> None:
    """Twin of `pages_block.block_int_minmax`."""
    for p in range(n):
        page_int_minmax(p, values, va, vb, imin, imax)


@jit
def float_minmax_pages(n: int, bits: np.ndarray, va: np.ndarray, vb: np.ndarray, is32: bool, imin: np.ndarray,
                       imax: np.ndarray) -> None:
    """Twin of `pages_block.block_float_minmax`."""
    for p in range(n):
        page_float_minmax(p, bits, va, vb, is32, imin, imax)


@jit
def bytes_minmax_pages(n: int, offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                       signed_first: bool, imin: np.ndarray, imax: np.ndarray, same: np.ndarray) -> None:
    """Twin of `pages_block.block_bytes_minmax`."""
    for p in range(n):
        page_bytes_minmax(p, offsets, data, va, vb, signed_first, imin, imax, same)


@jit
def crc32_pages(n: int, buf: np.ndarray, off: np.ndarray, length: np.ndarray, table: np.ndarray,
                crc: np.ndarray) -> None:
    """Twin of `pages_block.block_crc32`."""
    for p in range(n):
        page_crc32(p, buf, off, length, table, crc)
