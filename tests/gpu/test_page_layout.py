"""The per-page bookkeeping kernels (kernels/plan/page_layout_cuda.py), run by numba's CUDA simulator, against their
sequential twins (kernels/plan/page_layout.py, the stand-in device): the same host inputs through both devices, whole
outputs compared (bytes a kernel must not touch included); many items per launch, blocks of 1 to 128 threads."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gpuwrite.kernels.plan.page_layout import F_COUNT, F_DEF_LEN, F_REP_LEN, HEADER_BOUND
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from layout_cases import (
    CRCS,
    I32_MAX,
    data_page_fields,
    dictionary_header_args,
    dictionary_page_args,
    entries_of,
    extremes_args,
    header_args,
    info_args,
    paged_window,
    plain_bytes,
    run_step,
)

from gpuwrite.backends.device import steps
from gpuwrite.backends.device.ops import Device, Kernel

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
THREADS = st.sampled_from([1, 3, 32, 128])


def same_on_both(kernel: Kernel, items: int, args: list[Any], out: list[int], threads: int) -> list[np.ndarray]:
    """Outputs of `kernel` under the simulator (`threads` per block) and its twin, asserted equal; returned."""
    sim = Device()
    assert sim.mode == "sim"
    sim.threads = threads
    got = run_step(sim, kernel, items, args, out)
    want = run_step(Device("standin"), kernel, items, args, out)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert np.array_equal(g, w), (kernel.name, out[k])
    return got


@SETTINGS
@given(st.lists(data_page_fields(), min_size=1, max_size=40), st.lists(CRCS, min_size=40, max_size=40),
       st.booleans(), THREADS)
def test_page_headers_cuda_equals_twin(rows: list[list[int]], crcs: list[int], has_crc: bool, threads: int) -> None:
    n = len(rows)
    args = header_args(np.array(rows, dtype=np.int64).reshape(n, F_COUNT), np.array(crcs[:n], np.int64), has_crc)
    _, sizes = same_on_both(steps.PAGE_HEADERS, n, args, [3, 5], threads)
    assert (sizes > 0).all() and (sizes <= HEADER_BOUND).all()


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, I32_MAX), st.integers(0, I32_MAX), st.integers(0, I32_MAX)), min_size=1,
                max_size=40), st.lists(CRCS, min_size=40, max_size=40), st.booleans(), THREADS)
def test_dictionary_headers_cuda_equals_twin(rows: list[tuple[int, int, int]], crcs: list[int], has_crc: bool,
                                             threads: int) -> None:
    n = len(rows)
    args = dictionary_header_args(np.array(rows, dtype=np.int64).reshape(n, 3), np.array(crcs[:n], np.int64), has_crc)
    _, sizes = same_on_both(steps.DICT_HEADERS, n, args, [4, 6], threads)
    assert (sizes > 0).all() and (sizes <= HEADER_BOUND).all()


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 400), st.integers(0, 30), st.integers(0, 30)),
                min_size=1, max_size=40), st.booleans(), THREADS)
def test_stored_choices_cuda_equals_twin(pages: list[tuple[int, int, int, int]], identity: bool,
                                         threads: int) -> None:
    n = len(pages)
    sizes = np.array(pages, dtype=np.int64).reshape(n, 4)
    fields = np.full((n, F_COUNT), -3, dtype=np.int64)
    fields[:, F_DEF_LEN], fields[:, F_REP_LEN] = sizes[:, 2], sizes[:, 3]
    outs = [np.full(n, -7, dtype=np.int64) for _ in range(3)]
    same_on_both(steps.STORED, n, [sizes[:, 0].copy(), sizes[:, 1].copy(), identity, np.ascontiguousarray(fields.T),
                                   *outs], [3, 4, 5, 6], threads)


@pytest.mark.parametrize(("n", "threads"), [(0, 32), (1, 1), (31, 32), (32, 32), (33, 32), (100, 3), (300, 128),
                                            (77, 5)])
def test_exclusive_scan_cuda_equals_twin(n: int, threads: int) -> None:
    values = np.random.default_rng(n).integers(-2**40, 2**40, n + 4)  # the scan covers a prefix of its input
    (out,) = same_on_both(steps.SCAN, 1, [values, n, np.full(n + 3, -7, dtype=np.int64)], [2], threads)
    assert out[n] == values[:n].sum()


@pytest.mark.parametrize(("seed", "limit"), [(1, 1 << 20), (2, 90), (3, 8)])
def test_page_info_and_extremes_cuda_equal_twins(seed: int, limit: int) -> None:
    w = paged_window(300, seed, limit, distinct=40)
    n = len(w.col)
    assert n > 32  # more pages than threads in a block
    (info,) = same_on_both(steps.PAGE_INFO, n, info_args(w), [10], 32)
    assert (info >= 0).all()
    (ext,) = same_on_both(steps.EXTREMES, n, extremes_args(w, np.random.default_rng(seed)), [8], 32)
    assert (ext != -7).any(axis=1).all()


@pytest.mark.parametrize(("seed", "threads"), [(4, 32), (5, 7), (6, 1)])
def test_dictionary_pages_cuda_equal_twin(seed: int, threads: int) -> None:
    w = paged_window(300, seed, 1 << 20, distinct=40)
    totals = [entries_of(w, int(c)) for c in w.dict_columns]
    assert max(totals) > 2 * threads  # entries spanning several strides of a block
    counts = np.array([np.random.default_rng(seed + k).integers(0, t + 1) for k, t in enumerate(totals)])
    counts[0], counts[-1] = totals[0], 0
    sizes = [plain_bytes(w, c, k) for c, k in zip(w.dict_columns.tolist(), counts.tolist(), strict=True)]
    args = dictionary_page_args(w, counts, sizes)
    same_on_both(steps.DICT_PAGES, len(counts), args, [9], threads)
