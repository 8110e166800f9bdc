"""The device value checks' CUDA form (`_jit.page_kernel(value_checks.check_chunk)`, one thread per chunk) run
by numba's CUDA simulator against its sequential twin on the stand-in device: the same first failing row per
chunk, for chunks of one row to many, null slots holding bad bytes, chunked and sliced columns."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from value_check_cases import decimals, strings

from gpuwrite.backends.device.checks import check_table, launch_checks
from gpuwrite.backends.device.convert import build_window
from gpuwrite.backends.device.ops import Device
from gpuwrite.options.model import WriteOptions
from gpuwrite.schema import FileSchema


@pytest.mark.parametrize("seed, rows, chunk_rows, threads", [(1, 24, 1, 8), (2, 40, 16, 3), (3, 60, 64, 32)])
def test_cuda_form_matches_twin(seed: int, rows: int, chunk_rows: int, threads: int) -> None:
    rng = np.random.default_rng(seed)
    bad = rng.choice(rows, 3, replace=False).tolist()
    table = pa.table({"d": decimals(rng, rows, 9, bad[:1]), "w": decimals(rng, rows, 30, bad[1:2], width=256),
                      "s": strings(rng, rows, bad[2:]), "i": pa.array(np.arange(rows))})
    opts = WriteOptions()
    leaves = FileSchema.from_arrow(table.schema, opts).leaves
    checks = check_table(leaves, opts.validate)
    assert checks is not None
    found = []
    for device in (Device("standin"), Device("sim")):
        device.threads = threads
        window = build_window(device, table, leaves, opts, chunk_rows=chunk_rows)
        found.append(np.asarray(launch_checks(device, window, checks)).copy())
    assert np.array_equal(found[0], found[1])
    hits: dict[int, int] = {}
    for r, c in found[0].tolist():
        if r >= 0:
            hits[c] = min(hits.get(c, r), r)
    assert hits == {0: bad[0], 1: bad[1], 2: bad[2]}
