"""The GPU backend counts NaN and finds NaN-free bounds as the CPU path does (page_float_nans vs float_nans)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
from gpuwrite.kernels import pages as K
from gpuwrite.kernels._jit import page_kernel
from gpuwrite.kernels.stats import float_nans

import gpuwrite


def test_page_float_nans_matches_its_cpu_form():
    rng = np.random.default_rng(4)
    values = rng.normal(size=300).astype(np.float32)
    values[rng.random(300) < 0.3] = np.nan
    values[100:150] = np.nan
    bits = values.view(np.int32)
    va = np.array([0, 100, 120, 250], dtype=np.int64)
    vb = np.array([100, 150, 300, 250], dtype=np.int64)
    nans, tops = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64)
    page_kernel(K.page_float_nans)[1, 32](4, bits, va, vb, True, nans, tops)
    for p in range(4):
        assert (nans[p], tops[p]) == float_nans(bits, int(va[p]), int(vb[p]), True)
    assert nans[1] == 50 and tops[1] == -1 and tops[3] == -1


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
