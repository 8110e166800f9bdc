"""What to do with an input that is almost data: a lazy query, a connection, one column, a styled frame.

Each is recognised by its class's module and name, so no library is imported to tell; the error for it says
the call that gives something gpuwrite writes.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..errors import UnsupportedTypeError


def _library(data: Any) -> tuple[str, str]:
    """(the top-level package of data's class, the class name); DuckDB's classes live in `_duckdb`."""
    cls = type(data)
    return cls.__module__.split(".")[0].lstrip("_"), cls.__name__


def is_column(data: Any) -> bool:
    """Whether data is one column (a pandas or polars Series, a pyarrow Array or ChunkedArray), not a table."""
    library, name = _library(data)
    return isinstance(data, pa.Array | pa.ChunkedArray) or (library in ("pandas", "polars") and name == "Series")


def input_hint(data: Any) -> str | None:
    """The way from `data` to something gpuwrite writes, or None when it is nothing gpuwrite knows."""
    library, name = _library(data)
    if library == "polars" and name == "LazyFrame":
        return "a polars LazyFrame is a query, not its rows: call .collect() first (or pass lf.collect())"
    if library == "duckdb" and name == "DuckDBPyConnection":
        return ("a DuckDB connection (con.execute(...) returns the connection itself): call .arrow() or "
                ".fetch_arrow_table() on it, or pass con.sql(...), a relation, which is written as a stream")
    if library == "duckdb" and (hasattr(data, "arrow") or hasattr(data, "fetch_arrow_table")):
        return f"a DuckDB {name}: call .arrow() or .fetch_arrow_table() on it"
    if library == "pandas" and name == "Styler":
        return "a pandas Styler: pass its .data (the DataFrame it styles)"
    if library in ("pandas", "polars") and name == "Series":
        return f"a {library} Series is one column, not a table: pass series.to_frame()"
    if isinstance(data, pa.Array | pa.ChunkedArray):
        return "a pyarrow array is one column, not a table: pass pa.table({'name': array})"
    if isinstance(data, list | tuple) and data and all(isinstance(b, pa.RecordBatch | pa.Table) for b in data):
        return ("a list of batches: pass iter(batches), pa.Table.from_batches(batches), or "
                "pa.RecordBatchReader.from_batches(schema, batches)")
    return None


def not_writable(data: Any, expected: str) -> UnsupportedTypeError:
    """The error for `data` gpuwrite cannot write: the way out when there is one, else what it takes."""
    hint = input_hint(data)
    return UnsupportedTypeError(f"cannot write {type(data).__name__}: {hint or 'expected ' + expected}")
