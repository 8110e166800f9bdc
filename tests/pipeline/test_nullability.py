"""A batch that differs from the writer's schema only in field nullability (issue 33, item 3): taken when its
rows fit the writer's schema, refused at write() naming the field otherwise; either way the rows written
before reach the file at close(). Reproducer: write() took such a batch and close() raised ArrowInvalid
'Schema at index 1 was different', leaving no file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from readers import assert_readers_agree

import gpuwrite
from gpuwrite.backends.device.ops import standin
from gpuwrite.errors import SchemaMismatchError
from gpuwrite.integrations.device_export import DeviceExport
from gpuwrite.pipeline.nullability import loose_type

NN = False  # a field's nullable flag: not nullable


def _schema(nullable: bool) -> pa.Schema:
    """Every kind of field, its fields non-nullable below the top (or all nullable)."""
    def f(name: str, t: pa.DataType, top: bool = False) -> pa.Field:
        return pa.field(name, t, nullable or top)

    return pa.schema([
        f("a", pa.int64()),
        f("s", pa.struct([f("x", pa.int64()), f("l", pa.list_(f("item", pa.string())))]), top=True),
        f("m", pa.map_(pa.string(), f("value", pa.int64())), top=True),
        f("fx", pa.list_(f("item", pa.int32()), 2), top=True),
        f("d", pa.large_list(f("element", pa.struct([f("y", pa.list_(f("item", pa.float64())))]))), top=True),
    ])


STRICT, LOOSE = _schema(False), _schema(True)


def _rows(start: int, n: int) -> dict[str, list[Any]]:
    """Rows with values wherever STRICT declares a field non-nullable; null struct rows, lists and maps."""
    return {
        "a": list(range(start, start + n)),
        "s": [None if i % 4 == 1 else {"x": i, "l": [f"w{i}"] * (i % 3)} for i in range(start, start + n)],
        "m": [None if i % 5 == 2 else [(f"k{i}", i)] for i in range(start, start + n)],
        "fx": [None if i % 3 == 0 else [i, -i] for i in range(start, start + n)],
        "d": [None if i % 6 == 0 else [{"y": [i / 2]}, {"y": []}] for i in range(start, start + n)],
    }


def _with_hidden_nulls(table: pa.Table) -> pa.Table:
    """`table` with a null in the child slot of every null struct row of 's': no value, so it fits STRICT
    (Arrow's cast to STRICT would refuse it)."""
    s = table.column("s").combine_chunks()
    x = pa.array([None if not valid else v for valid, v in zip(s.is_valid().to_pylist(),
                                                                 s.field("x").to_pylist(), strict=True)], pa.int64())
    rebuilt = pa.StructArray.from_arrays([x, s.field("l")], fields=list(s.type), mask=s.is_null())
    return table.set_column(1, table.schema.field("s"), rebuilt)


def test_loose_type_forgets_nullability_at_every_depth() -> None:
    for strict, loose in zip(STRICT, LOOSE, strict=True):
        assert strict.type != loose.type or strict.name == "a"
        assert loose_type(strict.type) == loose_type(loose.type) == loose.type


def test_nullable_batch_that_fits_is_taken(tmp_path: Path) -> None:
    """Nullable fields at every depth into a non-nullable schema, no value null (a null under a null struct row
    is none): the file is the one the rows under the writer's schema give, and readers read every row."""
    first = pa.table(_rows(0, 40), schema=STRICT)
    second = _with_hidden_nulls(pa.table(_rows(40, 60), schema=LOOSE))
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", STRICT) as w:
        w.write(first)
        w.write(second.to_batches()[0])  # a RecordBatch
        w.write(second.slice(10))  # a sliced Table
    whole = pa.concat_tables([first, pa.table(_rows(40, 60), schema=STRICT),
                              pa.table(_rows(50, 50), schema=STRICT)])
    gpuwrite.write_table(whole, tmp_path / "one.parquet")
    assert (tmp_path / "w.parquet").read_bytes() == (tmp_path / "one.parquet").read_bytes()
    # compared as LOOSE: readers give nulls under null struct rows, which Arrow's cast to STRICT refuses
    assert_readers_agree(tmp_path / "w.parquet", whole.cast(LOOSE), readers=("pyarrow", "duckdb", "polars"))


def test_non_nullable_batch_into_a_nullable_schema(tmp_path: Path) -> None:
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", LOOSE) as w:
        w.write(pa.table(_rows(0, 30), schema=LOOSE))
        w.write(pa.table(_rows(30, 30), schema=STRICT))
    assert pq.read_table(tmp_path / "w.parquet").to_pylist() == pa.table(_rows(0, 60), schema=LOOSE).to_pylist()


@pytest.mark.parametrize("column, value, where", [
    ("a", None, r"column 'a' is declared non-nullable but the batch holds 1 null\(s\), the first at"),
    ("s", {"x": None, "l": []}, r"column 's\.x': the non-nullable field 's\.x' holds a null at"),
    ("s", {"x": 1, "l": ["w", None]}, r"column 's\.l\.list\.element': the non-nullable field 's\.l\.item'"),
    ("m", [("k", None)], r"column 'm\.key_value\.value': the non-nullable field 'm\.value'"),
    ("fx", [1, None], r"the non-nullable field 'fx\.item'"),
    ("d", [{"y": [1.0]}, {"y": [None]}], r"the non-nullable field 'd\.element\.y\.item'"),
])
def test_batch_with_a_null_where_the_schema_forbids_one_is_refused(tmp_path: Path, column: str, value: Any,
                                                                   where: str) -> None:
    """Refused at write() naming the field by its path in the writer's Arrow schema (and the Parquet column),
    and the row; the earlier rows and the later ones are in the file."""
    rows = _rows(10, 5)
    rows[column][3] = value
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", STRICT) as w:
        w.write(pa.table(_rows(0, 10), schema=STRICT))
        with pytest.raises(SchemaMismatchError, match=rf"{where}.*row 3 of the batch \(row 13 of the file\)"):
            w.write(pa.table(rows, schema=LOOSE))
        w.write(pa.table(_rows(15, 5), schema=LOOSE))
    expected = pa.concat_tables([pa.table(_rows(0, 10), schema=LOOSE), pa.table(_rows(15, 5), schema=LOOSE)])
    assert_readers_agree(tmp_path / "w.parquet", expected, readers=("pyarrow", "duckdb"))


def test_field_metadata_and_pandas_frames(tmp_path: Path) -> None:
    """Field metadata differing as well changes nothing; a pandas frame (every field nullable) is taken."""
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    schema = pa.schema([pa.field("a", pa.int64(), NN, {"k": "v"}),
                        pa.field("l", pa.list_(pa.field("item", pa.int64(), NN, {"in": "x"})))])
    batch = pa.table({"a": [3], "l": [[4, 5]]})
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", schema) as w:
        w.write(pa.table({"a": [1], "l": [[2]]}, schema=schema))
        w.write(batch)
        w.write(pd.DataFrame({"a": [6], "l": [[7]]}))
    assert pq.read_table(tmp_path / "w.parquet").to_pylist() == [{"a": 1, "l": [2]}, {"a": 3, "l": [4, 5]},
                                                                  {"a": 6, "l": [7]}]


def test_widened_unsigned_columns(tmp_path: Path) -> None:
    """With widen_unsigned, the batch is taken under the given schema's nullability, then widened (a null under
    a null struct row is no value there either); nulls where the schema forbids them are refused by name."""
    st = pa.struct([pa.field("v", pa.uint16(), NN)])
    schema = pa.schema([pa.field("u", pa.uint8(), NN), pa.field("l", pa.list_(pa.field("item", pa.uint32(), NN))),
                        pa.field("st", st)])
    loose = pa.struct([("v", pa.uint16())])

    def batch(u: Any, item: Any, v: list[Any], st_mask: list[bool]) -> pa.Table:
        return pa.table({"u": pa.array([u], pa.uint8()), "l": pa.array([[item]], pa.list_(pa.uint32())),
                         "st": pa.StructArray.from_arrays([pa.array(v, pa.uint16())], fields=list(loose),
                                                          mask=pa.array(st_mask))})

    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", schema, widen_unsigned=True) as w:
        w.write(batch(1, 2, [None], [True]))  # the struct row is null: its child's null is no value
        with pytest.raises(SchemaMismatchError, match=r"the non-nullable field 'l\.item' holds a null"):
            w.write(batch(1, None, [3], [False]))
        with pytest.raises(SchemaMismatchError, match=r"column 'u' is declared non-nullable"):
            w.write(batch(None, 2, [3], [False]))
        with pytest.raises(SchemaMismatchError, match=r"the non-nullable field 'st\.v' holds a null"):
            w.write(batch(1, 2, [None], [False]))
        w.write(batch(4, 5, [6], [False]))
    assert pq.read_table(tmp_path / "w.parquet").to_pylist() == [{"u": 1, "l": [2], "st": None},
                                                                  {"u": 4, "l": [5], "st": {"v": 6}}]


@pytest.fixture
def _standin() -> Iterator[None]:
    with standin():
        yield


@pytest.mark.usefixtures("_standin")
def test_device_batches(tmp_path: Path) -> None:
    """Device input (the stand-in device): a nullable batch that fits is taken under the writer's schema, one
    with a null where it may not be is refused naming the field; the file is the host rows' file."""
    good = _with_hidden_nulls(pa.table(_rows(10, 30), schema=LOOSE))
    rows = _rows(40, 5)
    rows["d"][2] = [{"y": [None]}]
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", STRICT, device="gpu") as w:
        w.write(DeviceExport(pa.table(_rows(0, 10), schema=STRICT)))
        w.write(DeviceExport(good))
        with pytest.raises(SchemaMismatchError, match=r"the non-nullable field 'd\.element\.y\.item' holds a null"):
            w.write(DeviceExport(pa.table(rows, schema=LOOSE)))
    gpuwrite.write_table(pa.table(_rows(0, 40), schema=STRICT), tmp_path / "host.parquet", device="cpu")
    assert (tmp_path / "w.parquet").read_bytes() == (tmp_path / "host.parquet").read_bytes()
