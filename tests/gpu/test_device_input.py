"""Device input under numba's CUDA simulator: the stand-in producer exports buffers held in simulator device
arrays (`numba.cuda.to_device`) through the Arrow C Device interface, and the GPU backend (its CUDA kernels
simulated) writes the bytes the CPU path writes for the same rows given as host Arrow: every flat type with
nulls and slices, strings, decimals of every width, nested columns, partitioned and bucketed datasets.
Small inputs: the simulator runs each CUDA thread as a Python thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from device_input_cases import flat_table, nested_table, write_both
from numba import cuda

from gpuwrite.integrations.device_export import DeviceExport


class _SimBuffer:
    """A numba simulator device array, described by `__cuda_array_interface__` (the simulator's arrays do
    not carry it themselves: their memory is the wrapped NumPy array's)."""

    def __init__(self, host: Any) -> None:
        self.dev = cuda.to_device(np.frombuffer(host, dtype=np.uint8).copy())

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        ary = self.dev._ary
        return {"shape": (ary.size,), "typestr": "|u1", "data": (ary.ctypes.data, False), "version": 3,
                "strides": None, "stream": None}


def _export(table: pa.Table) -> DeviceExport:
    return DeviceExport(table, place=_SimBuffer)


@pytest.mark.parametrize("start,length", [(0, None), (5, 19)])
def test_flat_types_with_nulls_and_slices(tmp_path: Path, start: int, length: int | None) -> None:
    table = flat_table(40, seed=start).slice(start, length)
    device, host, writer = write_both(tmp_path, table, _export(table))
    assert device == host
    assert writer._backend.device.mode == "sim" and writer._backend.device.counters.d2d_copies > 0


def test_strings_and_decimals_across_pages(tmp_path: Path) -> None:
    table = flat_table(60, seed=3).select(["str", "lbin", "dec32", "dec64", "dec128", "dec256", "bool"])
    device, host, _ = write_both(tmp_path, table, _export(table), page_row_count_limit=16,
                                 dictionary_page_size=64)
    assert device == host


def test_nested(tmp_path: Path) -> None:
    table = nested_table(30, seed=2).slice(3)
    device, host, _ = write_both(tmp_path, table, _export(table))
    assert device == host


def test_partitioned_bucketed_dataset(tmp_path: Path) -> None:
    from gpuwrite.dataset.write import write_dataset

    table = flat_table(40, seed=1).select(["i32", "str"])
    table = table.append_column("p", pa.array(np.arange(40, dtype=np.int32) % 2))
    write_dataset(_export(table), tmp_path / "d", partition_by=["p"], bucket_by=(2, ["i32"]), device="gpu")
    write_dataset(table, tmp_path / "h", partition_by=["p"], bucket_by=(2, ["i32"]), device="gpu")
    files_d = sorted(p.relative_to(tmp_path / "d") for p in (tmp_path / "d").rglob("*.parquet"))
    files_h = sorted(p.relative_to(tmp_path / "h") for p in (tmp_path / "h").rglob("*.parquet"))
    assert files_d and [f.parent for f in files_d] == [f.parent for f in files_h]
    for a, b in zip(files_d, files_h, strict=True):
        assert (tmp_path / "d" / a).read_bytes() == (tmp_path / "h" / b).read_bytes()


def test_nothing_of_the_callers_device_data_kept_after_a_write(tmp_path: Path) -> None:
    """The exporter's stream holds no reference cycle and the writer keeps nothing of the caller's data: with the
    cyclic collector off (gpuwrite pauses it while writing), each exported table is freed as soon as the caller
    drops it, so repeated device-input writes do not accumulate device copies. A ParquetWriter reads a batch's
    rows zero-copy until their row group is written: it lets go of them at the latest when it is closed."""
    import gc
    import weakref

    import gpuwrite

    table = flat_table(30, seed=5).select(["i64", "str"])
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for i in range(20):
            exported = _export(table)
            ref = weakref.ref(exported)
            gpuwrite.write_table(exported, tmp_path / f"t{i}.parquet", device="gpu")
            del exported
            assert ref() is None, f"write {i}: the exported device data is still referenced after the write"
        with gpuwrite.ParquetWriter(tmp_path / "s.parquet", table.schema, device="gpu") as w:
            exported = _export(table)
            ref = weakref.ref(exported)
            w.write(exported)  # its rows wait, zero-copy, for the rest of their row group
            del exported
        assert ref() is None, "the closed ParquetWriter still holds the caller's exported device data"
    finally:
        if was_enabled:
            gc.enable()
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "s.parquet").num_rows == table.num_rows
