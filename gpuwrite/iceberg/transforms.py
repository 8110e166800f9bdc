"""Iceberg partition transforms over Arrow arrays, with gpuwrite's kernels (`gpuwrite.kernels.hashing.transforms`).

SPEC: Iceberg spec, "Partition Transforms" and appendix B (bucket hashing): bucket hashes ints, longs, dates,
times and timestamps as 8 little-endian bytes, strings as UTF-8, binary as is, decimals as the minimal
big-endian two's-complement bytes of the unscaled value; truncate[W] keeps W code points of a string, W bytes of
binary, and rounds integers and unscaled decimals down to a multiple of W.
"""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)

from gpuwrite.kernels.hashing import transforms as K
from gpuwrite.kernels.hashing.murmur3 import java_big_integer_bytes

from .profile import IcebergWriteError

_TEMPORAL = {YearTransform: K.YEAR, MonthTransform: K.MONTH, DayTransform: K.DAY, HourTransform: K.HOUR}


def _with_nulls(values: np.ndarray, source: pa.Array, dtype: pa.DataType) -> pa.Array:
    """Kernel output as an Arrow array carrying the source's nulls."""
    mask = source.is_null().to_numpy(zero_copy_only=False) if source.null_count else None
    return pa.array(values, type=pa.int64(), mask=mask).cast(dtype)


def _as_int64(source: pa.Array) -> np.ndarray:
    """Ints, dates (days), times and timestamps (microseconds) as int64, nulls as 0."""
    t = source.type
    if pa.types.is_date32(t):
        source = source.view(pa.int32())
    elif pa.types.is_timestamp(t) or pa.types.is_time64(t):
        if getattr(t, "unit", "us") != "us":
            raise IcebergWriteError(f"partition source of type {t}: Iceberg partitions on microsecond values")
        source = source.view(pa.int64())
    return pc.fill_null(source.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)


def _byte_layout(source: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of string / binary values; nulls are empty."""
    arr = pc.fill_null(source, b"" if pa.types.is_binary(source.type) or pa.types.is_large_binary(source.type)
                       else "").cast(pa.large_binary())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(1, np.uint8)
    return offsets, data


def _decimal_bytes(source: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, bytes) of the minimal big-endian unscaled bytes of decimal128 values (nulls as 0)."""
    arr = pc.fill_null(source.cast(pa.decimal128(38, source.type.scale)), Decimal(0))
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64)[2 * arr.offset:2 * (arr.offset + len(arr))]
    lo, hi = np.ascontiguousarray(words[0::2]), np.ascontiguousarray(words[1::2])
    offsets = np.zeros(len(arr) + 1, dtype=np.int64)
    data = np.zeros(16 * max(len(arr), 1), dtype=np.uint8)
    java_big_integer_bytes(lo, hi, offsets, data)
    return offsets, data


def _bucket(n: int, source: pa.Array) -> pa.Array:
    """bucket[n]: (murmur3_x86_32(bytes) & Integer.MAX_VALUE) % n."""
    t = source.type
    out = np.empty(len(source), dtype=np.int64)
    if pa.types.is_integer(t) or pa.types.is_date32(t) or pa.types.is_timestamp(t) or pa.types.is_time64(t):
        K.bucket_long(_as_int64(source), n, out)
    elif pa.types.is_decimal(t):
        offsets, data = _decimal_bytes(source)
        K.bucket_bytes(offsets, data, n, out)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        offsets, data = _byte_layout(source)
        K.bucket_bytes(offsets, data, n, out)
    else:
        raise IcebergWriteError(f"bucket[{n}] of a {t} column is not supported")
    return _with_nulls(out, source, pa.int32())


def _truncate_decimal(width: int, source: pa.Array) -> pa.Array:
    """truncate[W] of decimals: the unscaled value rounded down to a multiple of W (Python ints: exact)."""
    scale = source.type.scale
    exact = Context(prec=80)
    out: list[Decimal | None] = []
    for v in source.to_pylist():
        if v is None:
            out.append(None)
            continue
        unscaled = int(v.scaleb(scale, exact))
        out.append(Decimal(unscaled - unscaled % width).scaleb(-scale, exact))
    return pa.array(out, type=source.type)


def _truncate(width: int, source: pa.Array) -> pa.Array:
    """truncate[W] of ints, longs, strings (code points), binary (bytes) and decimals."""
    t = source.type
    if pa.types.is_integer(t):
        out = np.empty(len(source), dtype=np.int64)
        K.truncate_long(_as_int64(source), width, out)
        return _with_nulls(out, source, t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pc.utf8_slice_codeunits(source, 0, width)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pc.binary_slice(source, 0, width)
    if pa.types.is_decimal(t):
        return _truncate_decimal(width, source)
    raise IcebergWriteError(f"truncate[{width}] of a {t} column is not supported")


def _temporal(what: int, source: pa.Array) -> pa.Array:
    """year / month / day / hour since the epoch of dates or microsecond timestamps."""
    t = source.type
    if pa.types.is_date32(t) and what != K.HOUR:
        per_day = 1
    elif pa.types.is_timestamp(t):
        per_day = K.MICROS_PER_DAY
    else:
        raise IcebergWriteError(f"a time-based transform of a {t} column is not supported")
    out = np.empty(len(source), dtype=np.int64)
    K.temporal(_as_int64(source), np.int64(per_day), what, out)
    return _with_nulls(out, source, pa.int32())


def apply_transform(transform: Transform[Any, Any], source: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The partition values of `source` under `transform` (nulls stay null)."""
    if isinstance(source, pa.ChunkedArray):
        source = source.combine_chunks()
    if isinstance(transform, IdentityTransform):
        return source
    if isinstance(transform, VoidTransform):
        return pa.nulls(len(source), source.type)
    if isinstance(transform, BucketTransform):
        return _bucket(transform.num_buckets, source)
    if isinstance(transform, TruncateTransform):
        return _truncate(transform.width, source)
    what = _TEMPORAL.get(type(transform))
    if what is None:
        raise IcebergWriteError(f"partition transform {transform} is not supported by gpuwrite")
    return _temporal(what, source)
