"""A row group's window on the device: the arenas and the column table of `kernels/plan/layout.py`.

`window_from_leafdata` lays out columns already converted on the host (`columns.leaf_data`): nested columns,
and tests. Flat columns are converted on the device straight from their Arrow buffers (`convert.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gpuwrite.kernels.plan.layout import (
    CT_COUNT,
    CT_DECIMAL,
    CT_DEF,
    CT_DEFW,
    CT_DICT,
    CT_ENTRIES,
    CT_ENTRY,
    CT_KIND,
    CT_OFFS,
    CT_PHYSICAL,
    CT_REP,
    CT_REPW,
    CT_ROWS,
    CT_VALS,
    CT_VALUES,
    CT_VBEFORE,
    CT_VIDX,
    CT_WIDTH,
    K_BOOL,
    K_DOUBLE,
    K_FLOAT,
    K_INT32,
    K_INT64,
    KIND_CODES,
)

from ...encode.stats import level_histogram, repetition_histogram
from ...options.model import WriteOptions
from ...pipeline.leafdata import LeafData
from ...schema import Leaf
from .convert import value_index
from .dictionary import assign_dictionary_fields
from .ops import Device

_ARENA_OF_KIND = {K_BOOL: "v8", K_INT32: "v32", K_FLOAT: "v32", K_INT64: "v64", K_DOUBLE: "v64"}
_DTYPES = {"lev": np.uint8, "idx": np.int64, "v8": np.uint8, "v32": np.int32, "v64": np.int64, "dat": np.uint8}


@dataclass
class Arenas:
    """The window's shared device arrays (see kernels/plan/layout.py)."""

    lev: Any
    idx: Any
    v8: Any
    v32: Any
    v64: Any
    dat: Any


@dataclass
class DeviceWindow:
    """Rows 0..rows of the open row group on the device: column table (host and device copies) and arenas."""

    cols: np.ndarray
    dev_cols: Any
    arenas: Arenas
    rows: int
    ones: int  # lev position of `rows` + 1 bytes holding 1: the levels of optional flat columns without nulls
    host: dict[int, LeafData] | None = None  # columns laid out from host data (nested columns)
    errs: Any = None  # device int64[C, ER_COUNT]: the conversion's refusals, read with the planner's first sync
    converted: Any = None  # the conversion's own window (its error messages, its inputs kept alive)
    bad: Any = None  # device int64[K, 2]: the value checks' first failing row per chunk (checks.py), or None

    def host_side(self) -> DeviceWindow:
        """This window without its device arrays (the column table and host-converted columns only): what the
        row group's deferred write reads, so the arenas are freed before the next window is built."""
        return replace(self, dev_cols=None, arenas=Arenas(None, None, None, None, None, None), errs=None,
                       converted=None, bad=None)

    def histograms(self, leaf: Leaf, span: Any, column: int) -> tuple[list[int] | None, list[int] | None]:
        """SizeStatistics level histograms of a page of `column` (repetition when its max level > 0, definition
        when > 1)."""
        if leaf.max_rep == 0 and leaf.max_def <= 1:
            return None, None
        assert self.host is not None and column in self.host, "nested columns are laid out from host data"
        data = self.host[column]
        rep = def_ = None
        if leaf.max_rep > 0:
            assert data.rep is not None
            rep = repetition_histogram(data.rep, span.ea, span.eb, span.num_rows, leaf.max_rep)
        if leaf.max_def > 1:
            def_ = level_histogram(data.def_levels, span.ea, span.eb, leaf.max_def)
        return rep, def_


def base_columns(leaves: Sequence[Leaf], opts: WriteOptions, rows: int) -> np.ndarray:
    """The column table with what the schema and options say (kinds, widths, dictionary use); positions -1."""
    cols = np.full((len(leaves), CT_COUNT), -1, dtype=np.int64)
    for c, leaf in enumerate(leaves):
        cols[c, CT_KIND] = KIND_CODES[leaf.kind]
        cols[c, CT_ROWS] = rows
        cols[c, CT_DEFW] = leaf.def_width
        cols[c, CT_REPW] = leaf.rep_width
        cols[c, CT_WIDTH] = {"bool": 1, "int32": 4, "float": 4, "int64": 8, "double": 8, "int96": 12,
                             "flba": leaf.type_length, "bytes": 0}[leaf.kind]
        cols[c, CT_PHYSICAL] = int(leaf.physical)
        cols[c, CT_DECIMAL] = int(leaf.is_decimal)
        cols[c, CT_DICT] = int(opts.dictionary_enabled(leaf.dotted) and leaf.kind != "bool")
    return cols


