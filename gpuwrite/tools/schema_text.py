"""A schema written as text, in Spark's DDL (`a INT, b DECIMAL(10,2), c STRING NOT NULL`) or as pyarrow prints
one (`a: int32, b: decimal128(10, 2), c: string not null`), parsed into a pyarrow.Schema.

Used by `gpuwrite write --schema` to type CSV columns. Spark's TIMESTAMP is an instant (TIMESTAMP_LTZ): it
becomes a timestamp with the session time zone; TIMESTAMP_NTZ one without. VARCHAR(n) and CHAR(n) are
strings, as Spark writes them. Nested types are refused: a CSV cell holds one value.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pyarrow as pa

from ..errors import GpuwriteError

# SPEC: Spark's DataType.fromDDL names (sql/api DataTypeAstBuilder) and pyarrow's type names.
_SIMPLE: dict[str, Callable[[], pa.DataType]] = {
    **dict.fromkeys(("boolean", "bool"), pa.bool_),
    **dict.fromkeys(("tinyint", "byte", "int8"), pa.int8),
    **dict.fromkeys(("smallint", "short", "int16"), pa.int16),
    **dict.fromkeys(("int", "integer", "int32"), pa.int32),
    **dict.fromkeys(("bigint", "long", "int64"), pa.int64),
    "uint8": pa.uint8, "uint16": pa.uint16, "uint32": pa.uint32, "uint64": pa.uint64,
    **dict.fromkeys(("float", "real", "float32"), pa.float32),
    **dict.fromkeys(("double", "float64"), pa.float64),
    **dict.fromkeys(("halffloat", "float16"), pa.float16),
    **dict.fromkeys(("string", "utf8", "str"), pa.string),
    **dict.fromkeys(("large_string", "large_utf8"), pa.large_string),
    "binary": pa.binary, "large_binary": pa.large_binary,
    **dict.fromkeys(("date", "date32", "date32[day]"), pa.date32),
    "timestamp_ntz": lambda: pa.timestamp("us"),
}
_NESTED = ("array", "map", "struct", "list", "large_list")
_DECIMAL = re.compile(r"(?:decimal|dec|numeric|decimal128|decimal256)\s*(?:\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\))?")
_TIMESTAMP = re.compile(r"timestamp\[\s*(s|ms|us|ns)\s*(?:,\s*tz\s*=\s*([^\]]+?))?\s*\]")
_CHARS = re.compile(r"(?:var)?char\s*\(\s*\d+\s*\)")
_NOT_NULL = re.compile(r"\s+not\s+null\s*$", re.IGNORECASE)
_COMMENT = re.compile(r"\s+comment\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\s*$", re.IGNORECASE)
_NAME = re.compile(r"\s*(`(?:[^`]|``)+`|\"[^\"]+\"|[^\s:`\"(),<>]+)\s*(:?)\s*(.*)$", re.DOTALL)


class SchemaTextError(GpuwriteError, ValueError):
    """A schema string that does not parse (the message names the field and what was expected)."""


def parse_schema_text(text: str, time_zone: str = "UTC") -> pa.Schema:
    """Parse Spark DDL or pyarrow's schema text into a pyarrow.Schema (see the module docstring)."""
    fields = [f for f in _split_top_level(text.replace("\n", ",")) if f.strip()]
    if not fields:
        raise SchemaTextError(f"schema {text!r} names no columns (e.g. 'a INT, b DECIMAL(10,2), c STRING')")
    out: list[pa.Field] = []
    for part in fields:
        out.append(_field(part.strip(), time_zone))
    names = [f.name for f in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SchemaTextError(f"schema names column {dupes[0]!r} more than once")
    return pa.schema(out)


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside (), <>, [] and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "`'\"":
            quote = ch
        elif ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _field(part: str, time_zone: str) -> pa.Field:
    """One 'name [:] type [NOT NULL] [COMMENT '...']' item."""
    match = _NAME.match(part)
    if match is None or not match.group(3).strip():
        raise SchemaTextError(f"schema item {part!r} is not 'name TYPE' (e.g. 'price DECIMAL(10,2)')")
    raw_name, _, rest = match.groups()
    name = raw_name[1:-1].replace("``", "`") if raw_name[0] in "`\"" else raw_name
    rest = _COMMENT.sub("", rest.strip())
    nullable = _NOT_NULL.search(rest) is None
    type_text = _NOT_NULL.sub("", rest).strip()
    return pa.field(name, parse_type(type_text, name, time_zone), nullable=nullable)


def parse_type(text: str, column: str, time_zone: str = "UTC") -> pa.DataType:
    """One type name, Spark's or pyarrow's, for column `column` (named in errors)."""
    low = re.sub(r"\s+", " ", text.strip().lower())
    simple = _SIMPLE.get(low)
    if simple is not None:
        return simple()
    if low in ("timestamp", "timestamp_ltz"):
        return pa.timestamp("us", tz=time_zone)
    if _CHARS.fullmatch(low):
        return pa.string()
    match = _DECIMAL.fullmatch(low)
    if match is not None:
        precision = int(match.group(1)) if match.group(1) else 10
        scale = int(match.group(2)) if match.group(2) else 0
        if not 1 <= precision <= 76 or not 0 <= scale <= precision:
            raise SchemaTextError(f"column {column!r}: {text} needs 1 <= precision <= 38 and 0 <= scale <= "
                                  "precision")
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    match = _TIMESTAMP.fullmatch(text.strip())
    if match is not None:
        return pa.timestamp(match.group(1), tz=match.group(2))
    if low.split("<")[0].split("(")[0].strip() in _NESTED:
        raise SchemaTextError(f"column {column!r}: nested type {text} cannot be read from CSV (a cell holds "
                              "one value)")
    raise SchemaTextError(f"column {column!r}: unknown type {text!r} (Spark: BOOLEAN, TINYINT, SMALLINT, INT, "
                          "BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING, BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ; "
                          "or pyarrow's names: int64, float64, string, decimal128(p, s), timestamp[us, tz=UTC], ...)")
