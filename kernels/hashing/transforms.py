"""Partition transforms per row: bucket (standard murmur3_x86_32, seed 0), truncate, year / month / day / hour.

Geometry: each `*_at(i, ...)` kernel computes row i only, so `_jit.page_kernel` runs it with one thread per row
on a GPU (launch `k[blocks, threads](n, ...)`); the loop of the same name without `_at` is its CPU twin.
Inputs: int64 values (longs, dates as days, timestamps as microseconds) or offsets + bytes (n + 1 offsets);
output: one int64 per row. Null rows get a value like any other; the caller masks them.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .murmur3 import hash_bytes_x86_32, hash_long

MICROS_PER_HOUR = 3_600_000_000
MICROS_PER_DAY = 86_400_000_000
YEAR, MONTH, DAY, HOUR = 0, 1, 2, 3  # temporal transforms (`what`)


@jit
def _floor_div(a: np.int64, b: np.int64) -> np.int64:
    """Floor division of a by b > 0 (Python's //, written out so C-style division on a device agrees)."""
    q = a // b
    if q * b > a:
        q -= 1
    return q


@jit
def bucket_long_at(i: int, values: np.ndarray, n: int, out: np.ndarray) -> None:
    """Iceberg bucket of an int / long / date / time / timestamp: hash of its 8 little-endian bytes."""
    h = np.int64(hash_long(np.int64(values[i]), np.int32(0)))
    out[i] = (h & np.int64(0x7FFFFFFF)) % n


@jit
def bucket_long(values: np.ndarray, n: int, out: np.ndarray) -> None:
    """CPU twin of bucket_long_at over every row."""
    for i in range(values.shape[0]):
        bucket_long_at(i, values, n, out)


@jit
def bucket_bytes_at(i: int, offsets: np.ndarray, data: np.ndarray, n: int, out: np.ndarray) -> None:
    """Iceberg bucket of a byte value (UTF-8 string, binary, fixed, uuid, decimal's minimal unscaled bytes)."""
    h = np.int64(hash_bytes_x86_32(data, offsets[i], offsets[i + 1], np.int32(0)))
    out[i] = (h & np.int64(0x7FFFFFFF)) % n


@jit
def bucket_bytes(offsets: np.ndarray, data: np.ndarray, n: int, out: np.ndarray) -> None:
    """CPU twin of bucket_bytes_at over every row."""
    for i in range(offsets.shape[0] - 1):
        bucket_bytes_at(i, offsets, data, n, out)


@jit
def truncate_long_at(i: int, values: np.ndarray, width: int, out: np.ndarray) -> None:
    """Iceberg truncate[W] of an int / long: v - (((v % W) + W) % W)."""
    v = np.int64(values[i])
    out[i] = v - (v - _floor_div(v, np.int64(width)) * width)


@jit
def truncate_long(values: np.ndarray, width: int, out: np.ndarray) -> None:
    """CPU twin of truncate_long_at over every row."""
    for i in range(values.shape[0]):
        truncate_long_at(i, values, width, out)


@jit
def _year_month(days: np.int64) -> tuple:
    """Proleptic Gregorian (year, month 1..12) of days since 1970-01-01 (H. Hinnant's civil_from_days)."""
    z = days + 719468
    era = _floor_div(z, np.int64(146097))
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    m = mp + 3 if mp < 10 else mp - 9
    if m <= 2:
        y += 1
    return y, m


@jit
def temporal_at(i: int, values: np.ndarray, per_day: np.int64, what: int, out: np.ndarray) -> None:
    """Years / months / days / hours since the epoch of a date (per_day 1) or timestamp (per_day micros)."""
    v = np.int64(values[i])
    if what == HOUR:
        out[i] = _floor_div(v, np.int64(MICROS_PER_HOUR))
        return
    days = _floor_div(v, per_day)
    if what == DAY:
        out[i] = days
        return
    y, m = _year_month(days)
    out[i] = y - 1970 if what == YEAR else (y - 1970) * 12 + m - 1


@jit
def temporal(values: np.ndarray, per_day: np.int64, what: int, out: np.ndarray) -> None:
    """CPU twin of temporal_at over every row."""
    for i in range(values.shape[0]):
        temporal_at(i, values, per_day, what, out)
