"""Arrow columns -> LeafData: a window of one leaf's rows in the physical representation the encoders take.

Flat leaves are converted here (validity, compaction, decimal words, INT96, timestamp units, rebase); nested
leaves get their levels and value positions from `levels.py`, then their present values are converted as a
flat column.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa

from ..errors import GpuwriteError, WideDecimalError
from ..kernels.convert.compact import compact_decimal_words, compact_words
from ..schema import Leaf, value_type
from . import buffers
from .leafdata import NO_ROWS, LeafBuffer, LeafData
from .levels import LevelMemo, entry_index, walk
from .rebase import RebaseOptions, rebase_dates, rebase_timestamps
from .views import as_large, is_view, view_values

MICROS_PER_DAY = 86_400_000_000
JULIAN_DAY_OF_EPOCH = 2_440_588
_UNIT_TO_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1}


def validity(arr: pa.Array) -> np.ndarray | None:
    """Per-row validity as a bool array (unpacked from Arrow's bitmap), or None when there are no nulls."""
    if arr.null_count == 0:
        return None
    bitmap = arr.buffers()[0]
    if bitmap is None:
        return arr.is_valid().to_numpy(zero_copy_only=False)
    first = arr.offset // 8  # only the bytes holding the array's rows (a slice of a large array shares its bitmap)
    raw = np.frombuffer(bitmap, dtype=np.uint8, count=(arr.offset + len(arr) + 7) // 8 - first, offset=first)
    bits = np.unpackbits(raw, bitorder="little")
    lead = arr.offset - 8 * first
    return bits[lead:lead + len(arr)].view(np.bool_)


def _compact(words: np.ndarray, stride: int, valid: np.ndarray | None, dtype: type,
             into: LeafBuffer | None, bound: int | None = None) -> np.ndarray | None:
    """The first word of every `stride` words of each present row (all rows when `valid` is None) as `dtype`,
    in one compiled pass, written into `into`'s next values (no copy when appended) or a new array. `bound`:
    decimals, each checked to lie within [-bound, bound] in the same pass; None when one does not."""
    rows = len(words) // stride
    count = rows if valid is None else int(np.count_nonzero(valid)) + 1  # the kernel's spare slot
    out = np.empty(count, dtype=dtype) if into is None else into.values_slot(dtype, count, rows)
    bits = NO_ROWS if valid is None else valid.view(np.uint8)
    if bound is None:
        return out[:compact_words(words, stride, bits, out)]
    stored = compact_decimal_words(words, stride, bits, out, np.int64(bound))
    return None if stored < 0 else out[:stored]


def _null_free_numpy(arr: pa.Array) -> np.ndarray:
    """A primitive array without nulls as `arr.to_numpy(zero_copy_only=False)` gives it (a read-only view of its
    values; booleans unpacked into a new array), read from its buffers: pyarrow's conversion imports pandas on
    first use, 0.3-0.5 s of a process's first write."""
    rows = arr.offset + len(arr)
    data = arr.buffers()[1]
    if pa.types.is_boolean(arr.type):
        if data is None or not rows:
            return np.zeros(len(arr), dtype=np.bool_)
        bits = np.frombuffer(data, dtype=np.uint8, count=(rows + 7) // 8)
        return np.unpackbits(bits, count=rows, bitorder="little")[arr.offset:].view(np.bool_)
    np_type = np.dtype(arr.type.to_pandas_dtype())
    view = np.frombuffer(data, dtype=np_type, count=rows)[arr.offset:] if data is not None and rows else \
        np.empty(0, dtype=np_type)
    view.flags.writeable = False
    return view


def _fixed_values(arr: pa.Array, dtype: type, valid: np.ndarray | None,
                  into: LeafBuffer | None = None) -> np.ndarray:
    """Non-null values of a primitive array as a NumPy array (nulls dropped with the validity mask); written
    into `into`'s next values where the conversion is a compaction."""
    if valid is None or pa.types.is_boolean(arr.type):
        if arr.null_count:
            import pyarrow.compute as pc  # on first use: a fresh process's write need not load it
            arr = pc.drop_null(arr)
        return _null_free_numpy(arr).astype(dtype, copy=False)
    np_type = np.dtype(arr.type.to_pandas_dtype())
    raw = np.frombuffer(arr.buffers()[1], dtype=np_type, count=arr.offset + len(arr))[arr.offset:]
    if np_type != np.dtype(dtype):
        return raw[valid].astype(dtype, copy=False)
    out = _compact(raw, 1, valid, dtype, into)
    assert out is not None  # nothing checked
    return out


def widen_decimal(arr: pa.Array) -> pa.Array:
    """A decimal32 / decimal64 array as decimal128 of the same precision and scale (values sign-extended,
    nothing checked); other arrays as they are."""
    t = arr.type
    if not (pa.types.is_decimal32(t) or pa.types.is_decimal64(t)):
        return arr
    raw = np.frombuffer(arr.buffers()[1], dtype=np.int32 if t.byte_width == 4 else np.int64,
                        count=arr.offset + len(arr)).astype(np.int64)
    words = np.empty((len(raw), 2), dtype=np.int64)
    words[:, 0] = raw
    words[:, 1] = raw >> 63
    return pa.Array.from_buffers(pa.decimal128(t.precision, t.scale), len(arr),
                                 [arr.buffers()[0], pa.py_buffer(words)], arr.null_count, arr.offset)


def _decimal_words(arr: pa.Array, valid: np.ndarray | None, count: int) -> np.ndarray:
    """Non-null decimal128/256 values as their `count` low little-endian 64-bit words, shape (n, count)."""
    width = arr.type.byte_width // 8
    buf = arr.buffers()[1]
    words = np.frombuffer(buf, dtype=np.int64, count=(arr.offset + len(arr)) * width)
    words = words.reshape(-1, width)[arr.offset:, :count]
    if valid is None:
        return words
    out = np.empty((int(np.count_nonzero(valid)), count), dtype=np.int64)
    for k in range(count):
        out[:, k] = words[:, k][valid]
    return out


def _decimal_low_words(arr: pa.Array, valid: np.ndarray | None, dtype: type, into: LeafBuffer | None = None,
                       check: str | None = None) -> np.ndarray:
    """Non-null decimal64/128/256 values of precision <= 18 as `dtype` (their low words), in one pass, written
    into `into`'s next values when given. `check`: the column's name; each value is then checked against the
    precision in the same pass (WideDecimalError when one is wider)."""
    width = arr.type.byte_width // 8
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=(arr.offset + len(arr)) * width)
    bound = None if check is None else 10 ** arr.type.precision - 1
    out = _compact(words[arr.offset * width:], width, valid, dtype, into, bound)
    if out is None:
        raise WideDecimalError(f"column {check!r} holds a decimal with more digits than {arr.type} allows")
    return out


def _decimal_big_endian(words: np.ndarray, length: int) -> np.ndarray:
    """Two's-complement big-endian bytes of each value, sign-extended/cut to `length` bytes (n, length)."""
    le = words[:, :2].copy().view(np.uint8).reshape(-1, 16)
    return np.ascontiguousarray(le[:, ::-1][:, 16 - length:])


def _timestamp_micros(arr: pa.Array, leaf: Leaf, valid: np.ndarray | None) -> np.ndarray:
    """Non-null timestamp values as int64 microseconds since the epoch; refuses sub-microsecond loss."""
    unit = arr.type.unit
    raw = _fixed_values(arr.view(pa.int64()), np.int64, valid)
    if unit == "ns":
        if np.any(raw % 1000):
            raise ns_loss_error(leaf.name)
        return raw // 1000
    factor = _UNIT_TO_MICROS[unit]
    if factor != 1:
        limit = np.iinfo(np.int64).max // factor
        if raw.size and (raw.max() > limit or raw.min() < -limit):
            raise micros_range_error(leaf.name, unit)
        return raw * factor
    return raw


def ns_loss_advice(column: str) -> str:
    """How to write timestamp[ns] values with sub-microsecond parts, in Arrow's and pandas' words."""
    pandas = "" if "." in column else f" (pandas: df[{column!r}] = df[{column!r}].dt.floor('us'))"
    return (f"pass allow_truncated_timestamps=True to truncate them to microseconds (pyarrow's keyword), or cast "
            f"the column to timestamp[us] first{pandas}")


def ns_loss_error(column: str) -> GpuwriteError:
    """The refusal of timestamp[ns] values that microseconds cannot hold."""
    return GpuwriteError(f"column {column!r}: timestamp[ns] values (pandas' datetime64[ns]) with sub-microsecond "
                         f"parts cannot be written without loss (Spark stores microseconds); "
                         f"{ns_loss_advice(column)}")


def micros_range_error(column: str, unit: str) -> GpuwriteError:
    """The refusal of timestamp[s|ms] values beyond the int64 microsecond range."""
    return GpuwriteError(f"column {column!r}: timestamp[{unit}] value out of the microsecond range")


def int96_bytes(micros: np.ndarray) -> np.ndarray:
    """Spark's INT96: 8-byte LE nanos of day then 4-byte LE Julian day, with Java's truncating division."""
    shifted = micros + np.int64(JULIAN_DAY_OF_EPOCH * MICROS_PER_DAY)
    day = shifted // MICROS_PER_DAY
    rem = shifted % MICROS_PER_DAY
    neg = (shifted < 0) & (rem != 0)
    day = np.where(neg, day + 1, day)
    rem = np.where(neg, rem - MICROS_PER_DAY, rem)
    out = np.empty((len(micros), 12), dtype=np.uint8)
    out[:, :8] = (rem * 1000).astype("<i8").view(np.uint8).reshape(-1, 8)
    out[:, 8:] = day.astype("<i4").view(np.uint8).reshape(-1, 4)
    return out


def _fixed_bytes(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offsets and data for a (n, width) byte matrix."""
    n, width = matrix.shape
    return np.arange(n + 1, dtype=np.int64) * width, np.ascontiguousarray(matrix).reshape(-1)


def _binary(arr: pa.Array, valid: np.ndarray | None, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (int64) and data of the non-null values of a string/binary array, the data uncopied.

    The offsets index Arrow's data buffer as it is (they need not start at 0: `LeafBuffer` rebases them when
    it takes the rows). Nulls are dropped from the offsets alone when their slots are empty, as writers make
    them; only view types (gathered into one buffer: `views.view_values`) and nulls hiding bytes copy the
    values.
    """
    if is_view(arr.type):
        return view_values(arr, np.flatnonzero(valid) if valid is not None else np.arange(len(arr)), column)
    wide = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64 if wide else np.int32,
                            count=arr.offset + len(arr) + 1)[arr.offset:]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    if valid is not None:
        starts, ends = offsets[:-1], offsets[1:]
        if np.any(ends[~valid] != starts[~valid]):
            import pyarrow.compute as pc  # on first use: a fresh process's write need not load it
            return _binary(pc.drop_null(arr), None, column)  # null slots that hold bytes: compact by copying
        offsets = np.append(starts[valid], offsets[-1:])
    if offsets.dtype != np.int64:  # widened into a kept slab (`buffers`): no fresh pages per write
        wide_offsets = buffers.empty(len(offsets), np.int64)
        wide_offsets[:] = offsets
        return wide_offsets, data
    return offsets, data


def decode_dictionary(arr: pa.DictionaryArray, column: str) -> pa.Array:
    """A dictionary-encoded array written by value (pandas categoricals, polars Categorical / Enum, DuckDB
    enums). Arrow has no `take` for view types, so string_view / binary_view dictionaries (polars) are
    gathered as large_string / large_binary (`views.as_large`), which `_binary` takes without another copy."""
    return as_large(arr.dictionary, column).take(arr.indices)


_BORROWED_TYPES = {"float": pa.float32(), "double": pa.float64(), "int32": pa.int32(), "int64": pa.int64()}


def conversion_bytes(arr: pa.Array, leaf: Leaf) -> int:
    """Bytes `leaf_data` reads to convert `arr` for `leaf`: none when it borrows the values as they are (a flat
    leaf of the array's own fixed-width type, without nulls: a view, about 20 us of Python whatever its size),
    else the array's. What the window's jobs are grouped by: borrowed columns costed by their size ran a
    job each, and a wide table's hand-offs held back its first pages."""
    if not leaf.nested and arr.null_count == 0 and _BORROWED_TYPES.get(leaf.kind) == arr.type:
        return 0
    return arr.nbytes


def leaf_data(column: pa.ChunkedArray | pa.Array, leaf: Leaf, rebase: RebaseOptions,
              into: LeafBuffer | None = None, memo: LevelMemo | None = None,
              check_decimals: bool = False) -> LeafData:
    """Convert rows of a column (a chunked column is combined first: the window passes chunks one by one) to
    LeafData; byte offsets may index a larger data buffer than the values use. With `into` (the buffer the
    result will be appended to), compacted values are written straight into its next values; `memo` (one per
    Arrow array) lets sibling nested leaves share the levels of the steps they have in common. `rebase`: the
    calendar rebase of dates and zoned timestamps (`rebase.RebaseOptions.of(opts)`).
    `check_decimals`: check flat decimals stored as INT32 / INT64 against their precision as they are
    compacted (validate.checked_in_conversion), raising WideDecimalError."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if leaf.nested:
        return _nested_leaf_data(arr, leaf, rebase, memo)
    if pa.types.is_dictionary(arr.type):
        arr = decode_dictionary(arr, leaf.name)
    elif arr.type != value_type(leaf.arrow_type):
        raise GpuwriteError(f"column {leaf.name!r}: got {arr.type}, expected {leaf.arrow_type}")
    out = LeafData(num_rows=len(arr), valid=validity(arr))
    kind = leaf.kind
    if kind == "bool":
        out.values = _fixed_values(arr, np.uint8, out.valid)
    elif kind in ("float", "double"):
        out.values = _fixed_values(arr, np.float32 if kind == "float" else np.float64, out.valid, into)
    elif leaf.is_decimal and kind in ("int32", "int64"):
        if not pa.types.is_decimal64(arr.type):  # decimal64 values are their own low words (Spark's transfer)
            arr = widen_decimal(arr)
        out.values = _decimal_low_words(arr, out.valid, np.int32 if kind == "int32" else np.int64, into,
                                        leaf.name if check_decimals else None)
    elif leaf.is_decimal:
        arr = widen_decimal(arr)
        out.offsets, out.data = _fixed_bytes(_decimal_big_endian(_decimal_words(arr, out.valid, 2), leaf.type_length))
    elif pa.types.is_timestamp(arr.type):
        micros = _timestamp_micros(arr, leaf, out.valid)
        if arr.type.tz is not None:
            micros = rebase_timestamps(micros, rebase.timestamp_mode(kind == "int96"), rebase.time_zone, leaf.name)
        if kind == "int96":
            out.offsets, out.data = _fixed_bytes(int96_bytes(micros))
        elif leaf.logical is not None and leaf.logical.unit == "MILLIS":
            out.values = micros // 1000
        else:
            out.values = micros
    elif pa.types.is_date32(arr.type):
        out.values = rebase_dates(_fixed_values(arr.view(pa.int32()), np.int32, out.valid), rebase.datetime_rebase,
                                  leaf.name)
    elif kind == "int32":
        out.values = _fixed_values(arr, np.int32, out.valid, into)
    elif kind == "int64":
        out.values = _fixed_values(arr, np.int64, out.valid, into)
    elif kind == "bytes":
        out.offsets, out.data = _binary(arr, out.valid, leaf.name)
    else:
        raise GpuwriteError(f"column {leaf.name!r}: no conversion for kind {kind}")
    return out


def _nested_leaf_data(arr: pa.Array, leaf: Leaf, rebase: RebaseOptions, memo: LevelMemo | None = None) -> LeafData:
    """LeafData of a nested leaf: its present values converted as a flat column, plus levels and indexes (the
    indexes shared with sibling leaves whose slots are the same: `levels.entry_index`)."""
    (pos, rep, dfn, values), same = walk(arr, leaf, memo)
    index = entry_index(pos, rep if leaf.max_rep > 0 else None, len(arr), memo, same)
    at = index.at
    if is_view(values.type):  # no `take` in Arrow: the values gathered straight from their views
        offsets, data = view_values(values, at, leaf.dotted)
        flat = LeafData(len(at), None, offsets=offsets, data=data)
    elif len(at) == len(values) and index.in_order:
        flat = _present_leaf_data(values, leaf, rebase)  # every value present, in order: nothing to take
    else:
        flat = _present_leaf_data(values.take(pa.array(at)) if len(values) else values.slice(0, 0), leaf, rebase)
    return LeafData(len(arr), None, values=flat.values, offsets=flat.offsets, data=flat.data,
                    rep=rep if leaf.max_rep > 0 else None, dfn=dfn, row_entry=index.row_entry,
                    values_before=index.values_before)


def _present_leaf_data(values: pa.Array, leaf: Leaf, rebase: RebaseOptions) -> LeafData:
    """A nested leaf's present values (no nulls) converted as a flat column."""
    return leaf_data(values, replace(leaf, nested_path=(), def_level=-1, rep_level=0, repetition=-1, steps=(),
                                     name=leaf.dotted, nullable=False), rebase)
