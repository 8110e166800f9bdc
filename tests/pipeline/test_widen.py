"""Types with a way out (issue 18): refused types name the cast that fixes them; widen_unsigned=True writes
unsigned columns losslessly as wider signed types, read back by pyarrow with every value, and says so in
Spark's schema in the footer."""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite import SchemaMismatchError, UnsupportedTypeError
from gpuwrite.pipeline.widen import WIDENED_FROM

ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"
EDGES = {pa.uint8(): 2**8 - 1, pa.uint16(): 2**16 - 1, pa.uint32(): 2**32 - 1, pa.uint64(): 2**64 - 1}


def _unsigned_table() -> pa.Table:
    """Every unsigned width with 0, its maximum and a null; nested and dictionary forms too."""
    columns = {f"u{t.bit_width}": pa.array([0, EDGES[t], None, 7], t) for t in EDGES}
    columns["list_u64"] = pa.array([[2**64 - 1, 1], None, [], [0]], pa.list_(pa.uint64()))
    columns["struct_u16"] = pa.array([{"a": 65_535}, None, {"a": None}, {"a": 1}], pa.struct([("a", pa.uint16())]))
    columns["map_u8"] = pa.array([[(255, 2**32 - 1)], None, [], [(0, 0)]], pa.map_(pa.uint8(), pa.uint32()))
    columns["dict_u8"] = pa.array([255, 0, None, 255], pa.uint8()).dictionary_encode()
    columns["plain"] = pa.array([1, 2, 3, 4], pa.int32())
    return pa.table(columns)


def test_widened_values_read_back_by_pyarrow(tmp_path: Path) -> None:
    """uint8/16/32/64 -> int16/int32/int64/decimal(20,0), nested and dictionary values too: pyarrow reads the
    wider types with every value (maxima, zeros and nulls) equal to the input's."""
    table = _unsigned_table()
    path = tmp_path / "w.parquet"
    result = gpuwrite.write_table(table, path, widen_unsigned=True)
    assert result.num_rows == 4
    back = pq.read_table(path)
    expected_types = {"u8": pa.int16(), "u16": pa.int32(), "u32": pa.int64(), "u64": pa.decimal128(20, 0),
                      "plain": pa.int32()}
    for name, t in expected_types.items():
        assert back.schema.field(name).type == t, name
    for name in ("u8", "u16", "u32"):
        assert back.column(name).to_pylist() == table.column(name).to_pylist()
    assert back.column("u64").to_pylist() == [decimal.Decimal(0), decimal.Decimal(2**64 - 1), None,
                                              decimal.Decimal(7)]
    assert back.column("list_u64").to_pylist() == [[decimal.Decimal(2**64 - 1), decimal.Decimal(1)], None, [],
                                                   [decimal.Decimal(0)]]
    assert back.column("struct_u16").to_pylist() == [{"a": 65_535}, None, {"a": None}, {"a": 1}]
    assert back.column("map_u8").to_pylist() == [[(255, 2**32 - 1)], None, [], [(0, 0)]]
    assert back.column("map_u8").type == pa.map_(pa.int16(), pa.int64())
    assert back.column("dict_u8").to_pylist() == [255, 0, None, 255]


def test_footer_schema_says_what_was_widened(tmp_path: Path) -> None:
    """Spark's schema in the footer marks each widened field with the Arrow type it had (the struct's child, not
    the struct; a list or map on its own field); untouched fields keep empty metadata."""
    path = tmp_path / "w.parquet"
    gpuwrite.write_table(_unsigned_table(), path, widen_unsigned=True)
    fields = {f["name"]: f for f in json.loads(pq.read_metadata(path).metadata[ROW_METADATA])["fields"]}
    assert fields["u32"]["metadata"] == {WIDENED_FROM: "uint32"}
    assert fields["u32"]["type"] == "long"
    assert fields["u64"]["metadata"] == {WIDENED_FROM: "uint64"} and fields["u64"]["type"] == "decimal(20,0)"
    assert fields["list_u64"]["metadata"] == {WIDENED_FROM: "list<item: uint64>"}
    assert fields["map_u8"]["metadata"] == {WIDENED_FROM: "map<uint8, uint32>"}
    assert fields["struct_u16"]["metadata"] == {}
    assert fields["struct_u16"]["type"]["fields"][0]["metadata"] == {WIDENED_FROM: "uint16"}
    assert fields["plain"]["metadata"] == {}


