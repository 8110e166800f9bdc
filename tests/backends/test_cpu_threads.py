"""The CPU backend's threads: one per core by default, at most `cpu_cores` in a block that sets it (a Spark task
uses its spark.task.cpus), and the same bytes either way."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from gpuwrite.api import write_table
from gpuwrite.backends import compressor
from gpuwrite.backends.cpu import CpuBackend, cpu_cores, page_pool
from gpuwrite.demo_data import store_sales_table
from gpuwrite.options import WriteOptions
from gpuwrite.schema import FileSchema


def _workers(columns: int) -> int:
    pool = page_pool(columns)
    if pool is None:
        return 1
    try:
        return pool._max_workers  # type: ignore[attr-defined,no-any-return]
    finally:
        pool.shutdown()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: the backend never starts threads")
def test_cpu_cores_limits_the_backends_threads_in_its_block_only():
    cores = os.cpu_count() or 1
    assert _workers(64) == cores
    with cpu_cores(1):
        assert _workers(64) == 1
        with cpu_cores(2):
            assert _workers(64) == min(2, cores)
        assert _workers(64) == 1
    assert _workers(64) == cores
    with cpu_cores(None):
        assert _workers(64) == cores


def test_a_backend_opened_with_one_core_has_no_pool():
    table = pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    opts = WriteOptions()
    leaves = FileSchema.from_arrow(table.schema, opts).leaves
    with cpu_cores(1):
        backend = CpuBackend(leaves, opts, compressor(opts.compression, opts.compression_level))
    try:
        assert backend.pool is None
    finally:
        backend.close()


def test_same_bytes_with_one_thread_as_with_a_thread_per_core(tmp_path):
    table = store_sales_table(3000)
    write_table(table, tmp_path / "pool.parquet", row_group_size=1000)
    with cpu_cores(1):
        write_table(table, tmp_path / "one.parquet", row_group_size=1000)
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "pool.parquet").read_bytes()
