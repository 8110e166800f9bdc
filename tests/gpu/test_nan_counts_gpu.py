"""The GPU backend counts NaN and finds NaN-free bounds as the CPU path does (its EXTREMES step against the
CPU's float_nans; the step's CUDA form against its twin is in test_page_layout.py)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

import gpuwrite


def test_gpu_summaries_carry_the_cpu_nan_counts(tmp_path):
    rng = np.random.default_rng(2)
    d = rng.normal(size=600)
    d[rng.random(600) < 0.2] = np.nan
    d[200:260] = np.nan
    table = pa.table({"d": d, "f": d.astype(np.float32)})
    got = {}
    for device in ("cpu", "gpu"):
        res = gpuwrite.write_table(table, tmp_path / f"{device}.parquet", device=device, page_row_count_limit=50)
        got[device] = [(c.nan_count, c.value_bounds) for rg in res.footer.row_groups for c in rg.columns]
    assert got["gpu"] == got["cpu"]
    assert got["cpu"][0][0] == int(np.isnan(d).sum())
    assert got["cpu"][0][1] == (float(np.nanmin(d)), float(np.nanmax(d)))
    assert not math.isnan(got["cpu"][1][1][1])
