"""How a row group's window lies in device memory: shared arenas, a column table and a page table.

Every device step runs as one launch over all columns (or all pages of all columns), so each column's data
sits in a few shared arrays ("arenas") and a column table (`cols`, int64[C, CT_COUNT]) says where; the page
planner fills a page table (`pages`, int64[P, PT_COUNT]). Positions in the tables are absolute indices into
the arenas unless a field says otherwise; -1 means "none". The same layout is used by the CUDA kernels and
by their sequential CPU twins, so a window built on the CPU and on a GPU is the same numbers.

Arenas:
  lev  uint8   levels: a column's definition levels (one per entry) at CT_DEF, repetition levels at CT_REP
  idx  int64   indexes: row -> first entry (rows + 1) at CT_ENTRY for nested columns; entry -> values before
               it (entries + 1) at CT_VBEFORE for nested columns; row -> values before it (rows + 1) at
               CT_VIDX for flat columns with nulls; value offsets (values + 1, absolute positions in `dat`)
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
 CT_VIDX,  # idx: row -> values before (-1: none needed, value index == row)
 CT_VALS,  # v8 / v32 / v64 by kind: the first value (-1 for byte kinds)
 CT_OFFS,  # idx: value offsets into dat for byte kinds (-1 for fixed kinds)
 CT_WIDTH,  # bytes per value: 1 / 4 / 8, the fixed length of FLBA, 12 for INT96, 0 for BYTE_ARRAY
 CT_PHYSICAL,  # Parquet physical type (format.enums.Type)
 CT_DECIMAL,  # 1 when the column carries a DECIMAL annotation (byte order of min / max)
 CT_DICT,  # 1 when the column starts dictionary-encoded
 CT_TAB,  # dictionary hash table (int64 `tab` arena) of the column, -1 without a dictionary
 CT_TABN,  # its size, a power of two
 CT_KEYS,  # per-value dictionary keys (int64 `keys`: fixed kinds) or hashes (uint64 `keys`, byte kinds)
 ) = range(20)
CT_COUNT = 20

# Page table fields (rows, entries and values relative to the column, as the window numbers them).
(PT_COL,  # column index
 PT_A, PT_B,  # rows a..b of the window
 PT_EA, PT_EB,  # level entries
 PT_VA, PT_VB,  # non-null values
 PT_FIRST_ROW,  # first row of the page within the row group (offset index)
 ) = range(8)
PT_COUNT = 8
