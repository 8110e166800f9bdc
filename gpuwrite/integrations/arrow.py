"""Any supported input -> (Arrow schema, iterator of Arrow tables/batches), without materialising streams."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, TypeAlias

import pyarrow as pa

from ..errors import UnsupportedTypeError
from .c_stream_schema import unsupported_format, unsupported_type_message
from .device_data import DeviceTable
from .hints import is_column, not_writable

ArrowPiece: TypeAlias = "pa.Table | pa.RecordBatch | DeviceTable"
_NO_ITEM = object()  # what an empty iterator gives


def _from_pandas(df: Any, schema: pa.Schema | None = None) -> pa.Table:
    """A pandas DataFrame as an Arrow table, its index handled as pyarrow's `preserve_index=None` does (a
    RangeIndex only in the pandas metadata, any other index as columns); categoricals stay dictionaries.

    Given the writer's `schema`, index columns it does not have are dropped, so frames with any index can be
    streamed into a writer whose schema has no index.
    """
    table = pa.Table.from_pandas(df, preserve_index=None)
    if schema is not None:
        index = [c for c in (table.schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)]
        extra = [c for c in index if c not in schema.names]
        if extra:
            table = table.drop_columns(extra)
    return table


def _stream_reader(data: Any) -> pa.RecordBatchReader:
    """A reader of `data`'s Arrow C stream; a column pyarrow cannot import (polars' Int128) is an
    UnsupportedTypeError naming the column and what to cast it to, not pyarrow's bare format-string error."""
    try:
        return pa.RecordBatchReader.from_stream(data)
    except pa.ArrowInvalid as e:
        fmt = unsupported_format(str(e))
        if fmt is None:
            raise
        raise UnsupportedTypeError(unsupported_type_message(data, fmt)) from e


def is_pandas(data: Any) -> bool:
    """Whether data is a pandas DataFrame (without importing pandas): pandas 3 reports its classes' module
    as "pandas", earlier versions as "pandas.core.frame"."""
    mod = type(data).__module__
    return (mod == "pandas" or mod.startswith("pandas.")) and type(data).__name__ == "DataFrame"


def open_input(data: Any) -> tuple[pa.Schema, Iterator[ArrowPiece]]:
    """The schema of `data` and its rows as Arrow pieces, in order.

    Accepts pyarrow Table / RecordBatch / RecordBatchReader, pandas DataFrames, any object with
    `__arrow_c_stream__` (polars DataFrames, DuckDB relations, ...), device data (`device_input.py`: the
    Arrow C Device interface, cudf, CUDA arrays), which stays on the device, and an iterator (a generator) of
    any of these, whose first item gives the schema. Streams and iterators are read lazily. Anything else is
    an UnsupportedTypeError saying how to get data from it (`hints.py`).
    """
    if isinstance(data, pa.Table | pa.RecordBatch):
        return data.schema, iter([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, iter(data)
    if is_pandas(data):
        table = _from_pandas(data)
        return table.schema, iter([table])
    from .device_input import is_device_input, open_device_input

    if is_device_input(data):
        return open_device_input(data)
    if is_column(data):
        raise not_writable(data, "")
    if hasattr(data, "__arrow_c_stream__"):
        reader = _stream_reader(data)
        return reader.schema, iter(reader)
    if hasattr(data, "__arrow_c_array__"):
        batch = pa.record_batch(data)
        return batch.schema, iter([batch])
    if isinstance(data, Iterator):
        return _open_iterator(data)
    raise not_writable(data, "a pyarrow Table, RecordBatch or RecordBatchReader, a pandas DataFrame, an object "
                       "with __arrow_c_stream__, device data (__arrow_c_device_array__ / __arrow_c_device_stream__, "
                       "cudf, CUDA arrays by column name), or an iterator of these")


def _open_iterator(items: Iterator[Any]) -> tuple[pa.Schema, Iterator[ArrowPiece]]:
    """An iterator of batches (a generator), as pyarrow's RecordBatchReader: the first item's schema is the
    file's, and every later item must have it (the writer checks each)."""
    first = next(items, _NO_ITEM)
    if first is _NO_ITEM:
        raise UnsupportedTypeError("cannot write an empty iterator: with no first batch there is no schema; pass "
                                   "pa.RecordBatchReader.from_batches(schema, batches)")
    if isinstance(first, Iterator):
        raise not_writable(first, "batches (pyarrow RecordBatches or Tables, pandas or polars DataFrames) as the "
                           "items of an iterator")
    schema, head = open_input(first)
    return schema, itertools.chain(head, (as_arrow_piece(item, schema) for item in items))


def as_arrow_piece(data: Any, schema: pa.Schema | None = None, device: Any = None) -> ArrowPiece:
    """One batch for ParquetWriter.write: an Arrow table/batch, a pandas frame, an Arrow C stream, or device
    data (read through `device`, the GPU backend's, when it has one) (`schema`: the writer's, which decides
    whether a frame's index is kept; see _from_pandas)."""
    if isinstance(data, pa.Table | pa.RecordBatch):
        return data
    if is_pandas(data):
        return _from_pandas(data, schema)
    from .device_input import as_device_piece, is_device_input

    if is_device_input(data):
        return as_device_piece(data, device)
    if is_column(data):
        raise not_writable(data, "")
    if hasattr(data, "__arrow_c_stream__"):
        return _stream_reader(data).read_all()
    if hasattr(data, "__arrow_c_array__"):
        return pa.record_batch(data)
    if isinstance(data, Iterator):
        raise UnsupportedTypeError(f"cannot write {type(data).__name__} as one batch: write each of its batches "
                                   "(for batch in batches: writer.write(batch))")
    raise not_writable(data, "a pyarrow Table or RecordBatch, a pandas DataFrame, or an object with "
                       "__arrow_c_stream__")


class _Relabelled:
    """An Arrow array exported through the C data interface under another type of the same layout."""

    def __init__(self, arr: pa.Array, type_: pa.DataType) -> None:
        self.arr, self.type = arr, type_

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        """The array's C data, described by `type` instead of its own."""
        return self.type.__arrow_c_schema__(), self.arr.__arrow_c_array__()[1]


def relabel(arr: pa.Array, type_: pa.DataType) -> pa.Array:
    """`arr` (buffers, offsets, children shared) as `type_`, a type that differs from its own only in field
    nullability or metadata. Arrow's cast and view refuse a non-nullable field whose child holds any null,
    even under a null parent, where no value is; the caller checks what matters (`pipeline/nullability.py`)."""
    return arr if arr.type.equals(type_, check_metadata=True) else pa.array(_Relabelled(arr, type_))
