"""The window conversion's CUDA forms (kernels/convert/arenas_cuda.py), run by numba's CUDA simulator, against their
sequential twins (kernels/convert/arenas.py, run by the stand-in device): the same arenas, per-chunk counts and
per-column results, for blocks of 1, 3 and 32 threads, chunks of one row to many tiles, nulls, slices,
chunked columns and every flat type (small tables: the simulator runs each thread as a Python thread)."""

from __future__ import annotations

import numpy as np
import pytest
from convert_cases import FLAT, assert_leaf_equal, random_table
from gpuwrite.kernels.convert import arenas as K
from gpuwrite.kernels.plan.layout import CT_VIDX
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuwrite.backends.device.convert import SCAN, build_window, window_as_leafdata
from gpuwrite.backends.device.ops import Device
from gpuwrite.options.model import WriteOptions
from gpuwrite.schema import FileSchema

LEGACY = {"datetime_rebase": "LEGACY", "int96_rebase": "LEGACY"}
OPTIONS = [WriteOptions(), WriteOptions(legacy_format=True, **LEGACY, time_zone="America/Los_Angeles"),
           WriteOptions(timestamp_type="TIMESTAMP_MILLIS", **LEGACY, time_zone="GMT+05:30"),
           WriteOptions(timestamp_type="TIMESTAMP_MICROS", datetime_rebase="EXCEPTION")]


def _run(table, opts: WriteOptions, chunk_rows: int, threads: int) -> None:
    """Build the window on the simulator and on the stand-in device; assert the same results."""
    leaves = FileSchema.from_arrow(table.schema, opts).leaves
    results = []
    for device in (Device("standin"), Device("sim")):
        device.threads = threads
        window = build_window(device, table, leaves, opts, chunk_rows=chunk_rows)
        arenas = {name: np.asarray(a)[:window.sizes[name]].copy() for name, a in window.arenas.items()}
        counts = np.asarray(window.inputs["counts"]).copy()
        results.append((window, arenas, counts, np.asarray(window.errs).copy(), window_as_leafdata(device, window)))
    (twin, twin_arenas, twin_counts, twin_errs, twin_data), (sim, sim_arenas, sim_counts, sim_errs, sim_data) = results
    assert np.array_equal(twin.cols, sim.cols)
    assert np.array_equal(twin_counts, sim_counts)
    assert np.array_equal(twin_errs, sim_errs)
    for name in ("lev", "idx", "v8", "v32", "v64"):  # written in full; dat may hold slack (null slots' bytes)
        assert np.array_equal(twin_arenas[name], sim_arenas[name]), name
    for leaf, a, b in zip(twin.leaves, sim_data, twin_data, strict=True):
        assert_leaf_equal(a, b, leaf.dotted)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), rows=st.sampled_from([0, 1]) | st.integers(2, 40),
       grid=st.tuples(st.sampled_from([1, 8, 64]), st.sampled_from([1, 3, 32])), chunked=st.booleans(),
       opts=st.sampled_from(OPTIONS), names=st.lists(st.sampled_from(sorted(FLAT)), min_size=1, max_size=5,
                                                      unique=True))
def test_cuda_forms_match_twins(seed, rows, grid, chunked, opts, names):
    chunk_rows, threads = grid  # rows per chunk (block), threads per block
    if chunk_rows == 1:
        rows = min(rows, 8)  # a block per row: keep the simulated grid small
    _run(random_table(seed, rows, chunked, names=names), opts, chunk_rows, threads)


@pytest.mark.parametrize("opts", OPTIONS[:2])
def test_every_flat_type_in_one_launch(opts):
    _run(random_table(5, 24, True, names=sorted(FLAT)), opts, 16, 32)


