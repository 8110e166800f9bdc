"""Parsers of one option value as Hadoop's Configuration reads it, shared by parquet-java's and Spark's keys.

Each takes (key, raw value) and returns the parsed value or raises OptionError naming the key as written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import OptionError

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
