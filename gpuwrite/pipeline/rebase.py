"""Spark's calendar rebase on write (datetimeRebaseModeInWrite / int96RebaseModeInWrite).

CORRECTED writes values as they are; EXCEPTION refuses a date before 1582-10-15 or a timestamp before the
last Gregorian/Julian switch (1900-01-01T00:00:00Z); LEGACY rebases such values to the hybrid Julian
calendar (kernels in `kernels/convert/rebase.py`). A minimum check skips the pass when every value is modern.

Timestamps are rebased as Spark does: the local date-time in the session zone by java.time's rules (tzdb,
local mean time included) is re-read in the hybrid calendar by java.util.TimeZone, which before 1900 knows
only the zone's current raw offset.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from gpuwrite.kernels.convert.rebase import (
    LAST_SWITCH_GREGORIAN_DAY,
    LAST_SWITCH_GREGORIAN_MICROS,
    rebase_days,
    rebase_micros,
    rebase_zoned,
)

from ..errors import GpuwriteError
from ..options.values import JAVA_SHORT_IDS

if TYPE_CHECKING:
    from ..options.model import WriteOptions

# java.util.TimeZone's custom IDs: GMT+h, GMT+hh, GMT+hh:mm, GMT+hhmm.
_JAVA_CUSTOM_ZONE = re.compile(r"^GMT([+-])(\d{1,2})(?::?(\d{2}))?$")
# Offset IDs java.time accepts (Spark's session zone) but java.util.TimeZone does not know: it falls back to GMT.
_OFFSET_ONLY_ZONE = re.compile(r"^(?:Z|(?:UTC|UT|GMT)?[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)$")


@dataclass(frozen=True)
class RebaseOptions:
    """The write options the calendar rebase reads: what converts and checks dates and timestamps need of them."""

    datetime_rebase: str  # SPEC: SQLConf.PARQUET_REBASE_MODE_IN_WRITE (dates, micros / millis timestamps)
    int96_rebase: str  # SPEC: SQLConf.PARQUET_INT96_REBASE_MODE_IN_WRITE (INT96 timestamps)
    time_zone: str  # SPEC: SQLConf.SESSION_LOCAL_TIMEZONE (LEGACY timestamps are rebased in it)

    @classmethod
    def of(cls, opts: WriteOptions) -> RebaseOptions:
        """The projection of `opts`, built once where the options are known (a writer, a window)."""
        return cls(opts.datetime_rebase, opts.int96_rebase, opts.time_zone)

    def timestamp_mode(self, int96: bool) -> str:
        """The mode of zoned timestamps written as INT96 (`int96`) or as INT64 micros / millis."""
        return self.int96_rebase if int96 else self.datetime_rebase


def fixed_offset_micros(zone: str) -> int | None:
    """The fixed offset (micros) Spark's rebase works in for `zone`, or None for a region zone.

    Spark rebases with `TimeZone.getTimeZone(id)`: GMT custom IDs keep their offset, while offset-only IDs
    such as `+05:30` are unknown to it and become GMT, on both sides of the rebase.
    """
    m = _JAVA_CUSTOM_ZONE.match(zone)
    if m:
        micros = (int(m.group(2)) * 3600 + int(m.group(3) or 0) * 60) * 1_000_000
        return micros if m.group(1) == "+" else -micros
    if zone in ("UTC", "GMT") or _OFFSET_ONLY_ZONE.match(zone):
        return 0
    return None


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
        raise date_switch_error(column, int(days[np.argmax(days < LAST_SWITCH_GREGORIAN_DAY)]))
    out = np.empty_like(days)
    rebase_days(days, out)
    return out


def rebase_timestamps(micros: np.ndarray, mode: str, time_zone: str, column: str) -> np.ndarray:
    """Zoned timestamps (int64 micros) as Spark writes them under `mode` in the session time zone."""
    if mode == "CORRECTED" or micros.size == 0 or int(micros.min()) >= LAST_SWITCH_GREGORIAN_MICROS:
        return micros
    if mode == "EXCEPTION":
        raise timestamp_switch_error(column, int(micros[np.argmax(micros < LAST_SWITCH_GREGORIAN_MICROS)]))
    offset = fixed_offset_micros(time_zone)
    out = np.empty_like(micros)
    if offset is not None:
        rebase_micros(micros, np.int64(offset), np.int64(offset), out)
        return out
    zone = _zone(time_zone, column)
    old = micros < LAST_SWITCH_GREGORIAN_MICROS
    starts, offsets = _offset_history(zone)
    local_offsets = offsets[np.searchsorted(starts, micros, side="right") - 1]
    rebase_zoned(micros, local_offsets, np.int64(_raw_offset_now(zone)), old, out)
    return out


def java_region(name: str) -> str:
    """The tz database region Java's `TimeZone.getTimeZone(name)` uses for an old three-letter ID (PST, IST,
    CST...), which Python's tz database lacks; other names as they are (EST, MST and HST are tzdb's own fixed
    zones, as in Java). SPEC: java.time.ZoneId.SHORT_IDS, the same table TimeZone's old IDs follow."""
    region = JAVA_SHORT_IDS.get(name, name)
    return name if region[:1] in ("+", "-") else region


