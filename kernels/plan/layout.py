"""How a row group's window lies in device memory: shared arenas, a column table and a page table.

Every device step runs as one launch over all columns (or all pages of all columns), so each column's data
sits in a few shared arrays ("arenas") and a column table (`cols`, int64[C, CT_COUNT]) says where; the page
planner fills a page table (`pages`, int64[P, PT_COUNT]). Positions in the tables are absolute indices into
the arenas unless a field says otherwise; -1 means "none". The same layout is used by the CUDA kernels and
by their sequential CPU twins, so a window built on the CPU and on a GPU is the same numbers.

Arenas:
  lev  uint8   levels: a column's definition levels (one per entry) at CT_DEF, repetition levels at CT_REP
  idx  int64   indexes: row -> first entry (rows + 1) at CT_ENTRY for nested columns; entry -> values before
               it (entries + 1) at CT_VBEFORE for nested columns; the value index of flat columns with
               nulls at CT_VIDX: for each 64 rows (rows // 64 + 1 groups) two words, the values before
               them and a mask of those that have one (bit j: row 64 g + j), so the values before row r
               are word 2 (r >> 6) + popcount(word 2 (r >> 6) + 1 below bit r & 63): 1/32 of a word a row
               (`convert.value_index` on the host); value offsets (values + 1, absolute positions in `dat`)
               at CT_OFFS for byte kinds
  v8   uint8   K_BOOL values (0 / 1), compacted (nulls removed), at CT_VALS
  v32  int32   K_INT32 values, K_FLOAT values as IEEE bits, compacted, at CT_VALS
  v64  int64   K_INT64 values, K_DOUBLE values as IEEE bits, compacted, at CT_VALS
  dat  uint8   K_BYTES / K_FLBA / K_INT96 value bytes, compacted (offsets at CT_OFFS)
"""

from __future__ import annotations

# Value kinds on the device (schema.Leaf.kind): the arena a column's values live in.
K_BOOL, K_INT32, K_INT64, K_FLOAT, K_DOUBLE, K_BYTES, K_FLBA, K_INT96 = range(8)
KIND_CODES = {"bool": K_BOOL, "int32": K_INT32, "int64": K_INT64, "float": K_FLOAT, "double": K_DOUBLE,
              "bytes": K_BYTES, "flba": K_FLBA, "int96": K_INT96}

# Column table fields.
(CT_KIND,  # K_* code
 CT_ROWS,  # rows of the window
 CT_ENTRIES,  # level entries (rows for a flat column)
 CT_VALUES,  # non-null values
 CT_DEFW,  # bit width of definition levels (0: none written)
 CT_REPW,  # bit width of repetition levels (0: none)
 CT_DEF,  # lev: definition levels (-1: a flat column without nulls, every level is max)
 CT_REP,  # lev: repetition levels (-1: none)
 CT_ENTRY,  # idx: row -> first entry (-1: one entry per row)
 CT_VBEFORE,  # idx: entry -> values before (-1: flat column)
 CT_VIDX,  # idx: the value index, per 64 rows values before and a mask (-1: none needed, value index == row)
 CT_VALS,  # v8 / v32 / v64 by kind: the first value (-1 for byte kinds)
 CT_OFFS,  # idx: value offsets into dat for byte kinds (-1 for fixed kinds)
 CT_WIDTH,  # bytes per value: 1 / 4 / 8, the fixed length of FLBA, 12 for INT96, 0 for BYTE_ARRAY
 CT_PHYSICAL,  # Parquet physical type (format.enums.Type)
 CT_DECIMAL,  # 1 when the column carries a DECIMAL annotation (byte order of min / max)
 CT_DICT,  # 1 when the column starts dictionary-encoded
 CT_TAB,  # dictionary hash table (int32 `tab` arena: 4-byte slots holding value indexes), -1 without one
 CT_TABN,  # its size in slots
 CT_KEYS,  # per-value dictionary arrays (int32: slots, first occurrences, ranks, ids) of the column
 CT_ENT,  # per-entry dictionary arrays (each entry's first value, dictionary bytes once it is in)
 CT_ENTN,  # their room: the entries a dictionary can hold before it passes its byte limit, plus one
 CT_ENTB,  # dictionary bytes per entry (`ebytes`), kept only where entries differ in size (BYTE_ARRAY); else -1
 ) = range(23)
CT_COUNT = 23

# Page table fields (rows, entries and values relative to the column, as the window numbers them).
(PT_COL,  # column index
 PT_A, PT_B,  # rows a..b of the window
 PT_EA, PT_EB,  # level entries
 PT_VA, PT_VB,  # non-null values
 PT_FIRST_ROW,  # first row of the page within the row group (offset index)
 ) = range(8)
PT_COUNT = 8

