"""Arrow buffers -> a window's arenas (kernels/plan/layout.py): validity -> definition levels, compaction of the
present values, integer widening, timestamp units, calendar rebase, decimals, INT96 and byte offsets, for
every flat column of a window in three launches over chunks of rows.

Inputs: `src` (uint8, the raw Arrow buffers), `srct` (int64[S, ST_COUNT], one row per piece), `zones` (the
session zone's tzdb table: S start instants then S offsets, micros; may be empty), `cols` (int64[C,
CT_COUNT]), the chunk table `chunks` (int64[K, CK_COUNT]: up to a chunk size of rows of one piece, ordered
by column, piece, row) and `ranges` (int64[C, R_COUNT]: a column's chunks and its first byte in `dat`).
Launches:
1. `count_chunks` (block per chunk): present values, dat bytes, timestamp unit checks, the smallest date /
   timestamp and the first one before the calendar switch -> counts[k, CC_*].
2. `scan_columns_block` (block per column, a block scan over its chunks): values and bytes before each
   chunk (exclusive prefix over the column's chunks), the column's errors and totals -> errs[c, ER_*], and the closing entries of the row ->
   values index and of the value offsets.
3. `write_chunks` (block per chunk): levels, the row -> values index, converted values, value offsets and
   value bytes.

This module holds the sequential twins (`twin(items, *args)`) and the per-value helpers both forms share; the
CUDA forms are in convert_cuda.py and run the same helpers through `_jit.device`. Values are assembled from
little-endian bytes, as kernels cannot reinterpret arrays.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_inline
from ..plan.layout import (
    CT_DEF,
    CT_KIND,
    CT_OFFS,
    CT_ROWS,
    CT_VALS,
    CT_VBEFORE,
    CT_VIDX,
    CV_BOOL,
    CV_BYTES,
    CV_DATE,
    CV_INT,
    CV_INT96,
    CV_MICROS,
    CV_MILLIS,
    E_BEFORE_SWITCH,
    E_NS_LOSS,
    E_RANGE,
    E_ZONE,
    ER_BYTES,
    ER_FIRST,
    ER_FLAGS,
    ER_MIN,
    ER_VALUES,
    K_BOOL,
    K_FLOAT,
    K_INT32,
    RB_EXCEPTION,
    RB_LEGACY,
    ST_BITMAP,
    ST_BITOFF,
    ST_COL,
    ST_CONV,
    ST_DATA,
    ST_FIRST,
    ST_OFF0,
    ST_OFFSET,
    ST_OFFSETS,
    ST_OUTW,
    ST_REBASE,
    ST_UNIT,
    ST_VALUES,
    ST_VBITOFF,
    ST_WIDTH,
    ST_ZONE,
    ZK_FIXED,
    ZK_REGION,
    ZK_UNKNOWN,
)
from .rebase import LAST_SWITCH_GREGORIAN_DAY, LAST_SWITCH_GREGORIAN_MICROS, rebase_day, rebase_instant

CHUNK_ROWS = 4096  # rows per chunk on a GPU

# Chunk table fields.
CK_PIECE, CK_ROW, CK_ROWS = range(3)  # piece (row of srct), first row within the piece, rows
CK_COUNT = 3
# Per-chunk counts (launch 1) and prefixes (launch 2).
(CC_VALUES,  # present values
 CC_BYTES,  # bytes its values take in dat (byte kinds)
 CC_MIN,  # smallest date / timestamp (micros before rebase), int64 max when none
 CC_FLAGS,  # E_NS_LOSS / E_RANGE
 CC_FIRST_ROW,  # row (within the piece) of the first value before the calendar switch, -1 when none
 CC_FIRST,  # that value
 CC_VBEFORE,  # values of the column before the chunk
 CC_BBEFORE,  # dat bytes of the column before the chunk
 ) = range(8)
CC_COUNT = 8
# Column ranges.
R_CHUNK0, R_CHUNK1, R_DAT = range(3)  # the column's chunks k0..k1; dat: its first byte (-1: fixed kinds)
R_COUNT = 3

INT64_MAX = 9223372036854775807
MICROS_PER_DAY = 86_400_000_000
JULIAN_EPOCH_MICROS = 2_440_588 * MICROS_PER_DAY  # the Julian day of 1970-01-01, in micros


# -- per-value helpers, shared by the twins and the CUDA forms ----------------------------------------------


@jit_inline
def load_le(src: np.ndarray, pos: int, n: int) -> np.int64:
    """The signed little-endian integer of n bytes (1, 2, 4 or 8) at src[pos] (unrolled: constant shifts let
    the CPU compiler merge the byte loads)."""
    if n == 8:
        lo = (np.int64(src[pos]) | (np.int64(src[pos + 1]) << 8) | (np.int64(src[pos + 2]) << 16)
              | (np.int64(src[pos + 3]) << 24))
        hi = (np.int64(src[pos + 4]) | (np.int64(src[pos + 5]) << 8) | (np.int64(src[pos + 6]) << 16)
              | (np.int64(src[pos + 7]) << 24))
        return lo | (hi << 32)
    if n == 4:
        v = (np.int64(src[pos]) | (np.int64(src[pos + 1]) << 8) | (np.int64(src[pos + 2]) << 16)
             | (np.int64(src[pos + 3]) << 24))
        return (v ^ 0x80000000) - 0x80000000
    if n == 2:
        v = np.int64(src[pos]) | (np.int64(src[pos + 1]) << 8)
        return (v ^ 0x8000) - 0x8000
    return (np.int64(src[pos]) ^ 0x80) - 0x80


@jit_inline
def put_le(dat: np.ndarray, pos: int, v: np.int64, n: int) -> None:
    """The low n bytes of v, little-endian, at dat[pos]."""
    for j in range(n):
        dat[pos + j] = (v >> np.int64(8 * j)) & np.int64(255)


@jit_inline
def bit_at(src: np.ndarray, base: int, bit: int) -> np.int64:
    """Bit `bit` (LSB first, as Arrow numbers them) of the bitmap at src[base]."""
    return (np.int64(src[base + (bit >> 3)]) >> np.int64(bit & 7)) & np.int64(1)


@jit_inline
def wrap32(v: np.int64) -> np.int64:
    """v truncated to a signed 32-bit integer (NumPy's astype(int32))."""
    return ((v + np.int64(2147483648)) & np.int64(4294967295)) - np.int64(2147483648)


@jit_inline
def piece(srct: np.ndarray, s: int) -> tuple:
    """Row s of the source table as a tuple of ST_COUNT values (indexed by the ST_* fields): the per-row
    helpers read a piece's parameters from registers rather than from the table."""
    return (srct[s, 0], srct[s, 1], srct[s, 2], srct[s, 3], srct[s, 4], srct[s, 5], srct[s, 6], srct[s, 7],
            srct[s, 8], srct[s, 9], srct[s, 10], srct[s, 11], srct[s, 12], srct[s, 13], srct[s, 14], srct[s, 15],
            srct[s, 16], srct[s, 17])


@jit_inline
def row_valid(p: tuple, src: np.ndarray, i: int) -> bool:
    """Whether row i of piece s holds a value."""
    b = p[ST_BITMAP]
    if b < 0:
        return True
    return bit_at(src, b, p[ST_BITOFF] + i) != 0


@jit_inline
def byte_span(p: tuple, src: np.ndarray, i: int) -> tuple[np.int64, np.int64]:
    """(position in src, length) of row i's bytes in a string / binary piece."""
    w = p[ST_WIDTH]
    a = load_le(src, p[ST_OFFSETS] + i * w, w)
    b = load_le(src, p[ST_OFFSETS] + (i + 1) * w, w)
    return p[ST_DATA] + a - p[ST_OFF0], b - a


@jit_inline
def is_time(conv: int) -> bool:
    """Whether a conversion reads dates or timestamps (checked and perhaps rebased)."""
    return conv == CV_DATE or conv == CV_MICROS or conv == CV_MILLIS or conv == CV_INT96


@jit_inline
def switch_of(conv: int) -> np.int64:
    """The calendar switch in the conversion's unit: days for dates, micros for timestamps."""
    if conv == CV_DATE:
        return np.int64(LAST_SWITCH_GREGORIAN_DAY)
    return np.int64(LAST_SWITCH_GREGORIAN_MICROS)


@jit_inline
def time_value(p: tuple, src: np.ndarray, i: int) -> tuple[np.int64, np.int64]:
    """(days or micros before rebase, E_* flags) of row i of a date / timestamp piece; the checks are
    columns._timestamp_micros's: ns with a sub-microsecond part, s / ms beyond +-(int64 max // factor)."""
    if p[ST_CONV] == CV_DATE:
        return load_le(src, p[ST_VALUES] + i * 4, 4), np.int64(0)
    raw = load_le(src, p[ST_VALUES] + i * 8, 8)
    unit = p[ST_UNIT]
    if unit < 0:
        d = -unit
        return raw // d, np.int64(E_NS_LOSS if raw % d != 0 else 0)
    if unit == 1:
        return raw, np.int64(0)
    limit = INT64_MAX // unit
    return raw * unit, np.int64(E_RANGE if raw > limit or raw < -limit else 0)


@jit_inline
def zone_offset(zones: np.ndarray, micros: np.int64) -> np.int64:
    """The tzdb offset at an instant: zones holds n start instants (the first int64 min) then n offsets."""
    n = zones.shape[0] // 2
    lo = 0
    hi = n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if zones[mid] <= micros:
            lo = mid
        else:
            hi = mid
    return zones[n + lo]


@jit
def rebased(p: tuple, zones: np.ndarray, value: np.int64, active: bool) -> np.int64:
    """A date / timestamp as written: LEGACY mode rebases when the column holds a value before the switch
    (`active`), as rebase.rebase_dates / rebase_timestamps do (fixed-offset zones: every value; region
    zones: values before 1900 with their tzdb offset, re-read at the raw offset)."""
    if not active or p[ST_REBASE] != RB_LEGACY:
        return value
    if p[ST_CONV] == CV_DATE:
        return rebase_day(value)
    zone = p[ST_ZONE]
    off = p[ST_OFFSET]
    if zone == ZK_FIXED:
        return rebase_instant(value, off, off)
    if zone == ZK_REGION and value < LAST_SWITCH_GREGORIAN_MICROS:
        return rebase_instant(value, zone_offset(zones, value), off)
    return value


@jit_inline
def plain_value(p: tuple, src: np.ndarray, i: int) -> np.int64:
    """Row i of a bool / integer / float / decimal piece: 0 / 1, the integer, the IEEE bits, the low word."""
    conv = p[ST_CONV]
    vals = p[ST_VALUES]
    if conv == CV_BOOL:
        return bit_at(src, vals, p[ST_VBITOFF] + i)
    w = p[ST_WIDTH]
    if conv == CV_INT:
        return load_le(src, vals + i * w, w)
    return load_le(src, vals + i * w, w if w < 8 else 8)  # a decimal's low word (decimal32: sign-extended)


@jit
def fixed_value(p: tuple, src: np.ndarray, i: int, zones: np.ndarray, active: bool) -> np.int64:
    """The converted value of row i (bool 0 / 1, integer, IEEE bits, the low word of a decimal, days, micros
    or millis; INT96: its micros)."""
    conv = p[ST_CONV]
    if not is_time(conv):
        return plain_value(p, src, i)
    t, _ = time_value(p, src, i)
    t = rebased(p, zones, t, active)
    if conv == CV_MILLIS:
        return t // 1000
    return t


@jit_inline
def put_int96(dat: np.ndarray, pos: int, micros: np.int64) -> None:
    """Spark's INT96 (columns.int96_bytes): 8-byte nanos of day, 4-byte Julian day, Java's truncating division."""
    if micros > INT64_MAX - JULIAN_EPOCH_MICROS:  # NumPy's addition wraps; spelled out, as LLVM assumes none
        shifted = (micros - INT64_MAX - 1) + np.int64(JULIAN_EPOCH_MICROS - INT64_MAX - 1)
    else:
        shifted = micros + np.int64(JULIAN_EPOCH_MICROS)
    day = shifted // MICROS_PER_DAY
    rem = shifted - day * MICROS_PER_DAY
    if shifted < 0 and rem != 0:
        day += 1
        rem -= MICROS_PER_DAY
    put_le(dat, pos, rem * 1000, 8)
    put_le(dat, pos + 8, day, 4)


@jit_inline
def put_flba(dat: np.ndarray, pos: int, src: np.ndarray, at: int, length: int, width: int) -> None:
    """A decimal's big-endian two's-complement bytes, its low `length` (<= 16) bytes (little-endian at src[at],
    `width` bytes wide: narrower values are sign-extended)."""
    fill = 255 if src[at + width - 1] >= 128 else 0
    for j in range(length):
        b = length - 1 - j
        dat[pos + j] = src[at + b] if b < width else fill


@jit_inline
def store_fixed(kind: int, pos: int, v: np.int64, v8: np.ndarray, v32: np.ndarray, v64: np.ndarray) -> None:
    """A fixed-kind value into its arena."""
    if kind == K_BOOL:
        v8[pos] = v
    elif kind == K_INT32 or kind == K_FLOAT:
        v32[pos] = wrap32(v)
    else:
        v64[pos] = v


@jit
def put_value(p: tuple, src: np.ndarray, i: int, zones: np.ndarray, active: bool, kind: int,
              slots: tuple[int, int], v: int, d: int, idx: np.ndarray, v8: np.ndarray, v32: np.ndarray,
              v64: np.ndarray, dat: np.ndarray, copy: bool) -> np.int64:
    """Row i (present) as value v of its column: into v8 / v32 / v64 at slots[0] + v, or for byte kinds its
    offset d at idx[slots[1] + v] and its bytes at dat[d] (string bytes only when `copy`). Returns the next d."""
    vals, offs = slots
    if offs < 0:
        store_fixed(kind, vals + v, fixed_value(p, src, i, zones, active), v8, v32, v64)
        return np.int64(d)
    idx[offs + v] = d
    conv = p[ST_CONV]
    if conv == CV_BYTES:
        at, n = byte_span(p, src, i)
        if copy:
            for j in range(n):
                dat[d + j] = src[at + j]
        return np.int64(d + n)
    if conv == CV_INT96:
        put_int96(dat, d, fixed_value(p, src, i, zones, active))
    else:
        put_flba(dat, d, src, p[ST_VALUES] + i * p[ST_WIDTH], p[ST_OUTW], p[ST_WIDTH])
    return np.int64(d + p[ST_OUTW])


@jit_inline
def first_above(ends: np.ndarray, m: int, e: int) -> int:
    """The first j < m with ends[j] > e (ends non-decreasing, ends[m - 1] > e)."""
    lo = 0
    hi = m - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] > e:
            hi = mid
        else:
            lo = mid + 1
    return lo


