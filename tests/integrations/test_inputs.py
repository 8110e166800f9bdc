"""Inputs from other libraries written by value (issue 12): polars Categorical / Enum and other dictionary
inputs, string_view dictionaries, pandas 3 frames and their index as pyarrow's preserve_index=None keeps it."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.errors import UnsupportedTypeError
from gpuwrite.integrations.arrow import is_pandas

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")


def test_polars_categorical_and_enum(tmp_path):
    """Reproducer: 'array_take' has no kernel matching (string_view, uint32). Written by value, as strings."""
    df = pl.DataFrame({"c": pl.Series(["a", "b", None, "a"], dtype=pl.Categorical),
                       "e": pl.Series(["x", "y", "x", None], dtype=pl.Enum(["x", "y"]))})
    gpuwrite.write_table(df, tmp_path / "pl.parquet")
    back = pq.read_table(tmp_path / "pl.parquet")
    assert back.schema.field("c").type == pa.string()
    assert back.column("c").to_pylist() == ["a", "b", None, "a"] and back.column("e").to_pylist() == ["x", "y", "x",
                                                                                                        None]


def test_polars_categorical_streamed(tmp_path):
    """Frames with different dictionaries stream into one writer."""
    frames = [pl.DataFrame({"c": pl.Series(v, dtype=pl.Categorical)}) for v in (["p", "q"], ["r", "p"])]
    schema = pa.RecordBatchReader.from_stream(frames[0]).schema
    with gpuwrite.ParquetWriter(tmp_path / "s.parquet", schema) as w:
        for frame in frames:
            w.write(frame)
    assert pq.read_table(tmp_path / "s.parquet").column("c").to_pylist() == ["p", "q", "r", "p"]


@pytest.mark.parametrize("value_type, index_type", [(pa.string_view(), pa.uint32()), (pa.binary_view(), pa.int8()),
                                                    (pa.large_string(), pa.int64()), (pa.int32(), pa.uint16())])
def test_dictionary_inputs_by_value(tmp_path, value_type, index_type):
    """Any dictionary type is written as its values, nested ones too."""
    raw = {pa.string_view(): ["u", "v"], pa.binary_view(): [b"u", b"v"], pa.large_string(): ["u", "v"],
           pa.int32(): [7, 9]}[value_type]
    dictionary = pa.array(raw, value_type)
    arr = pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], index_type), dictionary)
    nested = pa.ListArray.from_arrays(pa.array([0, 2, 2, 4, 4], pa.int32()), arr)
    gpuwrite.write_table(pa.table({"d": arr, "l": nested}), tmp_path / "d.parquet")
    back = pq.read_table(tmp_path / "d.parquet")
    expected = [raw[1], raw[0], None, raw[1]]
    assert back.column("d").to_pylist() == expected
    assert back.column("l").to_pylist() == [expected[:2], [], expected[2:], []]


def test_pandas_frame_recognised_and_index_kept_as_pyarrow_keeps_it(tmp_path):
    """Reproducer: with pandas 3 (classes report module "pandas") frames were not recognised, so the index
    was written by the Arrow stream path and ParquetWriter.write(df) raised SchemaMismatchError."""
    df = pd.DataFrame({"a": [1, 2, 3]}, index=pd.Index([5, 6, 7], name="k"))
    assert is_pandas(df)
    gpuwrite.write_table(df, tmp_path / "idx.parquet")
    pq.write_table(pa.Table.from_pandas(df), tmp_path / "pa.parquet")
    assert pq.read_table(tmp_path / "idx.parquet").column_names == pq.read_table(tmp_path / "pa.parquet").column_names
    assert pq.read_table(tmp_path / "idx.parquet").column("k").to_pylist() == [5, 6, 7]
    ranged = pd.DataFrame({"a": [1, 2, 3]})
    gpuwrite.write_table(ranged, tmp_path / "range.parquet")
    assert pq.read_table(tmp_path / "range.parquet").column_names == ["a"]


def test_pandas_frames_stream_into_a_writer_without_index(tmp_path):
    """ParquetWriter.write(df): an index the writer's schema lacks is not a column of the batch."""
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", pa.schema([("a", pa.int64())])) as w:
        w.write(pd.DataFrame({"a": [1, 2]}))
        w.write(pd.DataFrame({"a": [3, 4]}, index=[10, 11]))
        w.write(pd.DataFrame({"a": [5]}).iloc[0:1])
    assert pq.read_table(tmp_path / "w.parquet").column("a").to_pylist() == [1, 2, 3, 4, 5]


