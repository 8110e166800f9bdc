"""The GPU backend's row groups go through the shared driver (backends.rowgroup.PlannedRowGroup) over the device
steps, with the whole window as the horizon: one plan and one replay launch per advance, a second batch only
for the pages open at a cut, and the CPU path's bytes (on the stand-in device)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.backends.device.builder import DeviceSteps
from gpuwrite.backends.device.ops import standin
from gpuwrite.backends.rowgroup import PlannedRowGroup
from gpuwrite.tools.demo_data import store_sales_table


def test_each_advance_plans_and_replays_the_window_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = store_sales_table(30_000)
    settings: dict[str, Any] = {"block_size": 256 << 10, "page_size": 8 << 10}
    advances: list[tuple[type, int | None]] = []
    reencoded: list[int] = []
    advance, reencode = PlannedRowGroup.advance, DeviceSteps.reencode

    def count_advance(self: PlannedRowGroup[Any, Any], *args: Any) -> int | None:
        cut = advance(self, *args)
        advances.append((type(self.steps), cut))
        return cut

    def count_reencode(self: DeviceSteps, pages: Any) -> None:
        reencoded.append(len(pages))
        reencode(self, pages)

    monkeypatch.setattr(PlannedRowGroup, "advance", count_advance)
    monkeypatch.setattr(DeviceSteps, "reencode", count_reencode)
    with standin():
        writer = gpuwrite.ParquetWriter(tmp_path / "gpu.parquet", table.schema, device="gpu", **settings)
        writer.write(table)
        result = writer.close()
    counters = writer._backend.device.counters  # type: ignore[attr-defined]
    cuts = [cut for _, cut in advances if cut is not None]
    assert {steps for steps, _ in advances} == {DeviceSteps}
    assert len(cuts) == len(result.footer.row_groups) >= 3 and sum(cuts) == table.num_rows
    assert counters.by_kernel["plan"] == counters.by_kernel["replay"] == len(advances)
    assert 1 <= len(reencoded) < len(cuts)  # row groups cut inside the window; the last ends at the input's end
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu", **settings)
    assert (tmp_path / "gpu.parquet").read_bytes() == (tmp_path / "cpu.parquet").read_bytes()
    assert pq.ParquetFile(pa.BufferReader((tmp_path / "gpu.parquet").read_bytes())).metadata.num_rows == 30_000