# -- launch 1: count ----------------------------------------------------------------------------------------


@jit_inline
def quick_count(p: tuple, src: np.ndarray, a: int, b: int) -> tuple[bool, np.int64, np.int64]:
    """(whether rows a..b of the piece need no per-row pass, values, dat bytes): no nulls and no date /
    timestamp checks, so the counts follow from the row count and two offsets."""
    conv = p[ST_CONV]
    if p[ST_BITMAP] >= 0 or is_time(conv):
        return False, np.int64(0), np.int64(0)
    if conv == CV_BYTES:  # offsets a and b only (b may be the piece's end: offset b + 1 does not exist)
        w = p[ST_WIDTH]
        x = load_le(src, p[ST_OFFSETS] + a * w, w)
        q = load_le(src, p[ST_OFFSETS] + b * w, w)
        return True, np.int64(b - a), q - x
    return True, np.int64(b - a), np.int64((b - a) * p[ST_OUTW])


@jit_inline
def count_row(p: tuple, src: np.ndarray, i: int) -> tuple[np.int64, np.int64, np.int64,
                                                                          np.int64]:
    """(present 0 / 1, dat bytes, date / timestamp value or int64 max, flags) of row i of the piece."""
    if not row_valid(p, src, i):
        return np.int64(0), np.int64(0), np.int64(INT64_MAX), np.int64(0)
    conv = p[ST_CONV]
    if conv == CV_BYTES:
        _, n = byte_span(p, src, i)
        return np.int64(1), n, np.int64(INT64_MAX), np.int64(0)
    t = np.int64(INT64_MAX)
    flags = np.int64(0)
    if is_time(conv):
        t, flags = time_value(p, src, i)
    return np.int64(1), p[ST_OUTW], t, flags


