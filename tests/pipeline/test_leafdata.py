"""A leaf's converted rows fill one array per row group (issue 31: a first write's fresh memory): values
converted into their slot stay there, step after step, instead of the second step copying the first into a
second array of the whole row group's size."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuwrite
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline import buffers
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.leafdata import LeafBuffer, LeafData
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema

pytestmark = pytest.mark.usefixtures("_fresh")  # a private set of slabs for each test (tests/conftest.py)


def test_values_converted_into_their_slot_stay_in_one_array(_fresh: buffers.Slabs) -> None:
    """Three steps converted into the slot: one slab, no copy, the first step's values where they were."""
    n = buffers.MIN_BYTES // 4 + 1000
    buffer = LeafBuffer(rows_hint=3 * n)
    slots = []
    for k in range(3):
        slot = buffer.values_slot(np.int32, n, n)
        slot[:] = k
        buffer.append(LeafData(n, None, values=slot))
        slots.append(slot)
    values = buffer.view().value_array
    assert _fresh.created == 1
    assert all(np.shares_memory(values, slot) for slot in slots)
    assert np.array_equal(values, np.repeat(np.arange(3, dtype=np.int32), n))


def test_a_write_in_steps_cuts_each_leaf_array_once(tmp_path, _fresh: buffers.Slabs) -> None:
    """A row group converted in four steps takes one slab per array of each leaf (values, validity bytes,
    validity bits), not a second one for its values (every leaf's first step used to be copied into a second
    array of the row group's size, both touched); the file is the one written in a single step."""
    rng = np.random.default_rng(3)
    rows, columns = 600_000, 4
    mask = rng.random(rows) < 0.05
    table = pa.table({f"c{i}": pa.array(rng.integers(0, 1 << 30, rows).astype(np.int32), mask=mask)
                      for i in range(columns)})
    stepped = tmp_path / "stepped.parquet"
    with gpuwrite.ParquetWriter(str(stepped), table.schema, device="cpu") as writer:
        writer._window.convert_bytes = table.nbytes // 4  # type: ignore[union-attr]
        writer.write(table)
    assert _fresh.created == 3 * columns and _fresh.reused == 0
    whole = tmp_path / "whole.parquet"
    gpuwrite.write_table(table, str(whole), device="cpu")
    assert stepped.read_bytes() == whole.read_bytes()


