"""The dictionaries of all dictionary-encoded columns of a row group's window, built on the device in five
launches (`kernels/dictionary/row_group.py`), deterministic and in first-occurrence order.

What comes out is per value (ids), per entry (its first value, the dictionary bytes once it is in) and per
column (overflow value), so every parquet-java decision — keep the dictionary on the first page, fall back where
the 1 MiB cap is passed, the width of each page's ids, the dictionary page's entries — is read off them,
whatever the page cuts.

Device memory: the scratch is 10 bytes per value at most (a table of 4-byte slots at 1.5 per value, a 4-byte
slot per value), freed before the next step's arrays are taken; what stays is a 4-byte id per value and, per
column, the entries its dictionary can hold before it passes the byte limit (`entry_room`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuwrite.kernels.dictionary.row_group import CHUNK, NO_OVERFLOW, fixed_entry_size
from gpuwrite.kernels.plan.layout import (
    CT_DICT,
    CT_ENT,
    CT_ENTB,
    CT_ENTN,
    CT_KEYS,
    CT_KIND,
    CT_PHYSICAL,
    CT_TAB,
    CT_TABN,
    CT_VALUES,
    CT_WIDTH,
    K_DOUBLE,
    K_FLOAT,
    K_INT32,
    K_INT64,
)

from ...errors import GpuwriteError
from . import steps
from .ops import Device

MIN_TABLE = 64
BYTE_ARRAY_TYPE = 6  # parquet Type.BYTE_ARRAY
MAX_INDEX = 2**31 - 1  # value indexes are int32 on the device


def _table_size(values: int) -> int:
    """Hash table slots for a column of `values` values: 1.5 per value (a load of at most 2/3 even when every
    value is distinct; any size, `home_slot` scales the hash to it)."""
    return max(MIN_TABLE, values + values // 2)


def smallest_entry(kind: int, physical: int, width: int) -> int:
    """The fewest bytes parquet-java accounts for one dictionary entry of a column (SPEC: DictionaryValuesWriter:
    4 / 8 for fixed widths, length + 4 for BYTE_ARRAY, the length for FIXED_LEN_BYTE_ARRAY and INT96)."""
    if kind in (K_INT32, K_FLOAT):
        return 4
    if kind in (K_INT64, K_DOUBLE):
        return 8
    if physical == BYTE_ARRAY_TYPE:
        return 4
    return max(1, width)


def entry_room(values: int, limit: int, smallest: int) -> int:
    """Entries a column's dictionary can hold that a page may use: those within `limit` bytes and the one that
    passes it (a page whose values reach that entry falls back), never more than the values."""
    return min(values, max(0, limit) // smallest + 1)


def assign_dictionary_fields(cols: np.ndarray, limit: int) -> tuple[int, int]:
    """Fill CT_TAB, CT_TABN, CT_KEYS, CT_ENT, CT_ENTN and CT_ENTB of the dictionary columns of the host column
    table (`limit`: the dictionary's byte limit); returns the sizes of the table arena and of the per-value
    arrays. Entry bytes are kept only where entries differ in size (BYTE_ARRAY: `fixed_entry_size`)."""
    tab = keys = ent = entb = 0
    for c in range(cols.shape[0]):
        if not cols[c, CT_DICT]:
            cols[c, [CT_TAB, CT_TABN, CT_KEYS, CT_ENT, CT_ENTN, CT_ENTB]] = -1
            continue
        n = int(cols[c, CT_VALUES])
        cols[c, CT_TAB], cols[c, CT_TABN] = tab, _table_size(n)
        cols[c, CT_KEYS] = keys
        cols[c, CT_ENT] = ent
        cols[c, CT_ENTN] = entry_room(n, limit, smallest_entry(int(cols[c, CT_KIND]), int(cols[c, CT_PHYSICAL]),
                                                               int(cols[c, CT_WIDTH])))
        cols[c, CT_ENTB] = entb if fixed_entry_size(cols, c) == 0 else -1
        tab += int(cols[c, CT_TABN])
        keys += n + 1
        ent += int(cols[c, CT_ENTN]) + 1
        if cols[c, CT_ENTB] >= 0:
            entb += int(cols[c, CT_ENTN]) + 1
    return tab, keys


def chunk_table(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chunks int64[K, 3] of (column, first value, values), col_chunks int64[D, 2] of (first chunk, chunks),
    dictionary columns int64[D]): the work split of the dictionary launches."""
    dcols = np.flatnonzero(cols[:, CT_DICT] != 0).astype(np.int64)
    n = cols[dcols, CT_VALUES].astype(np.int64)
    per = -(-n // CHUNK)  # chunks per column
    first = np.zeros(len(dcols), dtype=np.int64)
    np.cumsum(per[:-1], out=first[1:])
    col = np.repeat(dcols, per)
    start = (np.arange(int(per.sum()), dtype=np.int64) - np.repeat(first, per)) * CHUNK
    count = np.minimum(CHUNK, np.repeat(n, per) - start)
    return np.stack([col, start, count], axis=1), np.stack([first, per], axis=1), dcols


@dataclass
class DeviceDictionary:
    """Per value of the dictionary columns (int32 at CT_KEYS + value): ids; per entry (at CT_ENT + entry, the
    first CT_ENTN entries): its first value (`efirst`, int32, ascending; MAX_INDEX past the last entry) and, for
    BYTE_ARRAY columns (at CT_ENTB + entry), the dictionary bytes once it is in (`ebytes`: int32 under a limit below 2**31, exact for every entry within the
    limit, the only ones read); per column: the overflow value (NO_OVERFLOW when none)."""

    ids: Any
    efirst: Any
    ebytes: Any
    overflow: Any
    columns: np.ndarray  # the dictionary columns

    @property
    def empty(self) -> bool:
        """Whether no column is dictionary-encoded."""
        return len(self.columns) == 0


def build_dictionary(device: Device, cols: np.ndarray, dev_cols: Any, arenas: Any, limit: int) -> DeviceDictionary:
    """Every dictionary column's entries, numbered; `cols` (host) must hold the fields set by
    `assign_dictionary_fields` with the same `limit`, `dev_cols` is its device copy, `arenas` the window's
    arenas (v32, v64, idx, dat). Each scratch array is dropped as soon as its last reader is launched (CuPy
    frees in stream order), so the table and the slots are never held beside the ranks."""
    overflow = device.full(cols.shape[0], int(NO_OVERFLOW), np.int64)
    chunks, col_chunks, dcols = chunk_table(cols)
    if len(dcols) == 0:
        return DeviceDictionary(device.empty(1, np.int32), device.empty(1, np.int32), device.empty(1, np.int32),
                                overflow, dcols)
    used = cols[dcols]
    if int(used[:, CT_VALUES].max()) >= MAX_INDEX:
        raise GpuwriteError(f"a row group's column holds {int(used[:, CT_VALUES].max()):,} values; the GPU "
                            f"backend's dictionaries take at most {MAX_INDEX - 1:,} per column: use smaller row groups")
    nkeys = int((used[:, CT_KEYS] + used[:, CT_VALUES] + 1).max())
    nent = int((used[:, CT_ENT] + used[:, CT_ENTN] + 1).max())
    sized = used[used[:, CT_ENTB] >= 0]
    nentb = int((sized[:, CT_ENTB] + sized[:, CT_ENTN] + 1).max()) if len(sized) else 1
    d_chunks, d_col_chunks = device.upload(chunks), device.upload(col_chunks)
    k = len(chunks)
    slot = device.empty(nkeys, np.int32)
    tab = device.full(int((used[:, CT_TAB] + used[:, CT_TABN]).max()), -1, np.int32)
    device.launch(steps.DICT_INSERT, k, d_chunks, dev_cols, arenas.v32, arenas.v64, arenas.idx, arenas.dat, tab,
                  slot)
    totals = device.empty(2 * k, np.int64).reshape(k, 2)
    first = slot  # each value's slot becomes its first occurrence, in place
    device.launch(steps.DICT_FIRST, k, d_chunks, dev_cols, arenas.idx, tab, slot, first, totals)
    del tab, slot
    bases = device.empty(2 * k, np.int64).reshape(k, 2)
    device.launch(steps.DICT_BASES, len(dcols), d_col_chunks, totals, bases)
    rank = device.empty(nkeys, np.int32)
    efirst = device.full(nent, MAX_INDEX, np.int32)  # past the last entry: above every value index
    ebytes = device.empty(nentb, np.int32 if limit < MAX_INDEX else np.int64)
    device.launch(steps.DICT_NUMBER, k, d_chunks, dev_cols, arenas.idx, limit, bases, first, rank, efirst, ebytes,
                  overflow)
    ids = first  # each value's first occurrence becomes its id, in place
    device.launch(steps.DICT_IDS, k, d_chunks, dev_cols, first, rank, ids)
    return DeviceDictionary(ids, efirst, ebytes, overflow, dcols)
