"""gpuwrite.pipeline.levels: sibling nested leaves walked with one memo give the levels each gets alone, with the list
and map expansions they share done once."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import gpuwrite.pipeline.levels as levels
from gpuwrite.options.model import WriteOptions
from gpuwrite.schema import FileSchema


def _table() -> pa.Table:
    rng = np.random.default_rng(4)
    rows = []
    for k in range(300):
        items = None if k % 11 == 0 else [
            None if j % 4 == 3 else {"a": int(rng.integers(0, 9)), "b": None if j % 3 else f"s{j}",
                                     "c": [int(x) for x in rng.integers(0, 5, j % 3)], "d": {"e": j}}
            for j in range(k % 5)]
        attrs = None if k % 7 == 0 else [(f"k{j}", None if j % 2 else j) for j in range(k % 4)]
        rows.append({"items": items, "attrs": attrs})
    item = pa.struct([("a", pa.int64()), ("b", pa.string()), ("c", pa.list_(pa.int32())),
                      ("d", pa.struct([("e", pa.int64())]))])
    schema = pa.schema([("items", pa.list_(item)), ("attrs", pa.map_(pa.string(), pa.int64()))])
    return pa.Table.from_pylist(rows, schema=schema)


@pytest.mark.parametrize("order", [1, -1])
def test_memo_gives_each_leaf_its_own_levels_and_expands_shared_lists_once(monkeypatch, order):
    table = _table()
    schema = FileSchema.from_arrow(table.schema, WriteOptions())
    expansions: list[int] = []
    expand = levels.expand_all

    def counting(*args):
        expansions.append(1)
        expand(*args)

    for column in range(table.num_columns):
        arr = table.column(column).combine_chunks().slice(5, 250)  # a sliced array: offsets not at 0
        leaves = [leaf for leaf in schema.leaves if leaf.index == column][::order]
        alone = [levels.walk(arr, leaf)[0] for leaf in leaves]
        monkeypatch.setattr(levels, "expand_all", counting)
        memo = levels.LevelMemo()
        walks = [levels.walk(arr, leaf, memo) for leaf in leaves]
        shared = [w for w, _ in walks]
        indexes = [levels.entry_index(w[0], w[1], len(arr), memo, same) for w, same in walks]
        monkeypatch.undo()
        for leaf, a, b, index in zip(leaves, alone, shared, indexes, strict=True):
            for x, y in zip(a[:3], b[:3], strict=True):
                assert np.array_equal(x, y), leaf.dotted
            assert a[3].equals(b[3]), leaf.dotted
            own = levels.entry_index(a[0], a[1], len(arr))
            for x, y in zip((own.at, own.values_before, own.row_entry), (index.at, index.values_before,
                                                                         index.row_entry), strict=True):
                assert np.array_equal(x, y), leaf.dotted
        repeated = {leaf.steps[:k + 1] for leaf in leaves for k, step in enumerate(leaf.steps)
                    if step[0] not in ("node", "field")}
        assert len(expansions) == len(repeated)  # each distinct list / map step expanded once
        expansions.clear()


def test_struct_fields_without_nulls_share_one_entry_index_and_a_field_with_nulls_has_its_own():
    """Fields of a list's structs that hold no nulls of their own end at the struct's slots: their entry index and
    definition levels are computed once; a field with nulls ends slots of its own and gets its own index, with its nulls."""
    item = pa.struct([("a", pa.int64()), ("b", pa.float64()), ("c", pa.string())])
    rows = [{"items": None if k % 9 == 0 else [{"a": j, "b": j / 2, "c": None if (k + j) % 4 == 0 else "x"}
                                               for j in range(k % 4)]} for k in range(200)]
    table = pa.Table.from_pylist(rows, schema=pa.schema([("items", pa.list_(item))]))
    schema = FileSchema.from_arrow(table.schema, WriteOptions())
    arr = table.column(0).combine_chunks()
    memo = levels.LevelMemo()
    indexes, dfns = {}, {}
    for leaf in schema.leaves:
        (pos, rep, dfn, _), same = levels.walk(arr, leaf, memo)
        indexes[leaf.path[-1]] = index = levels.entry_index(pos, rep, len(arr), memo, same)
        dfns[leaf.path[-1]] = dfn
        assert index.values_before[-1] == int(np.count_nonzero(pos >= 0))
        assert np.array_equal(dfn, levels.walk(arr, leaf)[0][2])
    assert indexes["a"] is indexes["b"]
    assert dfns["a"] is dfns["b"]  # one array: the encoders see the same levels (encode.chunk.SharedLevels)
    assert dfns["c"] is not dfns["a"]
    assert indexes["c"] is not indexes["a"]
    assert indexes["c"].values_before[-1] < indexes["a"].values_before[-1]