def test_value_index_groups_shared_by_threads_blocks_and_arrow_chunks():
    """The value index's 64-row masks are set bit by bit by many threads, by the blocks of neighbouring chunks
    and by the chunks of Arrow pieces that start inside a group (atomic ORs): the same words as the twin's."""
    table = random_table(7, 300, True, names=["i32", "f64", "date"])
    _run(table, OPTIONS[0], 40, 8)
    leaves = FileSchema.from_arrow(table.schema, OPTIONS[0]).leaves
    window = build_window(Device("standin"), table, leaves, OPTIONS[0], chunk_rows=40)
    indexed = int((window.cols[:, CT_VIDX] >= 0).sum())
    assert indexed == 3 and window.sizes["idx"] == indexed * 2 * (300 // 64 + 1)  # a row's index was a word


def test_errors_match_twins():
    # ns loss, a date before the switch under EXCEPTION, an unknown zone under LEGACY: the per-column flags
    # and first values agree (the host raises from them)
    import pyarrow as pa

    table = pa.table({"ns": pa.array([0, 1_500, None, 7], type=pa.timestamp("ns", tz="UTC")),
                      "d": pa.array([5, -150_000, None, -200_000], type=pa.date32()),
                      "t": pa.array([-3 * 10**18, 0, None, 1], type=pa.timestamp("us", tz="UTC"))})
    opts = WriteOptions(datetime_rebase="EXCEPTION", int96_rebase="LEGACY")
    object.__setattr__(opts, "time_zone", "Nowhere/Zone")  # the options refuse it; the kernels' flag is checked
    _run(table, opts, 2, 3)


@pytest.mark.parametrize(("seed", "threads"), [(1, 1), (2, 3), (3, 8), (4, 16)])
def test_column_scan_block_equals_twin_on_random_counts(seed: int, threads: int) -> None:
    # the scan step alone (convert_scan, a block per column) over many chunks a column (more than a block's
    # threads): random per-chunk counts, smallest instants around the calendar switch and first rows, on a real
    # window's tables; the prefixes, the errs rows and the closing index entries equal the sequential twin's
    opts = WriteOptions(datetime_rebase="EXCEPTION")
    table = random_table(seed, 61, True, names=["i32", "date", "ts_s", "str", "f64"])
    leaves = FileSchema.from_arrow(table.schema, opts).leaves
    window = build_window(Device("standin"), table, leaves, opts, chunk_rows=2)
    chunks, ranges = np.asarray(window.inputs["chunks"]), np.asarray(window.inputs["ranges"])
    assert (ranges[:, K.R_CHUNK1] - ranges[:, K.R_CHUNK0]).max() > threads
    rng = np.random.default_rng(seed)
    counts = np.asarray(window.inputs["counts"]).copy()
    k = len(counts)
    counts[:, K.CC_VALUES] = rng.integers(0, chunks[:, K.CK_ROWS] + 1)
    counts[:, K.CC_BYTES] = rng.integers(0, 50, k)
    counts[:, K.CC_MIN] = np.where(rng.random(k) < 0.2, K.INT64_MAX, rng.integers(-2 * 10**17, 10**17, k))
    counts[:, K.CC_FLAGS] = rng.integers(0, 4, k) * (rng.random(k) < 0.3)
    counts[:, K.CC_FIRST_ROW] = np.where(rng.random(k) < 0.8, -1, rng.integers(0, 2, k))
    counts[:, K.CC_FIRST] = rng.integers(-10**9, 10**9, k)
    counts[:, K.CC_VBEFORE:] = -5  # written by the scan
    results = []
    for device in (Device("standin"), Device("sim")):
        device.threads = threads
        args = [device.upload(a) for a in (ranges, chunks, np.asarray(window.inputs["srct"]), window.cols, counts,
                                           np.full((len(leaves), 5), -9, dtype=np.int64),
                                           np.concatenate([np.asarray(window.arenas["idx"]), np.full(80, -3)]))]
        device.launch(SCAN, len(leaves), *args)
        results.append(device.download_many(args[4:]))
    for name, twin, sim in zip(("counts", "errs", "idx"), *results, strict=True):
        assert np.array_equal(twin, sim), name
