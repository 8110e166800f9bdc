"""Spark's `hash(...)` (Murmur3, seed 42) and HiveHash over Arrow columns: the host side of the kernels in
`kernels/hashing/murmur3.py` and `kernels/hashing/hivehash.py` (bucket ids from them are in `buckets.py`).

SPEC: Spark's Murmur3Hash / HiveHash. Values are fed to the kernels as Murmur3Hash sees them: booleans as
0/1 ints, timestamps as microseconds, floats as canonical IEEE bits with -0.0 hashed as 0, decimals up to
precision 18 as their unscaled long and wider ones as BigInteger.toByteArray bytes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from gpuwrite.kernels.hashing.hivehash import (
    hive_fold_bytes,
    hive_fold_decimal,
    hive_fold_int,
    hive_fold_long,
    hive_fold_timestamp,
)
from gpuwrite.kernels.hashing.murmur3 import fold_bytes, fold_int, fold_long, java_big_integer_bytes

from ...errors import GpuwriteError
from ...pipeline.columns import _UNIT_TO_MICROS

SPARK_HASH_SEED = 42


def _row_values(col: pa.Array, dtype: str) -> np.ndarray:
    """Values of every row (null slots hold whatever the buffer holds; they are skipped)."""
    np_type = np.dtype(dtype)
    return np.frombuffer(col.buffers()[1], dtype=np_type, count=col.offset + len(col))[col.offset:]


def _valid(col: pa.Array) -> np.ndarray:
    """Per-row validity as uint8."""
    if col.null_count == 0:
        return np.ones(len(col), dtype=np.uint8)
    return col.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8)


def _hash_input(col: pa.Array, name: str) -> tuple[str, tuple]:
    """One column as the values Spark's hash functions see, shared by Murmur3 and HiveHash.

    Returns (kind, arrays): int (int32 values), long (int64), timestamp (micros, zoned), decimal (low and high
    128-bit words, precision, scale) or bytes (offsets, data). Floats become canonical IEEE bits with -0.0 as 0.
    """
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.dictionary_decode(), t.value_type
    if pa.types.is_boolean(t):
        return "int", (col.fill_null(False).to_numpy(zero_copy_only=False).astype(np.int32),)
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or pa.types.is_date32(t):
        width = 4 if pa.types.is_date32(t) else t.bit_width // 8
        return "int", (_row_values(col, f"<i{width}").astype(np.int32),)
    if pa.types.is_int64(t):
        return "long", (_row_values(col, "<i8"),)
    if pa.types.is_timestamp(t):
        raw = _row_values(col, "<i8")
        # ns: toward zero, as the values are written with allow_truncated_timestamps (else they are whole micros)
        micros = (raw - np.fmod(raw, 1000)) // 1000 if t.unit == "ns" else raw * _UNIT_TO_MICROS[t.unit]
        return "timestamp", (micros, t.tz is not None)
    if pa.types.is_float32(t):
        v = _row_values(col, "<f4")
        bits = np.where(np.isnan(v), np.int32(0x7FC00000), v.view(np.int32))
        return "int", (np.where(v == 0, 0, bits).astype(np.int32),)
    if pa.types.is_float64(t):
        v = _row_values(col, "<f8")
        bits = np.where(np.isnan(v), np.int64(0x7FF8000000000000), v.view(np.int64))
        return "long", (np.where(v == 0, 0, bits).astype(np.int64),)
    if pa.types.is_decimal(t):
        width = t.byte_width // 8
        words = np.frombuffer(col.buffers()[1], dtype="<i8", count=(col.offset + len(col)) * width)
        words = words.reshape(-1, width)[col.offset:]
        return "decimal", (np.ascontiguousarray(words[:, 0]), np.ascontiguousarray(words[:, 1]), t.precision,
                           t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes", _large_bytes(col)
    raise GpuwriteError(f"bucket column {name!r}: type {t} cannot be hashed for Spark buckets")


def _fold(col: pa.Array, hashes: np.ndarray, name: str) -> None:
    """Fold one column into running Murmur3 hashes (Spark's `hash()`)."""
    valid = _valid(col)
    kind, args = _hash_input(col, name)
    if kind == "int":
        fold_int(args[0], valid, hashes)
    elif kind in ("long", "timestamp"):
        fold_long(args[0], valid, hashes)
    elif kind == "decimal" and args[2] <= 18:
        fold_long(args[0], valid, hashes)
    elif kind == "decimal":
        offsets = np.empty(len(col) + 1, dtype=np.int64)
        data = np.empty(16 * len(col) + 1, dtype=np.uint8)
        java_big_integer_bytes(args[0], args[1], offsets, data)
        fold_bytes(offsets, data, valid, hashes)
    else:
        fold_bytes(args[0], args[1], valid, hashes)


def _hive_fold(col: pa.Array, hashes: np.ndarray, name: str) -> None:
    """Fold one column into running HiveHash values."""
    valid = _valid(col)
    kind, args = _hash_input(col, name)
    if kind == "int":
        hive_fold_int(args[0], valid, hashes)
    elif kind == "long" or (kind == "timestamp" and not args[1]):
        hive_fold_long(args[0], valid, hashes)  # TIMESTAMP_NTZ is a plain long to HiveHash
    elif kind == "timestamp":
        hive_fold_timestamp(args[0], valid, hashes)
    elif kind == "decimal":
        hive_fold_decimal(args[0], args[1], args[3], valid, hashes)
    else:
        hive_fold_bytes(args[0], args[1], valid, hashes)


def _large_bytes(col: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (int64, one per row + 1) and data of a string/binary column."""
    large = col.cast(pa.large_binary())
    offsets = np.frombuffer(large.buffers()[1], dtype=np.int64, count=large.offset + len(large) + 1)
    data = np.frombuffer(large.buffers()[2], dtype=np.uint8) if large.buffers()[2] else np.zeros(1, np.uint8)
    return offsets[large.offset:], data


def hive_hash(table: pa.Table, columns: list[str]) -> np.ndarray:
    """Spark's HiveHash(columns...) per row (int32)."""
    hashes = np.zeros(table.num_rows, dtype=np.int32)
    for name in columns:
        _check_column(table, name)
        _hive_fold(table.column(name).combine_chunks(), hashes, name)
    return hashes


def _check_column(table: pa.Table, name: str) -> None:
    """A bucket column must exist."""
    if name not in table.column_names:
        raise GpuwriteError(f"bucket column {name!r} is not in the data (columns: {table.column_names})")


def spark_hash(table: pa.Table, columns: list[str]) -> np.ndarray:
    """Spark's `hash(columns...)` per row (int32)."""
    hashes = np.full(table.num_rows, SPARK_HASH_SEED, dtype=np.int32)
    for name in columns:
        _check_column(table, name)
        _fold(table.column(name).combine_chunks(), hashes, name)
    return hashes