def test_duckdb_empty_map_is_written_or_refused_clearly(tmp_path):
    """Reproducer: DuckDB's MAP() crashed inside pyarrow with a ValueError when DuckDB typed its keys null.

    DuckDB up to 1.4 exports the keys as null-typed (refused, naming the key column and the type); 1.5
    exports int32 keys (written, and read back as the empty map it is)."""
    duckdb = pytest.importorskip("duckdb")
    table = duckdb.sql("SELECT MAP() AS m").arrow().read_all()
    key_type = table.schema.field("m").type.key_type
    if pa.types.is_null(key_type):
        with pytest.raises(UnsupportedTypeError, match=r"column 'm\.key_value\.key'.*null"):
            gpuwrite.write_table(table, tmp_path / "m.parquet")
        assert list(tmp_path.iterdir()) == []
    else:
        gpuwrite.write_table(table, tmp_path / "m.parquet")
        assert pq.read_table(tmp_path / "m.parquet").column("m").to_pylist() == [[]]


def test_map_with_null_typed_keys_is_refused_whatever_duckdb_exports(tmp_path):
    """The refusal above, built directly: DuckDB 1.5 no longer exports null-typed keys, so without this the
    reproducer's path (a map whose keys are typed null) would go untested. Refused by write_table and
    write_dataset, naming the key column, nothing left behind."""
    keys_null = pa.MapArray.from_arrays(pa.array([0, 0], pa.int32()), pa.array([], pa.null()),
                                        pa.array([], pa.int32()))
    assert pa.types.is_null(keys_null.type.key_type)
    table = pa.table({"m": keys_null})
    with pytest.raises(UnsupportedTypeError, match=r"column 'm\.key_value\.key'.*null"):
        gpuwrite.write_table(table, tmp_path / "m.parquet")
    with pytest.raises(UnsupportedTypeError, match=r"column 'm\.key_value\.key'.*null"):
        gpuwrite.write_dataset(table, tmp_path / "ds")
    assert list(tmp_path.iterdir()) == []


def test_unknown_input_is_a_gpuwrite_error(tmp_path):
    with pytest.raises(UnsupportedTypeError, match="cannot write dict"):
        gpuwrite.write_table({"a": [1]}, tmp_path / "x.parquet")


def test_iterator_of_batches_is_written_as_a_stream(tmp_path):
    """A generator of batches (pyarrow, pandas or polars) is read as a RecordBatchReader would be: the first
    batch's schema is the file's, each later batch must have it; write_dataset takes one too."""
    def batches():
        yield pa.record_batch({"a": pa.array([1, 2], pa.int64())})
        yield pd.DataFrame({"a": [3]}, index=[7])  # an index the schema lacks is not a column
        yield pl.DataFrame({"a": [4]})

    result = gpuwrite.write_table(batches(), tmp_path / "g.parquet")
    assert result.num_rows == 4 and pq.read_table(tmp_path / "g.parquet").column("a").to_pylist() == [1, 2, 3, 4]
    gpuwrite.write_dataset(iter([pa.table({"k": ["x", "y"], "v": [1, 2]})]), tmp_path / "ds", partition_by="k")
    assert sorted(p.name for p in (tmp_path / "ds").iterdir()) == ["_SUCCESS", "k=x", "k=y"]


def test_iterator_mistakes_are_refused_clearly(tmp_path):
    """An empty iterator has no schema (use RecordBatchReader.from_batches); a batch of other columns is the
    writer's usual mismatch; ParquetWriter.write takes one batch, not an iterator. Nothing is left behind."""
    with pytest.raises(UnsupportedTypeError, match=r"empty iterator.*RecordBatchReader\.from_batches"):
        gpuwrite.write_table(iter([]), tmp_path / "e.parquet")
    mixed = iter([pa.table({"a": [1]}), pa.table({"b": [2]})])
    with pytest.raises(gpuwrite.SchemaMismatchError, match=r"batch columns \['b'\] differ .* \['a'\]"):
        gpuwrite.write_table(mixed, tmp_path / "m.parquet")
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", pa.schema([("a", pa.int64())])) as writer:
        with pytest.raises(UnsupportedTypeError, match="write each of its batches"):
            writer.write(iter([pa.table({"a": [1]})]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.parquet"]
