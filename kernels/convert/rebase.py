"""Calendar rebase on write (Spark's LEGACY mode): proleptic Gregorian -> hybrid Julian, days and micros.

A date before 1582-10-15 keeps its year, month and day but is counted in the Julian calendar, as Spark's
RebaseDateTime.rebaseGregorianToJulianDays does; later dates are unchanged. Timestamps are rebased through
their local date-time, keeping the time of day (offsets chosen by the caller).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

LAST_SWITCH_GREGORIAN_DAY = -141427  # 1582-10-15, the first Gregorian day of the hybrid calendar
# SPEC: RebaseDateTime.lastSwitchGregorianTs: the latest switch instant over all time zones.
LAST_SWITCH_GREGORIAN_MICROS = -2_208_988_800_000_000  # 1900-01-01T00:00:00Z
MICROS_PER_DAY = 86_400_000_000


@jit
def _civil_from_days(z: np.int64) -> tuple:
    """(year, month, day) in the proleptic Gregorian calendar of days since 1970-01-01."""
    z = z + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


@jit
def _julian_days_from_civil(y: np.int64, m: np.int64, d: np.int64) -> np.int64:
    """Days since 1970-01-01 (Gregorian epoch) of the Julian-calendar date y-m-d."""
    yy = y - 1 if m <= 2 else y
    mm = m + 9 if m <= 2 else m - 3
    era = (yy if yy >= 0 else yy - 3) // 4
    yoe = yy - era * 4
    doy = (153 * mm + 2) // 5 + d - 1
    doe = yoe * 365 + doy
    return era * 1461 + doe - 719470


@jit
def rebase_day(days: np.int64) -> np.int64:
    """One date: Gregorian days -> hybrid-calendar days with the same year, month and day."""
    if days >= LAST_SWITCH_GREGORIAN_DAY:
        return days
    if days >= LAST_SWITCH_GREGORIAN_DAY - 10:
        return np.int64(LAST_SWITCH_GREGORIAN_DAY)  # 1582-10-05..14 do not exist in the hybrid calendar
    y, m, d = _civil_from_days(days)
    return _julian_days_from_civil(y, m, d)


@jit
def rebase_days(values: np.ndarray, out: np.ndarray) -> None:
    """rebase_day over an array."""
    for i in range(values.shape[0]):
        out[i] = rebase_day(np.int64(values[i]))


@jit
def rebase_instant(micros: np.int64, local_offset: np.int64, hybrid_offset: np.int64) -> np.int64:
    """One timestamp: its local date-time (at local_offset) re-read in the hybrid calendar at hybrid_offset."""
    local = micros + local_offset
    day = local // MICROS_PER_DAY
    tod = local - day * MICROS_PER_DAY
    return rebase_day(day) * MICROS_PER_DAY + tod - hybrid_offset


@jit
def rebase_micros(values: np.ndarray, local_offset: np.int64, hybrid_offset: np.int64, out: np.ndarray) -> None:
    """Timestamps in a fixed-offset zone (both offsets equal): rebase the local date, keep the time of day."""
    for i in range(values.shape[0]):
        out[i] = rebase_instant(np.int64(values[i]), local_offset, hybrid_offset)


@jit
def rebase_zoned(values: np.ndarray, local_offsets: np.ndarray, raw_offset: np.int64, old: np.ndarray,
                 out: np.ndarray) -> None:
    """Timestamps in a region zone: values before 1900 (`old`) are rebased with their tzdb local offset and
    re-read at the zone's raw offset (java.util.TimeZone); later values are unchanged."""
    for i in range(values.shape[0]):
        if old[i]:
            out[i] = rebase_instant(np.int64(values[i]), np.int64(local_offsets[i]), raw_offset)
        else:
            out[i] = values[i]
