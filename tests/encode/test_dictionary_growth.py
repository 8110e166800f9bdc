"""The CPU dictionary (`encode.dictionary.Dictionary`) as its arrays grow page by page: ids in first-occurrence
order, parquet-java's byte accounting and the PLAIN dictionary page, whatever the growth steps."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

from gpuwrite.columns import leaf_data
from gpuwrite.encode.dictionary import Dictionary
from gpuwrite.options import WriteOptions
from gpuwrite.schema import FileSchema


def _pages(values: pa.Array, page: int) -> tuple[Dictionary, list[int], list[object]]:
    """Insert `values` `page` at a time; (dictionary, every id, the distinct values in first-occurrence order)."""
    opts = WriteOptions()
    leaf = FileSchema.from_arrow(pa.schema([("c", values.type)]), opts).leaves[0]
    data = leaf_data(values, leaf, opts)
    d = Dictionary(leaf, 1 << 30)
    ids: list[int] = []
    for va in range(0, len(values), page):
        got, overflow = d.insert(data, va, min(va + page, len(values)))
        assert overflow == -1
        ids.extend(got.tolist())
    first: dict[object, int] = {}
    for v in values.to_pylist():
        first.setdefault(v, len(first))
    return d, ids, list(first)


@pytest.mark.parametrize("page", [7, 1000, 20000])
def test_fixed_width_entries_survive_every_growth(page: int) -> None:
    rng = np.random.default_rng(5)
    values = pa.array(rng.integers(-(1 << 40), 1 << 40, 30000) // 3 * 3 % 9001, pa.int64())  # ~9000 distinct
    d, ids, distinct = _pages(values, page)
    position = {v: i for i, v in enumerate(distinct)}
    assert ids == [position[v] for v in values.to_pylist()]
    assert d.size == len(distinct) and d.byte_size == 8 * len(distinct)
    assert d.plain_page(d.size) == struct.pack(f"<{len(distinct)}q", *distinct)


@pytest.mark.parametrize("page", [3, 500, 20000])
def test_byte_entries_survive_every_growth(page: int) -> None:
    values = pa.array([f"v{i * 7919 % 4001}-{'x' * (i % 13)}" for i in range(12000)], pa.string())
    d, ids, distinct = _pages(values, page)
    position = {v: i for i, v in enumerate(distinct)}
    assert ids == [position[v] for v in values.to_pylist()]
    encoded = [str(v).encode() for v in distinct]
    assert d.size == len(distinct) and d.byte_size == sum(4 + len(b) for b in encoded)
    assert d.plain_page(d.size) == b"".join(struct.pack("<i", len(b)) + b for b in encoded)