def test_values_without_nulls_stay_borrowed_across_steps(tmp_path, _fresh: buffers.Slabs) -> None:
    """A column without nulls converted a slice at a time keeps viewing its Arrow buffer: no slab, no copy
    (from the second step on, its values were copied into an array of the row group's size)."""
    rows = 600_000
    values = np.random.default_rng(4).integers(0, 1 << 40, rows)
    table = pa.table({"k": pa.array(values, pa.int64()), "n": pa.array(values.astype(np.int32), pa.int32())})
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    data = []
    for leaf in schema.leaves:
        buffer = LeafBuffer(rows_hint=rows)
        for start in range(0, rows, rows // 4):  # four steps, as a window converts them
            piece = table.column(leaf.index).chunk(0).slice(start, rows // 4)
            buffer.append(leaf_data(piece, leaf, RebaseOptions.of(opts), buffer))
        data.append(buffer.view())
    assert [leaf.num_rows for leaf in data] == [rows, rows]
    for leaf, column in zip(data, ("k", "n"), strict=True):
        arrow = np.frombuffer(table.column(column).chunk(0).buffers()[1], dtype=leaf.value_array.dtype)
        assert np.shares_memory(leaf.value_array, arrow) and np.array_equal(leaf.value_array, arrow)
    assert _fresh.created == 0


def test_borrowed_parts_across_steps_write_the_same_file(tmp_path) -> None:
    """Strings (large and plain offsets), lists and columns without nulls converted in four steps: int64 values
    and large_string offsets go on being borrowed from their Arrow buffers (they were copied from the second
    step on), and the file is the one a single step writes."""
    rng = np.random.default_rng(6)
    rows = 200_000
    words = np.array(["", "a", "bb", "ccc", "dddd"])[rng.integers(0, 5, rows)]
    lengths = rng.integers(0, 4, rows)
    table = pa.table({
        "k": pa.array(rng.integers(0, 1 << 50, rows), pa.int64()),
        "s": pa.array(words, pa.string()),
        "ls": pa.array(words, pa.large_string()),
        "l": pa.ListArray.from_arrays(np.concatenate(([0], np.cumsum(lengths))).astype(np.int32),
                                      pa.array(rng.integers(0, 9, int(lengths.sum())), pa.int64())),
        "f": pa.array(rng.random(rows)),
    })
    stepped = tmp_path / "stepped.parquet"
    with gpuwrite.ParquetWriter(str(stepped), table.schema, device="cpu") as writer:
        writer._window.convert_bytes = table.nbytes // 4  # type: ignore[union-attr]
        writer.write(table)
        window = writer._window
        assert window.rows > table.num_rows // 2  # three steps converted before close
        k, _, ls, _, _ = (buffer.view() for buffer in window.buffers)  # type: ignore[union-attr]
        arrow_k = np.frombuffer(table.column("k").chunk(0).buffers()[1], dtype=np.int64)
        arrow_ls = np.frombuffer(table.column("ls").chunk(0).buffers()[1], dtype=np.int64)
        assert np.shares_memory(k.value_array, arrow_k) and np.shares_memory(ls.byte_offsets, arrow_ls)
    whole = tmp_path / "whole.parquet"
    gpuwrite.write_table(table, str(whole), device="cpu")
    assert stepped.read_bytes() == whole.read_bytes()
    assert pq.read_table(str(stepped)).cast(table.schema).equals(table)


_SIGNATURES = """
import gc, json, sys
from numba.core.registry import CPUDispatcher
from gpuwrite.api import write_table
from gpuwrite.tools.demo_data import store_sales_table
write_table(store_sales_table(int(sys.argv[1])), sys.argv[2], compression="snappy")
print(json.dumps({f"{d.py_func.__module__}.{d.py_func.__name__}": [[repr(t) for t in s] for s in d.signatures]
                  for d in gc.get_objects() if isinstance(d, CPUDispatcher) and d.signatures}))
"""


def test_a_write_loads_no_kernel_signature_twice_for_read_only_and_writable_values(tmp_path) -> None:
    """A fresh process's store_sales write (decimals converted into writable arrays, keys without nulls
    borrowed read-only from Arrow) loads each kernel once per value type: no two signatures of a kernel differ
    only in whether an array is read-only (int_page took four, delta_encode two: each load ~5 ms of a first
    write, issue 31)."""
    import json
    import re
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _SIGNATURES, "200000", str(tmp_path / "s.parquet")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    loaded: dict[str, list[list[str]]] = json.loads(done.stdout.splitlines()[-1])
    assert any(name.endswith(".int_page") for name in loaded)
    for name, signatures in loaded.items():
        erased = {tuple(re.sub(r", (True|False), aligned", ", aligned", t) for t in s) for s in signatures}
        assert len(erased) == len(signatures), (name, signatures)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 20_000), st.integers(0, 2**32 - 1), st.lists(st.integers(0, 20_000), min_size=1, max_size=30))
def test_value_index_counts_the_values_before_a_row_in_any_order_of_asking(rows: int, seed: int,
                                                                           asked: list[int]) -> None:
    """value_index(row) is the non-null rows before `row`, whatever was asked before it (it remembers its last
    answer: a page starts where the one before it ended), the same row twice in a row included."""
    valid = np.random.default_rng(seed).random(rows) < 0.7
    data = LeafData(rows, valid, values=np.zeros(int(valid.sum()), dtype=np.int64))
    for row in [r % (rows + 1) for r in asked] + [rows, rows, 0]:
        assert data.value_index(row) == int(valid[:row].sum())
