"""Device memory held by the GPU backend (`Device.peak_bytes`, every array it allocates counted until freed):
bounded by the row groups' window, not by the table."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
