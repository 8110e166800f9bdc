"""Arrow's view types (string_view, binary_view: polars' strings) by value: their values gathered into offsets
and bytes (kernels/convert/views.py, where Arrow has no `take` for them), their lengths, and the bytes a batch
holding them really takes.

A view array's data buffers may be shared with other arrays and listed many times (a concatenation of slices
of one large array lists every slice's buffers again), so Arrow's `nbytes` can count gigabytes for a few
rows: sizes here count the rows' own bytes instead.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from gpuwrite.kernels.convert.views import gather_views, out_of_line_bytes, view_offsets

from ..errors import GpuwriteError
from ..integrations.arrow import ArrowPiece

_EMPTY = np.zeros(0, dtype=np.uint8)


def is_view(t: pa.DataType) -> bool:
    """Whether `t` is string_view or binary_view."""
    return pa.types.is_string_view(t) or pa.types.is_binary_view(t)


def has_view(t: pa.DataType) -> bool:
    """Whether `t` holds a view type anywhere: itself, a list's elements, a struct's fields, a map's keys or
    values, a dictionary's values."""
    if is_view(t):
        return True
    if pa.types.is_dictionary(t):
        return has_view(t.value_type)
    return any(has_view(t.field(i).type) for i in range(t.num_fields))


def view_words(arr: pa.Array, buf: pa.Buffer | None) -> np.ndarray:
    """The views of a view array's rows as int32[4 * rows] (length, then inline bytes or prefix, buffer index,
    offset), without a copy; `buf`: the array's views buffer (`buffers()[1]`; a view array lists all of its
    data buffers there too, so callers take the list once)."""
    if buf is None or len(arr) == 0:
        return np.zeros(0, dtype=np.int32)
    return np.frombuffer(buf, dtype=np.int32, count=4 * (arr.offset + len(arr)))[4 * arr.offset:]


def validity_bits(arr: pa.Array, buf: pa.Buffer | None) -> np.ndarray:
    """Arrow's validity bitmap `buf` (`buffers()[0]`) as bytes, bit arr.offset + i for row i; empty when no
    row is null."""
    return _EMPTY if buf is None or arr.null_count == 0 else np.frombuffer(buf, dtype=np.uint8)


def view_values(arr: pa.Array, positions: np.ndarray, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (int64, from 0) and bytes of the values of view array `arr` at `positions` (int64 rows of the
    array, in the order wanted): one pass that sizes them, one that copies each from where it lies.
    `column` names the column in the error a malformed array raises."""
    bufs = arr.buffers()
    views = view_words(arr, bufs[1])
    offsets = np.empty(len(positions) + 1, dtype=np.int64)
    total = int(view_offsets(views, positions, offsets))
    if total < 0:
        raise GpuwriteError(f"column {column!r}: {arr.type} value at row {int(positions[-1 - total])} has a "
                            "negative length")
    data = np.empty(total, dtype=np.uint8)
    addresses = np.array([0 if b is None else b.address for b in bufs[2:]], dtype=np.int64)
    sizes = np.array([0 if b is None else b.size for b in bufs[2:]], dtype=np.int64)
    bad = int(gather_views(views, views.view(np.uint8), positions, addresses, sizes, offsets, data))
    if bad >= 0:
        raise GpuwriteError(f"column {column!r}: {arr.type} value at row {int(positions[bad])} points outside "
                            "the array's data buffers")
    return offsets, data


def present_rows(arr: pa.Array) -> np.ndarray:
    """The rows of `arr` that are not null, as int64 positions."""
    if arr.null_count == 0:
        return np.arange(len(arr), dtype=np.int64)
    return np.flatnonzero(np.asarray(arr.is_valid())).astype(np.int64)


def as_large(arr: pa.Array, column: str) -> pa.Array:
    """A view array as large_string / large_binary with the same values and nulls (other arrays as they are):
    for the paths that read Arrow's offsets layout (dictionaries, the device's conversion)."""
    if not is_view(arr.type):
        return arr
    rows = present_rows(arr)
    offsets, data = view_values(arr, rows, column)
    target = pa.large_string() if pa.types.is_string_view(arr.type) else pa.large_binary()
    bitmap = None
    if arr.null_count:  # a null row's value is empty: its end offset repeats the last present value's
        valid = np.asarray(arr.is_valid())
        offsets = np.concatenate([offsets[:1], offsets[np.cumsum(valid)]])
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(target, len(arr), [bitmap, pa.py_buffer(offsets), pa.py_buffer(data)],
                                 arr.null_count)


def _bitmap_bytes(arr: pa.Array) -> int:
    """Bytes of the rows' validity bitmap (counted where the array has nulls)."""
    return (len(arr) + 7) // 8 if arr.null_count else 0


def array_bytes(arr: pa.Array) -> int:
    """Arrow bytes of the rows of `arr` (as `nbytes` counts them), but a view array's data buffers counted by
    the rows' own values (16 bytes a view, plus the values longer than 12 bytes), not by the buffers' sizes."""
    t = arr.type
    if not has_view(t):
        return int(arr.nbytes)
    if is_view(t):
        bufs = arr.buffers()
        n = int(out_of_line_bytes(view_words(arr, bufs[1]), validity_bits(arr, bufs[0]), arr.offset))
        return _bitmap_bytes(arr) + 16 * len(arr) + n
    if pa.types.is_dictionary(t):
        return array_bytes(arr.indices) + array_bytes(arr.dictionary)
    if pa.types.is_struct(t):
        return _bitmap_bytes(arr) + sum(array_bytes(arr.field(i)) for i in range(t.num_fields))
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        return _bitmap_bytes(arr) + array_bytes(arr.values.slice(arr.offset * size, len(arr) * size))
    offsets = np.asarray(arr.offsets)  # list, large_list, map: the rows' offsets, into the unsliced values
    first, end = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
    return _bitmap_bytes(arr) + offsets.nbytes + array_bytes(arr.values.slice(first, end - first))


def column_bytes(column: pa.ChunkedArray | pa.Array) -> int:
    """`array_bytes` of a column's chunks."""
    if isinstance(column, pa.ChunkedArray):
        return sum(array_bytes(chunk) for chunk in column.chunks)
    return array_bytes(column)


def piece_bytes(piece: ArrowPiece) -> int:
    """The Arrow bytes of a batch's rows, what windows and row-group estimates size by: `nbytes`, with view
    columns counted by their rows' values (`array_bytes`), not by data buffers they may share."""
    if not isinstance(piece, pa.Table | pa.RecordBatch) or not any(has_view(f.type) for f in piece.schema):
        return int(piece.nbytes)
    return sum(column_bytes(piece.column(i)) if has_view(f.type) else int(piece.column(i).nbytes)
               for i, f in enumerate(piece.schema))

