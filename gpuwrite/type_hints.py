"""The way out for an Arrow type gpuwrite refuses: which cast (or option) writes the column anyway.

Spark has no unsigned integers, no NULL-typed columns, no half floats, no TIME and no DURATION types, so a
file Spark reads as its own cannot hold them; the error for such a column ends with the cast that fixes it.
"""

from __future__ import annotations

import pyarrow as pa

_UNSIGNED = {pa.uint8(): "int16", pa.uint16(): "int32", pa.uint32(): "int64", pa.uint64(): "decimal128(20, 0)"}



def cast_hint(t: pa.DataType, column: str) -> str:
    """'; cast it to ...' for the refused type `t` of `column` (its dotted path), or '' with no simple way out."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    top = "." not in column
    if t in _UNSIGNED:
        wider = _UNSIGNED[t]
        extra = " (or to int64 when every value is below 2**63)" if t == pa.uint64() else ""
        how = (f", e.g. table.set_column(table.schema.get_field_index({column!r}), {column!r}, "
               f"table[{column!r}].cast(pa.{_ARROW[wider]})) or, in polars, pl.col({column!r}).cast(pl.{_POLARS[wider]})"
               if top else "")
        return (f"; cast it to {wider}, which holds every {t} value{extra}{how}; or pass widen_unsigned=True to "
                "widen every unsigned column losslessly")
    if pa.types.is_null(t):
        how = f", e.g. table[{column!r}].cast(pa.string())" if top else ""
        return ("; it has no type (every value is null, e.g. a pandas column of None or polars' pl.lit(None)): "
                f"cast it to the type it stands for{how}, or drop it")
    if pa.types.is_float16(t):
        return "; cast it to float32 (lossless)"
    if pa.types.is_date64(t):
        return "; cast it to date32 (Spark's DATE) or to a timestamp"
    if pa.types.is_time(t):
        return "; Spark has no TIME type: cast it to int64 (e.g. microseconds since midnight) or to a string"
    if pa.types.is_duration(t):
        return "; Spark has no DURATION type for Parquet: cast it to int64 (its count of units)"
    if pa.types.is_fixed_size_binary(t):
        return "; cast it to binary"
    if pa.types.is_interval(t):
        return "; Spark has no Parquet mapping for intervals: write its parts as int columns"
    return ""


_ARROW = {"int16": "int16()", "int32": "int32()", "int64": "int64()", "decimal128(20, 0)": "decimal128(20, 0)"}
_POLARS = {"int16": "Int16", "int32": "Int32", "int64": "Int64", "decimal128(20, 0)": "Decimal(20, 0)"}
