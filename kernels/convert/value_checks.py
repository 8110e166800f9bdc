"""Value checks over a window's Arrow buffers on the device: decimals within their precision, strings that are
valid UTF-8 — the checks `gpuwrite/pipeline/validate.py` runs on the host for the CPU path, run by the GPU backend where
the values already are, so no host pass reads them.

Work items are the conversion's chunks (`chunks`, int64[K, CK_COUNT]: rows of one source piece, see
kernels/convert/arenas.py and the source table of kernels/plan/layout.py). `checks` (int64[C, CHK_COUNT]) says per column
what to check: CHK_CODE (NONE, DECIMAL or UTF8) and, for decimals, the bound B = 10**precision - 1 as
kernels/convert/checks.py writes it (B_hi, B_lo, (2B)_hi, (2B)_lo: uint64 bit patterns stored as int64). Per chunk,
`bad[k]` (int64[K, 2]) gets the window row of its first present value that fails (-1 when none) and the
column. One thread per chunk on a GPU (`_jit.page_kernel(check_chunk)`); `check_chunks` is the
sequential CPU twin.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from ..plan.layout import ST_COL, ST_FIRST, ST_VALUES, ST_WIDTH
from .arenas import CK_PIECE, CK_ROW, CK_ROWS, byte_span, load_le, piece, row_valid

CHK_CODE, CHK_B_HI, CHK_B_LO, CHK_S_HI, CHK_S_LO = range(5)
CHK_COUNT = 5
NONE, DECIMAL, UTF8 = 0, 1, 2


@jit_inline
def _continuation(data: np.ndarray, i: int, b: int) -> bool:
    """Whether data[i] exists below b and is a continuation byte 10xxxxxx."""
    return i < b and (data[i] & 0xC0) == 0x80


@jit
def utf8_valid(data: np.ndarray, a: int, b: int) -> bool:
    """Whether data[a:b] is well-formed UTF-8 (Unicode 15, table 3-7: no overlong forms, no surrogates, nothing
    above U+10FFFF), as Arrow's validation and Python's strict decoder require."""
    i = a
    while i < b:
        c = data[i]
        if c < 0x80:
            i += 1
            continue
        if c < 0xC2 or c > 0xF4:
            return False
        if c < 0xE0:
            if not _continuation(data, i + 1, b):
                return False
            i += 2
            continue
        if i + 1 >= b:
            return False
        c1 = data[i + 1]
        if c < 0xF0:
            lo = 0xA0 if c == 0xE0 else 0x80
            hi = 0x9F if c == 0xED else 0xBF
            if c1 < lo or c1 > hi or not _continuation(data, i + 2, b):
                return False
            i += 3
            continue
        lo = 0x90 if c == 0xF0 else 0x80
        hi = 0x8F if c == 0xF4 else 0xBF
        if c1 < lo or c1 > hi or not _continuation(data, i + 2, b) or not _continuation(data, i + 3, b):
            return False
        i += 4
    return True


@jit
def decimal_outside_at(src: np.ndarray, at: int, width: int, row: np.ndarray) -> bool:
    """Whether the decimal32 / 64 / 128 / 256 (`width` bytes little-endian at src[at]) lies outside [-B, B] for
    the bound in `row` (a row of `checks`): v + B, as an unsigned 128-bit number, exceeds 2B, or a
    decimal256's upper words do not extend the sign."""
    lo_signed = load_le(src, at, width if width < 8 else 8)
    lo = np.uint64(lo_signed)
    hi_signed = load_le(src, at + 8, 8) if width >= 16 else lo_signed >> np.int64(63)
    words = width // 8
    hi = np.uint64(hi_signed)
    b_hi, b_lo = np.uint64(row[CHK_B_HI]), np.uint64(row[CHK_B_LO])
    s_hi, s_lo = np.uint64(row[CHK_S_HI]), np.uint64(row[CHK_S_LO])
    t_lo = lo + b_lo
    t_hi = hi + b_hi + np.uint64(1 if t_lo < lo else 0)
    if t_hi > s_hi or (t_hi == s_hi and t_lo > s_lo):
        return True
    sign = hi_signed >> np.int64(63)
    for w in range(2, words):
        if load_le(src, at + 8 * w, 8) != sign:
            return True
    return False


@jit
def check_chunk(k: int, chunks: np.ndarray, srct: np.ndarray, src: np.ndarray, checks: np.ndarray,
                bad: np.ndarray) -> None:
    """Chunk k: the window row of its first present value that fails its column's check, or -1."""
    p = piece(srct, chunks[k, CK_PIECE])
    c = p[ST_COL]
    code = checks[c, CHK_CODE]
    bad[k, 0] = -1
    bad[k, 1] = c
    if code == NONE:
        return
    a = chunks[k, CK_ROW]
    b = a + chunks[k, CK_ROWS]
    width = p[ST_WIDTH]
    for i in range(a, b):
        if not row_valid(p, src, i):
            continue
        if code == DECIMAL:
            fails = decimal_outside_at(src, p[ST_VALUES] + i * width, width, checks[c])
        else:
            x, n = byte_span(p, src, i)
            fails = not utf8_valid(src, int(x), int(x + n))
        if fails:
            bad[k, 0] = p[ST_FIRST] + i
            return


@jit
def check_chunks(n: int, chunks: np.ndarray, srct: np.ndarray, src: np.ndarray, checks: np.ndarray,
                 bad: np.ndarray) -> None:
    """Twin of the thread-per-chunk kernel: chunks 0..n."""
    for k in range(n):
        check_chunk(k, chunks, srct, src, checks, bad)
