"""Per-page kernels for batched encoding: page p of a column reads its own row / value range and writes its
section of a shared output at out_off[p], recording the length in sizes[p].

Each is a @jit function `f(p, ...)`: a CPU loop over pages runs it as is, and `_jit.page_kernel(f)` runs it
on a GPU with one thread per page. They call the same encoders the CPU path uses (rle, delta, plain), so a
page's bytes are the same on either device.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .bits import bit_width_u64
from .delta import byte_array_prefixes, delta_encode, gather_suffixes
from .plain import canonical32, canonical64, write_le
from .rle import rle_encode
from .stats import bytes_minmax


@jit
def page_levels(p: int, levels: np.ndarray, ea: np.ndarray, eb: np.ndarray, width: int, out: np.ndarray,
                out_off: np.ndarray, sizes: np.ndarray) -> None:
    """Levels of entries ea[p]..eb[p] as the v2 RLE/bit-packed hybrid at `width` (no length prefix)."""
    pos = out_off[p]
    sizes[p] = rle_encode(levels, ea[p], eb[p], width, out, pos) - pos


@jit
def page_dict_ids(p: int, ids: np.ndarray, va: np.ndarray, vb: np.ndarray, entries: np.ndarray,
                  out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """RLE_DICTIONARY body: bit-width byte (from the dictionary size at the page's end), then the ids."""
    pos = out_off[p]
    width = 32
    if entries[p] > 0:
        width = bit_width_u64(np.uint64(entries[p] - 1))
    out[pos] = np.uint8(width)
    sizes[p] = rle_encode(ids, va[p], vb[p], width, out, pos + 1) - pos


@jit
def page_delta(p: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, is32: bool, out: np.ndarray,
               out_off: np.ndarray, sizes: np.ndarray) -> None:
    """DELTA_BINARY_PACKED body of values va[p]..vb[p]."""
    pos = out_off[p]
    sizes[p] = delta_encode(values, va[p], vb[p], is32, out, pos) - pos


@jit
def page_delta_bytes(p: int, offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                     prefix: np.ndarray, suffix: np.ndarray, out: np.ndarray, out_off: np.ndarray,
                     sizes: np.ndarray) -> None:
    """DELTA_BYTE_ARRAY body: prefix and suffix lengths (scratch at the page's value range), suffix bytes."""
    a = va[p]
    b = vb[p]
    pre = prefix[a:b]
    suf = suffix[a:b]
    byte_array_prefixes(offsets, data, a, b, pre, suf)
    pos = out_off[p]
    end = delta_encode(pre, 0, b - a, True, out, pos)
    end = delta_encode(suf, 0, b - a, True, out, end)
    end = gather_suffixes(offsets, data, a, b, pre, out, end)
    sizes[p] = end - pos


@jit
def page_plain_fixed(p: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, nbytes: int, canon: int,
                     out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """PLAIN values of `nbytes` each; canon 4 / 8 canonicalises float / double NaNs as Java does."""
    pos = out_off[p]
    start = pos
    for i in range(va[p], vb[p]):
        b = np.int64(values[i])
        if canon == 4:
            b = canonical32(b)
        elif canon == 8:
            b = canonical64(b)
        pos = write_le(out, pos, b, nbytes)
    sizes[p] = pos - start


@jit
def page_plain_bool(p: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, out: np.ndarray,
                    out_off: np.ndarray, sizes: np.ndarray) -> None:
    """PLAIN booleans: one bit per value, LSB first, the last byte zero-padded."""
    pos = out_off[p]
    n = vb[p] - va[p]
    nb = (n + 7) // 8
    for k in range(nb):
        acc = 0
        for j in range(8):
            i = k * 8 + j
            if i < n and values[va[p] + i] != 0:
                acc |= 1 << j
        out[pos + k] = np.uint8(acc)
    sizes[p] = nb


@jit
def page_copy_bytes(p: int, offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                    out: np.ndarray, out_off: np.ndarray, sizes: np.ndarray) -> None:
    """The values' bytes back to back (INT96: PLAIN is the 12 bytes of each value)."""
    pos = out_off[p]
    s = offsets[va[p]]
    t = offsets[vb[p]]
    for j in range(t - s):
        out[pos + j] = data[s + j]
    sizes[p] = t - s


@jit
def page_int_minmax(p: int, values: np.ndarray, va: np.ndarray, vb: np.ndarray, imin: np.ndarray,
                    imax: np.ndarray) -> None:
    """Indices of the first smallest and first largest value of the page (signed order); -1 when empty."""
    lo = -1
    hi = -1
    for i in range(va[p], vb[p]):
        if lo < 0 or values[i] < values[lo]:
            lo = i
        if hi < 0 or values[i] > values[hi]:
            hi = i
    imin[p] = lo
    imax[p] = hi


@jit
def _float_key(b: np.int64, is32: bool) -> np.int64:
    """Java Float/Double.compare order of canonical bits as a signed key (-0.0 < 0.0, NaN largest)."""
    if is32:
        c = canonical32(b)
        return c if c >= 0 else c ^ np.int64(0x7FFFFFFF)
    c = canonical64(b)
    return c if c >= 0 else c ^ np.int64(0x7FFFFFFFFFFFFFFF)


@jit
def page_float_minmax(p: int, bits: np.ndarray, va: np.ndarray, vb: np.ndarray, is32: bool, imin: np.ndarray,
                      imax: np.ndarray) -> None:
    """Indices of min and max under Java's float comparison; -1 when the page has no values."""
    lo = -1
    hi = -1
    klo = np.int64(0)
    khi = np.int64(0)
    for i in range(va[p], vb[p]):
        k = _float_key(np.int64(bits[i]), is32)
        if lo < 0 or k < klo:
            lo = i
            klo = k
        if hi < 0 or k > khi:
            hi = i
            khi = k
    imin[p] = lo
    imax[p] = hi


@jit
def page_bytes_minmax(p: int, offsets: np.ndarray, data: np.ndarray, va: np.ndarray, vb: np.ndarray,
                      signed_first: bool, imin: np.ndarray, imax: np.ndarray, same: np.ndarray) -> None:
    """Min / max indices in byte order (first byte signed for decimals) and whether all values are equal."""
    lo, hi, eq = bytes_minmax(offsets, data, va[p], vb[p], signed_first)
    if vb[p] <= va[p]:
        lo = -1
        hi = -1
    imin[p] = lo
    imax[p] = hi
    same[p] = eq


@jit
def page_gather(p: int, reps: np.ndarray, rep_off: np.ndarray, rep_len: np.ndarray, levels: np.ndarray,
                lev_off: np.ndarray, lev_len: np.ndarray, values: np.ndarray, val_off: np.ndarray,
                val_len: np.ndarray, out: np.ndarray, out_off: np.ndarray) -> None:
    """Page body = repetition levels, definition levels, then the (stored) values, at out_off[p]."""
    pos = out_off[p]
    s = rep_off[p]
    for j in range(rep_len[p]):
        out[pos + j] = reps[s + j]
    pos += rep_len[p]
    s = lev_off[p]
    for j in range(lev_len[p]):
        out[pos + j] = levels[s + j]
    pos += lev_len[p]
    s = val_off[p]
    for j in range(val_len[p]):
        out[pos + j] = values[s + j]


@jit
def page_crc32(p: int, buf: np.ndarray, off: np.ndarray, length: np.ndarray, table: np.ndarray,
               crc: np.ndarray) -> None:
    """CRC-32 (zlib's polynomial, table driven) of buf[off[p]:off[p]+length[p]]."""
    c = np.uint32(0xFFFFFFFF)
    s = off[p]
    for j in range(length[p]):
        c = table[(c ^ np.uint32(buf[s + j])) & np.uint32(0xFF)] ^ (c >> np.uint32(8))
    crc[p] = np.int64(c ^ np.uint32(0xFFFFFFFF))


def crc32_table() -> np.ndarray:
    """The 256-entry table for page_crc32 (reflected polynomial 0xEDB88320)."""
    table = np.zeros(256, dtype=np.uint32)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (0xEDB88320 ^ (c >> 1)) if c & 1 else c >> 1
        table[n] = c
    return table
