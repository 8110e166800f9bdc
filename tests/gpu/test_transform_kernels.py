"""Iceberg transform kernels compiled for CUDA (one thread per row) against their CPU twins, under the simulator."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels._jit import page_kernel
from gpuwrite.kernels.hashing import transforms as T


def _rows(kernel, n: int, *args) -> np.ndarray:
    out = np.full(n, -7, dtype=np.int64)
    page_kernel(kernel)[(n + 31) // 32, 32](n, *args, out)
    return out


def test_row_kernels_match_cpu_twins():
    rng = np.random.default_rng(9)
    values = rng.integers(-(2**40), 2**40, size=70, dtype=np.int64)
    values[:3] = [-1, 0, 1]
    cpu = np.empty(70, dtype=np.int64)
    T.bucket_long(values, 16, cpu)
    assert np.array_equal(_rows(T.bucket_long_at, 70, values, 16), cpu)
    T.truncate_long(values, 7, cpu)
    assert np.array_equal(_rows(T.truncate_long_at, 70, values, 7), cpu)
    for what in (T.YEAR, T.MONTH, T.DAY, T.HOUR):
        T.temporal(values, np.int64(T.MICROS_PER_DAY), what, cpu)
        assert np.array_equal(_rows(T.temporal_at, 70, values, np.int64(T.MICROS_PER_DAY), what), cpu)
    words = [b"", b"a", b"iceberg", b"\xff\xfe\xfd", b"0123456789"]
    offsets = np.zeros(6, dtype=np.int64)
    offsets[1:] = np.cumsum([len(w) for w in words])
    data = np.frombuffer(b"".join(words), dtype=np.uint8).copy()
    T.bucket_bytes(offsets, data, 1000, cpu[:5])
    assert np.array_equal(_rows(T.bucket_bytes_at, 5, offsets, data, 1000), cpu[:5])
