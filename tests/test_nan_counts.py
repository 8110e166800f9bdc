"""NaN counts and NaN-free bounds, counted while encoding and carried to the result's chunk summaries."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import gpuwrite


def _floats(n: int, seed: int) -> pa.Table:
    """Doubles and floats with NaN (both signs), infinities, -0.0 and nulls; one stretch holds only NaN."""
    rng = np.random.default_rng(seed)
    d = rng.normal(size=n) * 1e3
    d[rng.random(n) < 0.1] = np.nan
    d[5] = -np.nan
    d[7] = -0.0
    d[300:420] = np.nan  # pages made only of NaN
    d[rng.random(n) < 0.02] = np.inf
    nulls = rng.random(n) < 0.05
    f = d.astype(np.float32)
    return pa.table({"d": pa.array(d, mask=nulls), "f": pa.array(f, mask=nulls),
                     "i": pa.array(np.arange(n), type=pa.int64())})


def _expected(values: list[float | None]) -> tuple[int, tuple[float, float] | None]:
    present = [v for v in values if v is not None]
    finite = [v for v in present if not math.isnan(v)]
    return sum(math.isnan(v) for v in present), ((min(finite), max(finite)) if finite else None)


def test_nan_counts_and_bounds_per_chunk(tmp_path: Path) -> None:
    table = _floats(3000, seed=1)
    path = tmp_path / "nan.parquet"
    result = gpuwrite.write_table(table, path, page_row_count_limit=100, block_size=16 * 1024)
    assert len(result.footer.row_groups) >= 2
    start = 0
    for rg in result.footer.row_groups:
        part = table.slice(start, rg.num_rows)
        start += rg.num_rows
        for chunk in rg.columns:
            if chunk.path == "i":
                assert chunk.nan_count is None
                values = part.column("i").to_pylist()
                assert chunk.value_bounds == (min(values), max(values))
                continue
            nans, bounds = _expected(part.column(chunk.path).to_pylist())
            assert chunk.nan_count == nans > 0
            assert chunk.value_bounds == bounds
            assert math.isnan(chunk.max)  # the footer keeps parquet-java's NaN max
    assert start == table.num_rows
    back = pq.read_table(path)
    assert np.array_equal(back.column("d").to_numpy(), table.column("d").to_numpy(), equal_nan=True)


def test_all_nan_chunk_has_no_bounds(tmp_path: Path) -> None:
    table = pa.table({"d": [math.nan, None, math.nan]})
    chunk = gpuwrite.write_table(table, tmp_path / "all.parquet").footer.row_groups[0].columns[0]
    assert chunk.nan_count == 2
    assert chunk.value_bounds is None
