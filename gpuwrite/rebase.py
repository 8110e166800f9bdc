"""Spark's calendar rebase on write (datetimeRebaseModeInWrite / int96RebaseModeInWrite).

CORRECTED writes values as they are; EXCEPTION refuses a date before 1582-10-15 or a timestamp before the
last Gregorian/Julian switch (1900-01-01T00:00:00Z); LEGACY rebases such values to the hybrid Julian
calendar (kernels in `kernels/rebase.py`). A minimum check skips the pass when every value is modern.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np

from gpuwrite.kernels.rebase import LAST_SWITCH_GREGORIAN_DAY, rebase_days, rebase_micros

from .errors import GpuwriteError

# SPEC: RebaseDateTime.lastSwitchGregorianTs: the latest switch instant over all time zones.
LAST_SWITCH_GREGORIAN_MICROS = -2_208_988_800_000_000  # 1900-01-01T00:00:00Z
_FIXED_ZONE = re.compile(r"^(?:UTC|GMT|Z|Etc/UTC|Etc/GMT|UTC?([+-])(\d{1,2}):?(\d{2})?|([+-])(\d{2}):(\d{2}))$")


def _fixed_offset_micros(zone: str) -> int | None:
    """Offset of a fixed-offset zone name in microseconds, or None for a region zone."""
    m = _FIXED_ZONE.match(zone)
    if m is None:
        return None
    sign, hours, minutes = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), m.group(5),
                                                                                   m.group(6))
    if sign is None:
        return 0
    micros = (int(hours) * 3600 + int(minutes or 0) * 60) * 1_000_000
    return micros if sign == "+" else -micros


def _date_text(days: int) -> str:
    """ISO text of a day count (proleptic Gregorian), for error messages."""
    try:
        return (dt.date(1970, 1, 1) + dt.timedelta(days=days)).isoformat()
    except OverflowError:
        return f"day {days}"


def rebase_dates(days: np.ndarray, mode: str, column: str) -> np.ndarray:
    """Dates (int32 days) as Spark writes them under `mode`."""
    if mode == "CORRECTED" or days.size == 0 or int(days.min()) >= LAST_SWITCH_GREGORIAN_DAY:
        return days
    if mode == "EXCEPTION":
        first = int(days[np.argmax(days < LAST_SWITCH_GREGORIAN_DAY)])
        raise GpuwriteError(f"column {column!r}: date {_date_text(first)} is before 1582-10-15 and is ambiguous "
                            "between calendars; set spark.sql.parquet.datetimeRebaseModeInWrite to LEGACY "
                            "(rebase to the hybrid Julian calendar) or CORRECTED (write it as is)")
    out = np.empty_like(days)
    rebase_days(days, out)
    return out


def rebase_timestamps(micros: np.ndarray, mode: str, time_zone: str, column: str) -> np.ndarray:
    """Zoned timestamps (int64 micros) as Spark writes them under `mode` in the session time zone."""
    if mode == "CORRECTED" or micros.size == 0 or int(micros.min()) >= LAST_SWITCH_GREGORIAN_MICROS:
        return micros
    if mode == "EXCEPTION":
        first = int(micros[np.argmax(micros < LAST_SWITCH_GREGORIAN_MICROS)])
        raise GpuwriteError(f"column {column!r}: timestamp {first} µs since the epoch is before "
                            "1900-01-01T00:00:00Z and is ambiguous between calendars; set the rebase mode to "
                            "LEGACY or CORRECTED")
    offset = _fixed_offset_micros(time_zone)
    if offset is None:
        raise GpuwriteError(f"column {column!r}: LEGACY rebase of timestamps before 1900 is implemented for "
                            f"UTC and fixed-offset session time zones only, not {time_zone!r}")
    out = np.empty_like(micros)
    rebase_micros(micros, np.int64(offset), out)
    return out
