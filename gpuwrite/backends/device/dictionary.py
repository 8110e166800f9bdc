"""The dictionaries of all dictionary-encoded columns of a row group's window, built on the device in six
launches (`kernels/dictionary/row_group.py`), deterministic and in first-occurrence order.

What comes out is per value (running entries and bytes, ids) and per column (overflow value), so every
parquet-java decision — keep the dictionary on the first page, fall back where the 1 MiB cap is passed, the
width of each page's ids, the dictionary page's entries — is read off prefix sums, whatever the page cuts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuwrite.kernels.dictionary.row_group import CHUNK, NO_OVERFLOW
from gpuwrite.kernels.plan.layout import CT_DICT, CT_KEYS, CT_TAB, CT_TABN, CT_VALUES

from . import steps
from .ops import Device

MIN_TABLE = 64


def _table_size(values: int) -> int:
    """Hash table slots for a column of `values` values: a power of two, at least twice the values."""
    n = MIN_TABLE
    while n < 2 * values:
        n <<= 1
    return n


def assign_dictionary_fields(cols: np.ndarray) -> tuple[int, int]:
    """Fill CT_TAB, CT_TABN and CT_KEYS of the dictionary columns of the host column table; returns the sizes
    of the table arena and of the per-value arrays."""
    tab = keys = 0
    for c in range(cols.shape[0]):
        if not cols[c, CT_DICT]:
            cols[c, CT_TAB] = cols[c, CT_TABN] = cols[c, CT_KEYS] = -1
            continue
        n = int(cols[c, CT_VALUES])
        cols[c, CT_TAB], cols[c, CT_TABN] = tab, _table_size(n)
        cols[c, CT_KEYS] = keys
        tab += int(cols[c, CT_TABN])
        keys += n + 1
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
    """Per value of the dictionary columns (at CT_KEYS + value): ids, entries and bytes once inserted; per
    entry (at CT_KEYS + entry): its first value; per column: the overflow value (NO_OVERFLOW when none)."""

    ids: Any
    ecum: Any
    bcum: Any
    efirst: Any
    overflow: Any
    columns: np.ndarray  # the dictionary columns

    @property
    def empty(self) -> bool:
        """Whether no column is dictionary-encoded."""
        return len(self.columns) == 0


def build_dictionary(device: Device, cols: np.ndarray, dev_cols: Any, arenas: Any, limit: int) -> DeviceDictionary:
    """Every dictionary column's entries, numbered; `cols` (host) must hold the fields set by
    `assign_dictionary_fields`, `dev_cols` is its device copy, `arenas` the window's arenas (v32, v64, idx, dat)."""
    overflow = device.full(cols.shape[0], int(NO_OVERFLOW), np.int64)
    chunks, col_chunks, dcols = chunk_table(cols)
    if len(dcols) == 0:
        nothing = device.empty(1, np.int64)
        return DeviceDictionary(nothing, nothing, nothing, nothing, overflow, dcols)
    used = cols[dcols]
    nkeys = int((used[:, CT_KEYS] + used[:, CT_VALUES] + 1).max())
    d_chunks, d_col_chunks = device.upload(chunks), device.upload(col_chunks)
    keys = device.empty(nkeys, np.int64)
    slot = device.empty(nkeys, np.int64)
    tab = device.full(int((used[:, CT_TAB] + used[:, CT_TABN]).max()), -1, np.int64)
    k = len(chunks)
    device.launch(steps.DICT_KEYS, k, d_chunks, dev_cols, arenas.v32, arenas.v64, arenas.idx, arenas.dat, keys)
    device.launch(steps.DICT_INSERT, k, d_chunks, dev_cols, keys, arenas.idx, arenas.dat, tab, slot)
    first = device.empty(nkeys, np.int64)
    totals = device.empty(2 * k, np.int64).reshape(k, 2)
    device.launch(steps.DICT_FIRST, k, d_chunks, dev_cols, arenas.idx, tab, slot, first, totals)
    bases = device.empty(2 * k, np.int64).reshape(k, 2)
    device.launch(steps.DICT_BASES, len(dcols), d_col_chunks, totals, bases)
    # keys and slots are dead once the first occurrences are known: their arrays take the ranks and entries
    rank, efirst = keys, slot
    ecum, bcum = device.empty(nkeys, np.int64), device.empty(nkeys, np.int64)
    device.launch(steps.DICT_NUMBER, k, d_chunks, dev_cols, arenas.idx, limit, bases, first, rank, ecum, bcum,
                  efirst, overflow)
    ids = device.empty(nkeys, np.int32)
    device.launch(steps.DICT_IDS, k, d_chunks, dev_cols, first, rank, ids)
    return DeviceDictionary(ids, ecum, bcum, efirst, overflow, dcols)
