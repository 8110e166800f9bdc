"""Statistics and page-index values of a Parquet file, decoded from their PLAIN bytes into logical types.

A date is a date (not day 18262), a decimal is scaled (1.39, not 139), an INT96 is a timestamp, a string
is text, an unsigned INTEGER is unsigned. Each value is kept as {'hex', 'value', 'display'}: the raw bytes,
the physical decode (when obvious) and the logical value as text. Also: schema leaves and type names.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
import uuid
from decimal import Decimal
from typing import Any

_FIXED_FORMATS = {"INT32": "<i", "INT64": "<q", "FLOAT": "<f", "DOUBLE": "<d", "BOOLEAN": "<?"}
_TEXT_LOGICAL = ("STRING", "ENUM", "JSON")
_TEXT_CONVERTED = ("UTF8", "ENUM", "JSON")
_EPOCH = dt.datetime(1970, 1, 1)
_JULIAN_EPOCH_DAY = 2_440_588  # SPEC: parquet-java NanoTime / Spark's JULIAN_DAY_OF_EPOCH
_NANOS_PER_UNIT = {"MILLIS": 1_000_000, "MICROS": 1_000, "NANOS": 1}
_CONVERTED_UNITS = {"TIMESTAMP_MILLIS": "MILLIS", "TIMESTAMP_MICROS": "MICROS", "TIME_MILLIS": "MILLIS",
                    "TIME_MICROS": "MICROS"}


def stat_value(raw: bytes, physical: Any, logical: Any = None, leaf: dict[str, Any] | None = None) -> dict[str, Any]:
    """A PLAIN-encoded statistics value as {'hex', 'value', 'display'}.

    'value' is the physical decode when the type makes it obvious (ints, floats, UTF-8 text); 'display' is
    the logical value as text (needs the schema `leaf` for decimals, dates, timestamps; else the physical).
    """
    out: dict[str, Any] = {"hex": raw.hex()}
    fmt = _FIXED_FORMATS.get(physical) if isinstance(physical, str) else None
    if fmt is None and physical == "FIXED_LEN_BYTE_ARRAY" and isinstance(logical, dict) and "FLOAT16" in logical:
        fmt = "<e"
    if fmt is not None:
        if len(raw) == struct.calcsize(fmt):
            value = struct.unpack(fmt, raw)[0]
            out["value"] = str(value) if isinstance(value, float) and not math.isfinite(value) else value
    elif physical == "BYTE_ARRAY":
        try:
            out["value"] = raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    shown = display(logical_value(raw, physical, leaf or {"logical_type": logical}))
    if shown is not None:
        out["display"] = shown
    return out


def logical_value(raw: bytes, physical: Any, leaf: dict[str, Any]) -> Any:
    """The value in its logical type: int, float, bool, Decimal, date, datetime, time, str, UUID or bytes;
    None when the bytes do not fit the type."""
    try:
        return _logical(raw, physical, leaf)
    except (struct.error, ValueError, OverflowError):
        return None


def _logical(raw: bytes, physical: Any, leaf: dict[str, Any]) -> Any:
    """logical_value without the guard."""
    found = leaf.get("logical_type")
    logical: dict[str, Any] = found if isinstance(found, dict) else {}
    name = next(iter(logical), None)
    params = logical.get(name) if name else None
    converted = leaf.get("converted_type")
    if physical == "INT96":
        if len(raw) != 12:
            return None
        nanos, julian = struct.unpack("<qi", raw)
        return _instant((julian - _JULIAN_EPOCH_DAY) * 86_400 * 10**9 + nanos, 1, True)
    if name == "DECIMAL" or converted == "DECIMAL":
        scale = (params or {}).get("scale") if name == "DECIMAL" else leaf.get("scale")
        if physical in ("INT32", "INT64"):
            unscaled = int.from_bytes(raw, "little", signed=True)
        else:
            unscaled = int.from_bytes(raw, "big", signed=True)
        return Decimal(unscaled).scaleb(-int(scale or 0))
    if physical in _FIXED_FORMATS:
        value = struct.unpack(_FIXED_FORMATS[physical], raw)[0]
        if name == "DATE" or converted == "DATE":
            return dt.date(1970, 1, 1) + dt.timedelta(days=value)
        if name == "TIMESTAMP" or converted in ("TIMESTAMP_MILLIS", "TIMESTAMP_MICROS"):
            unit = _unit(params, converted)
            utc = bool((params or {}).get("isAdjustedToUTC", True)) if name else True
            return _instant(value, _NANOS_PER_UNIT[unit], utc)
        if name == "TIME" or converted in ("TIME_MILLIS", "TIME_MICROS"):
            nanos = value * _NANOS_PER_UNIT[_unit(params, converted)]
            return (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=nanos // 1000)).time()
        if name == "INTEGER" and isinstance(params, dict) and params.get("isSigned") is False:
            return value & ((1 << (32 if physical == "INT32" else 64)) - 1)
        if isinstance(converted, str) and converted.startswith("UINT_"):
            return value & ((1 << (32 if physical == "INT32" else 64)) - 1)
        return value
    if name == "FLOAT16" and len(raw) == 2:
        return struct.unpack("<e", raw)[0]
    if name == "UUID" and len(raw) == 16:
        return uuid.UUID(bytes=raw)
    if name in _TEXT_LOGICAL or converted in _TEXT_CONVERTED:
        return raw.decode("utf-8")
    return raw


def _unit(params: Any, converted: Any) -> str:
    """MILLIS / MICROS / NANOS from a TIMESTAMP/TIME logical type, else from the converted type."""
    unit = (params or {}).get("unit") if isinstance(params, dict) else None
    if isinstance(unit, dict) and unit:
        return str(next(iter(unit)))
    return _CONVERTED_UNITS.get(str(converted), "MICROS")


class Instant:
    """A timestamp with nanosecond precision (datetime has only micros), comparable and printable."""

    def __init__(self, nanos: int, utc: bool) -> None:
        self.nanos = nanos
        self.utc = utc

    def __lt__(self, other: Instant) -> bool:
        return self.nanos < other.nanos

    def __gt__(self, other: Instant) -> bool:
        return self.nanos > other.nanos

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and other.nanos == self.nanos and other.utc == self.utc

    def __hash__(self) -> int:
        return hash((self.nanos, self.utc))

    def __str__(self) -> str:
        seconds, nanos = divmod(self.nanos, 10**9)
        try:
            text = (_EPOCH + dt.timedelta(seconds=seconds)).isoformat(sep=" ")
        except OverflowError:
            text = f"{seconds} s from 1970-01-01"
        if nanos:
            text += f".{nanos:09d}".rstrip("0")
        return text + ("Z" if self.utc else "")

    __repr__ = __str__


def _instant(value: int, nanos_per_unit: int, utc: bool) -> Instant:
    """A timestamp from a count of units since the epoch."""
    return Instant(value * nanos_per_unit, utc)


def display(value: Any) -> str | None:
    """A logical value as text (None stays None); bytes as 0x-hex."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def leaves(schema: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leaf schema elements in column order (depth-first), each with its dotted path added."""
    found: list[dict[str, Any]] = []
    pos = 1

    def walk(prefix: tuple[str, ...], children: int) -> None:
        nonlocal pos
        for _ in range(children):
            if pos >= len(schema):
                return
            element = schema[pos]
            pos += 1
            path = (*prefix, str(element["name"]))
            if element.get("num_children"):
                walk(path, int(element["num_children"]))
            else:
                found.append({**element, "path": ".".join(path)})

    if schema:
        walk((), int(schema[0].get("num_children") or 0))
    return found


