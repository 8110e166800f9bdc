"""The CPU dictionary (`encode.dictionary.Dictionary`) as its arrays grow page by page: ids in first-occurrence
order, parquet-java's byte accounting and the PLAIN dictionary page, whatever the growth steps."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest

from gpuwrite.encode.dictionary import Dictionary
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline import buffers
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema


def _pages(values: pa.Array, page: int, arena: buffers.Arena | None = None
           ) -> tuple[Dictionary, list[int], list[object]]:
    """Insert `values` `page` at a time; (dictionary, every id, the distinct values in first-occurrence order)."""
    opts = WriteOptions()
    leaf = FileSchema.from_arrow(pa.schema([("c", values.type)]), opts).leaves[0]
    data = leaf_data(values, leaf, RebaseOptions.of(opts))
    d = Dictionary(leaf, 1 << 30, arena)
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


@pytest.mark.parametrize("values", [pa.array(np.arange(30000) % 7001, pa.int64()),
                                    pa.array([f"name-{i % 3001}" for i in range(30000)], pa.string())],
                         ids=["fixed", "bytes"])
def test_warm_reads_every_line_of_the_table_and_entries(values: pa.Array, monkeypatch) -> None:
    """Dictionary.warm (before a streaming step's pages) reads each 64-byte line of the hash table and of the
    entries in use, and leaves the dictionary as it was: later ids are those of a dictionary never warmed."""
    from gpuwrite.kernels.dictionary.by_page import touch_lines

    import gpuwrite.encode.dictionary as dictionary_module

    d, _, _ = _pages(values, 1000)
    twin, _, _ = _pages(values, 1000)
    read: list[tuple[int, int, int]] = []
    monkeypatch.setattr(dictionary_module, "touch_lines",
                        lambda arr, n: read.append((arr.ctypes.data, n, touch_lines(arr, n))))
    d.warm()
    expected = [(d.table.ctypes.data, d.table.nbytes)]
    if d.fixed:
        expected.append((d.keys.ctypes.data, 8 * d.size))
    else:
        expected += [(d.hashes.ctypes.data, 24 * d.size), (d.offsets.ctypes.data, 8 * (d.size + 1)),
                     (d.data.ctypes.data, int(d.offsets[d.size]))]
    assert [(a, n) for a, n, _ in read] == expected
    table_bytes = d.table.view(np.uint8)
    assert read[0][2] == int(table_bytes[::64].astype(np.uint64).sum())  # one byte a line, summed
    opts = WriteOptions()
    leaf = FileSchema.from_arrow(pa.schema([("c", values.type)]), opts).leaves[0]
    more = leaf_data(pa.concat_arrays([values.slice(5000, 2000), values.slice(0, 10)]), leaf, RebaseOptions.of(opts))
    assert d.insert(more, 0, more.num_values)[0].tolist() == twin.insert(more, 0, more.num_values)[0].tolist()


def test_touch_lines_sums_one_byte_of_each_line() -> None:
    from gpuwrite.kernels.dictionary.by_page import touch_lines

    data = np.random.default_rng(3).integers(0, 256, 1000, dtype=np.uint8)
    for nbytes in (0, 1, 63, 64, 65, 640, 1000):
        assert touch_lines(data, nbytes) == int(data[:nbytes:64].astype(np.uint64).sum())


@pytest.mark.usefixtures("_fresh")
@pytest.mark.parametrize("page", [1000, 20000])
def test_large_tables_and_keys_come_from_the_arena_and_hold_the_same_entries(page: int) -> None:
    """Tables and keys of 64 KiB or more are cut from kept slabs (another library's malloc_trim cannot hand them
    back between writes); the ids and entries are those of the malloc'd dictionary."""
    rng = np.random.default_rng(9)
    values = pa.array(rng.integers(0, 40_000, 60_000), pa.int64())
    arena = buffers.Arena()
    kept, ids, distinct = _pages(values, page, arena)
    plain, plain_ids, _ = _pages(values, page)
    assert ids == plain_ids and kept.size == plain.size == len(distinct)
    assert kept.keys[:kept.size].tolist() == plain.keys[:plain.size].tolist() == distinct
    slabs = [id(s) for s in buffers._PAGE_SLABS.slabs]
    assert kept.table.nbytes >= 1 << 16 and id(kept.table.base) in slabs and id(kept.keys.base) in slabs
    assert plain.table.base is None
