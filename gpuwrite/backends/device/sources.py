"""A window's Arrow columns as conversion input: source pieces (rows of `srct`, kernels/plan/layout.py) and the
buffer slices that go into the `src` arena, planned on the host from Arrow metadata without touching values.

Only the bytes of the window's rows travel: a sliced array's values start at its first row, its bitmaps keep a
bit offset 0..7, its string data starts at its first offset (ST_OFF0). Dictionary-encoded chunks are decoded
and string / binary VIEW chunks gathered as large_string / large_binary on the host first
(pipeline/views.as_large), as columns.py does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from gpuwrite.kernels.plan.layout import (
    A_BINARY,
    A_BOOL,
    A_DATE32,
    A_DECIMAL32,
    A_DECIMAL64,
    A_DECIMAL128,
    A_DECIMAL256,
    A_DOUBLE,
    A_FLOAT,
    A_INT8,
    A_INT16,
    A_INT32,
    A_INT64,
    A_LARGE_BINARY,
    A_TIMESTAMP,
    CV_BOOL,
    CV_BYTES,
    CV_DATE,
    CV_DECIMAL,
    CV_FLBA,
    CV_INT,
    CV_INT96,
    CV_MICROS,
    CV_MILLIS,
    RB_CORRECTED,
    RB_EXCEPTION,
    RB_LEGACY,
    ST_BITMAP,
    ST_BITOFF,
    ST_COL,
    ST_CONV,
    ST_COUNT,
    ST_DATA,
    ST_FIRST,
    ST_OFF0,
    ST_OFFSET,
    ST_OFFSETS,
    ST_OUTW,
    ST_REBASE,
    ST_ROWS,
    ST_TYPE,
    ST_UNIT,
    ST_VALUES,
    ST_VBITOFF,
    ST_WIDTH,
    ST_ZONE,
    ZK_FIXED,
    ZK_REGION,
    ZK_UNKNOWN,
)

from ...errors import GpuwriteError
from ...integrations.device_data import DeviceArray, DeviceColumn
from ...kernels.convert.compact import compact_decimal_words, compact_words
from ...pipeline.columns import decode_dictionary
from ...pipeline.leafdata import NO_ROWS
from ...pipeline.rebase import RebaseOptions, fixed_offset_micros, zone_history
from ...pipeline.views import as_large
from ...schema import Leaf, value_type
from .copies import Filled

_REBASE = {"CORRECTED": RB_CORRECTED, "LEGACY": RB_LEGACY, "EXCEPTION": RB_EXCEPTION}
_UNIT = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": -1_000}  # micros per unit; ns: divided by 1000
_FIXED_TYPES = ((pa.types.is_int8, A_INT8, 1), (pa.types.is_int16, A_INT16, 2), (pa.types.is_int32, A_INT32, 4),
                (pa.types.is_int64, A_INT64, 8), (pa.types.is_float32, A_FLOAT, 4),
                (pa.types.is_float64, A_DOUBLE, 8), (pa.types.is_date32, A_DATE32, 4),
                (pa.types.is_timestamp, A_TIMESTAMP, 8), (pa.types.is_decimal32, A_DECIMAL32, 4),
                (pa.types.is_decimal64, A_DECIMAL64, 8), (pa.types.is_decimal128, A_DECIMAL128, 16),
                (pa.types.is_decimal256, A_DECIMAL256, 32), (pa.types.is_boolean, A_BOOL, 0),
                (pa.types.is_string, A_BINARY, 4), (pa.types.is_binary, A_BINARY, 4),
                (pa.types.is_large_string, A_LARGE_BINARY, 8), (pa.types.is_large_binary, A_LARGE_BINARY, 8))


def source_type(t: pa.DataType) -> tuple[int, int] | None:
    """(A_* code, bytes per value or offset) of an Arrow type the device reads, or None."""
    for test, code, width in _FIXED_TYPES:
        if test(t):
            return code, width
    return None


def conversion(leaf: Leaf, t: pa.DataType) -> int | None:
    """The CV_* conversion columns.leaf_data applies to a flat leaf of Arrow type t, or None (host path)."""
    kind = leaf.kind
    if kind == "bool":
        return CV_BOOL
    if kind in ("float", "double"):
        return CV_INT
    if leaf.is_decimal:
        if not pa.types.is_decimal(t):
            return None
        return CV_DECIMAL if kind in ("int32", "int64") else CV_FLBA
    if pa.types.is_timestamp(t):
        if kind == "int96":
            return CV_INT96
        return CV_MILLIS if leaf.logical is not None and leaf.logical.unit == "MILLIS" else CV_MICROS
    if pa.types.is_date32(t):
        return CV_DATE
    if kind in ("int32", "int64"):
        return CV_INT
    return CV_BYTES if kind == "bytes" else None


def device_readable(column: DeviceColumn, leaf: Leaf) -> bool:
    """Whether a device column is converted where it lies (a flat leaf of a type the conversion reads);
    the rest is copied to the host and converted there, as host input is."""
    return not leaf.nested and source_type(column.type) is not None and \
        conversion(leaf, column.type) is not None and column.type == value_type(leaf.arrow_type)


def prepare_device(device: Any, arrays: list[DeviceArray]) -> None:
    """What the plan needs of device pieces and cannot know from metadata, read in one sync: null counts the
    producer did not give (one launch) and the first / end offsets of string pieces cut by the window."""
    counts = [a for a in arrays if not a.null_count_known]
    strings = [a for a in arrays if len(a.bufs) == 3 and a.bounds is None]
    if not counts and not strings:
        return
    views = [device.valid_counts([(a.bufs[0], a.offset, a.length) for a in counts])] if counts else []
    for a in strings:
        w = 4 if pa.types.is_string(a.type) or pa.types.is_binary(a.type) else 8
        views += [a.bufs[1][a.offset * w:(a.offset + 1) * w], a.bufs[1][(a.offset + a.length) * w:
                                                                        (a.offset + a.length + 1) * w]]
    got = device.download_many(views)
    if counts:
        for a, valid in zip(counts, got.pop(0), strict=False):
            a.set_null_count(a.length - int(valid))
    for j, a in enumerate(strings):
        dtype = np.int32 if len(got[2 * j]) == 4 else np.int64
        a.bounds = (int(np.frombuffer(got[2 * j].tobytes(), dtype)[0]),
                    int(np.frombuffer(got[2 * j + 1].tobytes(), dtype)[0]))


def flat_chunks(column: pa.ChunkedArray | pa.Array | DeviceColumn, leaf: Leaf) -> list[Any]:
    """The window's non-empty chunks of a flat column as the device reads them (dictionaries decoded, VIEW
    types cast); refuses a chunk of the wrong type as columns.leaf_data does."""
    if isinstance(column, DeviceColumn):
        return [a for a in column.chunks if len(a)]
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = []
    for arr in chunks:
        if pa.types.is_dictionary(arr.type):
            arr = decode_dictionary(arr, leaf.name)  # its values' type (view types as large_string / binary)
        elif arr.type != value_type(leaf.arrow_type) and not pa.types.is_dictionary(leaf.arrow_type):
            raise GpuwriteError(f"column {leaf.name!r}: got {arr.type}, expected {leaf.arrow_type}")
        arr = as_large(arr, leaf.name)  # VIEW types gathered by value, as columns.py does
        if len(arr):
            out.append(arr)
    return out


class NarrowedDecimals(Filled):
    """A host piece of decimal128 / 256 values stored as INT32 / INT64 (precision <= 18), staged as the low
    32 / 64 bits of each row's value (the device reads it as decimal32 / 64): what the conversion keeps of it,
    in a fourth or half of the bytes, made in the pass that would have copied the whole values into the staging
    buffer (store_sales: 12 of its 23 columns). `bound` (10**precision - 1, or None when values are not
    checked): a row whose value lies outside [-bound, bound] or beyond its low word is staged as the type's
    minimum, which no such precision holds, so the device's check fails at that row, and the error shows the
    row's Arrow value (checks.check_error), as it does unnarrowed."""

    def __init__(self, words: np.ndarray, stride: int, dtype: type, bound: int | None) -> None:
        self.words, self.stride, self.dtype, self.bound = words, stride, np.dtype(dtype), bound
        self.nbytes = self.size = len(words) // stride * self.dtype.itemsize

    def fill(self, out: np.ndarray) -> None:
        """The low words (one compiled pass: the CPU path's compaction with every row kept)."""
        values = out.view(self.dtype)
        if self.bound is None:
            compact_words(self.words, self.stride, NO_ROWS, values)
        elif compact_decimal_words(self.words, self.stride, NO_ROWS, values, np.int64(self.bound)) < 0:
            self._with_outside_marked(values, self.bound)  # rare: a value (or a null slot's bytes) too wide

    def _with_outside_marked(self, values: np.ndarray, bound: int) -> None:
        """Every row's low word, but the type's minimum for a row whose value lies outside [-bound, bound] or
        whose higher words do not extend its low word (the compaction stops at the first block holding one)."""
        words = self.words.reshape(-1, self.stride)
        low = words[:, 0]
        values[:] = low.astype(self.dtype)
        wide = (low + np.int64(bound)).view(np.uint64) > np.uint64(2 * bound)
        values[wide | (words[:, 1:] != (low >> np.int64(63))[:, None]).any(axis=1)] = -(1 << (8 * values.itemsize - 1))