@jit
def count_chunk(k: int, chunks: np.ndarray, srct: np.ndarray, src: np.ndarray, counts: np.ndarray) -> None:
    """Launch 1 for chunk k, sequentially."""
    p = piece(srct, chunks[k, CK_PIECE])
    a = chunks[k, CK_ROW]
    b = a + chunks[k, CK_ROWS]
    quick, values, nbytes = quick_count(p, src, a, b)
    low = np.int64(INT64_MAX)
    flags = np.int64(0)
    first_row = np.int64(-1)
    first = np.int64(0)
    if not quick:
        switch = switch_of(p[ST_CONV])
        for i in range(a, b):
            n, m, t, f = count_row(p, src, i)
            values += n
            nbytes += m
            flags |= f
            low = min(low, t)
            if t < switch and first_row < 0:
                first_row = i
                first = t
    counts[k, CC_VALUES] = values
    counts[k, CC_BYTES] = nbytes
    counts[k, CC_MIN] = low
    counts[k, CC_FLAGS] = flags
    counts[k, CC_FIRST_ROW] = first_row
    counts[k, CC_FIRST] = first


@jit
def count_chunks(n: int, chunks: np.ndarray, srct: np.ndarray, src: np.ndarray, counts: np.ndarray) -> None:
    """Twin of convert_cuda.count_chunks: per chunk (int64[K, CK_COUNT]) its counts (int64[K, CC_COUNT])."""
    for k in range(n):
        count_chunk(k, chunks, srct, src, counts)


