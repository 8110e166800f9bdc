"""columns.leaf_data of nested leaves: the same LeafData whether the leaf's values are taken by position or,
when every value is present in order, used as they are."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuwrite.columns import _validity, leaf_data
from gpuwrite.leafdata import LeafData
from gpuwrite.options import WriteOptions
from gpuwrite.schema import FileSchema

ITEM = pa.struct([("sku", pa.int64()), ("name", pa.string())])
TYPE = pa.list_(ITEM)
items = st.fixed_dictionaries({"sku": st.none() | st.integers(-5, 5),
                               "name": st.none() | st.text(max_size=4)})
rows = st.lists(st.none() | st.lists(st.none() | items, max_size=4), min_size=1, max_size=30)


def _fields(d: LeafData) -> list[object]:
    """Everything a LeafData holds, as lists."""
    return [None if a is None else np.asarray(a).tolist()
            for a in (d.values, d.offsets, d.data, d.rep, d.dfn, d.row_entry, d.values_before)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows, st.data())
def test_nested_leaf_data_is_the_same_with_or_without_nulls_and_slicing(values: list, data: st.DataObject) -> None:
    """A sliced array (values outside the slice), nulls at any level, or none: equal to a fresh copy's."""
    opts = WriteOptions()
    arr = pa.array(values, type=TYPE)
    a = data.draw(st.integers(0, len(values) - 1))
    b = data.draw(st.integers(a + 1, len(values)))
    part = arr.slice(a, b - a)
    fresh = pa.array(part.to_pylist(), type=TYPE)
    leaves = FileSchema.from_arrow(pa.schema([("l", TYPE)]), opts).leaves
    for leaf in leaves:
        assert _fields(leaf_data(part, leaf, opts)) == _fields(leaf_data(fresh, leaf, opts))


def test_all_present_values_are_used_without_a_copy() -> None:
    """Every value present, in order: the leaf's bytes are the Arrow buffers' (no take)."""
    opts = WriteOptions()
    arr = pa.array([[{"sku": 1, "name": "a"}], [], [{"sku": 2, "name": "bc"}, {"sku": 3, "name": "d"}]],
                   type=TYPE)
    leaves = FileSchema.from_arrow(pa.schema([("l", TYPE)]), opts).leaves
    name = leaf_data(arr, leaves[1], opts)
    assert name.data is not None and bytes(np.asarray(name.data)[:4]) == b"abcd"
    arrow_bytes = np.frombuffer(arr.values.field(1).buffers()[2], dtype=np.uint8)
    assert np.shares_memory(np.asarray(name.data), arrow_bytes)
    assert name.rep is not None and name.rep.tolist() == [0, 0, 0, 1]
    assert name.dfn is not None and name.dfn.tolist() == [4, 1, 4, 4]


def test_validity_of_slices_unpacks_only_their_rows() -> None:
    """A slice of a large array (a window's step) shares the array's bitmap: its rows' validity, at any offset
    and length, is what Arrow says, and only the bytes holding those rows are unpacked."""
    rng = np.random.default_rng(1)
    arr = pa.array(np.arange(5000), mask=rng.random(5000) < 0.3)
    for offset in (0, 1, 7, 8, 9, 4093):
        for length in (0, 1, 5, 8, 900, 5000 - offset):
            piece = arr.slice(offset, length)
            valid = _validity(piece)
            if piece.null_count == 0:
                assert valid is None
            else:
                assert valid is not None and np.array_equal(valid, np.asarray(piece.is_valid()))
                assert valid.base is not None and valid.base.size <= length + 16  # not the whole bitmap unpacked
