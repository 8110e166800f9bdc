"""columns.leaf_data of nested leaves: the same LeafData whether the leaf's values are taken by position or,
when every value is present in order, used as they are."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.columns import _null_free_numpy, conversion_bytes, leaf_data, validity
from gpuwrite.pipeline.leafdata import LeafData
from gpuwrite.pipeline.rebase import RebaseOptions
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
    leaves, rebase = FileSchema.from_arrow(pa.schema([("l", TYPE)]), opts).leaves, RebaseOptions.of(opts)
    for leaf in leaves:
        assert _fields(leaf_data(part, leaf, rebase)) == _fields(leaf_data(fresh, leaf, rebase))


def test_all_present_values_are_used_without_a_copy() -> None:
    """Every value present, in order: the leaf's bytes are the Arrow buffers' (no take)."""
    opts = WriteOptions()
    arr = pa.array([[{"sku": 1, "name": "a"}], [], [{"sku": 2, "name": "bc"}, {"sku": 3, "name": "d"}]],
                   type=TYPE)
    leaves = FileSchema.from_arrow(pa.schema([("l", TYPE)]), opts).leaves
    name = leaf_data(arr, leaves[1], RebaseOptions.of(opts))
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
            valid = validity(piece)
            if piece.null_count == 0:
                assert valid is None
            else:
                assert valid is not None and np.array_equal(valid, np.asarray(piece.is_valid()))
                assert valid.base is not None and valid.base.size <= length + 16  # not the whole bitmap unpacked


def test_decimal64_streamed_in_steps_writes_the_bytes_of_decimal128(tmp_path):
    """decimal64 values are compacted as they are (not widened to decimal128 first): a table of them, with
    nulls, streamed in Spark-sized batches over several pages and conversion steps, is the same file as the
    same values as decimal128 (a Spark task receives its small decimals so: gpuwrite.spark.unscaled)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    import gpuwrite

    n = 70_000
    rng = np.random.default_rng(7)
    unscaled = rng.integers(-(10**7) + 1, 10**7, n)
    mask = rng.random(n) < 0.1
    wide = pa.Array.from_buffers(pa.decimal128(7, 2), n, [None, pa.py_buffer(np.stack([unscaled, unscaled >> 63], 1))])
    wide = pc.if_else(pa.array(mask), pa.nulls(n, wide.type), wide)
    keys = pa.array(rng.integers(0, 5000, n), pa.int32())
    tables = {}
    for name, t in (("d128", pa.decimal128(7, 2)), ("d64", pa.decimal64(7, 2)), ("w64", pa.decimal64(15, 2))):
        schema = pa.schema([pa.field("k", pa.int32(), nullable=False), pa.field("d", t)])
        tables[name] = pa.Table.from_arrays([keys, wide.cast(t)], schema=schema)
    digests = {}
    for name, table in tables.items():
        path = tmp_path / f"{name}.parquet"
        with gpuwrite.ParquetWriter(path, table.schema, streaming=True,
                                    options={"parquet.page.row.count.limit": "7000"}) as writer:
            for batch in table.to_batches(max_chunksize=10_000):
                writer.write(batch)
        digests[name] = path.read_bytes()
    assert digests["d64"] == digests["d128"]
    assert pq.read_table(tmp_path / "w64.parquet").column("d").to_pylist() == wide.to_pylist()


@pytest.mark.parametrize("type_", [pa.int8(), pa.uint16(), pa.int32(), pa.int64(), pa.uint64(), pa.float16(),
                                   pa.float32(), pa.float64(), pa.bool_()])
def test_null_free_values_are_what_to_numpy_gives(type_: pa.DataType) -> None:
    """Values of a null-free primitive array, read from its buffers, equal `to_numpy(zero_copy_only=False)`'s:
    dtype, values, read-only or not (the kernels' signatures follow it), for slices and empty arrays too."""
    values = np.arange(37) % 3 == 0 if type_ == pa.bool_() else np.arange(37).astype(type_.to_pandas_dtype())
    whole = pa.array(values, type_)
    for arr in (whole, whole.slice(5, 20), whole.slice(9), whole.slice(0, 0), pa.concat_arrays([whole, whole])[30:41],
                pc.invert(whole) if type_ == pa.bool_() else pc.negate(whole)):
        ours, theirs = _null_free_numpy(arr), arr.to_numpy(zero_copy_only=False)
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
        assert ours.flags.writeable == theirs.flags.writeable and ours.flags.c_contiguous


def test_a_write_does_not_import_pandas(tmp_path: Path) -> None:
    """A process that never imported pandas writes null-free and nullable primitive columns without importing it
    (pyarrow's `to_numpy` did, 0.3-0.5 s of the first write)."""
    code = """
import sys, numpy as np, pyarrow as pa, gpuwrite
def column(type_, values, valid=None):  # from buffers: pa.array itself imports pandas
    bitmap = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little").tobytes())
    return pa.Array.from_buffers(type_, len(valid if valid is not None else values), [bitmap, pa.py_buffer(
        np.packbits(values, bitorder="little").tobytes() if type_ == pa.bool_() else values.tobytes())])
table = pa.table({"i": column(pa.int64(), np.arange(50)), "b": column(pa.bool_(), np.arange(50) % 3 == 0),
                  "f": column(pa.float64(), np.arange(50) / 3), "h": column(pa.int8(), np.arange(50, dtype=np.int8)),
                  "n": column(pa.int32(), np.arange(50, dtype=np.int32), np.arange(50) % 2 == 0)})
assert "pandas" not in sys.modules
gpuwrite.write_table(table, sys.argv[1])
print("pandas" in sys.modules)
"""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.parquet")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "False"


def test_conversion_bytes_are_none_for_columns_borrowed_as_they_are() -> None:
    """A flat column of its leaf's own fixed-width type without nulls converts to a view (no pass over its
    values): it costs the window's job grouping nothing; one with nulls, a narrower type or a decimal costs
    its bytes."""
    table = pa.table({"d": pa.array([1.0, 2.0]), "n": pa.array([1, None], pa.int64()), "s": pa.array([1, 2], pa.int16()),
                      "f": pa.array([1.0], pa.float32()).take([0, 0]), "i": pa.array([3, 4], pa.int32())})
    schema = FileSchema.from_arrow(table.schema, WriteOptions())
    costs = {leaf.dotted: conversion_bytes(table.column(leaf.index).chunk(0), leaf) for leaf in schema.leaves}
    assert costs["d"] == costs["f"] == costs["i"] == 0
    assert costs["n"] == table.column("n").nbytes and costs["s"] == table.column("s").nbytes
    data = leaf_data(table.column("d").chunk(0), schema.leaves[0], RebaseOptions.of(WriteOptions()))
    assert np.shares_memory(data.values, np.frombuffer(table.column("d").chunk(0).buffers()[1], np.float64))