# -- Source table: a window's Arrow buffers on the device, before conversion ---------------------------------
#
# The window's raw Arrow buffers lie in ONE uint8 arena `src`, each at an 8-byte-aligned byte position, as
# Arrow holds them (only the bytes of the window's rows are copied: a piece's values start at its first row,
# its bitmaps keep a bit offset 0..7). The source table `srct` (int64[S, ST_COUNT]) has one row per piece: a
# contiguous run of one flat column's rows held in one Arrow array (a chunked column gives several pieces, in
# row order). The conversion (kernels/convert/arenas.py) writes the column's levels, indexes and values into the
# arenas above; per-column conversion errors come back in `errs` (int64[C, ER_COUNT]).

# Arrow type codes (ST_TYPE).
(A_BOOL, A_INT8, A_INT16, A_INT32, A_INT64, A_FLOAT, A_DOUBLE, A_DATE32, A_TIMESTAMP, A_DECIMAL128,
 A_DECIMAL256, A_BINARY, A_LARGE_BINARY, A_DECIMAL32, A_DECIMAL64) = range(15)

# Conversions (ST_CONV): what becomes of a present value.
(CV_BOOL,  # a bit of the values bitmap -> v8 0 / 1
 CV_INT,  # a little-endian signed integer (or IEEE bits) of ST_WIDTH bytes -> v32 / v64 as is
 CV_DATE,  # int32 days -> v32, rebased per ST_REBASE
 CV_MICROS,  # int64 timestamp of unit ST_UNIT -> v64 micros, rebased per ST_REBASE
 CV_MILLIS,  # as CV_MICROS, then floor-divided by 1000
 CV_INT96,  # as CV_MICROS, then 12 bytes (nanos of day, Julian day) into dat
 CV_DECIMAL,  # decimal128 / decimal256: the low 64-bit word -> v32 (truncated) / v64
 CV_FLBA,  # decimal128 / decimal256: ST_OUTW big-endian two's-complement bytes into dat
 CV_BYTES,  # string / binary: offsets of ST_WIDTH bytes, data -> value offsets in idx, bytes in dat
 ) = range(9)

# Calendar rebase modes (ST_REBASE) and session zone kinds (ST_ZONE).
RB_CORRECTED, RB_LEGACY, RB_EXCEPTION = range(3)
ZK_FIXED, ZK_REGION, ZK_UNKNOWN = range(3)  # fixed offset ST_OFFSET; tzdb table `zones`; unknown zone id

# Source table fields.
(ST_COL,  # column (row of `cols`)
 ST_FIRST,  # first row of the piece within the column's window
 ST_ROWS,  # rows of the piece
 ST_TYPE,  # A_* Arrow type code
 ST_CONV,  # CV_* conversion
 ST_BITMAP,  # src: validity bitmap (-1: no nulls in the piece)
 ST_BITOFF,  # its bit offset (0..7) for the piece's first row
 ST_VALUES,  # src: values of the piece's first row (the values bitmap for A_BOOL; -1 for byte types)
 ST_VBITOFF,  # A_BOOL: bit offset of the first value in the values bitmap
 ST_WIDTH,  # bytes per source value (1, 2, 4, 8, 16, 32); for byte types the offset width (4 or 8)
 ST_OFFSETS,  # src: the piece's rows + 1 offsets (-1 for fixed types)
 ST_OFF0,  # the value of its first offset: data positions are ST_DATA + offset - ST_OFF0
 ST_DATA,  # src: the piece's data bytes (-1 for fixed types)
 ST_UNIT,  # timestamps: micros per unit (1, 1000, 1000000), or -1000 for nanoseconds
 ST_OUTW,  # bytes per value in dat (CV_FLBA: the leaf's type length, CV_INT96: 12), else 0
 ST_REBASE,  # RB_* rebase mode (RB_CORRECTED for values never rebased)
 ST_ZONE,  # ZK_* session zone kind
 ST_OFFSET,  # ZK_FIXED: the zone's offset; ZK_REGION: its raw offset now (java.util.TimeZone), in micros
 ) = range(18)
ST_COUNT = 18

# Per-column results of the conversion (`errs`), read by the host after the launches.
(ER_FLAGS,  # E_* bits
 ER_MIN,  # smallest present date (days) or timestamp (micros before rebase); int64 max when none
 ER_FIRST,  # the first present value (row order) before the calendar switch, when ER_MIN is before it
 ER_VALUES,  # present values
 ER_BYTES,  # value bytes written into dat (byte kinds)
 ) = range(5)
ER_COUNT = 5
E_NS_LOSS = 1  # a timestamp[ns] value with a sub-microsecond part
E_RANGE = 2  # a timestamp[s|ms] value beyond the microsecond range
E_BEFORE_SWITCH = 4  # EXCEPTION rebase mode and a value before the calendar switch
E_ZONE = 8  # LEGACY rebase of a value before the switch in an unknown session time zone
