"""Hive-style partition directories as Spark names them (ExternalCatalogUtils, Cast to string).

A directory fragment is `escape(column)=escape(value)`; a null or empty value is `__HIVE_DEFAULT_PARTITION__`.
Values are rendered as Spark's `CAST(value AS STRING)` renders them in the session time zone. Where Spark's
rendering would lose the value or fail, gpuwrite refuses it with a PartitionError naming column and value:
binary values that are not UTF-8 (Spark writes `p=\ufffd`, one directory for every such value, read back as
a string that is not the value), and NUL (Spark fails to create the directory). Column names that are empty,
start with `.` (Spark and pyarrow skip such directories when reading, so the rows would vanish) or hold NUL are
refused by `check_partition_column`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Sequence
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa

from ...errors import GpuwriteError

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# SPEC: ExternalCatalogUtils.charToEscape (non-Windows): 0x01-0x1F, " # % ' * / : = ? \ 0x7F { [ ] ^
class PartitionError(GpuwriteError, ValueError):
    """A partition column or value that Spark's layout cannot hold without losing it."""


_ESCAPED = frozenset([chr(c) for c in range(0x01, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^"))


def escape_path_name(text: str) -> str:
    """Escape a partition column name or value as Spark does: `%XX`, upper-case hex."""
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in text)


def java_float_string(value: float, single: bool = False) -> str:
    """Java's Double.toString / Float.toString (Spark's cast to string): 1.0, 1.0E10, 1.5E-5, NaN, Infinity.

    Shortest round-trip digits (as JDK 19+; JDK 17 differs from it in rare last-digit cases).
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    shortest = np.format_float_scientific(np.float32(value) if single else value, unique=True, trim="-")
    sign = "-" if shortest.startswith("-") else ""
    mantissa, exp_text = shortest.lstrip("-").split("e")
    digits = mantissa.replace(".", "")
    exp = int(exp_text)
    if 1e-3 <= abs(value) < 1e7:
        if exp >= 0:
            whole, frac = digits[: exp + 1].ljust(exp + 1, "0"), digits[exp + 1:]
        else:
            whole, frac = "0", "0" * (-exp - 1) + digits
        return f"{sign}{whole}.{frac or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp}"


def _timestamp_string(value: dt.datetime) -> str:
    """`yyyy-MM-dd HH:mm:ss[.ffffff]` with trailing zeros of the fraction dropped."""
    text = value.strftime("%Y-%m-%d %H:%M:%S") if value.year >= 1000 else \
        f"{value.year:04d}-{value:%m-%d %H:%M:%S}"
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


def spark_string(value: Any, arrow_type: pa.DataType, time_zone: str) -> str | None:
    """`CAST(value AS STRING)` as Spark renders it; None for null. Binary that is not UTF-8 raises
    UnicodeDecodeError (Spark would render U+FFFD; `partition_directory` refuses it)."""
    if value is None:
        return None
    if pa.types.is_boolean(arrow_type):
        return "true" if value else "false"
    if pa.types.is_floating(arrow_type):
        return java_float_string(float(value), single=pa.types.is_float32(arrow_type))
    if pa.types.is_decimal(arrow_type):
        return format(decimal.Decimal(value), "f")
    if pa.types.is_date(arrow_type):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if pa.types.is_timestamp(arrow_type):
        if arrow_type.tz is not None:
            value = value.astimezone(ZoneInfo(time_zone)).replace(tzinfo=None)
        return _timestamp_string(value)
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return bytes(value).decode("utf-8")
    return str(value)


def check_partition_column(column: str) -> None:
    """Refuse a partition column name whose directories would be skipped by readers or cannot be made."""
    if not column or column.startswith(".") or "\x00" in column:
        raise PartitionError(f"partition column {column!r}: a partition column name must not be empty, start "
                             "with '.' (readers skip such directories, so its rows would be lost) or hold NUL")


def partition_fragment(column: str, value: str | None) -> str:
    """`col=value` with Spark's escaping; null and empty strings go to the default partition; a value holding
    NUL (which no directory name can) raises PartitionError."""
    if value is not None and "\x00" in value:
        raise PartitionError(f"partition column {column!r}: value {value!r} holds NUL, which a directory name "
                             "cannot (Spark fails to create it)")
    rendered = DEFAULT_PARTITION if value is None or value == "" else escape_path_name(value)
    return f"{escape_path_name(column)}={rendered}"


def partition_directory(columns: Sequence[str], values: Sequence[Any], types: Sequence[pa.DataType],
                        time_zone: str) -> str:
    """`a=1/b=x`: the Hive directory of one row's partition values (PartitionError for a value Spark's layout
    would lose)."""
    parts = []
    for name, value, typ in zip(columns, values, types, strict=True):
        try:
            text = spark_string(value, typ, time_zone)
        except UnicodeDecodeError as e:
            raise PartitionError(f"partition column {name!r}: binary value {value!r} is not UTF-8; Spark would "
                                 "write it as U+FFFD and lose it (cast the column to a hex string first)") from e
        parts.append(partition_fragment(name, text))
    return "/".join(parts)