def test_streaming_writer_widens_every_batch_and_refuses_other_types(tmp_path: Path) -> None:
    """ParquetWriter takes batches of the unsigned schema; a batch of other types is refused (not cast), and
    the writer stays usable."""
    schema = pa.schema([("k", pa.uint32()), ("v", pa.string())])
    path = tmp_path / "s.parquet"
    with gpuwrite.ParquetWriter(path, schema, widen_unsigned=True) as writer:
        writer.write(pa.table({"k": pa.array([1, 2**32 - 1], pa.uint32()), "v": ["a", "b"]}))
        with pytest.raises(SchemaMismatchError, match="column 'k': batch has type int64"):
            writer.write(pa.table({"k": pa.array([5], pa.int64()), "v": ["c"]}))
        writer.write(pa.record_batch({"k": pa.array([3], pa.uint32()), "v": ["d"]}))
    back = pq.read_table(path)
    assert back.column("k").type == pa.int64()
    assert back.to_pydict() == {"k": [1, 2**32 - 1, 3], "v": ["a", "b", "d"]}


def test_widen_changes_nothing_without_unsigned_columns(tmp_path: Path) -> None:
    """A table with no unsigned column writes the same bytes with or without widen_unsigned."""
    table = pa.table({"a": pa.array(range(1_000), pa.int64()), "s": [str(i % 7) for i in range(1_000)]})
    gpuwrite.write_table(table, tmp_path / "a.parquet")
    gpuwrite.write_table(table, tmp_path / "b.parquet", widen_unsigned=True)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_widened_dataset_with_partitions(tmp_path: Path) -> None:
    """write_dataset widens the data columns too (partition columns become directory names)."""
    table = pa.table({"p": pa.array([1, 1, 2], pa.uint8()), "v": pa.array([10, 2**16 - 1, 0], pa.uint16())})
    gpuwrite.write_dataset(table, tmp_path / "t", partition_by="p", widen_unsigned=True)
    back = pq.read_table(tmp_path / "t" / "p=1")
    assert back.column("v").type == pa.int32() and back.column("v").to_pylist() == [10, 65_535]


@pytest.mark.parametrize(("t", "hint"), [
    (pa.uint8(), "cast it to int16, which holds every uint8 value"),
    (pa.uint16(), "table['c'].cast(pa.int32())"),
    (pa.uint32(), "pl.col('c').cast(pl.Int64)"),
    (pa.uint64(), "cast it to decimal128(20, 0)"),
    (pa.null(), "cast it to the type it stands for, e.g. table['c'].cast(pa.string())"),
    (pa.float16(), "cast it to float32"),
    (pa.time64("us"), "Spark has no TIME type"),
])
def test_refused_types_say_which_cast_fixes_them(tmp_path: Path, t: pa.DataType, hint: str) -> None:
    """The error names the column and type, and the cast (and for unsigned types, widen_unsigned) that fixes
    it; nothing is written."""
    table = pa.table({"c": pa.array([None, None], t)})
    with pytest.raises(UnsupportedTypeError) as err:
        gpuwrite.write_table(table, tmp_path / "x.parquet")
    message = str(err.value)
    assert message.startswith(f"column 'c': Arrow type {t} is not supported") and hint in message
    assert ("widen_unsigned=True" in message) == pa.types.is_unsigned_integer(t)
    assert list(tmp_path.iterdir()) == []


def test_nested_unsigned_hint_names_the_path(tmp_path: Path) -> None:
    """Inside a list the error names the leaf path and the cast, and offers widen_unsigned."""
    table = pa.table({"l": pa.array([[1]], pa.list_(pa.uint32()))})
    with pytest.raises(UnsupportedTypeError, match=r"column 'l\.list\.element': Arrow type uint32 .*cast it to "
                                                   r"int64.*widen_unsigned=True"):
        gpuwrite.write_table(table, tmp_path / "x.parquet")