# -- launch 2: scan -----------------------------------------------------------------------------------------


@jit
def scan_column(c: int, ranges: np.ndarray, chunks: np.ndarray, srct: np.ndarray, cols: np.ndarray,
                counts: np.ndarray, errs: np.ndarray, idx: np.ndarray) -> None:
    """Launch 2 for column c, sequentially: prefixes over its chunks, its errs row, closing index entries (on a
    GPU `arenas_cuda.scan_columns_block` does the same with a block scan over the chunks)."""
    k0 = ranges[c, R_CHUNK0]
    k1 = ranges[c, R_CHUNK1]
    values = np.int64(0)
    nbytes = np.int64(0)
    low = np.int64(INT64_MAX)
    flags = np.int64(0)
    first = np.int64(0)
    found = False
    for k in range(k0, k1):
        counts[k, CC_VBEFORE] = values
        counts[k, CC_BBEFORE] = nbytes
        values += counts[k, CC_VALUES]
        nbytes += counts[k, CC_BYTES]
        low = min(low, counts[k, CC_MIN])
        flags |= counts[k, CC_FLAGS]
        if not found and counts[k, CC_FIRST_ROW] >= 0:
            found = True
            first = counts[k, CC_FIRST]
    close_column(c, ranges, chunks, srct, cols, errs, idx, values, nbytes, low, flags, first)


