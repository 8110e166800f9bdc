"""The cost model's view inside each launch (`backends/device/cost.py`, recorded by `ops.Device`): geometry,
serial steps and bytes of every launch, every Kernel's `serial`, the device memory peak with the codec's
scratch, and the H200 estimate's formula."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import gpuwrite
import gpuwrite.backends.device as device_package
from gpuwrite.backends.device import cost
from gpuwrite.backends.device.codecs import codec_work
from gpuwrite.backends.device.cost import LaunchRecord, array_bytes, max_serial, modeled_device_s
from gpuwrite.backends.device.ops import THREADS, Counters, Device, Kernel, standin
from gpuwrite.tools.demo_data import store_sales_table


def _counters(tmp_path: Path, rows: int) -> Counters:
    """The counters of a store_sales write of `rows` rows (snappy) on the stand-in device."""
    table = store_sales_table(rows)
    with standin():
        writer = gpuwrite.ParquetWriter(tmp_path / f"{rows}.parquet", table.schema, device="gpu",
                                        compression="snappy")
        writer.write(table)
        writer.close()
    return writer._backend.device.counters  # type: ignore[attr-defined, no-any-return]


def test_every_launch_of_a_write_has_geometry_serial_steps_and_bytes(tmp_path: Path) -> None:
    c = _counters(tmp_path, 3_000)
    assert len(c.records) == c.launches > 0
    by_step: dict[str, int] = {}
    for r in c.records:
        by_step[r.step] = by_step.get(r.step, 0) + 1
        assert r.blocks >= 1 and r.threads == THREADS, r  # as it would launch on CUDA
        assert r.serial > 0, r
        assert r.bytes_read + r.bytes_written > 0, r
    assert by_step == c.by_kernel  # one record per counted launch, under the same step name
    assert {"plan", "replay", "compress", "gather"} <= set(by_step)
    summary = c.as_dict()
    assert summary["max_serial_steps"] == max(r.serial for r in c.records) > 0
    assert summary["serial_step_kernel"] in by_step
    assert summary["device_peak_bytes"] > 0
    assert summary["modeled_device_s"] == pytest.approx(sum(summary["modeled_device_s_by_step"].values()))


def _kernels() -> list[Kernel]:
    """Every Kernel the modules of the GPU backend (backends/device) define."""
    found: dict[int, Kernel] = {}
    for info in pkgutil.iter_modules(device_package.__path__):
        module = importlib.import_module(f"{device_package.__name__}.{info.name}")
        found.update((id(v), v) for v in vars(module).values() if isinstance(v, Kernel))
    return list(found.values())


def test_every_kernel_says_its_serial_steps() -> None:
    kernels = _kernels()
    assert {"plan", "replay", "convert_scan", "value_checks", "gather"} <= {k.name for k in kernels}
    missing = [k.name for k in kernels if k.serial is None]
    assert not missing, f"Kernels without `serial` (the cost model cannot see inside them): {missing}"


def test_a_kernel_without_serial_fails_loudly() -> None:
    blind = Kernel("blind", cuda=lambda: None, twin=lambda items, out: None)
    with pytest.raises(TypeError, match="blind.*serial"):
        Device("standin").launch(blind, 4, np.zeros(4))


def test_geometry_is_the_cuda_launch_even_on_the_stand_in() -> None:
    device = Device("standin")
    out = np.zeros(300, np.int64)
    per_item = Kernel("per_item", cuda=lambda: None, twin=lambda items, a: None, geometry="thread",
                      serial=lambda items, a: 7)
    per_block = Kernel("per_block", cuda=lambda: None, twin=lambda items, *a: None, serial=lambda items, *a: 3)
    device.launch(per_item, 300, out)
    device.launch(per_block, 5, out, out[10:])  # a view into the same array: its bytes counted once
    first, second = device.counters.records
    assert (first.blocks, first.threads, first.serial) == (3, THREADS, 7)
    assert (second.blocks, second.threads, second.serial) == (5, THREADS, 3)
    assert first.bytes_read == first.bytes_written == second.bytes_read == 2400


def test_array_bytes_counts_shared_memory_once() -> None:
    a = np.zeros(100, np.int64)
    assert array_bytes([a, a.view(np.uint8), a[:10], a[50:], np.zeros(3, np.int32), 5, "x"]) == 800 + 12
    assert array_bytes([a[:20], a[10:30], a[60:70]]) == 8 * (30 + 10)


def test_peak_counts_the_codecs_scratch() -> None:
    device = Device("standin")
    held = device.empty(1000, np.int64)
    work = LaunchRecord("compress", 2, 128, 10, 100, 200, scratch_bytes=5_000)
    device.host_step("compress", lambda: None, work=work)
    assert device.counters.device_peak_bytes == held.nbytes + 5_000
    assert device.peak_bytes == held.nbytes  # the arrays alone
    assert device.counters.records[-1] == work


def test_snappy_needs_no_scratch_and_its_work_walks_the_longest_page() -> None:
    work = codec_work("snappy", np.array([0, 100, 65], np.int64), 400)
    assert work.scratch_bytes == 0  # nvcompBatchedSnappyCompressGetTempSize: 0
    assert (work.blocks, work.serial, work.bytes_read, work.bytes_written) == (2, 4, 165, 400)


def _serial_by_step(c: Counters) -> dict[str, int]:
    """The longest serial loop of each step's launches."""
    out: dict[str, int] = {}
    for r in c.records:
        out[r.step] = max(out.get(r.step, 0), r.serial)
    return out


