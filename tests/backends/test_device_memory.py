"""Device memory held by the GPU backend (`Device.peak_bytes`, every array it allocates counted until freed):
bounded by the row groups' window, not by the table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.backends.device.ops import Device, standin
from gpuwrite.tools.demo_data import store_sales_table


def _peak(tmp_path: Path, rows: int) -> tuple[int, int]:
    """(peak device bytes, row groups) of a write of `rows` store_sales rows in about 1 MiB row groups."""
    table = store_sales_table(rows)
    with standin():
        writer = gpuwrite.ParquetWriter(tmp_path / f"{rows}.parquet", table.schema, device="gpu",
                                        block_size=1 << 20)
        writer.write(table)
        result = writer.close()
    device = writer._backend.device  # type: ignore[attr-defined]
    assert device.live_bytes == 0 or device.live_bytes < device.peak_bytes
    return device.peak_bytes, len(result.footer.row_groups)


def test_peak_is_bounded_by_the_window_not_the_table(tmp_path: Path) -> None:
    small, groups_small = _peak(tmp_path, 40_000)
    large, groups_large = _peak(tmp_path, 160_000)
    assert groups_large >= 3 * groups_small  # four times the rows, about four times the row groups
    assert small > 0 and large < 2 * small


def test_freed_arrays_are_not_held() -> None:
    device = Device("standin")
    a = device.empty(1000, np.int64)
    b = device.upload(np.zeros(500, np.int64))
    assert device.live_bytes == 12_000 and device.peak_bytes == 12_000
    del a
    assert device.live_bytes == 4_000
    c = device.full(250, 0, np.int64)
    assert device.live_bytes == 6_000 and device.peak_bytes == 12_000
    del b, c
    assert device.live_bytes == 0


def test_close_keeps_no_device_array(tmp_path: Path) -> None:
    """Once the file is written, the backend holds none of the row groups' device arrays (the last row group's
    included) and hands CuPy's pool back (`release_pool`)."""
    table = store_sales_table(20_000)
    with standin():
        writer = gpuwrite.ParquetWriter(tmp_path / "t.parquet", table.schema, device="gpu", block_size=1 << 20)
        writer.write(table)
        writer.close()
    device = writer._backend.device  # type: ignore[attr-defined]
    assert device.peak_bytes > 0 and device.live_bytes == 0


class _FakePool:
    def __init__(self, free: int) -> None:
        self.free, self.calls = free, 0

    def free_bytes(self) -> int:
        return self.free

    def free_all_blocks(self) -> None:
        self.calls += 1
        self.free = 0


class _FakeCupy:
    """What `free_cupy_pools` calls on CuPy: its default device and pinned pools."""

    def __init__(self) -> None:
        self.pool, self.pinned = _FakePool(3 << 20), _FakePool(1 << 20)

    def get_default_memory_pool(self) -> _FakePool:
        return self.pool

    def get_default_pinned_memory_pool(self) -> _FakePool:
        return self.pinned


def test_pools_are_freed_on_close_and_by_release_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from gpuwrite.backends.device import ops

    fake = _FakeCupy()
    device = Device("standin")
    device.mode, device.xp = "cuda", fake  # what a CUDA device's pool calls reach
    assert device.release_pool() == 3 << 20 and fake.pool.calls == 1 and fake.pinned.calls == 1
    assert Device("standin").release_pool() == 0  # no CuPy pool off CUDA

    fake = _FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(ops, "_CUDA_IN_USE", False)
    assert gpuwrite.release_memory() >= 0 and fake.pool.calls == 0  # CuPy untouched where gpuwrite never used it
    monkeypatch.setattr(ops, "_CUDA_IN_USE", True)
    assert gpuwrite.release_memory() >= 3 << 20 and fake.pool.calls == 1