class _Parts:
    """Host arrays placed back to back (8-aligned) into one arena; positions returned as they are added."""

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype
        self.parts: list[np.ndarray] = []
        self.size = 0

    def put(self, arr: np.ndarray) -> int:
        pos = self.size
        self.parts.append(np.asarray(arr).astype(self.dtype, copy=False))
        self.size += -(-len(arr) // 8) * 8
        return pos

    def join(self) -> np.ndarray:
        out = np.zeros(self.size + 8, dtype=self.dtype)
        pos = 0
        for p in self.parts:
            out[pos:pos + len(p)] = p
            pos += -(-len(p) // 8) * 8
        return out


def window_from_leafdata(device: Device, leaves: Sequence[Leaf], datas: Sequence[LeafData],
                         opts: WriteOptions) -> DeviceWindow:
    """Lay out host-converted columns in arenas on the device (one upload per arena)."""
    rows = datas[0].num_rows if datas else 0
    cols = base_columns(leaves, opts, rows)
    parts = {name: _Parts(dtype) for name, dtype in _DTYPES.items()}
    for c, (leaf, data) in enumerate(zip(leaves, datas, strict=True)):
        cols[c, CT_ENTRIES] = data.num_entries
        cols[c, CT_VALUES] = data.num_values
        if data.nested:
            assert data.row_entry is not None and data.values_before is not None and data.dfn is not None
            cols[c, CT_ENTRY] = parts["idx"].put(data.row_entry)
            cols[c, CT_VBEFORE] = parts["idx"].put(data.values_before)
            cols[c, CT_DEF] = parts["lev"].put(data.dfn)
            if data.rep is not None:
                cols[c, CT_REP] = parts["lev"].put(data.rep)
        elif data.valid is not None:
            cols[c, CT_DEF] = parts["lev"].put(data.valid.view(np.uint8))
            cols[c, CT_VIDX] = parts["idx"].put(value_index(data.valid))
        if leaf.fixed_width:
            values = data.value_array
            if leaf.kind in ("float", "double"):
                values = values.view(np.int32 if leaf.kind == "float" else np.int64)
            cols[c, CT_VALS] = parts[_ARENA_OF_KIND[int(cols[c, CT_KIND])]].put(values)
        else:
            base = parts["dat"].put(data.byte_data[data.byte_offsets[0]:data.byte_offsets[-1]])
            cols[c, CT_OFFS] = parts["idx"].put(data.byte_offsets - data.byte_offsets[0] + base)
    ones = parts["lev"].put(np.ones(rows + 1, dtype=np.uint8))
    assign_dictionary_fields(cols, opts.dictionary_page_size)
    arenas = Arenas(**{name: device.upload(p.join()) for name, p in parts.items()})
    return DeviceWindow(cols, device.upload(cols), arenas, rows, ones, dict(enumerate(datas)))


def window_on_device(device: Device, table: Any, leaves: Sequence[Leaf], opts: WriteOptions) -> DeviceWindow:
    """The window's Arrow rows converted on the device (`convert.build_window`: its buffers copied as they
    are, three launches), with the dictionary columns of the options."""
    from .convert import build_window

    built = build_window(device, table, leaves, opts)
    cols = built.cols.copy()
    for c, leaf in enumerate(leaves):
        cols[c, CT_DICT] = int(opts.dictionary_enabled(leaf.dotted) and leaf.kind != "bool")
    assign_dictionary_fields(cols, opts.dictionary_page_size)
    a = built.arenas
    arenas = Arenas(a["lev"], a["idx"], a["v8"], a["v32"], a["v64"], a["dat"])
    return DeviceWindow(cols, device.upload(cols), arenas, built.rows, built.ones, built.host, built.errs, built)
