"""A small Arrow batch made from Python lists without pyarrow's object conversion, for what a Spark task sends
back to the driver.

`pa.array` / `RecordBatch.from_pydict` ask pandas whether each input is one of its arrays, and so import it: about
0.3 s in a PySpark worker, which never loads pandas for `mapInArrow`. The columns here are built from their
buffers instead (NumPy for numbers, UTF-8 bytes and offsets for strings); no value may be null.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

_NUMPY = {pa.int32(): np.int32, pa.int64(): np.int64, pa.float64(): np.float64}


def _column(name: str, values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """One non-null column of `type_` (string, int32, int64 or float64) holding `values`."""
    if any(v is None for v in values):
        raise ValueError(f"column {name!r}: rows_batch columns hold no nulls")
    if pa.types.is_string(type_):
        data = [str(v).encode() for v in values]
        offsets = np.zeros(len(data) + 1, dtype=np.int32)
        np.cumsum([len(d) for d in data], out=offsets[1:])
        return pa.Array.from_buffers(type_, len(data), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])
    if type_ not in _NUMPY:
        raise TypeError(f"column {name!r}: rows_batch has no conversion for {type_}")
    return pa.Array.from_buffers(type_, len(values), [None, pa.py_buffer(np.asarray(values, dtype=_NUMPY[type_]))])


def rows_batch(columns: Mapping[str, Sequence[Any]], schema: pa.Schema) -> pa.RecordBatch:
    """The batch of `schema` whose columns hold `columns[name]` (every field named, lists of one length)."""
    return pa.RecordBatch.from_arrays([_column(f.name, columns[f.name], f.type) for f in schema], schema=schema)
