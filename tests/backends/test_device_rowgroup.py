"""The GPU backend's row groups go through the shared driver (backends.rowgroup.PlannedRowGroup) over the device
steps, with the whole window as the horizon: one plan and one replay launch per advance, a second batch only
for the pages open at a cut, and the CPU path's bytes (on the stand-in device)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
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


def _per_row_group(events: list[tuple[str, str]]) -> list[tuple[int, int]]:
    """(launches, host waits) of each row group, from the traced event order (a row group's events start at its
    window's load; its bytes are waited for while the next one runs, the wait just before its "write": counted to
    it, as bench/gpu_model.py counts)."""
    per: dict[int, list[int]] = {}
    at = 0
    for j, (what, which) in enumerate(events):
        if what == "load":
            at = int(which)
            per.setdefault(at, [0, 0])
        elif what == "launch":
            per[at][0] += 1
        elif what == "wait":
            after = events[j + 1] if j + 1 < len(events) else ("", "")
            per[int(after[1]) if after[0] == "write" else at][1] += 1
    return [(launches, waits) for _, (launches, waits) in sorted(per.items())]


def _write_traced(path: Path, table: pa.Table, **settings: Any) -> tuple[Any, list[tuple[int, int]], Any]:
    """Write `table` through the GPU backend on the stand-in device: (the result, each row group's launches and
    waits, the device's counters)."""
    from gpuwrite.backends.device.copies import trace_events

    with standin(), trace_events() as events:
        writer = gpuwrite.ParquetWriter(path, table.schema, device="gpu", **settings)
        writer.write(table)
        result = writer.close()
    return result, _per_row_group(events), writer._backend.device.counters  # type: ignore[attr-defined]


def test_row_groups_ending_where_the_last_did_need_one_batch(tmp_path: Path) -> None:
    """A row group that ends where one before it ended (alike rows: the memory checks close in on the same row)
    was encoded with the pages open there and its dictionary pages: no second batch, within the bars of 64
    launches and 8 waits (a second batch took 72 and 12); the files are the CPU path's."""
    table = store_sales_table(30_000)
    settings: dict[str, Any] = {"block_size": 256 << 10, "page_size": 8 << 10, "compression": "snappy"}
    result, per, counters = _write_traced(tmp_path / "gpu.parquet", table, **settings)
    rows = [rg.num_rows for rg in result.footer.row_groups]
    assert len(rows) == len(per) >= 5 and len(set(rows[:-1])) == 1  # alike row groups, the last one shorter
    assert all(launches <= 64 and waits <= 8 for launches, waits in per[1:]), per
    groups = len(rows)
    assert counters.launches / groups <= 64 and counters.syncs / groups <= 8
    assert "dictionary sizes" not in counters.waits  # read with the batch, in every row group
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu", **settings)
    assert (tmp_path / "gpu.parquet").read_bytes() == (tmp_path / "cpu.parquet").read_bytes()


@pytest.mark.parametrize("shift", [-1, 1, 997])
def test_wrong_guesses_write_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shift: int) -> None:
    """Guessed cuts that miss (each a few rows off the true cut): the pages open at the cut are encoded again and
    the dictionary pages made for the row group's own pages; the files are the CPU path's. The pages open at the
    cut are found with the replay and read with its sync, and the second batch's results with the row group's
    bytes: the second batch waits twice (for its values' lengths and its compressed sizes; it waited three times,
    four before), each row group at most 8 times with the last one's bytes (9 before); it makes no dictionary pages
    where the first batch's hold the entries the row group needs."""
    from gpuwrite.backends.device import builder

    made = builder.DeviceSteps.__init__

    def off_by(self: DeviceSteps, *args: Any) -> None:
        made(self, *args)
        self.guesses = [g + shift for g in self.guesses]

    monkeypatch.setattr(builder.DeviceSteps, "__init__", off_by)
    table = store_sales_table(30_000)
    settings: dict[str, Any] = {"block_size": 256 << 10, "page_size": 8 << 10, "compression": "snappy"}
    _, per, counters = _write_traced(tmp_path / "gpu.parquet", table, **settings)
    assert counters.waits["values lengths"] == 2 * len(per) - 1  # every cut inside the window: a second batch
    assert "batch" not in counters.waits  # its results read with the row group's bytes
    assert counters.waits["page spans"] == len(per)  # the first batch's only: a second batch reads none
    assert all(waits <= 8 for _, waits in per), per
    if abs(shift) == 1:  # a row off: some row groups' dictionary pages hold what the guessed cut's did, and their
        # second batch makes none (made by the first batch and again by each second batch: 2 a miss, 10 here)
        assert counters.by_kernel["dict_pages"] < 2 * (len(per) - 1)
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu", **settings)
    assert (tmp_path / "gpu.parquet").read_bytes() == (tmp_path / "cpu.parquet").read_bytes()


