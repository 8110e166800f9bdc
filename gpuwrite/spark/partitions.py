"""Hive-style partition directories as Spark names them (ExternalCatalogUtils, Cast to string).

A directory fragment is `escape(column)=escape(value)`; a null or empty value is `__HIVE_DEFAULT_PARTITION__`.
Values are rendered as Spark's `CAST(value AS STRING)` renders them in the session time zone.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# SPEC: ExternalCatalogUtils.charToEscape (non-Windows): 0x01-0x1F, " # % ' * / : = ? \ 0x7F { [ ] ^
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
    """`CAST(value AS STRING)` as Spark renders it; None for null."""
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
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def partition_fragment(column: str, value: str | None) -> str:
    """`col=value` with Spark's escaping; null and empty strings go to the default partition."""
    rendered = DEFAULT_PARTITION if value is None or value == "" else escape_path_name(value)
    return f"{escape_path_name(column)}={rendered}"
