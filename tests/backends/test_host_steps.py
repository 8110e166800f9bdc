"""The host row-group steps plan a row group of very wide rows to its estimated end, not past it (issue 33,
item 6): the pages of every column would otherwise be encoded and written ahead to the input's end, then
undone at the cut."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.assemble.file import FileAssembler


def test_wide_rows_are_not_staged_past_the_row_groups_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """300 int64 columns, a block of about 600 rows of them (well within the quarter page of rows the first
    batch planned at least): the first row group's chunks are written once, when it is cut; only the last
    row group's chunks are written ahead, as they end with the input."""
    staged: list[int] = []
    stage = FileAssembler.stage
    monkeypatch.setattr(FileAssembler, "stage", lambda self, column, chunk: (staged.append(column),
                                                                             stage(self, column, chunk))[1])
    values = pa.array(np.arange(1000, dtype=np.int64) * 7919 % 1_000_003)
    table = pa.Table.from_arrays([values] * 300, names=[f"c{i}" for i in range(300)])
    path = tmp_path / "wide.parquet"
    gpuwrite.write_table(table, str(path), device="cpu", block_size=300 * 8 * 600)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 2 and meta.row_group(0).num_rows < 1000
    assert staged == list(range(300))
    assert pq.read_table(path).equals(table)