def test_guessed_pages_are_the_pages_open_at_the_guess() -> None:
    """Per column, the page open at a guessed row starts where its last planned page ending at or before the
    guess ends; a column whose page ends there, or whose first page is still open, has none; a guess at the
    input's end is left to the last pages."""
    from gpuwrite.backends.device.builder import _pages, guessed_pages

    # column 0: pages 0-10, 10-20, 20-30; column 1: 0-15, 15-30; column 2: none planned (first page open)
    batch = _pages([(0, 0, 10), (1, 0, 15), (0, 10, 20), (0, 20, 30), (1, 15, 30)])
    assert guessed_pages(batch, 3, [25], 40, False) == [(0, 20, 25), (1, 15, 25)]
    assert guessed_pages(batch, 3, [20], 40, False) == [(1, 15, 20)]  # column 0's page ends at 20
    assert guessed_pages(batch, 3, [12, 12], 40, False) == [(0, 10, 12)]  # column 1's first page is open
    assert guessed_pages(batch, 3, [35], 40, False) == [(0, 30, 35), (1, 30, 35)]
    assert guessed_pages(batch, 3, [40, 0, 41], 40, True) == []


def test_pages_ended_by_size_stay_within_eight_waits(tmp_path: Path) -> None:
    """Wide strings: the page-size check, not the row limit, ends the pages, so the planner's segments do not
    meet and the host plans the rest of the checks (`DeviceSchedule._rest`: a second plan wait, which reads the
    window's levels and indexes back); the dictionary pages are made with the batch (their sizes read with it),
    so the row group still waits at most 8 times (it took 9)."""
    rng = np.random.default_rng(5)
    words = ["".join(rng.choice(list("abcdefghij"), int(n))) for n in rng.integers(20, 60, 400)]
    rows = 140_000  # three plan segments (planner.SEGMENT_ROWS); pages of about 500 rows (16 KiB)
    table = pa.table({"id": np.arange(rows, dtype=np.int64), "s": pa.array([words[i] for i in rng.integers(0, 400, rows)]),
                      "t": pa.array([f"x{i}y" * 3 for i in rng.integers(0, 10**9, rows)]), "n": rng.normal(size=rows)})
    settings: dict[str, Any] = {"page_size": 16 << 10, "compression": "snappy"}
    result, per, counters = _write_traced(tmp_path / "gpu.parquet", table, **settings)
    assert len(result.footer.row_groups) == 1 and counters.waits.get("plan rest") == 1
    pages = pq.ParquetFile(tmp_path / "gpu.parquet").metadata.row_group(0).column(2).to_dict()
    assert pages["total_uncompressed_size"] > 100 * (16 << 10)  # many pages, each ended by its size
    assert counters.syncs == per[0][1] <= 8
    # no launch walks the rest's chain (a one-block kernel did, its serial loop growing with the rows left): the
    # longest loop of a plan step is a segment's walk
    serial = {r.step: r.serial for r in counters.records}
    assert "plan_rest" not in counters.by_kernel and max(serial[s] for s in serial if s.startswith("plan")) \
        == max(serial["plan_spec"], serial["plan_fix"]), serial
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu", **settings)
    assert (tmp_path / "gpu.parquet").read_bytes() == (tmp_path / "cpu.parquet").read_bytes()


