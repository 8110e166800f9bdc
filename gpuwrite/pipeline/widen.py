"""`widen_unsigned=True`: unsigned integer columns written as the smallest signed type holding every value.

Spark (and so a Spark-compatible Parquet file) has no unsigned types. uint8 -> int16, uint16 -> int32, uint32 ->
int64, uint64 -> decimal(20,0): lossless, read back by every reader as those types. Each widened field says
what it was in Spark's schema in the footer (`org.apache.spark.sql.parquet.row.metadata`): its field metadata
gets `"gpuwrite.widened_from": "<the Arrow type it had>"`, on the nearest field Spark's schema has (a top-level
field or a struct's child; for a list or map, the field holding it), so Spark shows it in `df.schema` and
pyarrow in the file's key-value metadata.

`allow_truncated_timestamps=True` (pyarrow's keyword) casts timestamp[ns] columns to timestamp[us] the same way,
truncating sub-microsecond parts toward zero as pyarrow's writer does with it, where they are refused otherwise
(the file is the one the microsecond values give: gpuwrite writes microseconds either way).
"""

from __future__ import annotations

import pyarrow as pa

from ..errors import SchemaMismatchError
from ..integrations.arrow import ArrowPiece
from ..integrations.device_data import DeviceTable
from .nested_types import rebuilt_type
from .nullability import conform, loose_type

WIDENED_FROM = "gpuwrite.widened_from"
_WIDER = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(), pa.uint64(): pa.decimal128(20, 0)}


def widen_type(t: pa.DataType) -> pa.DataType:
    """`t` with every unsigned integer type in it (nested too, dictionary values too) widened."""
    return rebuilt_type(t, lambda x: _WIDER.get(x, x), widen_field)


def widen_field(f: pa.Field) -> pa.Field:
    """The field with its type widened; a field whose type changed (and is not a struct, whose children say it)
    carries its original type in its metadata."""
    t = widen_type(f.type)
    if t == f.type:
        return f
    widened = pa.field(f.name, t, f.nullable, f.metadata)
    if pa.types.is_struct(f.type):
        return widened
    return widened.with_metadata({**(f.metadata or {}), WIDENED_FROM.encode(): str(f.type).encode()})


def _micros(t: pa.DataType) -> pa.DataType:
    """timestamp[us] for timestamp[ns] (same zone); other types as they are."""
    return pa.timestamp("us", t.tz) if pa.types.is_timestamp(t) and t.unit == "ns" else t


def truncate_field(f: pa.Field) -> pa.Field:
    """The field with every timestamp[ns] in its type (nested too) as timestamp[us]."""
    t = rebuilt_type(f.type, _micros, truncate_field)
    return f if t == f.type else pa.field(f.name, t, f.nullable, f.metadata)


def widen_schema(schema: pa.Schema, widen: bool = True, truncate: bool = False) -> pa.Schema:
    """The schema written for `schema`: unsigned integers widened (`widen`: widen_unsigned), nanosecond
    timestamps as microseconds (`truncate`: allow_truncated_timestamps); the same object when nothing changes."""
    fields = list(schema)
    if widen:
        fields = [widen_field(f) for f in fields]
    if truncate:
        fields = [truncate_field(f) for f in fields]
    if all(a.equals(b, check_metadata=True) for a, b in zip(fields, schema, strict=True)):
        return schema
    return pa.schema(fields, schema.metadata)


def widen_piece(piece: ArrowPiece, given: pa.Schema, written: pa.Schema, truncate: bool = False) -> ArrowPiece:
    """A batch of the writer's input schema `given`, cast to the written schema `written` (lossless, but for
    sub-microsecond parts when `truncate`). A batch of other columns or types is refused here: a cast would
    hide the difference."""
    if piece.schema.names != given.names:
        raise SchemaMismatchError(f"batch columns {piece.schema.names} differ from the writer's schema {given.names}")
    for f_given, f_got in zip(given, piece.schema, strict=True):
        if f_got.type != f_given.type:
            raise SchemaMismatchError(f"column {f_given.name!r}: batch has type {f_got.type}, the writer's schema "
                                      f"has {f_given.type}")
    if isinstance(piece, DeviceTable):  # unsigned device columns: cast on the host (not yet on the device)
        piece = piece.to_host()
    # SPEC: pyarrow's allow_truncated_timestamps: Arrow's unsafe cast, which truncates toward zero
    # cast with every field nullable, then read as `written`: Arrow's cast refuses a non-nullable field with a
    # null anywhere, even where no value is (under a null struct row); the batch checks judge the nulls next
    loose = pa.schema([pa.field(f.name, loose_type(f.type), True, f.metadata) for f in written], written.metadata)
    return conform(piece.cast(loose, safe=not truncate), written)


def spark_field_metadata(f: pa.Field) -> dict[str, str]:
    """What Spark's schema JSON records in a field's `metadata` for an Arrow field: the widened-from type."""
    raw = (f.metadata or {}).get(WIDENED_FROM.encode())
    return {WIDENED_FROM: raw.decode()} if raw is not None else {}
