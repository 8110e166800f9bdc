"""Arrow's view types written by value (issue 33, item 2): string_view / binary_view flat and nested anywhere
give the file the same rows as string / binary give, byte for byte; readers get the values back; sizes count
the rows' values, not data buffers shared between arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from readers import assert_readers_agree
from view_tables import SV, plain, view_cases

import gpuwrite
from gpuwrite.errors import GpuwriteError
from gpuwrite.pipeline.views import array_bytes, as_large, has_view, piece_bytes, view_values

CASES = view_cases()
FLAT = ("flat", "flat_binary", "concatenated_slices")


def _side_by_side(names: tuple[str, ...]) -> tuple[pa.Table, pa.Table]:
    """The cases' columns (of the same length) in one table each."""
    views = pa.table({name: CASES[name][0].column(0) for name in names})
    return views, pa.table({name: CASES[name][1].column(0) for name in names})


@pytest.mark.parametrize("name", sorted(set(CASES) - set(FLAT)))
def test_views_write_the_plain_types_file(tmp_path: Path, name: str) -> None:
    """Reproducer: array_take has no kernel for (string_view, int64) under a list, struct or fixed-size list.
    The file is the one the same rows as string / binary give, and pyarrow, DuckDB and polars read it back."""
    _assert_plain_file(tmp_path, *CASES[name])


def test_flat_views_beside_nested_ones(tmp_path: Path) -> None:
    """Flat view columns (gathered by the same kernel now, with nulls, shared buffers) beside a nested one."""
    _assert_plain_file(tmp_path, *_side_by_side((*FLAT, "list")))


def _assert_plain_file(tmp_path: Path, views: pa.Table, same: pa.Table) -> None:
    """`views` and `same` (its rows as plain types) give one file, which the readers read back as `same`."""
    gpuwrite.write_table(views, tmp_path / "views.parquet")
    gpuwrite.write_table(same, tmp_path / "plain.parquet")
    assert (tmp_path / "views.parquet").read_bytes() == (tmp_path / "plain.parquet").read_bytes()
    assert_readers_agree(tmp_path / "views.parquet", same, readers=("pyarrow", "duckdb", "polars"))


def _shared_buffer_slices() -> pa.Array:
    """A string_view array of 300 rows (about 100 KB of values) made of slices of a 30 MB array: each slice
    lists the large array's data buffers again, so Arrow's nbytes counts gigabytes."""
    big = pa.array([None if i % 13 == 0 else "s" * 300 + str(i) for i in range(100_000)], SV)
    return pa.concat_arrays([big.slice(i * 1000, 3) for i in range(100)])


def test_concatenated_slices_are_sized_by_their_values(tmp_path: Path) -> None:
    """Reproducer: the too-long-value check saw nbytes over 2 GiB and called binary_length, which has no view
    kernel. Sizes now count the rows' own bytes (as a fresh copy of the rows counts them), and the file is
    the plain string one."""
    joined = _shared_buffer_slices()
    fresh = pa.array(joined.to_pylist(), SV)
    assert joined.nbytes > 2**31
    assert array_bytes(joined) == array_bytes(fresh) < 200_000
    lists = pa.ListArray.from_arrays(pa.array(np.arange(0, 301, 3), pa.int32()), joined)
    for table in (pa.table({"s": joined}), pa.table({"l": lists})):
        assert piece_bytes(table) == piece_bytes(pa.table({table.column_names[0]: table.column(0).to_pylist()},
                                                          schema=table.schema)) < 200_000
        gpuwrite.write_table(table, tmp_path / "views.parquet")
        gpuwrite.write_table(plain(table), tmp_path / "plain.parquet")
        assert (tmp_path / "views.parquet").read_bytes() == (tmp_path / "plain.parquet").read_bytes()


def test_piece_bytes_is_nbytes_without_views() -> None:
    """Batches without view types are sized as before (Arrow's nbytes), nested or sliced."""
    table = pa.table({"i": pa.array(range(50)), "l": pa.array([[str(i)] * (i % 3) for i in range(50)])}).slice(7, 30)
    assert piece_bytes(table) == table.nbytes
    assert not has_view(table.schema.field("l").type)
    assert has_view(pa.map_(pa.int32(), pa.list_(pa.struct([("v", pa.binary_view())]))))


def test_nested_sizes_count_the_rows_values() -> None:
    """A list, struct, map or fixed-size list over shared view values is sized as a fresh copy of its rows."""
    joined = _shared_buffer_slices()
    n = len(joined)
    nested = {
        "list": pa.ListArray.from_arrays(pa.array(np.arange(0, n + 1, 3), pa.int32()), joined),
        "struct": pa.StructArray.from_arrays([joined], names=["v"]),
        "map": pa.MapArray.from_arrays(pa.array(np.arange(0, n + 1, 3), pa.int32()),
                                       pa.array([str(i) for i in range(n)], SV), joined),
        "fixed": pa.FixedSizeListArray.from_arrays(joined, 3),
    }
    for name, arr in nested.items():
        part = arr.slice(5, 40)
        fresh = pa.array(part.to_pylist(), part.type)
        assert array_bytes(part) == array_bytes(fresh) < 100_000, name


def test_as_large_keeps_values_and_nulls() -> None:
    """The layout the device conversion and dictionaries read: large_string with the view array's rows."""
    arr = pa.array([None if i % 4 == 1 else "x" * (i % 23) for i in range(200)], SV).slice(3, 150)
    got = as_large(arr, "c")
    assert got.type == pa.large_string()
    got.validate(full=True)
    assert got.to_pylist() == arr.to_pylist()


def test_malformed_view_is_a_gpuwrite_error() -> None:
    """A view pointing past its data buffers is refused naming the column and row, nothing read there."""
    views = np.zeros((2, 4), dtype=np.int32)
    views[1] = [20, 0, 0, 10]  # 20 bytes at offset 10 of a 16-byte buffer
    arr = pa.Array.from_buffers(SV, 2, [None, pa.py_buffer(views), pa.py_buffer(b"y" * 16)])
    with pytest.raises(GpuwriteError, match=r"column 'c': string_view value at row 1 points outside"):
        view_values(arr, np.arange(2, dtype=np.int64), "c")