@pytest.mark.parametrize("rows", [40_000, 30_001])
def test_a_row_group_at_the_input_end_makes_its_dictionary_pages_with_the_batch(tmp_path: Path, rows: int) -> None:
    """The input's end is the likeliest cut of the batch that reaches it, also when a page check there ended every
    page (40,000 rows: twice the page row limit, no last pages): the dictionary pages are made with the batch and
    their sizes read with it, 6 waits in all."""
    table = store_sales_table(rows)
    result, per, counters = _write_traced(tmp_path / "gpu.parquet", table, compression="snappy")
    assert len(result.footer.row_groups) == 1
    assert "dictionary sizes" not in counters.waits and counters.syncs == per[0][1] == 6
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu", compression="snappy")
    assert (tmp_path / "gpu.parquet").read_bytes() == (tmp_path / "cpu.parquet").read_bytes()


def _strings_table(rows: int) -> pa.Table:
    """Ints, doubles and strings (dictionary and plain), some nulls: byte-kind statistics and bloom-free pages."""
    rng = np.random.default_rng(7)
    words = np.array(["".join(rng.choice(list("abcdefgh"), int(n))) for n in rng.integers(3, 30, 300)])
    names = pa.array(words[rng.integers(0, 300, rows)]).to_pylist()
    return pa.table({"id": np.arange(rows, dtype=np.int64), "name": pa.array(names),
                     "note": pa.array([None if i % 7 == 0 else f"n{i * 7919 % 100003}" for i in range(rows)]),
                     "x": rng.normal(size=rows), "k": rng.integers(0, 50, rows).astype(np.int32)})


@pytest.mark.parametrize("data", ["store_sales", "strings"])
def test_row_group_0_and_missed_cuts_stay_within_64_launches_and_8_waits(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         data: str) -> None:
    """Row group 0 (no earlier cut to guess) and row groups whose cut no guess foresaw (every guess 997 rows off)
    encode the pages open at the cut as a second batch: its sizes are laid out on the host and its results read
    with the row group's bytes (each header in a slot, its body after it), so every row group stays within 64
    launches and 8 waits, its own bytes' wait counted (row group 0 took 72 and 9 here, a missed cut 76 and 9);
    the files are the CPU path's (byte-kind statistics and chunks handed over in pieces included; the strings
    table's five kinds of pages take 68 launches)."""
    from gpuwrite.backends.device import builder

    made = builder.DeviceSteps.__init__

    def off_by(self: DeviceSteps, *args: Any) -> None:
        made(self, *args)
        self.guesses = [g + 997 for g in self.guesses]

    monkeypatch.setattr(builder.DeviceSteps, "__init__", off_by)
    table = store_sales_table(30_000) if data == "store_sales" else _strings_table(40_000)
    settings: dict[str, Any] = {"block_size": 256 << 10, "page_size": 8 << 10, "compression": "snappy"}
    result, per, counters = _write_traced(tmp_path / "gpu.parquet", table, **settings)
    assert len(per) == len(result.footer.row_groups) >= 3
    assert counters.waits["values lengths"] == 2 * len(per) - 1  # a second batch in each but the last
    assert all(waits <= 8 for _, waits in per), per
    if data == "store_sales":  # the bar (the strings table's kinds of pages take a few more launches)
        assert all(launches <= 64 for launches, _ in per), per
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu", **settings)
    assert (tmp_path / "gpu.parquet").read_bytes() == (tmp_path / "cpu.parquet").read_bytes()


def test_windows_upload_little_past_the_cut(tmp_path: Path) -> None:
    """Rows past a cut are uploaded again with the next window: alike row groups take a window of the last row
    count and a small margin, so H2D stays near the input's bytes (1.51x with the fixed quarter margin, on this
    table in twelve row groups; the first window, sized by a lookahead, is the most of what is left); the files
    are the CPU path's."""
    table = store_sales_table(60_000)
    settings: dict[str, Any] = {"block_size": 256 << 10, "page_size": 8 << 10, "compression": "snappy"}
    result, per, counters = _write_traced(tmp_path / "gpu.parquet", table, **settings)
    assert len(result.footer.row_groups) >= 10
    assert counters.by_kernel["plan"] == len(result.footer.row_groups)  # no window planned twice
    assert counters.h2d_bytes <= 1.35 * table.nbytes, counters.h2d_bytes / table.nbytes
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu", **settings)
    assert (tmp_path / "gpu.parquet").read_bytes() == (tmp_path / "cpu.parquet").read_bytes()