@jit
def close_column(c: int, ranges: np.ndarray, chunks: np.ndarray, srct: np.ndarray, cols: np.ndarray,
                 errs: np.ndarray, idx: np.ndarray, values: int, nbytes: int, low: int, flags: int,
                 first: int) -> None:
    """Column c's totals over its chunks (values, dat bytes, smallest date / timestamp, error flags, the first
    value before the calendar switch) into its errs row, with the rebase errors they imply, and the closing
    entries of its value index and offsets (flat columns). Shared by the twin and the block scan."""
    k0 = ranges[c, R_CHUNK0]
    k1 = ranges[c, R_CHUNK1]
    if k1 > k0:
        p = piece(srct, chunks[k0, CK_PIECE])
        conv = p[ST_CONV]
        if is_time(conv) and low < switch_of(conv):
            mode = p[ST_REBASE]
            if mode == RB_EXCEPTION:
                flags |= E_BEFORE_SWITCH
            elif mode == RB_LEGACY and conv != CV_DATE and p[ST_ZONE] == ZK_UNKNOWN:
                flags |= E_ZONE
    errs[c, ER_FLAGS] = flags
    errs[c, ER_MIN] = low
    errs[c, ER_FIRST] = first
    errs[c, ER_VALUES] = values
    errs[c, ER_BYTES] = nbytes
    if cols[c, CT_VBEFORE] < 0:  # a flat column
        rows = cols[c, CT_ROWS]
        if cols[c, CT_VIDX] >= 0 and rows & 63 == 0:  # the group after the last row: all values before it
            idx[cols[c, CT_VIDX] + 2 * (rows >> 6)] = values
        if cols[c, CT_OFFS] >= 0:
            idx[cols[c, CT_OFFS] + values] = ranges[c, R_DAT] + nbytes


