"""The GPU backend on the stand-in device (every step its compiled CPU twin, `backends.device.ops`): the
simulator's whole-file identity corpus (tests/identity_corpus.py), plus larger tables than the simulator can
take. The stand-in runs the backend's own host code and the twins its CUDA kernels are tested against, so the
pipeline's logic (planning, replay, cuts, batches, gathers) is checked at scale here, its CUDA forms there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from identity_corpus import _assert_identical as assert_identical
from identity_corpus import identity_tests

from gpuwrite.backends.device.ops import standin
from gpuwrite.tools.demo_data import store_sales_table

globals().update(identity_tests())


@pytest.fixture(autouse=True)
def _on_the_standin_device() -> Iterator[None]:
    with standin():
        yield


@pytest.mark.parametrize("codec", ["snappy", "uncompressed"])
def test_store_sales_several_row_groups(tmp_path: Path, codec: str) -> None:
    data = assert_identical(tmp_path, store_sales_table(120_000), compression=codec, block_size=2 << 20)
    assert pq.ParquetFile(pa.BufferReader(data)).metadata.num_row_groups >= 3


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**32 - 1), st.sampled_from([1 << 20, 300, 64]), st.sampled_from([1 << 20, 30_000, 4000]),
       st.sampled_from([64, 1024, 20_000]))
def test_random_tables(tmp_path: Path, seed: int, dict_limit: int, block: int, page_rows: int) -> None:
    from device_cases import random_table

    rows = int(np.random.default_rng(seed).integers(1, 4000))
    assert_identical(tmp_path, random_table(rows, seed, distinct=int(seed % 3000) + 2), dictionary_page_size=dict_limit,
                     block_size=block, page_row_count_limit=page_rows)


def test_bloom_filters_across_row_groups_and_cuts(tmp_path: Path) -> None:
    """Bloom filters built by the device steps' twins over many pages, row groups cut inside a window and pages
    encoded again at the cut, adaptive candidates whose choice depends on the distinct count, nested columns."""
    table = store_sales_table(30_000)
    data = assert_identical(tmp_path, table, block_size=256 << 10, page_size=8 << 10, bloom_filter_enabled=True,
                            bloom_filter_adaptive=True, bloom_filter_max_bytes=64 << 10, enable_dictionary=False)
    md = pq.ParquetFile(pa.BufferReader(data)).metadata
    assert md.num_row_groups >= 3
    assert {md.row_group(0).column(i).to_dict()["bloom_filter_length"] for i in range(md.num_columns)} != {32}
    nested = pa.table({"l": pa.array([[1, 2], None, [], [3, None, 4]] * 300, pa.list_(pa.int64())),
                       "m": pa.array([[("k", "v")], None, [("a", "b"), ("c", None)]] * 400,
                                     pa.map_(pa.string(), pa.string()))})
    assert_identical(tmp_path, nested, bloom_filter_enabled=True, page_size=1024, block_size=8 << 10)