def test_plan_serial_steps_do_not_grow_with_the_rows_replay_grows_with_the_checks(tmp_path: Path) -> None:
    """plan runs its checks in segments of rows, a block each (a thread per column): its longest loop is one
    segment's, whatever the rows; replay runs a block with a thread per column over the chain of checks, counting
    and metering each column from the marks replay_marks leaves (a thread per page), so it grows with the checks
    (fewer than the rows: they start close together) and no longer with a column's levels; pack_levels packs
    parts of at most PACK_PART words, a block each."""
    rows = (30_000, 120_000)
    small, large = (_serial_by_step(_counters(tmp_path, n)) for n in rows)
    plan_steps = ("plan_count", "plan_spec", "plan_fix", "plan")
    most = [max(by_step[s] for s in plan_steps) for by_step in (small, large)]
    assert most[1] <= 1.2 * most[0]  # 1 and 2 segments of 60,000 rows
    assert most[1] <= 65_536
    assert small["replay"] < large["replay"] < 2 * small["replay"]  # the checks' chain; 4x the rows' levels unwalked
    for step in ("replay_marks", "pack_levels"):
        assert large[step] <= 1.2 * small[step]
    for by_step, n in zip((small, large), rows, strict=True):
        assert by_step["replay"] <= n // 4


def test_pages_the_size_ends_keep_the_serial_steps_from_growing_with_the_rows(tmp_path: Path) -> None:
    """Strings whose pages the size check ends (16 KiB pages): the plan's segments do not meet, and the rest of the
    chain, as long as the rows left, is planned on the host (one read back, `plan rest`), so no plan launch's loop
    grows with the rows: the longest at 330,000 rows (6 segments) within 1.2x of the longest at 140,000 (3), both
    within 65,536 (a one-block kernel walked the rest before: 9,072 checks for a million rows, 394,449 steps). The
    replay's chain still grows with the checks (test_plan_serial_steps_do_not_grow_with_the_rows_replay_grows_with_
    the_checks): 86,105 and 198,371 steps here, where 16 KiB pages put a check every 10 rows or so."""
    rng = np.random.default_rng(7)
    words = np.array(["".join(rng.choice(list("abcdefghij"), int(n))) for n in rng.integers(20, 60, 300)])
    most = []
    for rows in (140_000, 330_000):
        table = pa.table({"id": np.arange(rows, dtype=np.int64), "s": words[rng.integers(0, 300, rows)],
                          "t": [f"x{i}y" * 3 for i in rng.integers(0, 10**9, rows)], "n": rng.normal(size=rows)})
        with standin():
            writer = gpuwrite.ParquetWriter(tmp_path / f"{rows}.parquet", table.schema, device="gpu",
                                            compression="snappy", page_size=16 << 10)
            writer.write(table)
            writer.close()
        c = writer._backend.device.counters  # type: ignore[attr-defined]
        assert c.waits.get("plan rest") == 1, c.waits
        most.append(max(n for step, n in _serial_by_step(c).items() if step != "replay"))
    assert most[1] <= 1.2 * most[0] and most[1] <= 65_536, most


def test_modeled_device_s_is_the_documented_formula() -> None:
    records = [LaunchRecord("a", 1, 128, 10, 4_800_000, 1_200_000), LaunchRecord("b", 40, 128, 1, 0, 960_000),
               LaunchRecord("a", 1, 128, 1_000_000, 0, 0)]
    bandwidth = 4.8e12 * 0.8
    a = (6_000_000 / bandwidth + 10 * 300e-9 + 4e-6) + (1_000_000 * 300e-9 + 4e-6)
    b = 960_000 / bandwidth + 300e-9 + 4e-6
    total, by_step = modeled_device_s(records)
    assert by_step == pytest.approx({"a": a, "b": b})
    assert total == pytest.approx(a + b)
    assert (cost.HBM_BYTES_PER_S, cost.HBM_EFFICIENCY, cost.STEP_S, cost.LAUNCH_S) == (4.8e12, 0.8, 300e-9, 4e-6)
    assert max_serial(records) == (1_000_000, "a") and max_serial([]) == (0, None)
    counters: Any = Counters(records=list(records))
    summary = counters.as_dict()
    assert summary["modeled_device_s"] == pytest.approx(a + b)
    assert (summary["max_serial_steps"], summary["serial_step_kernel"]) == (1_000_000, "a")
