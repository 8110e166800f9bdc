"""Wide tables (issue 33, item 6): every per-column step of a write costs the same for each column however many
there are. Counted, not timed: calls per function, hand-offs to the page threads, and the comparisons made
finding the columns whose last page was encoded ahead (bench/wide_bench.py has the times)."""

from __future__ import annotations

import cProfile
import pstats
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.backends import rowgroup
from gpuwrite.backends.cpu import limit_threads
from gpuwrite.backends.host_steps import HostSteps
from gpuwrite.backends.workpool import WorkPool


def _table(columns: int, rows: int) -> pa.Table:
    """`columns` int64 columns c0, c1, ... holding 0..rows-1 (one shared array)."""
    values = pa.array(np.arange(rows, dtype=np.int64))
    return pa.Table.from_arrays([values] * columns, names=[f"c{i}" for i in range(columns)])


def test_twenty_thousand_columns_are_written_and_read_back(tmp_path: Path) -> None:
    table = _table(20_000, 10)
    path = tmp_path / "wide.parquet"
    result = gpuwrite.write_table(table, str(path), device="cpu")
    assert pq.read_table(path).equals(table)
    (group,) = result.footer.row_groups
    assert len(group.columns) == 20_000 and group.columns[-1].path == "c19999"
    assert group.columns[123].min == 0 and group.columns[123].max == 9


def _calls(table: pa.Table, path: Path) -> Counter[str]:
    """Calls of each gpuwrite function during one write of `table` (cProfile), by file and function name; on
    one thread, so the profile sees every call."""
    profile = cProfile.Profile()
    limit_threads(1)
    try:
        profile.enable()
        gpuwrite.write_table(table, str(path), device="cpu")
        profile.disable()
    finally:
        limit_threads(None)
    calls: Counter[str] = Counter()
    for (file, _, name), (_, total, *_rest) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if "gpuwrite" in file or "kernels" in file:
            calls[f"{Path(file).name}:{name}"] += total
    return calls


def test_each_function_is_called_in_proportion_to_the_columns(tmp_path: Path) -> None:
    """Four times the columns: no function is called more than four times as often (plus a few calls), so no
    step loops over the columns once per column."""
    small = _calls(_table(2_500, 200), tmp_path / "small.parquet")
    large = _calls(_table(10_000, 200), tmp_path / "large.parquet")
    assert large["chunk.py:encode_page"] == 4 * small["chunk.py:encode_page"] == 10_000  # a page per column
    grown = {name: (small[name], n) for name, n in large.items() if n > 4 * small[name] + 16}
    assert not grown, f"called more than 4x as often for 4x the columns: {grown}"


def test_small_columns_share_hand_offs_to_the_page_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page threads get a job per group of small columns, not one per column: a hand-off costs about what
    a one-row column's encoding does (40,000 of them were 0.4 s of a 20,000-column write). With the default
    threshold such columns are too small for threads at all (workpool.worth_threads): no job."""
    jobs: list[int] = []
    queue = WorkPool._queue
    monkeypatch.setattr(WorkPool, "_queue", lambda self, *args: (jobs.append(1), queue(self, *args))[1])
    limit_threads(2)
    try:
        gpuwrite.write_table(_table(10_000, 1), str(tmp_path / "inline.parquet"), device="cpu")
        assert jobs == []
        monkeypatch.setattr("gpuwrite.backends.workpool.PARALLEL_JOB_BYTES", 0)
        gpuwrite.write_table(_table(10_000, 1), str(tmp_path / "jobs.parquet"), device="cpu")
    finally:
        limit_threads(None)
    assert 2 <= len(jobs) <= 10_000 // 4  # a job per column to convert it, and one to encode it, made 20,000
    assert (tmp_path / "inline.parquet").read_bytes() == (tmp_path / "jobs.parquet").read_bytes()


class _Column(int):
    """A column number that counts the comparisons made with it."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Column.compared += 1
        return int(self) == other

    __hash__ = int.__hash__


def test_columns_encoded_ahead_are_found_without_a_scan_per_column(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """At the input's end every column's last page is encoded ahead; finding those columns at the cut (the
    pages kept, the pages to encode again) takes about one comparison per column, where a list scanned per
    column took 20,000 x 20,000 / 2 (1.5 s each, twice per row group)."""
    keep, open_pages = HostSteps.keep, rowgroup._open_pages
    seen: list[int] = []

    def counted(ahead: Any) -> Any:
        seen.append(len(ahead))
        return type(ahead)(_Column(c) for c in ahead)

    monkeypatch.setattr(HostSteps, "keep", lambda self, ahead: keep(self, counted(ahead)))
    monkeypatch.setattr(rowgroup, "_open_pages", lambda starts, cut, ahead: open_pages(starts, cut, counted(ahead)))
    _Column.compared = 0
    gpuwrite.write_table(_table(2_000, 300), str(tmp_path / "ahead.parquet"), device="cpu")
    assert seen == [2_000, 2_000]  # every column was ahead, as the docstring says
    assert _Column.compared <= 2 * 2_000
