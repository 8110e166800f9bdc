"""The footer keys that let pandas read a frame back as it was written: `pandas` (index, dtypes, column names,
time zones) and, when a categorical needs it, `ARROW:schema`.

SPEC: pyarrow's `pandas_compat.construct_metadata` makes the `pandas` key when a frame becomes an Arrow table;
`parquet/arrow/writer.cc GetSchemaMetadata` writes the schema's metadata and `ARROW:schema` (the IPC schema,
base64) into the footer; on reading, `pandas_compat.table_to_dataframe` rebuilds the index and the extension
dtypes and `_add_any_metadata` the zone of `datetimetz` columns from the `pandas` key alone, while
`parquet/arrow/schema.cc ApplyOriginalMetadata` reads a string column as a dictionary (a categorical) only when
`ARROW:schema` says so.

gpuwrite keeps the input's `pandas` metadata, made to describe the file written: entries of columns the file
lacks are dropped, widened columns say their written type, a RangeIndex whose length is not the file's row count
is dropped (pyarrow's reader ignores it too), and categoricals, written by value, are described as their values
(fastparquet, which reads a `categorical` entry's v2 dictionary pages as codes, gets wrong values otherwise).
`ARROW:schema` is written only for the categoricals pyarrow reads back as they went in (unordered ones of strings
or bytes, whose pages are all dictionary or PLAIN: gpuwrite's dictionary is in first-occurrence order, and pyarrow
reads only BYTE_ARRAY columns as dictionaries, and not from DELTA_BYTE_ARRAY fallback pages). It is pyarrow's own
reading of the file's Parquet schema with those columns as dictionaries, so every other column reads exactly as
without it (by pyarrow, and by polars, which takes the whole schema from it).
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ..assemble.footer import file_metadata
from ..format.enums import Encoding
from ..format.thrift import serialize
from ..schema import FileSchema

PANDAS_KEY = "pandas"
ARROW_SCHEMA_KEY = "ARROW:schema"
# pandas' nullable dtypes of the unsigned types `widen_unsigned` widens, as the widened column reads back
_WIDENED_NULLABLE = {"UInt8": "Int16", "UInt16": "Int32", "UInt32": "Int64", "UInt64": "object"}
# SPEC: pyarrow reads a BYTE_ARRAY column as a dictionary only from these encodings (its DictAccumulator has no
# DELTA_* decoder: "DecodeArrow of DictAccumulator for DeltaByteArrayDecoder" is not implemented); a categorical
# whose pages fell back to DELTA_BYTE_ARRAY is read as strings
DICTIONARY_READABLE = frozenset({Encoding.PLAIN, Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY, Encoding.RLE,
                                 Encoding.BIT_PACKED})


def pandas_metadata(schema: pa.Schema) -> dict[str, Any] | None:
    """The schema's `pandas` metadata, or None when it has none (or none pandas could read)."""
    raw = (schema.metadata or {}).get(PANDAS_KEY.encode())
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("columns"), list) \
            or not isinstance(meta.get("index_columns"), list):
        return None
    return meta


def _field_name(entry: dict[str, Any]) -> Any:
    """The Arrow field an entry of `columns` describes (metadata before pyarrow 0.8 has only `name`)."""
    return entry.get("field_name", entry.get("name"))


def _plain_entry(entry: dict[str, Any], written: pa.DataType) -> dict[str, Any]:
    """`entry` describing a column of Arrow type `written`, as pyarrow describes one (`get_logical_type`, the
    numpy dtype's name); a nullable unsigned dtype says the nullable type it was widened to."""
    from pyarrow.pandas_compat import get_logical_type

    numpy_type = _WIDENED_NULLABLE.get(str(entry.get("numpy_type")), np.dtype(written.to_pandas_dtype()).name)
    return {**entry, "pandas_type": get_logical_type(written), "numpy_type": numpy_type, "metadata": None}


def restores_as_categorical(t: pa.DataType) -> bool:
    """Whether pyarrow reads a categorical of this dictionary type back as the same categorical: unordered (the
    file's dictionary is in first-occurrence order, not the categories') and of strings or bytes (pyarrow reads
    only BYTE_ARRAY columns as dictionaries)."""
    value = t.value_type
    return not t.ordered and (pa.types.is_string(value) or pa.types.is_large_string(value)
                              or pa.types.is_binary(value) or pa.types.is_large_binary(value)
                              or pa.types.is_string_view(value) or pa.types.is_binary_view(value))