@jit
def scan_columns(n: int, ranges: np.ndarray, chunks: np.ndarray, srct: np.ndarray, cols: np.ndarray,
                 counts: np.ndarray, errs: np.ndarray, idx: np.ndarray) -> None:
    """Twin of `arenas_cuda.scan_columns_block` (a block per column), over columns 0..n."""
    for c in range(n):
        scan_column(c, ranges, chunks, srct, cols, counts, errs, idx)


# -- launch 3: write ----------------------------------------------------------------------------------------


@jit_inline
def mark_row(lev: np.ndarray, idx: np.ndarray, dpos: int, vidx: int, r: int, ok: bool, v: int) -> None:
    """Row r of a column: its definition level at lev[dpos + r] and its place in the value index at vidx
    (layout.py: per 64 rows the values before them, then a mask of those that have one; the masks zeroed before
    the launch), each only when the column has them (dpos / vidx >= 0). The twin's form; on a GPU the mask bit is
    set atomically (threads share a word: `arenas_cuda._mark_row`)."""
    if dpos >= 0:
        lev[dpos + r] = 1 if ok else 0
    if vidx >= 0:
        g = vidx + 2 * (r >> 6)
        if r & 63 == 0:
            idx[g] = v
        if ok:
            idx[g + 1] |= np.int64(1) << np.int64(r & 63)


@jit
def fixed_rows(p: tuple, src: np.ndarray, rows: tuple[int, int], zones: np.ndarray, active: bool,
               marks: tuple[int, int, int], lev: np.ndarray, idx: np.ndarray, out: np.ndarray,
               at: tuple[int, int], narrow: bool) -> None:
    """The twin's loop over rows a..b of a fixed kind: levels, index and values (value v of the column at
    out[pos + v], v from v0 on; at = (pos, v0); narrow: truncated to 32 bits). Compiled per value arena, with
    loops apart for dates / timestamps and for columns without nulls, so the CPU compiler keeps them tight."""
    dpos, vidx, row0 = marks
    pos, v = at
    timed = is_time(p[ST_CONV])
    if p[ST_BITMAP] < 0 and dpos < 0 and vidx < 0 and not timed:  # no nulls: no levels, value index = row
        for i in range(rows[0], rows[1]):
            x = plain_value(p, src, i)
            out[pos + v + i - rows[0]] = wrap32(x) if narrow else x
        return
    for i in range(rows[0], rows[1]):
        ok = row_valid(p, src, i)
        mark_row(lev, idx, dpos, vidx, row0 + i, ok, v)
        if ok:
            x = fixed_value(p, src, i, zones, active) if timed else plain_value(p, src, i)
            out[pos + v] = wrap32(x) if narrow else x
            v += 1