def _zone(name: str, column: str) -> ZoneInfo:
    """The session time zone, or an error naming it."""
    try:
        return ZoneInfo(java_region(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise unknown_zone_error(column, name) from None


def date_switch_error(column: str, days: int) -> GpuwriteError:
    """EXCEPTION mode's refusal of a date before the calendar switch (`days`: the first such value)."""
    return GpuwriteError(f"column {column!r}: date {_date_text(days)} is before 1582-10-15 and is ambiguous "
                         "between calendars; set spark.sql.parquet.datetimeRebaseModeInWrite to LEGACY "
                         "(rebase to the hybrid Julian calendar) or CORRECTED (write it as is)")


def timestamp_switch_error(column: str, micros: int) -> GpuwriteError:
    """EXCEPTION mode's refusal of a timestamp before the last switch (`micros`: the first such value)."""
    return GpuwriteError(f"column {column!r}: timestamp {micros} µs since the epoch is before "
                         "1900-01-01T00:00:00Z and is ambiguous between calendars; set the rebase mode to "
                         "LEGACY or CORRECTED")


def unknown_zone_error(column: str, name: str) -> GpuwriteError:
    """LEGACY rebase of a column in a session time zone tzdb does not know."""
    return GpuwriteError(f"column {column!r}: unknown session time zone {name!r}")


def zone_history(time_zone: str) -> tuple[np.ndarray, np.ndarray, int] | None:
    """A region zone as `rebase_timestamps` rebases in it: (start instants, tzdb offsets before 1900, raw
    offset now), all micros; None for a zone id tzdb does not know. The device rebase uploads these."""
    try:
        zone = ZoneInfo(java_region(time_zone))
    except (ZoneInfoNotFoundError, ValueError):
        return None
    starts, offsets = _offset_history(zone)
    return starts, offsets, _raw_offset_now(zone)


def _offset_at(zone: ZoneInfo, micros: int) -> int:
    """UTC offset (micros) of `zone` at an instant, by tzdb (local mean time before standard time)."""
    instant = dt.datetime(1, 1, 2, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=micros - _YEAR1_MICROS)
    delta = instant.astimezone(zone).utcoffset()
    assert delta is not None
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_YEAR1_MICROS = -62_135_510_400_000_000  # 0001-01-02T00:00:00Z


@functools.lru_cache(maxsize=64)
def _offset_history(zone: ZoneInfo) -> tuple[np.ndarray, np.ndarray]:
    """The zone's offsets before 1900 as (start instants, offsets): yearly probes, bisected to the microsecond."""
    step = 365 * 86_400_000_000
    probes = list(range(_YEAR1_MICROS, LAST_SWITCH_GREGORIAN_MICROS + step, step))
    starts = [np.iinfo(np.int64).min]
    offsets = [_offset_at(zone, probes[0])]
    for lo, hi in zip(probes, probes[1:], strict=False):
        if _offset_at(zone, hi) == offsets[-1]:
            continue
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _offset_at(zone, mid) == offsets[-1]:
                lo = mid
            else:
                hi = mid
        starts.append(hi)
        offsets.append(_offset_at(zone, hi))
    return np.array(starts, dtype=np.int64), np.array(offsets, dtype=np.int64)


def _raw_offset_now(zone: ZoneInfo) -> int:
    """java.util.TimeZone.getRawOffset: today's standard (non-DST) offset, in micros."""
    now = dt.datetime.now(dt.timezone.utc).astimezone(zone)
    raw = now.utcoffset() - (now.dst() or dt.timedelta(0))  # type: ignore[operator]
    return (raw.days * 86_400 + raw.seconds) * 1_000_000
