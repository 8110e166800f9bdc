"""Parsers of one option value as Hadoop's Configuration reads it, shared by parquet-java's and Spark's keys.

Each takes (key, raw value) and returns the parsed value or raises OptionError naming the key as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import OptionError

Parser = Callable[[str, Any], Any]


def parse_bool(key: str, raw: Any) -> bool:
    """Parse a Hadoop-style boolean ('true' / 'false', any case)."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise OptionError(f"option {key!r} must be true or false, got {raw!r}")


def parse_int(key: str, raw: Any) -> int:
    """Parse an integer option value."""
    try:
        value = int(str(raw).strip()) if not isinstance(raw, int) or isinstance(raw, bool) else raw
    except ValueError:
        raise OptionError(f"option {key!r} must be an integer, got {raw!r}") from None
    if isinstance(value, bool):
        raise OptionError(f"option {key!r} must be an integer, got {raw!r}")
    return value


def parse_float(key: str, raw: Any) -> float:
    """Parse a floating-point option value (Java's Double.parseDouble forms, no underscores)."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return float(raw)
    text = str(raw).strip()
    try:
        if "_" in text:
            raise ValueError(text)
        return float(text)
    except ValueError:
        raise OptionError(f"option {key!r} must be a number, got {raw!r}") from None


def parse_str(key: str, raw: Any) -> str:
    """A non-empty string value."""
    text = str(raw).strip()
    if not text:
        raise OptionError(f"option {key!r} must not be empty")
    return text


def parse_upper_choice(choices: tuple[str, ...]) -> Callable[[str, Any], str]:
    """A parser for case-insensitive enumerated values (returned upper-case)."""
    def parse(key: str, raw: Any) -> str:
        text = str(raw).strip().upper()
        if text not in choices:
            raise OptionError(f"option {key!r}={raw!r} is not one of {', '.join(choices)}")
        return text
    return parse


# SPEC: java.time.ZoneId.SHORT_IDS, which Spark's DateTimeUtils.getZoneId passes to ZoneId.of.
JAVA_SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}
# SPEC: java.time.ZoneOffset.of: +h, +hh, +hh:mm, +hhmm, +hh:mm:ss, +hhmmss (and -), at most 18:00.
_OFFSET = re.compile(r"^[+-](?:(\d{1,2})|(\d{2}):(\d{2})|(\d{2})(\d{2})|(\d{2}):(\d{2}):(\d{2})|(\d{2})(\d{2})(\d{2}))$")
_REGION = re.compile(r"^[A-Za-z][A-Za-z0-9~/._+-]+$")  # SPEC: java.time.ZoneRegion.checkName


def _valid_offset(text: str) -> bool:
    """Whether `text` is an offset ZoneOffset.of accepts."""
    m = _OFFSET.match(text)
    if m is None:
        return False
    h, mi, s = (int(g) for g in ([x for x in m.groups() if x is not None] + ["0", "0"])[:3])
    return h <= 18 and mi <= 59 and s <= 59 and (h < 18 or mi == s == 0)


def zone_problem(zone: str) -> str | None:
    """Why Spark would refuse `zone` as spark.sql.session.timeZone, or None when it accepts it.

    SPEC: DateTimeUtils.getZoneId (the session zone's check in SQLConf): `(+|-)h:` becomes `(+|-)0h:` and a
    trailing `(+|-)hh:m` becomes `(+|-)hh:0m`, then java.time.ZoneId.of with SHORT_IDS: `Z`, offsets, `UTC` /
    `GMT` / `UT` alone or followed by an offset, or a tz database region (checked against Python's tzdata).
    """
    text = re.sub(r"([+-])(\d):", r"\g<1>0\2:", zone, count=1)
    text = re.sub(r"([+-])(\d\d):(\d)$", r"\1\2:0\3", text, count=1)
    text = JAVA_SHORT_IDS.get(text, text)
    if text == "Z" or text in ("UTC", "GMT", "UT") or _valid_offset(text):
        return None
    if text[:1] in ("+", "-"):
        return "not a valid offset (forms such as +5, +05:30, -0800, within +-18:00)"
    for prefix in ("UTC", "GMT", "UT"):
        if text.startswith(prefix) and text[len(prefix):len(prefix) + 1] in ("+", "-"):
            return None if _valid_offset(text[len(prefix):]) else f"{text[len(prefix):]!r} is not a valid offset"
    if not _REGION.match(text):
        return "not a time zone ID (a region such as 'Europe/Paris', an offset such as '+05:30', or 'UTC')"
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return "unknown time zone region (not in the tz database)"
    return None
