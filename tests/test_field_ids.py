"""Field ids: `PARQUET:field_id` on Arrow fields reaches every SchemaElement, nested ones included."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.errors import UnsupportedTypeError
from gpuwrite.format.footer_reader import read_footer


def _f(name: str, t: pa.DataType, fid: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, t, nullable, metadata={b"PARQUET:field_id": str(fid).encode()})


def _schema() -> pa.Schema:
    return pa.schema([
        _f("id", pa.int64(), 1, nullable=False),
        _f("tags", pa.list_(_f("element", pa.string(), 5)), 2),
        _f("attrs", pa.map_(_f("key", pa.string(), 6, nullable=False), _f("value", pa.int32(), 7)), 3),
        _f("point", pa.struct([_f("x", pa.float64(), 8), _f("y", pa.float64(), 9)]), 4),
        pa.field("plain", pa.int32()),
    ])


def test_field_ids_reach_every_schema_element(tmp_path: Path) -> None:
    schema = _schema()
    table = pa.table({"id": [1, 2], "tags": [["a"], None], "attrs": [[("k", 1)], []],
                      "point": [{"x": 1.0, "y": 2.0}, None], "plain": [1, None]}, schema=schema)
    path = tmp_path / "ids.parquet"
    gpuwrite.write_table(table, path)
    # FileMetaData field 2 is the schema; SchemaElement field 4 is the name, 9 the field id.
    elements = {e[4].decode(): e.get(9) for e in read_footer(path)[2]}
    assert elements == {"spark_schema": None, "id": 1, "tags": 2, "list": None, "element": 5, "attrs": 3,
                        "key_value": None, "key": 6, "value": 7, "point": 4, "x": 8, "y": 9, "plain": None}
    # An independent reader sees the same ids, and the table reads back equal.
    back = pq.read_table(path)
    assert back.schema.field("tags").type.value_field.metadata[b"PARQUET:field_id"] == b"5"
    assert back.schema.field("attrs").type.item_field.metadata[b"PARQUET:field_id"] == b"7"
    assert back.schema.field("point").type.field("y").metadata[b"PARQUET:field_id"] == b"9"
    assert back.to_pylist() == table.to_pylist()


def test_files_without_ids_are_unchanged(tmp_path: Path) -> None:
    table = pa.table({"a": [1, 2, 3]})
    path = tmp_path / "plain.parquet"
    gpuwrite.write_table(table, path)
    assert all(9 not in e for e in read_footer(path)[2])


def test_bad_field_id_names_the_column(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("s", pa.struct([pa.field("x", pa.int32(), metadata={b"PARQUET:field_id": b"x1"})]))])
    with pytest.raises(UnsupportedTypeError, match="'s.x'.*field_id"):
        gpuwrite.write_table(pa.table({"s": [{"x": 1}]}, schema=schema), tmp_path / "bad.parquet")
