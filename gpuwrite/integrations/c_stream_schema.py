"""Columns of an Arrow C stream's schema that pyarrow cannot import, named for the error message.

pyarrow refuses a whole stream when one column has a format string it does not know (polars' Int128 is
`_pli128`) and names only the format. To name the column, the stream's schema is read once more, as the
Arrow C stream interface allows (ArrowArrayStream.get_schema), and walked: nothing of the data is read.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Iterator
from typing import Any

from .c_device import ArrowSchema, capsule_pointer

STREAM_CAPSULE = b"arrow_array_stream"
_UNSUPPORTED = re.compile(r"unsupported format string: '([^']*)'")
# Format strings of producers' own types, as their users know them (polars' extension formats).
FORMAT_NAMES = {"_pli128": "polars Int128", "_plu128": "polars UInt128"}


class ArrowArrayStream(ctypes.Structure):
    """struct ArrowArrayStream (the host stream of the Arrow C stream interface)."""


GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream), ctypes.POINTER(ArrowSchema))
RELEASE_SCHEMA = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
ArrowArrayStream._fields_ = [
    ("get_schema", GET_SCHEMA), ("get_next", ctypes.c_void_p), ("get_last_error", ctypes.c_void_p),
    ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


def unsupported_format(message: str) -> str | None:
    """The format string an ArrowInvalid message says pyarrow does not support, or None."""
    m = _UNSUPPORTED.search(message)
    return m.group(1) if m else None


def _paths(schema: ArrowSchema, prefix: str, fmt: bytes) -> Iterator[str]:
    """Dotted paths (below `prefix`) of the fields of `schema` whose format is `fmt`."""
    for i in range(schema.n_children):
        child = schema.children[i].contents
        name = (child.name or b"").decode("utf-8", "replace")
        path = f"{prefix}.{name}" if prefix else name
        if child.format == fmt:
            yield path
        yield from _paths(child, path, fmt)


def columns_with_format(data: Any, fmt: str) -> list[str]:
    """The columns (dotted paths) of `data`'s Arrow C stream whose format string is `fmt`; empty when the
    stream cannot be asked again (a one-shot producer) or has none."""
    try:
        capsule = data.__arrow_c_stream__()
        stream = ArrowArrayStream.from_address(capsule_pointer(capsule, STREAM_CAPSULE))
        schema = ArrowSchema()
        if not stream.release or stream.get_schema(ctypes.pointer(stream), ctypes.pointer(schema)) != 0:
            return []
    except Exception:
        return []
    try:
        if schema.format == fmt.encode():  # a stream of one column (a polars Series), not of a table's rows
            return [(schema.name or b"").decode("utf-8", "replace")]
        return list(_paths(schema, "", fmt.encode()))
    finally:
        if schema.release:
            RELEASE_SCHEMA(schema.release)(ctypes.pointer(schema))  # the capsule's destructor ends the stream


def unsupported_type_message(data: Any, fmt: str) -> str:
    """What to tell the user about a column of format `fmt` that pyarrow cannot read: the column(s), the
    type as their library calls it, and what to cast it to."""
    columns = columns_with_format(data, fmt)
    where = f"column {columns[0]!r}" if len(columns) == 1 else f"columns {columns}" if columns else "a column"
    kind = FORMAT_NAMES.get(fmt)
    if kind is None:
        return (f"{where}: Arrow format {fmt!r} is not a type pyarrow can read (gpuwrite reads the input "
                "through pyarrow); cast it to a standard Arrow type first")
    fits = "" if fmt == "_pli128" else " (values below 10**38) or to a string"
    example = columns[0] if columns else "name"
    return (f"{where}: {kind} is not supported (Parquet and Spark have no 128-bit integer type); cast it to "
            f"Decimal(38, 0){fits} first, e.g. df.with_columns(pl.col({example!r}).cast(pl.Decimal(38, 0)))")