@jit
def bytes_rows(p: tuple, src: np.ndarray, rows: tuple[int, int], marks: tuple[int, int, int], lev: np.ndarray,
               idx: np.ndarray, offs: int, at: tuple[int, int], dat: np.ndarray) -> None:
    """The twin's loop over rows a..b of a string / binary piece (put_value's CV_BYTES path, inlined):
    levels, index, value offsets at idx[offs + v] and bytes from dat[d] on (at = (v0, d0))."""
    dpos, vidx, row0 = marks
    v, d = at
    for i in range(rows[0], rows[1]):
        ok = row_valid(p, src, i)
        mark_row(lev, idx, dpos, vidx, row0 + i, ok, v)
        if ok:
            idx[offs + v] = d
            x, n = byte_span(p, src, i)
            for j in range(n):
                dat[d + j] = src[x + j]
            d += n
            v += 1


@jit
def write_chunk(k: int, chunks: np.ndarray, srct: np.ndarray, src: np.ndarray, zones: np.ndarray,
                cols: np.ndarray, ranges: np.ndarray, counts: np.ndarray, errs: np.ndarray, lev: np.ndarray,
                idx: np.ndarray, v8: np.ndarray, v32: np.ndarray, v64: np.ndarray, dat: np.ndarray) -> None:
    """Launch 3 for chunk k, sequentially."""
    p = piece(srct, chunks[k, CK_PIECE])
    a = chunks[k, CK_ROW]
    b = a + chunks[k, CK_ROWS]
    c = p[ST_COL]
    kind = cols[c, CT_KIND]
    row0 = p[ST_FIRST]  # the column's row of piece row i is row0 + i
    dpos = cols[c, CT_DEF]
    vidx = cols[c, CT_VIDX]
    slots = (cols[c, CT_VALS], cols[c, CT_OFFS])
    active = errs[c, ER_MIN] < switch_of(p[ST_CONV])
    v = counts[k, CC_VBEFORE]
    d = ranges[c, R_DAT] + counts[k, CC_BBEFORE]
    # Loops apart by arena: put_value's byte paths in a fixed kind's loop cost the CPU compiler its fast loop.
    marks = (dpos, vidx, row0)
    if kind == K_BOOL:
        fixed_rows(p, src, (a, b), zones, active, marks, lev, idx, v8, (slots[0], v), False)
    elif kind == K_INT32 or kind == K_FLOAT:
        fixed_rows(p, src, (a, b), zones, active, marks, lev, idx, v32, (slots[0], v), True)
    elif slots[1] < 0:
        fixed_rows(p, src, (a, b), zones, active, marks, lev, idx, v64, (slots[0], v), False)
    elif p[ST_CONV] == CV_BYTES:
        bytes_rows(p, src, (a, b), marks, lev, idx, slots[1], (v, d), dat)
    else:
        for i in range(a, b):
            ok = row_valid(p, src, i)
            mark_row(lev, idx, dpos, vidx, row0 + i, ok, v)
            if ok:
                d = put_value(p, src, i, zones, active, kind, slots, v, d, idx, v8, v32, v64, dat, True)
                v += 1


@jit
def write_chunks(n: int, chunks: np.ndarray, srct: np.ndarray, src: np.ndarray, zones: np.ndarray,
                 cols: np.ndarray, ranges: np.ndarray, counts: np.ndarray, errs: np.ndarray, lev: np.ndarray,
                 idx: np.ndarray, v8: np.ndarray, v32: np.ndarray, v64: np.ndarray, dat: np.ndarray) -> None:
    """Twin of convert_cuda.write_chunks: levels, indexes, values and bytes of chunks 0..n."""
    for k in range(n):
        write_chunk(k, chunks, srct, src, zones, cols, ranges, counts, errs, lev, idx, v8, v32, v64, dat)
