"""A window of Arrow rows -> the device arenas and column table (kernels/plan/layout.py), converted on the device.

`build_window` copies each flat column's raw Arrow buffers once into one `src` arena (`sources.py`), builds the
source, chunk and column tables on the host from Arrow metadata (row counts, null counts, two offsets per
string piece), uploads them in one copy and runs three launches over all columns (kernels/convert/arenas.py): count,
scan, write. Nested leaves are converted on the host (`columns.leaf_data`) and their arrays uploaded into the
same arenas. Nothing waits for the device: `check_window` (one sync) raises the CPU path's error for a value
the conversion refuses; `window_as_leafdata` rebuilds LeafData from the arenas (tests, host-side steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from gpuwrite.kernels.convert import arenas as K
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
    CT_TABN,
    CT_VALS,
    CT_VALUES,
    CT_VBEFORE,
    CT_VIDX,
    CT_WIDTH,
    CV_BYTES,
    E_BEFORE_SWITCH,
    E_NS_LOSS,
    E_RANGE,
    E_ZONE,
    ER_COUNT,
    ER_FIRST,
    ER_FLAGS,
    K_BOOL,
    K_DOUBLE,
    K_FLOAT,
    K_INT32,
    KIND_CODES,
    ST_COL,
    ST_ROWS,
)

from ...errors import GpuwriteError
from ...integrations.device_data import DeviceColumn, DeviceTable
from ...options.model import WriteOptions
from ...pipeline.columns import leaf_data, micros_range_error, ns_loss_error
from ...pipeline.leafdata import LeafData
from ...pipeline.rebase import RebaseOptions, date_switch_error, timestamp_switch_error, unknown_zone_error
from ...schema import Leaf
from .ops import THREADS, Device, Kernel
from .serial_steps import block_runs_steps, block_steps, ceil_div, log2_threads
from .sources import Sources, conversion, device_readable, flat_chunks, prepare_device, source_type

ARENAS = ("lev", "idx", "v8", "v32", "v64", "dat")
_DTYPES = {"lev": np.uint8, "idx": np.int64, "v8": np.uint8, "v32": np.int32, "v64": np.int64, "dat": np.uint8}
_VALUE_ARENA = {K_BOOL: "v8", K_INT32: "v32", K_FLOAT: "v32"}  # the rest: v64
_WIDTH = {"bool": 1, "int32": 4, "float": 4, "int64": 8, "double": 8, "int96": 12, "bytes": 0}


def _convert_cuda() -> Any:
    from gpuwrite.kernels.convert import arenas_cuda as convert_cuda

    return convert_cuda


def _count_serial(items: int, *args: Any) -> int:
    """Each thread counts its share of a chunk's rows (at most CHUNK_ROWS), then thread 0 folds the T shares."""
    return block_steps(K.CHUNK_ROWS) + THREADS


COUNT = Kernel("convert_count", cuda=lambda: _convert_cuda().count_chunks, twin=K.count_chunks,
               serial=_count_serial)


def _scan_serial(items: int, ranges: Any, chunks: Any, *args: Any) -> int:
    """A block per column: each thread a run of the column's chunks, three block scans/reductions over the runs
    (all chunks counted: an upper bound)."""
    return block_runs_steps(len(chunks), 3)


SCAN = Kernel("convert_scan", cuda=lambda: _convert_cuda().scan_columns_block, twin=K.scan_columns,
              serial=_scan_serial)


def _write_serial(items: int, *args: Any) -> int:
    """A block walks its chunk in tiles of T rows, a block scan each (log2 T), then copies the tile's string
    bytes (the even share of `dat` per chunk, T bytes a step)."""
    tiles = block_steps(K.CHUNK_ROWS)
    dat = args[-1]
    return tiles * (2 + log2_threads()) + block_steps(ceil_div(dat.nbytes, max(1, items)))


WRITE = Kernel("convert_write", cuda=lambda: _convert_cuda().write_chunks, twin=K.write_chunks,
               serial=_write_serial)


