"""Any supported input -> (Arrow schema, iterator of Arrow tables/batches), without materialising streams."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeAlias

import pyarrow as pa

ArrowPiece: TypeAlias = "pa.Table | pa.RecordBatch"


def _from_pandas(df: Any) -> pa.Table:
    """A pandas DataFrame as an Arrow table (index dropped, as Spark has none; categoricals stay dictionaries)."""
    return pa.Table.from_pandas(df, preserve_index=False)


def is_pandas(data: Any) -> bool:
    """Whether data is a pandas DataFrame (without importing pandas)."""
    mod = type(data).__module__
    return mod.startswith("pandas.") and type(data).__name__ == "DataFrame"


def open_input(data: Any) -> tuple[pa.Schema, Iterator[ArrowPiece]]:
    """The schema of `data` and its rows as Arrow pieces, in order.

    Accepts pyarrow Table / RecordBatch / RecordBatchReader, pandas DataFrames, and any object with
    `__arrow_c_stream__` (polars DataFrames, DuckDB relations, ...). Streams are read lazily.
    """
    if isinstance(data, pa.Table | pa.RecordBatch):
        return data.schema, iter([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, iter(data)
    if is_pandas(data):
        table = _from_pandas(data)
        return table.schema, iter([table])
    if hasattr(data, "__arrow_c_stream__"):
        reader = pa.RecordBatchReader.from_stream(data)
        return reader.schema, iter(reader)
    if hasattr(data, "__arrow_c_array__"):
        batch = pa.record_batch(data)
        return batch.schema, iter([batch])
    raise TypeError(f"cannot write {type(data).__name__}: expected a pyarrow Table, RecordBatch or "
                    "RecordBatchReader, a pandas DataFrame, or an object with __arrow_c_stream__")


def as_arrow_piece(data: Any) -> ArrowPiece:
    """One batch for ParquetWriter.write: an Arrow table/batch, a pandas frame, or an Arrow C stream."""
    if isinstance(data, pa.Table | pa.RecordBatch):
        return data
    if is_pandas(data):
        return _from_pandas(data)
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data).read_all()
    if hasattr(data, "__arrow_c_array__"):
        return pa.record_batch(data)
    raise TypeError(f"cannot write {type(data).__name__}: expected a pyarrow Table or RecordBatch, a pandas "
                    "DataFrame, or an object with __arrow_c_stream__")
