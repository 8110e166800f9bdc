"""Under the simulator (numba.cuda kernels, NumPy arrays), a write of several row groups stages its uploads,
reads each row group's bytes back while the next row group's kernels are queued, and writes the CPU path's
bytes."""

from __future__ import annotations

from pathlib import Path

import gpuwrite
from gpuwrite.backends.device.copies import trace_events
from gpuwrite.tools.demo_data import store_sales_table


def test_row_groups_overlap_and_match_the_cpu_path(tmp_path: Path) -> None:
    table = store_sales_table(4_000)
    settings = {"block_size": 48 << 10, "page_size": 4 << 10, "compression": "snappy"}
    with trace_events() as log:
        writer = gpuwrite.ParquetWriter(tmp_path / "gpu.parquet", table.schema, device="gpu", **settings)
        writer.write(table)
        result = writer.close()
    device = writer._backend.device  # type: ignore[attr-defined]
    assert device.mode == "sim"
    groups = len(result.footer.row_groups)
    assert groups >= 3
    writes = [i for i, (what, _) in enumerate(log) if what == "write"]
    loads = {which: i for i, (what, which) in reversed(list(enumerate(log))) if what == "load"}
    overlapped = [n for n in range(groups - 1) if loads[str(n + 1)] < writes[n]]
    assert len(overlapped) >= groups - 2
    for n in overlapped:
        between = log[loads[str(n + 1)]:writes[n]]
        assert ("launch", "plan") in between and [e for e in between if e[0] == "wait"] == [
            ("wait", "row group bytes")]
    assert device.counters.syncs == sum(device.counters.waits.values())
    assert 1 <= device.staging.allocations <= 4 < device.counters.h2d_copies
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu", **settings)
    assert (tmp_path / "gpu.parquet").read_bytes() == (tmp_path / "cpu.parquet").read_bytes()