@dataclass
class DeviceWindow:
    """A window's columns on the device: the column table (host and device), the arenas, the per-column
    conversion results `errs` (int64[C, ER_COUNT], device; see check_window) and what the launches read."""

    leaves: tuple[Leaf, ...]
    rows: int
    cols: np.ndarray  # int64[C, CT_COUNT], host
    cols_dev: Any
    arenas: dict[str, Any]  # lev, idx, v8, v32, v64, dat (at least one element each)
    sizes: dict[str, int]  # elements of each arena in use
    dat_base: np.ndarray  # int64[C]: a byte kind's first byte in dat (8-aligned; -1 for fixed kinds). A string
    # column's region spans its Arrow data bytes, null slots' included; its values end at idx[CT_OFFS + values]
    errs: Any  # int64[C, ER_COUNT], device: filled for the columns converted on the device (no flags for the rest)
    time_zone: str  # the session time zone (error messages)
    host_errors: list[tuple[int, GpuwriteError]] = field(default_factory=list)  # found while planning
    inputs: dict[str, Any] = field(default_factory=dict)  # src and the tables: keep until the launches end
    ones: int = -1  # lev position of rows + 1 ones
    host: dict[int, LeafData] = field(default_factory=dict)  # columns converted on the host


class _Plan:
    """Arena positions, the column table and the copies of one window, filled column by column."""

    def __init__(self, leaves: Sequence[Leaf], rebase: RebaseOptions, check: bool = True) -> None:
        self.rebase = rebase
        self.sizes = dict.fromkeys(ARENAS, 0)
        self.cols = np.full((len(leaves), CT_COUNT), -1, dtype=np.int64)
        self.dat = np.full(len(leaves), -1, dtype=np.int64)  # R_DAT per column
        self.sources = Sources(rebase, check)
        self.uploads: list[tuple[str, int, np.ndarray]] = []  # host arrays of nested leaves
        self.errors: list[tuple[int, GpuwriteError]] = []
        self.host: dict[int, LeafData] = {}  # columns converted on the host
        self.vidx = 0  # idx words of the value indexes written on the device (a region after the rest, zeroed)

    def take(self, arena: str, n: int) -> int:
        """Reserve n elements of an arena (8-byte-aligned in dat)."""
        pos = self.sizes[arena]
        if arena == "dat":
            pos = (pos + 7) & ~7
        self.sizes[arena] = pos + n
        return pos

    def column(self, c: int, leaf: Leaf, column: pa.ChunkedArray | pa.Array) -> None:
        """Plan column c: the device way when it is flat and of a type the device reads, else on the host."""
        row = self.cols[c]
        row[CT_KIND], row[CT_PHYSICAL] = KIND_CODES[leaf.kind], leaf.physical
        row[CT_DECIMAL], row[CT_DICT], row[CT_TABN] = int(leaf.is_decimal), 0, 0
        row[CT_WIDTH] = leaf.type_length if leaf.kind == "flba" else _WIDTH[leaf.kind]
        row[CT_DEFW], row[CT_REPW] = leaf.def_width, leaf.rep_width
        row[CT_ROWS] = row[CT_ENTRIES] = row[CT_VALUES] = 0
        try:
            chunks = None if leaf.nested else flat_chunks(column, leaf)
            conv = None if chunks is None else conversion(leaf, leaf.arrow_type if not chunks else chunks[0].type)
            if chunks is None or conv is None or any(source_type(a.type) is None for a in chunks):
                self.host_column(c, leaf_data(column, leaf, self.rebase))
            else:
                self.flat_column(c, leaf, chunks, conv)
        except GpuwriteError as err:  # raised in column order with the device's errors (check_window)
            self.errors.append((c, err))

    def flat_column(self, c: int, leaf: Leaf, chunks: list[pa.Array], conv: int) -> None:
        """A flat column converted on the device."""
        span = self.sources.add_column(c, leaf, chunks, conv)
        rows = sum(len(a) for a in chunks)
        values = rows - sum(a.null_count for a in chunks)
        row = self.cols[c]
        row[CT_ROWS], row[CT_ENTRIES], row[CT_VALUES] = rows, rows, values
        if values < rows:
            row[CT_DEF] = self.take("lev", rows)
            row[CT_VIDX] = self.vidx  # within the region: placed by `place_value_indexes`
            self.vidx += value_index_words(rows)
        if leaf.fixed_width:
            row[CT_VALS] = self.take(_VALUE_ARENA.get(int(row[CT_KIND]), "v64"), values)
        else:
            row[CT_OFFS] = self.take("idx", values + 1)
            self.dat[c] = self.take("dat", span if conv == CV_BYTES else values * int(row[CT_WIDTH]))

    def host_column(self, c: int, data: LeafData) -> None:
        """A column converted on the host (nested leaves, Arrow types the device does not read)."""
        self.host[c] = data
        row = self.cols[c]
        row[CT_ROWS], row[CT_ENTRIES], row[CT_VALUES] = data.num_rows, data.num_entries, data.num_values
        if data.nested:
            row[CT_DEF] = self._put("lev", data.def_levels)
            if data.rep is not None:
                row[CT_REP] = self._put("lev", data.rep)
            assert data.row_entry is not None and data.values_before is not None
            row[CT_ENTRY] = self._put("idx", data.row_entry)
            row[CT_VBEFORE] = self._put("idx", data.values_before)
        elif data.valid is not None:
            row[CT_DEF] = self._put("lev", data.valid.view(np.uint8))
            row[CT_VIDX] = self._put("idx", value_index(data.valid))
        if data.values is not None:
            values = data.values
            if values.dtype.kind == "f":
                values = values.view(np.int32 if values.itemsize == 4 else np.int64)
            row[CT_VALS] = self._put(_VALUE_ARENA.get(int(row[CT_KIND]), "v64"), values)
        else:
            offsets = data.byte_offsets
            first, last = int(offsets[0]), int(offsets[-1])
            self.dat[c] = self._put("dat", data.byte_data[first:last])
            row[CT_OFFS] = self._put("idx", offsets - first + self.dat[c])

    def place_value_indexes(self, device_columns: Sequence[int]) -> tuple[int, int]:
        """Put the value indexes written on the device (of `device_columns`) in one region at the end of idx;
        (its first word, its words): zeroed by one fill before the conversion sets the masks' bits."""
        start = self.take("idx", self.vidx)
        for c in device_columns:
            if self.cols[c, CT_VIDX] >= 0:
                self.cols[c, CT_VIDX] += start
        return start, self.vidx

    def _put(self, arena: str, host: np.ndarray) -> int:
        """Reserve room for `host` in an arena and remember its copy."""
        pos = self.take(arena, len(host))
        self.uploads.append((arena, pos, np.ascontiguousarray(host, dtype=_DTYPES[arena])))
        return pos

    def chunks(self, srct: np.ndarray, chunk_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """The chunk table (int64[K, CK_COUNT]) and column ranges (int64[C, R_COUNT])."""
        rows = srct[:, ST_ROWS]
        per_piece = (rows + chunk_rows - 1) // chunk_rows
        piece = np.repeat(np.arange(len(srct), dtype=np.int64), per_piece)
        nth = np.arange(len(piece), dtype=np.int64) - np.repeat(np.cumsum(per_piece) - per_piece, per_piece)
        chunks = np.empty((len(piece), K.CK_COUNT), dtype=np.int64)
        chunks[:, K.CK_PIECE] = piece
        chunks[:, K.CK_ROW] = nth * chunk_rows
        chunks[:, K.CK_ROWS] = np.minimum(chunk_rows, rows[piece] - nth * chunk_rows)
        per_col = np.bincount(srct[:, ST_COL], weights=per_piece, minlength=len(self.cols)).astype(np.int64)
        ranges = np.empty((len(self.cols), K.R_COUNT), dtype=np.int64)
        ranges[:, K.R_CHUNK1] = np.cumsum(per_col)
        ranges[:, K.R_CHUNK0] = ranges[:, K.R_CHUNK1] - per_col
        ranges[:, K.R_DAT] = self.dat
        return chunks, ranges


def value_index_words(rows: int) -> int:
    """idx words of a flat column's value index over `rows` rows (layout.py: two per 64 rows and the end)."""
    return 2 * (rows // 64 + 1)


def value_index(valid: np.ndarray) -> np.ndarray:
    """The value index (layout.py, CT_VIDX) of a flat column whose rows have a value where `valid`: per 64 rows
    the values before them and the mask of those that have one (int64 words), as the conversion writes it."""
    rows = len(valid)
    groups = rows // 64 + 1
    out = np.zeros((groups, 2), dtype=np.int64)
    bits = np.zeros(groups * 64, dtype=bool)
    bits[:rows] = valid
    masks = np.packbits(bits, bitorder="little").view("<u8").view(np.int64)
    out[:, 1] = masks
    counts = np.bitwise_count(masks.view(np.uint64)) if hasattr(np, "bitwise_count") else \
        bits.reshape(groups, 64).sum(axis=1)
    np.cumsum(counts[:-1], out=out[1:, 0])
    return out.reshape(-1)


def _views(device: Device, tables: list[np.ndarray]) -> list[Any]:
    """The int64 tables on the device after one copy: 2-D views into one uploaded array."""
    flat = device.upload(np.concatenate([t.reshape(-1) for t in tables]) if tables else np.zeros(0, np.int64))
    out, pos = [], 0
    for t in tables:
        out.append(flat[pos:pos + t.size].reshape(t.shape))
        pos += t.size
    return out


def _device_columns(device: Device, columns: list[Any], leaves: Sequence[Leaf]) -> list[Any]:
    """The window's columns with device columns the conversion does not read copied to the host (nested
    leaves, dictionaries, other types: counted D2H), and the device pieces prepared (`prepare_device`)."""
    out = list(columns)
    readable: dict[int, bool] = {}
    for leaf in leaves:
        col = columns[leaf.index]
        if isinstance(col, DeviceColumn):
            readable[leaf.index] = readable.get(leaf.index, True) and device_readable(col, leaf)
    for i, ok in readable.items():
        if not ok:
            out[i] = columns[i].to_host(device)
    prepare_device(device, [a for i, ok in readable.items() if ok for a in columns[i].chunks if len(a)])
    return out


def build_window(device: Device, table: pa.Table | DeviceTable | Sequence[Any], leaves: Sequence[Leaf],
                 opts: WriteOptions, *, chunk_rows: int = K.CHUNK_ROWS) -> DeviceWindow:
    """The window's leaves on the device (columns of `table` by leaf.index): H2D copies of the Arrow buffers
    and the tables, three launches; nothing waits for the device."""
    columns = table.columns if isinstance(table, pa.Table | DeviceTable) else list(table)
    columns = _device_columns(device, columns, leaves)
    plan = _Plan(leaves, RebaseOptions.of(opts), opts.validate)
    for c, leaf in enumerate(leaves):
        plan.column(c, leaf, columns[leaf.index])
    rows = max((len(c) for c in columns), default=0)
    region = plan.place_value_indexes([c for c in range(len(leaves)) if c not in plan.host])
    ones = plan.take("lev", rows + 1)  # a run of ones: the levels of optional flat columns without nulls
    plan.sizes["lev"] = -(-plan.sizes["lev"] // 8) * 8 + 8  # whole words and one more (the planner reads words)
    srct = plan.sources.table()
    chunks, ranges = plan.chunks(srct, chunk_rows)
    tables = [plan.cols, srct, chunks, ranges, plan.sources.zones]
    device.staging.reserve([view.nbytes for _, view, on_device in plan.sources.parts if not on_device]
                           + [host.nbytes for _, _, host in plan.uploads] + [sum(t.nbytes for t in tables)])
    src = device.empty(max(plan.sources.size, 8), np.uint8)
    for pos, view, on_device in plan.sources.parts:
        if on_device:
            device.copy_into(src, pos, view)
    device.upload_all(src, [(pos, view) for pos, view, on_device in plan.sources.parts if not on_device])
    arenas = {name: device.empty(max(plan.sizes[name], 1), _DTYPES[name]) for name in ARENAS}
    for name, pos, host in plan.uploads:
        device.upload_into(arenas[name], pos, host)
    device.fill_range(arenas["lev"], ones, plan.sizes["lev"] - ones, 1)  # the padding words too: never unset
    if region[1]:
        device.fill_range(arenas["idx"], region[0], region[1], 0)  # the value indexes' masks start empty
    zones = plan.sources.zones
    cols_d, srct_d, chunks_d, ranges_d, zones_d = _views(device, [plan.cols, srct, chunks, ranges, zones])
    slots = max(len(chunks), 1)  # no zero-size arrays on the device
    counts = device.empty(slots * K.CC_COUNT, np.int64).reshape(slots, K.CC_COUNT)
    errs = device.empty(max(len(leaves), 1) * ER_COUNT, np.int64).reshape(-1, ER_COUNT)
    lev, idx, v8, v32, v64, dat = (arenas[name] for name in ARENAS)
    device.launch(COUNT, len(chunks), chunks_d, srct_d, src, counts)
    device.launch(SCAN, len(leaves), ranges_d, chunks_d, srct_d, cols_d, counts, errs, idx)
    device.launch(WRITE, len(chunks), chunks_d, srct_d, src, zones_d, cols_d, ranges_d, counts, errs, lev, idx,
                  v8, v32, v64, dat)
    inputs = {"src": src, "srct": srct_d, "chunks": chunks_d, "ranges": ranges_d, "counts": counts[:len(chunks)]}
    return DeviceWindow(tuple(leaves), rows, plan.cols, cols_d, arenas, dict(plan.sizes), plan.dat, errs,
                        opts.time_zone, plan.errors, inputs, ones, plan.host)


def conversion_error(errs: np.ndarray, window: DeviceWindow) -> GpuwriteError | None:
    """The error the CPU path raises for the window (the first column's, in schema order), given a host
    copy of window.errs; None when every value converts."""
    planned = dict(window.host_errors)
    for c, leaf in enumerate(window.leaves):
        if c in planned:
            return planned[c]
        flags = int(errs[c, ER_FLAGS])
        if flags & E_NS_LOSS:
            return ns_loss_error(leaf.name)
        if flags & E_RANGE:
            return micros_range_error(leaf.name, leaf.arrow_type.unit)
        if flags & E_BEFORE_SWITCH:
            first = int(errs[c, ER_FIRST])
            if pa.types.is_date32(leaf.arrow_type):
                return date_switch_error(leaf.name, first)
            return timestamp_switch_error(leaf.name, first)
        if flags & E_ZONE:
            return unknown_zone_error(leaf.name, window.time_zone)
    return None


def check_window(device: Device, window: DeviceWindow) -> None:
    """Wait for the conversion (one sync) and raise the CPU path's error if a value was refused."""
    err = conversion_error(device.download(window.errs), window)
    if err is not None:
        raise err


def window_as_leafdata(device: Device, window: DeviceWindow) -> list[LeafData]:
    """Each column's LeafData rebuilt from the arenas (one sync): what columns.leaf_data gives for the rows."""
    arenas = dict(zip(ARENAS, device.download_many([window.arenas[n] for n in ARENAS]), strict=True))
    idx = arenas["idx"]
    out = []
    for c, leaf in enumerate(window.leaves):
        row = [int(x) for x in window.cols[c]]
        rows, entries, n = row[CT_ROWS], row[CT_ENTRIES], row[CT_VALUES]
        data = LeafData(rows, None)
        if leaf.fixed_width:
            kind = row[CT_KIND]
            values = arenas[_VALUE_ARENA.get(kind, "v64")][row[CT_VALS]:row[CT_VALS] + n]
            data.values = values.view(np.float32) if kind == K_FLOAT else values.view(np.float64) \
                if kind == K_DOUBLE else values
        else:
            offsets = idx[row[CT_OFFS]:row[CT_OFFS] + n + 1]
            data.data = arenas["dat"][offsets[0]:offsets[-1]]
            data.offsets = offsets - offsets[0]
        if row[CT_VBEFORE] >= 0:
            data.dfn = arenas["lev"][row[CT_DEF]:row[CT_DEF] + entries]
            data.rep = arenas["lev"][row[CT_REP]:row[CT_REP] + entries] if row[CT_REP] >= 0 else None
            data.row_entry = idx[row[CT_ENTRY]:row[CT_ENTRY] + rows + 1]
            data.values_before = idx[row[CT_VBEFORE]:row[CT_VBEFORE] + entries + 1]
        elif row[CT_DEF] >= 0:
            data.valid = arenas["lev"][row[CT_DEF]:row[CT_DEF] + rows].astype(bool)
        out.append(data)
    return out
