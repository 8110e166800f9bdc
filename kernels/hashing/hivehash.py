"""Spark's HiveHash (Hive-compatible bucketing): hash = 31 * hash + hash(column) per column, seed 0.

Per value: ints as is, longs folded (high ^ low), bytes as Java's 31-polynomial over signed bytes,
timestamps as Hive's TimestampWritable.hashCode, decimals as java.math.BigDecimal.hashCode after Hive's
normalisation (trailing zeros stripped). A null contributes 0.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit, jit_alloc

_MASK32 = np.int64(0xFFFFFFFF)


@jit
def _i32(v: np.int64) -> np.int64:
    """Wrap to a signed 32-bit value (as int64)."""
    v = v & _MASK32
    return v - np.int64(1 << 32) if v >= np.int64(1 << 31) else v


@jit
def _combine(hashes: np.ndarray, i: int, h: np.int64) -> None:
    """hashes[i] = 31 * hashes[i] + h (32-bit wrapping)."""
    hashes[i] = np.int32(_i32(np.int64(31) * np.int64(hashes[i]) + h))


@jit
def hive_fold_int(values: np.ndarray, valid: np.ndarray, hashes: np.ndarray) -> None:
    """Ints, shorts, bytes, dates, booleans (0/1), float bits: the value itself."""
    for i in range(values.shape[0]):
        _combine(hashes, i, np.int64(values[i]) if valid[i] else np.int64(0))


@jit
def hive_fold_long(values: np.ndarray, valid: np.ndarray, hashes: np.ndarray) -> None:
    """Longs and double bits: (int) (v ^ (v >>> 32))."""
    for i in range(values.shape[0]):
        h = np.int64(0)
        if valid[i]:
            v = np.uint64(values[i])
            h = _i32(np.int64(v ^ (v >> np.uint64(32))))
        _combine(hashes, i, h)


@jit
def hive_fold_bytes(offsets: np.ndarray, data: np.ndarray, valid: np.ndarray, hashes: np.ndarray) -> None:
    """Strings and binary: result = 31 * result + (signed) byte."""
    for i in range(valid.shape[0]):
        h = np.int64(0)
        if valid[i]:
            for j in range(offsets[i], offsets[i + 1]):
                h = _i32(np.int64(31) * h + np.int64(np.int8(data[j])))
        _combine(hashes, i, h)


@jit
def hive_fold_timestamp(values: np.ndarray, valid: np.ndarray, hashes: np.ndarray) -> None:
    """Timestamps (micros): Hive's TimestampWritable.hashCode of (seconds << 30 | nanos)."""
    for i in range(values.shape[0]):
        h = np.int64(0)
        if valid[i]:
            micros = np.int64(values[i])
            seconds = micros // 1_000_000
            if micros < 0 and seconds * 1_000_000 != micros:
                seconds += 1  # Java's TimeUnit.toSeconds truncates toward zero
            nanos = (micros - seconds * 1_000_000) * 1000
            r = np.uint64(seconds << 30) | np.uint64(nanos)
            h = _i32(np.int64((r >> np.uint64(32)) ^ r))
        _combine(hashes, i, h)


@jit_alloc
def hive_fold_decimal(lo: np.ndarray, hi: np.ndarray, scale: int, valid: np.ndarray, hashes: np.ndarray) -> None:
    """Decimals (128-bit unscaled lo/hi words, column scale): BigDecimal.hashCode of the value with its
    trailing zeros stripped (zero becomes 0 with scale 0)."""
    limbs = np.zeros(4, dtype=np.uint64)
    for i in range(lo.shape[0]):
        h = np.int64(0)
        if valid[i]:
            neg = hi[i] < 0
            ulo = np.uint64(lo[i])
            uhi = np.uint64(hi[i])
            if neg:
                ulo = ~ulo + np.uint64(1)
                uhi = ~uhi + (np.uint64(1) if ulo == np.uint64(0) else np.uint64(0))
            limbs[0] = uhi >> np.uint64(32)
            limbs[1] = uhi & np.uint64(0xFFFFFFFF)
            limbs[2] = ulo >> np.uint64(32)
            limbs[3] = ulo & np.uint64(0xFFFFFFFF)
            s = scale
            zero = limbs[0] == 0 and limbs[1] == 0 and limbs[2] == 0 and limbs[3] == 0
            while s > 0 and not zero:
                rem = np.uint64(0)
                for k in range(4):
                    cur = (rem << np.uint64(32)) | limbs[k]
                    rem = cur % np.uint64(10)
                if rem != 0:
                    break
                rem = np.uint64(0)
                for k in range(4):
                    cur = (rem << np.uint64(32)) | limbs[k]
                    limbs[k] = cur // np.uint64(10)
                    rem = cur % np.uint64(10)
                s -= 1
            if zero:
                s = 0
            mag = np.int64(0)
            started = False
            for k in range(4):
                if limbs[k] != 0 or started:
                    started = True
                    mag = _i32(np.int64(31) * mag + np.int64(limbs[k]))
            if neg:
                mag = _i32(-mag)
            h = _i32(np.int64(31) * mag + np.int64(s))
        _combine(hashes, i, h)