def test_peak_is_within_three_times_the_row_groups_input(tmp_path: Path) -> None:
    """One row group of store_sales (snappy) holds at most 3x its Arrow input on the (stand-in) device: arenas,
    a 4-byte id per dictionary value, a 4-byte first value per entry a dictionary can hold, one batch's page
    buffers (2.93x here; `bench/gpu_model.py --rows 1000000`: 2.82x)."""
    table = store_sales_table(100_000)
    with standin():
        writer = gpuwrite.ParquetWriter(tmp_path / "one.parquet", table.schema, device="gpu", compression="snappy")
        writer.write(table)
        result = writer.close()
    device = writer._backend.device  # type: ignore[attr-defined]
    assert len(result.footer.row_groups) == 1
    assert 0 < device.peak_bytes <= 3 * table.nbytes, device.peak_bytes / table.nbytes


def _grown_peak(tmp_path: Path, table: pa.Table, block_size: int) -> tuple[int, int]:
    """(peak device bytes, window conversions) of a write of `table` in one row group."""
    with standin():
        writer = gpuwrite.ParquetWriter(tmp_path / "grown.parquet", table.schema, device="gpu", block_size=block_size)
        writer.write(table)
        result = writer.close()
    device = writer._backend.device  # type: ignore[attr-defined]
    assert len(result.footer.row_groups) == 1
    return device.peak_bytes, device.counters.by_kernel["convert_write"]


def test_a_grown_window_does_not_hold_the_last_ones_arrays(tmp_path: Path) -> None:
    """No row group ends in the first windows (the values encode to almost nothing), so the window doubles and is
    converted again; the last window's arrays are dropped before the next is built: the peak is that of one
    window of all the rows (before: 3.5x the input against 2.6x)."""
    rows = 2_000_000
    table = pa.table({"a": pa.array(np.zeros(rows, np.int64)), "b": pa.array(np.arange(rows) % 7)})
    grown, conversions = _grown_peak(tmp_path, table, 1 << 20)  # first window: 8 x 1 MiB of Arrow rows
    single, once = _grown_peak(tmp_path, table, 1 << 30)
    assert conversions >= 3 and once == 1
    assert grown <= single


def test_the_raw_arrow_copy_is_dropped_once_converted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's raw Arrow buffers on the device (`src`, as large as the input) are let go once their last
    reader, the value checks, is queued: every row group's steps hold the converted arenas only."""
    from gpuwrite.backends.device.builder import DeviceSteps

    loaded: list[DeviceSteps] = []
    load = DeviceSteps.load

    def keep(self: DeviceSteps, window: object) -> None:
        load(self, window)  # type: ignore[arg-type]
        loaded.append(self)

    monkeypatch.setattr(DeviceSteps, "load", keep)
    table = store_sales_table(20_000)
    with standin():
        gpuwrite.write_table(table, tmp_path / "t.parquet", device="gpu")
    assert loaded and all(s.win is not None and "src" not in s.win.converted.inputs for s in loaded)
    assert all({"chunks", "srct"} <= set(s.win.converted.inputs) for s in loaded)  # small tables stay


def test_a_written_row_groups_arenas_are_freed_before_the_next_window(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A row group's bytes are written (deferred) while the next row group's window is built; that write reads
    the column table only, so the last window's arenas are freed first: when a window is built, the device holds
    less than the last window's arenas (before: all of them, 4.22x the row group's input against 3.43x at 2.88M
    store_sales rows in 16 MiB row groups)."""
    from gpuwrite.backends.device.builder import DeviceSteps

    seen: list[tuple[int, int]] = []  # (device bytes held when a window is built, that window's arena bytes)
    load = DeviceSteps.load

    def measured(self: DeviceSteps, window: object) -> None:
        held = self.device.live_bytes
        load(self, window)  # type: ignore[arg-type]
        assert self.win is not None
        a = self.win.arenas
        seen.append((held, sum(int(x.nbytes) for x in (a.lev, a.idx, a.v8, a.v32, a.v64, a.dat))))

    monkeypatch.setattr(DeviceSteps, "load", measured)
    table = store_sales_table(60_000)
    with standin():
        result = gpuwrite.write_table(table, tmp_path / "t.parquet", device="gpu", block_size=1 << 20)
    assert len(result.footer.row_groups) >= 3 and len(seen) >= 3
    for (held, _), (_, last_arenas) in zip(seen[1:], seen, strict=False):
        assert held < last_arenas, (held, last_arenas)
