"""The tables every reader must read back equal (test_readback.py), which the fallback-encoding tests, the GPU
backend's identity tests and bench/gpu_check.py write too: every type at its limits, and many pages of random
values."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa

D = decimal.Decimal


def _extremes() -> pa.Table:
    """Every supported type with nulls, limits, NaN, ±0.0, ±inf, full-precision decimals, ancient dates."""
    def ts(tz):
        return pa.array([dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None,
                         dt.datetime(1582, 10, 4, 12), dt.datetime(1970, 1, 1),
                         dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1900, 1, 1, 0, 0, 0, 1)],
                        pa.timestamp("us", tz))
    return pa.table({
        "b": pa.array([True, False, None, True, True, False, None]),
        "i8": pa.array([-128, 127, None, 0, 1, -1, 5], pa.int8()),
        "i16": pa.array([-32768, 32767, None, 0, 1, -1, 5], pa.int16()),
        "i32": pa.array([-2**31, 2**31 - 1, None, 0, 1, -1, 5], pa.int32()),
        "i64": pa.array([-2**63, 2**63 - 1, None, 0, 1, -1, 5], pa.int64()),
        "f32": pa.array([float("nan"), float("inf"), None, -0.0, 0.0, float("-inf"), 3.4e38], pa.float32()),
        "f64": pa.array([float("nan"), float("inf"), None, -0.0, 0.0, float("-inf"), 1.7976931348623157e308]),
        "d9": pa.array([D("9999999.99"), D("-9999999.99"), None, D(0), D("0.01"), D("-0.01"), D(1)],
                       pa.decimal128(9, 2)),
        "d18": pa.array([D("9" * 16 + ".99"), D("-" + "9" * 16 + ".99"), None, D(0), D("0.01"), D("-0.01"),
                         D(1)], pa.decimal128(18, 2)),
        "d38": pa.array([D("9" * 28 + "." + "9" * 10), D("-" + "9" * 28 + "." + "9" * 10), None, D(0),
                         D("1e-10"), D("-1e-10"), D(1)], pa.decimal128(38, 10)),
        "date": pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31), None, dt.date(1582, 10, 4),
                          dt.date(1970, 1, 1), dt.date(2024, 2, 29), dt.date(1582, 10, 15)]),
        "ts": ts("UTC"),
        "ts_ntz": ts(None),
        "s": pa.array(["", "héllo ✓ 日本", None, "a" * 1000, "x", "", "🙂 emoji"]),
        "bin": pa.array([b"", b"\x00\xff", None, b"abc", b"x", b"", b"\x80" * 20], pa.binary()),
    })


def _big(n: int, seed: int) -> pa.Table:
    """Many pages and several row groups: random values of every type with about 5% nulls."""
    rng = np.random.default_rng(seed)

    def nulls():
        return rng.random(n) < 0.05

    ints = rng.integers(-1000, 1000, n)
    return pa.table({
        "b": pa.array(rng.random(n) < 0.3, mask=nulls()),
        "i8": pa.array(rng.integers(-128, 128, n), pa.int8(), mask=nulls()),
        "i32": pa.array(ints, pa.int32(), mask=nulls()),
        "i64_distinct": pa.array(rng.integers(-2**62, 2**62, n), pa.int64()),
        "f64": pa.array(np.round(rng.random(n) * 100, 2), mask=nulls()),
        "f32": pa.array(rng.random(n).astype(np.float32), mask=nulls()),
        "d": pa.array([D(int(v)).scaleb(-2) for v in ints], pa.decimal128(7, 2), mask=nulls()),
        "d_wide": pa.array([D(int(v) * 10**15).scaleb(-3) for v in ints], pa.decimal128(25, 3), mask=nulls()),
        "date": pa.array(rng.integers(-200_000, 200_000, n).astype("int32"), pa.int32()).view(pa.date32()),
        "ts": pa.array(rng.integers(-10**16, 10**16, n), pa.timestamp("us", "UTC"), mask=nulls()),
        "s": pa.array([f"k{v}-{'z' * (v % 13)}" for v in ints], mask=nulls()),
        "s_distinct": pa.array([f"{v:x}" for v in rng.integers(0, 2**60, n)]),
    })