def _adjusted_columns(meta: dict[str, Any], given: pa.Schema, written: pa.Schema) -> tuple[list[Any], list[str]]:
    """The `columns` entries of the fields the file has, each describing its written type; and the names of
    the categoricals read back as such."""
    columns, categorical = [], []
    types = {f.name: (g.type, f.type) for g, f in zip(given, written, strict=True)}  # one pass: wide frames
    for entry in meta["columns"]:
        name = _field_name(entry) if isinstance(entry, dict) else None
        if not isinstance(name, str) or name not in types:
            continue  # a column the file does not have (dropped index, partition column, a schema without it)
        before, after = types[name]
        if pa.types.is_dictionary(after):
            # described by its values: fastparquet reads a `categorical` entry's DATA_PAGE_V2 dictionary pages as
            # wrong codes (pyarrow's v2 files too); ARROW:schema makes pyarrow read it as the categorical it was
            if entry.get("pandas_type") == "categorical" and restores_as_categorical(after):
                categorical.append(name)
            entry = _plain_entry(entry, after.value_type)
        elif before != after:
            entry = _plain_entry(entry, after)  # widened
        columns.append(entry)
    return columns, categorical


def _range_length(descriptor: dict[str, Any]) -> int | None:
    """Rows of a RangeIndex descriptor, None when it is not a well-formed one."""
    try:
        return len(range(descriptor["start"], descriptor["stop"], descriptor["step"]))
    except (KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class PandasFooter:
    """The `pandas` (and `ARROW:schema`) footer entries of one file. What depends on the rows written (a
    RangeIndex's length, the encodings of a categorical's pages) is settled at close, when it is known."""

    meta: dict[str, Any]
    raw: str  # the input's own text, written as is when nothing needed changing
    changed: bool
    file_schema: FileSchema
    categorical: tuple[str, ...]  # columns pyarrow can read back as the categoricals they were

    @classmethod
    def of(cls, given: pa.Schema, file_schema: FileSchema) -> PandasFooter | None:
        """The footer entries for a file of `file_schema` written from Arrow schema `given` (the writer's, before
        widening); None when `given` carries no pandas metadata (non-pandas inputs: the footer is unchanged)."""
        meta = pandas_metadata(given)
        if meta is None:
            return None
        written = file_schema.arrow
        columns, categorical = _adjusted_columns(meta, given, written)
        names = set(written.names)
        index = [c for c in meta["index_columns"] if not isinstance(c, str) or c in names]
        adjusted = {**meta, "columns": columns, "index_columns": index}
        raw = (given.metadata or {})[PANDAS_KEY.encode()].decode()
        return cls(adjusted, raw, adjusted != meta, file_schema, tuple(categorical))

    def entries(self, num_rows: int, encodings: Mapping[str, AbstractSet[int]]) -> list[tuple[str, str]]:
        """(key, value) pairs for a file of `num_rows` rows whose top-level columns' pages used `encodings`:
        `pandas`, then `ARROW:schema` when a categorical's pages can be read as a dictionary."""
        meta, changed = self.meta, self.changed
        index = [c for c in meta["index_columns"] if isinstance(c, str) or _range_length(c) == num_rows]
        if len(index) != len(meta["index_columns"]):
            meta, changed = {**meta, "index_columns": index}, True
        text = json.dumps(meta) if changed else self.raw
        out = [(PANDAS_KEY, text)]
        readable = [name for name in self.categorical if encodings.get(name, frozenset()) <= DICTIONARY_READABLE]
        arrow = _arrow_schema(self.file_schema, readable) if readable else None
        if arrow is not None:
            schema = arrow.with_metadata({PANDAS_KEY: text})
            out.append((ARROW_SCHEMA_KEY, base64.b64encode(schema.serialize().to_pybytes()).decode()))
        return out


def _arrow_schema(file_schema: FileSchema, categorical: list[str]) -> pa.Schema | None:
    """pyarrow's reading of the file's Parquet schema (from a footer-only file of it), with the `categorical`
    columns as the dictionaries they were (their index type, their read value type); None when pyarrow cannot
    read the schema (`legacy_format`'s repeated list groups: it cannot read the file either)."""
    import pyarrow.parquet as pq

    footer = serialize(file_metadata(file_schema, [], 0, []))
    stub = b"PAR1" + footer + struct.pack("<I", len(footer)) + b"PAR1"
    try:
        read = pq.read_schema(pa.BufferReader(stub)).remove_metadata()
    except (pa.ArrowException, ValueError, OSError):
        return None
    for name in categorical:
        i = read.get_field_index(name)
        given = file_schema.arrow.field(name).type
        read = read.set(i, read.field(i).with_type(pa.dictionary(given.index_type, read.field(i).type)))
    return read