@dataclass
class Sources:
    """The pieces of a window's flat columns and the host buffer slices of `src`."""

    rebase: RebaseOptions  # the rebase modes and session zone of dates and zoned timestamps
    check: bool = True  # values are checked (the `validate` option): decimals narrowed on the host keep the test
    rows: list[list[int]] = field(default_factory=list)  # srct rows
    parts: list[tuple[int, Any, bool]] = field(default_factory=list)  # (src position, uint8 view, on device)
    size: int = 0  # bytes of src
    zones: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    _zone: tuple[int, int] | None = None

    def place(self, view: Any, on_device: bool = False) -> int:
        """Reserve an 8-byte-aligned position in src for `view` (uint8, a host view or, `on_device`, a device
        one) and remember the copy."""
        pos = (self.size + 7) & ~7
        if view.size:
            self.parts.append((pos, view, on_device))
        self.size = pos + view.size
        return pos

    def add_column(self, col: int, leaf: Leaf, chunks: list[Any], conv: int) -> int:
        """Pieces for the chunks of column `col`; returns the string bytes they span (an upper bound of the
        present values' bytes: null slots may hold bytes)."""
        span = 0
        first = 0
        for arr in chunks:
            code, width = source_type(arr.type)  # type: ignore[misc]
            st = [-1] * ST_COUNT
            st[ST_COL], st[ST_FIRST], st[ST_ROWS], st[ST_TYPE], st[ST_CONV] = col, first, len(arr), code, conv
            st[ST_WIDTH], st[ST_VBITOFF], st[ST_OFF0], st[ST_UNIT] = width, 0, 0, 1
            st[ST_OUTW] = 12 if conv == CV_INT96 else leaf.type_length if conv == CV_FLBA else 0
            self._time_params(st, leaf, arr.type, conv)
            if isinstance(arr, DeviceArray):
                span += self._device_buffers(st, arr, code, width)
            else:
                span += self._buffers(st, arr, code, width, 4 if leaf.kind == "int32" else 8)
            self.rows.append(st)
            first += len(arr)
        return span

    def _time_params(self, st: list[int], leaf: Leaf, t: pa.DataType, conv: int) -> None:
        """Unit, rebase mode and session zone of a date / timestamp piece (CORRECTED for the rest)."""
        st[ST_REBASE], st[ST_ZONE], st[ST_OFFSET] = RB_CORRECTED, ZK_FIXED, 0
        if conv == CV_DATE:
            st[ST_REBASE] = _REBASE[self.rebase.datetime_rebase]
        elif pa.types.is_timestamp(t):
            st[ST_UNIT] = _UNIT[t.unit]
            if t.tz is not None:
                mode = self.rebase.timestamp_mode(conv == CV_INT96)
                st[ST_REBASE] = _REBASE[mode]
                if mode == "LEGACY":
                    st[ST_ZONE], st[ST_OFFSET] = self.session_zone()

    def session_zone(self) -> tuple[int, int]:
        """(ZK_* kind, offset) of the session time zone as Spark's rebase sees it; fills `zones` for a region
        zone (tzdb start instants, then offsets, before 1900)."""
        if self._zone is None:
            offset = fixed_offset_micros(self.rebase.time_zone)
            history = None if offset is not None else zone_history(self.rebase.time_zone)
            if offset is not None:
                self._zone = (ZK_FIXED, offset)
            elif history is None:
                self._zone = (ZK_UNKNOWN, 0)
            else:
                starts, offsets, raw = history
                self.zones = np.concatenate([starts, offsets]).astype(np.int64)
                self._zone = (ZK_REGION, raw)
        return self._zone

    def _buffers(self, st: list[int], arr: pa.Array, code: int, width: int, narrow: int) -> int:
        """Place the piece's buffers; returns the string bytes it spans. Decimal128 / 256 values kept as INT32 /
        INT64 go up as `narrow`-byte decimal32 / 64 (`NarrowedDecimals`)."""
        off, n = arr.offset, len(arr)
        bufs = arr.buffers()
        st[ST_BITMAP] = -1
        if arr.null_count:
            if bufs[0] is None:
                bits = np.packbits(arr.is_valid().to_numpy(zero_copy_only=False), bitorder="little")
                st[ST_BITMAP], st[ST_BITOFF] = self.place(bits), 0
            else:
                st[ST_BITMAP], st[ST_BITOFF] = self.place(_bits(bufs[0], off, n)), off & 7
        if code == A_BOOL:
            st[ST_VALUES], st[ST_VBITOFF] = self.place(_bits(bufs[1], off, n)), off & 7
            return 0
        if st[ST_CONV] == CV_DECIMAL and code in (A_DECIMAL128, A_DECIMAL256):
            stride = width // 8
            words = np.frombuffer(bufs[1], dtype=np.int64, count=(off + n) * stride)[off * stride:]
            bound = 10 ** arr.type.precision - 1 if self.check else None
            st[ST_TYPE], st[ST_WIDTH] = (A_DECIMAL32, 4) if narrow == 4 else (A_DECIMAL64, 8)
            st[ST_VALUES] = self.place(NarrowedDecimals(words, stride, np.int32 if narrow == 4 else np.int64, bound))
            return 0
        if code not in (A_BINARY, A_LARGE_BINARY):
            st[ST_VALUES] = self.place(np.frombuffer(bufs[1], dtype=np.uint8)[off * width:(off + n) * width])
            return 0
        ends = np.frombuffer(bufs[1], dtype=np.int32 if width == 4 else np.int64, count=off + n + 1)
        o0, o1 = int(ends[off]), int(ends[off + n])
        st[ST_OFFSETS] = self.place(np.frombuffer(bufs[1], dtype=np.uint8)[off * width:(off + n + 1) * width])
        data = np.frombuffer(bufs[2], dtype=np.uint8)[o0:o1] if bufs[2] is not None else np.zeros(0, np.uint8)
        st[ST_DATA], st[ST_OFF0] = self.place(data), o0
        return o1 - o0

    def _device_buffers(self, st: list[int], arr: DeviceArray, code: int, width: int) -> int:
        """Place a device piece's buffers (device-to-device copies later); returns the string bytes it spans."""
        off, n = arr.offset, len(arr)
        bufs = arr.bufs
        st[ST_BITMAP] = -1
        if arr.null_count:
            st[ST_BITMAP], st[ST_BITOFF] = self.place(bufs[0][off >> 3:(off + n + 7) >> 3], True), off & 7
        if code == A_BOOL:
            st[ST_VALUES], st[ST_VBITOFF] = self.place(bufs[1][off >> 3:(off + n + 7) >> 3], True), off & 7
            return 0
        if code not in (A_BINARY, A_LARGE_BINARY):
            st[ST_VALUES] = self.place(bufs[1][off * width:(off + n) * width], True)
            return 0
        assert arr.bounds is not None, "prepare_device reads the bounds first"
        o0, o1 = arr.bounds
        st[ST_OFFSETS] = self.place(bufs[1][off * width:(off + n + 1) * width], True)
        st[ST_DATA], st[ST_OFF0] = self.place(bufs[2][o0:o1], True), o0
        return o1 - o0

    def table(self) -> np.ndarray:
        """srct: int64[S, ST_COUNT]."""
        return np.array(self.rows, dtype=np.int64).reshape(len(self.rows), ST_COUNT)


def _bits(buf: pa.Buffer, off: int, n: int) -> np.ndarray:
    """The bytes of a bitmap holding bits off..off + n."""
    return np.frombuffer(buf, dtype=np.uint8)[off >> 3:(off + n + 7) >> 3]