def annotation(element: dict[str, Any]) -> str:
    """A schema node's logical type (or converted type) as text, e.g. DECIMAL(7,2) or TIMESTAMP(MICROS,UTC)."""
    logical = element.get("logical_type")
    if isinstance(logical, dict) and len(logical) == 1:
        name, params = next(iter(logical.items()))
        if str(name).isdigit():
            return f"logical type #{name} (unknown to this reader)"
        if name == "DECIMAL" and isinstance(params, dict):
            return f"DECIMAL({params.get('precision')},{params.get('scale')})"
        if name in ("TIMESTAMP", "TIME") and isinstance(params, dict):
            unit = params.get("unit")
            unit_name = next(iter(unit)) if isinstance(unit, dict) and unit else "?"
            utc = "UTC" if params.get("isAdjustedToUTC") else "local"
            return f"{name}({unit_name},{utc})"
        if name == "INTEGER" and isinstance(params, dict):
            return f"INTEGER({params.get('bitWidth')},{'signed' if params.get('isSigned') else 'unsigned'})"
        return str(name)
    if logical is not None:
        text = str(logical)
        return text if len(text) <= 40 else text[:40] + "..."
    converted = element.get("converted_type")
    if converted == "DECIMAL":
        return f"DECIMAL({element.get('precision')},{element.get('scale')}) (converted type)"
    return f"{converted} (converted type)" if converted is not None else ""


def type_text(leaf: dict[str, Any]) -> str:
    """A leaf's type for a summary line: logical type then physical, e.g. 'DECIMAL(7,2) INT32'."""
    physical = str(leaf.get("type"))
    if physical == "FIXED_LEN_BYTE_ARRAY" and leaf.get("type_length"):
        physical = f"FIXED_LEN_BYTE_ARRAY({leaf['type_length']})"
    note = annotation(leaf).replace(" (converted type)", "")
    if physical == "INT96" and not note:
        note = "timestamp"
    return f"{note} {physical}" if note else physical
