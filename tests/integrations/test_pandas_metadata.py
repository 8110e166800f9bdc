"""pandas frames come back as they went in (issue 34 items 2-3, issue 33 item 10): the footer carries pyarrow's
`pandas` key, made to describe the file gpuwrite wrote, and `ARROW:schema` only where a categorical needs it; other
readers (Spark, DuckDB, polars, fastparquet) read the same values as from pyarrow's file or from the file without
the keys."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.integrations.pandas_metadata import ARROW_SCHEMA_KEY, PANDAS_KEY

pd = pytest.importorskip("pandas")


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    """The zoned INT96 notice is tested in tests/pipeline/test_int96_zones.py; here it is noise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _base(n: int = 6) -> Any:
    """Columns of every dtype the issue names (nullable Int64 / boolean / string, a categorical whose categories
    appear in first-occurrence order, a zoned nanosecond timestamp), n rows."""
    stamps = pd.date_range("2021-03-27 22:00", periods=n, freq="7h", unit="ns").tz_localize("Europe/Oslo")
    return pd.DataFrame({
        "i": pd.array([1, None, 3, 4, 5, 6][:n], dtype="Int64"),
        "b": pd.array([True, None, False, True, False, True][:n], dtype="boolean"),
        "s": pd.array(["x", None, "z", "x", "y", "x"][:n], dtype="string"),
        "c": pd.Categorical(["a", "b", "a", "a", "b", "a"][:n]),
        "t": pd.Series(stamps).where([True, True, False, True, True, True][:n]),
        "f": [0.5, 1.5, None, 2.5, 3.5, 4.5][:n],
    })


FRAMES = {
    "named index": lambda: _base().set_axis(pd.Index([3, 1, 2, 9, 8, 7], name="k")),
    "set_index": lambda: _base().assign(k=["p", "q", "r", "s", "t", "u"]).set_index("k"),
    "integer index": lambda: _base().set_axis([10, 20, 30, 40, 50, 60]),
    "RangeIndex": lambda: _base(),
    "RangeIndex start step": lambda: _base().set_axis(pd.RangeIndex(5, 23, 3)),
    "RangeIndex named": lambda: _base().set_axis(pd.RangeIndex(0, 6, name="row")),
    "MultiIndex": lambda: _base().set_axis(pd.MultiIndex.from_arrays(
        [["a", "a", "b", "b", "c", "c"], [1, 2, 1, 2, 1, 2]], names=["l1", None])),
    "integer column labels": lambda: pd.DataFrame({0: pd.array([1, None, 3], dtype="Int64"), 1: ["a", "b", None]}),
}


def _assert_same(back: Any, df: Any) -> None:
    """Equal values, dtypes and index, the index's class included (`equals` alone takes a RangeIndex for an
    Index of the same integers)."""
    assert back.equals(df)
    pd.testing.assert_frame_equal(back, df, check_index_type=True)


def _keys(path: Path | str) -> dict[bytes, bytes]:
    """The footer's key/value metadata."""
    return pq.ParquetFile(path).metadata.metadata or {}


def _assert_consistent(path: Path | str) -> None:
    """The pandas metadata claims only columns the file has (entries and index columns), and ARROW:schema, when
    written, has the file's columns in order."""
    keys, names = _keys(path), pq.ParquetFile(path).schema_arrow.names
    meta = json.loads(keys[PANDAS_KEY.encode()])
    assert {c["field_name"] for c in meta["columns"]} <= set(names)
    assert {c for c in meta["index_columns"] if isinstance(c, str)} <= set(names)
    if ARROW_SCHEMA_KEY.encode() in keys:
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(keys[ARROW_SCHEMA_KEY.encode()])))
        assert schema.names == names


@pytest.mark.parametrize("timestamp_type", ["INT96", "TIMESTAMP_MICROS"])
@pytest.mark.parametrize("case", list(FRAMES))
def test_write_table_round_trip(tmp_path, case, timestamp_type):
    """Reproducer: the index came back as a column (`k`, `__index_level_0__`), Int64 as float64, the categorical
    as strings, the zone lost; a RangeIndex not starting at 0 came back as 0..n."""
    df = FRAMES[case]()
    gpuwrite.write_table(df, tmp_path / "f.parquet", timestamp_type=timestamp_type)
    _assert_same(pd.read_parquet(tmp_path / "f.parquet"), df)
    _assert_consistent(tmp_path / "f.parquet")
    # a pyarrow table made from the frame carries the same metadata
    gpuwrite.write_table(pa.Table.from_pandas(df), tmp_path / "t.parquet", timestamp_type=timestamp_type)
    _assert_same(pd.read_parquet(tmp_path / "t.parquet"), df)


@pytest.mark.parametrize("case", ["named index", "integer index", "RangeIndex", "RangeIndex start step", "MultiIndex"])
def test_parquet_writer_streams_frames(tmp_path, case):
    """ParquetWriter(schema from the whole frame) fed the frame in three slices gives the frame back."""
    df = FRAMES[case]()
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", pa.Schema.from_pandas(df)) as w:
        for start in range(0, 6, 2):
            w.write(df.iloc[start:start + 2])
    _assert_same(pd.read_parquet(tmp_path / "w.parquet"), df)
    _assert_consistent(tmp_path / "w.parquet")


def test_streamed_range_index_that_does_not_span_the_file_is_dropped(tmp_path):
    """A schema made from the first slice describes a RangeIndex of its rows only: not the file's, so it is left
    out, and pandas reads a RangeIndex of the file's rows, as from pyarrow's file of the same writes."""
    df = FRAMES["RangeIndex start step"]()
    schema = pa.Schema.from_pandas(df.iloc[:2])
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", schema) as w, \
            pq.ParquetWriter(tmp_path / "pa.parquet", schema) as ref:
        for start in range(0, 6, 2):
            w.write(df.iloc[start:start + 2])
            ref.write_table(pa.Table.from_pandas(df.iloc[start:start + 2], schema=schema))
    assert json.loads(_keys(tmp_path / "w.parquet")[b"pandas"])["index_columns"] == []
    back = pd.read_parquet(tmp_path / "w.parquet")
    _assert_same(back, pd.read_parquet(tmp_path / "pa.parquet"))
    _assert_same(back, df.reset_index(drop=True))


def test_writer_schema_without_the_index_claims_no_index(tmp_path):
    """A writer schema that lost the index field (but kept the frame's metadata): the frames' index is not
    written, and the metadata does not claim it."""
    df = FRAMES["named index"]()
    schema = pa.Schema.from_pandas(df)
    schema = schema.remove(schema.get_field_index("k"))
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", schema) as w:
        w.write(df)
    meta = json.loads(_keys(tmp_path / "w.parquet")[b"pandas"])
    assert meta["index_columns"] == [] and "k" not in [c["field_name"] for c in meta["columns"]]
    _assert_consistent(tmp_path / "w.parquet")
    _assert_same(pd.read_parquet(tmp_path / "w.parquet"), df.reset_index(drop=True))


def test_widened_columns_are_described_as_written(tmp_path):
    """widen_unsigned: uint8 and nullable UInt8 columns are written as int16 and said to be int16 / Int16, so
    pandas reads the widened values (a `UInt8` entry would ask pandas to read int16 values as UInt8)."""
    df = pd.DataFrame({"u": pd.array([1, 255, 7], dtype="uint8"), "n": pd.array([1, None, 200], dtype="UInt8")},
                      index=pd.Index([4, 5, 6], name="k"))
    gpuwrite.write_table(df, tmp_path / "u.parquet", widen_unsigned=True)
    entries = {c["name"]: c for c in json.loads(_keys(tmp_path / "u.parquet")[b"pandas"])["columns"]}
    assert (entries["u"]["pandas_type"], entries["u"]["numpy_type"]) == ("int16", "int16")
    assert entries["n"]["numpy_type"] == "Int16"
    _assert_same(pd.read_parquet(tmp_path / "u.parquet"), df.astype({"u": "int16", "n": "Int16"}))


def test_categoricals_that_cannot_come_back_are_read_as_their_values(tmp_path):
    """An ordered categorical (gpuwrite's dictionary is in first-occurrence order, which would invert 'lo' < 'hi')
    and one whose pages fell back to DELTA_BYTE_ARRAY (which pyarrow cannot read as a dictionary: claiming one made
    the file unreadable) come back as strings; the rest of the frame as it was."""
    df = pd.DataFrame({"o": pd.Categorical(["hi", "lo", "hi"], categories=["lo", "mid", "hi"], ordered=True),
                       "d": pd.Categorical(["a", "b", "a"]), "a": [1, 2, 3]}, index=pd.Index([7, 8, 9], name="k"))
    gpuwrite.write_table(df, tmp_path / "o.parquet", column_dictionary={"d": False})
    back = pd.read_parquet(tmp_path / "o.parquet")
    _assert_same(back, df.astype({"o": "str", "d": "str"}))
    assert ARROW_SCHEMA_KEY.encode() not in _keys(tmp_path / "o.parquet")


def test_a_schema_pyarrow_cannot_read_gets_no_arrow_schema(tmp_path):
    """legacy_format's `repeated group array` lists, which pyarrow refuses: ARROW:schema (pyarrow's reading of the
    file's schema) cannot be made, and the write still succeeds, with the pandas key (Spark reads the file)."""
    table = pa.Table.from_pandas(pd.DataFrame({"c": pd.Categorical(["a", "b", "a"])}, index=pd.Index([4, 5, 6])))
    nested = pa.list_(pa.field("item", pa.list_(pa.int32()), nullable=False))
    table = table.append_column("ll", pa.array([[[1]], [[2, 3]], []], nested))
    result = gpuwrite.write_table(table, tmp_path / "legacy.parquet", legacy_format=True)
    assert [kv.key for kv in result.metadata.key_value_metadata][2:] == ["pandas"]


def test_non_pandas_inputs_keep_todays_footer(tmp_path):
    """A table without pandas metadata gets Spark's keys only; a frame's file differs from the file of the same
    table without metadata only in the footer (the pages are byte-identical)."""
    df = FRAMES["named index"]()
    plain = pa.Table.from_pandas(df).replace_schema_metadata(None)
    plain_keys = gpuwrite.write_table(plain, tmp_path / "plain.parquet").metadata.key_value_metadata
    frame_keys = gpuwrite.write_table(df, tmp_path / "frame.parquet").metadata.key_value_metadata
    assert [kv.key for kv in plain_keys] == ["org.apache.spark.version", "org.apache.spark.sql.parquet.row.metadata"]
    assert [kv.key for kv in frame_keys] == [kv.key for kv in plain_keys] + ["pandas", "ARROW:schema"]
    plain_bytes, frame_bytes = (tmp_path / "plain.parquet").read_bytes(), (tmp_path / "frame.parquet").read_bytes()
    footer_start = len(plain_bytes) - 8 - int.from_bytes(plain_bytes[-8:-4], "little")
    assert frame_bytes[:footer_start] == plain_bytes[:footer_start]  # pages, page indexes


def test_write_dataset_files_carry_pandas_metadata_without_partition_columns(tmp_path):
    """Each file's metadata describes that file, as pyarrow's `write_to_dataset` writes it, but without the
    partition column (pyarrow's lists it, though its files do not have it); each file reads back as its rows."""
    df = pd.DataFrame({"p": ["x", "y"] * 6, "a": pd.array([1, None, 3, 4, 5, 6] * 2, dtype="Int64"),
                       "c": pd.Categorical(["u", "u", "v", "v"] * 3)},
                      index=pd.Index([5, 3, 1, 7, 9, 11, 2, 4, 6, 8, 10, 12], name="k"))
    result = gpuwrite.write_dataset(df, tmp_path / "ds", partition_by="p")
    assert len(result.files) == 2
    for f in result.files:
        meta = json.loads(_keys(f.path)[b"pandas"])
        assert meta["index_columns"] == ["k"] and [c["name"] for c in meta["columns"]] == ["a", "c", "k"]
        _assert_consistent(f.path)
        value = Path(f.path).parent.name.split("=")[1]
        _assert_same(pd.read_parquet(f.path), df[df.p == value].drop(columns="p"))


def test_write_dataset_rolled_files_drop_the_range_they_do_not_span(tmp_path):
    """max_records_per_file splits a RangeIndex frame: no file claims the frame's 0..n, each reads 0..its rows."""
    df = pd.concat([_base()] * 5, ignore_index=True).set_axis(pd.RangeIndex(5, 95, 3))
    result = gpuwrite.write_dataset(df, tmp_path / "ds", max_records_per_file=18)
    assert [f.num_rows for f in result.files] == [18, 12]
    for f, part in zip(result.files, (df.iloc[:18], df.iloc[18:]), strict=True):
        assert json.loads(_keys(f.path)[b"pandas"])["index_columns"] == []
        _assert_same(pd.read_parquet(f.path), part.reset_index(drop=True))
    single = gpuwrite.write_dataset(df, tmp_path / "one")
    _assert_same(pd.read_parquet(single.files[0].path), df)


def test_accessor(tmp_path):
    """df.gpuwrite.to_parquet and .to_dataset write through write_table / write_dataset: the frame comes back."""
    gpuwrite.register_accessors()
    df = FRAMES["MultiIndex"]()
    df.gpuwrite.to_parquet(tmp_path / "a.parquet")
    _assert_same(pd.read_parquet(tmp_path / "a.parquet"), df)
    result = df.gpuwrite.to_dataset(tmp_path / "ds")
    _assert_same(pd.read_parquet(result.files[0].path), df)


def test_duckdb_and_polars_read_what_they_read_without_the_keys(tmp_path):
    """DuckDB reads the frame's file exactly as the file without the keys; polars too, except that the
    categorical is a polars Categorical of the same values (ARROW:schema says dictionary, as in pyarrow's file)."""
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    df = FRAMES["named index"]()
    gpuwrite.write_table(df, tmp_path / "frame.parquet")
    gpuwrite.write_table(pa.Table.from_pandas(df).replace_schema_metadata(None), tmp_path / "plain.parquet")
    assert ARROW_SCHEMA_KEY.encode() in _keys(tmp_path / "frame.parquet")
    ours, plain = (duckdb.sql(f"SELECT * FROM '{tmp_path / n}'").arrow().read_all()
                   for n in ("frame.parquet", "plain.parquet"))
    assert ours.equals(plain) and ours.schema.equals(plain.schema)
    got, want = pl.read_parquet(tmp_path / "frame.parquet"), pl.read_parquet(tmp_path / "plain.parquet")
    assert got.schema["c"] == pl.Categorical and want.schema["c"] == pl.String
    assert got.with_columns(pl.col("c").cast(pl.String)).equals(want)
    assert {n: t for n, t in got.schema.items() if n != "c"} == {n: t for n, t in want.schema.items() if n != "c"}


_FASTPARQUET = """
import sys, warnings
warnings.simplefilter("ignore")
import fastparquet
for path in sys.argv[1:]:
    fastparquet.ParquetFile(path).to_pandas().to_pickle(path + ".pkl")
"""


def test_fastparquet_reads_the_frame_as_from_pyarrows_file(tmp_path):
    """fastparquet (in a subprocess: it crashes on some v2 files) reads the index, dtypes and zone from the pandas
    key as from pyarrow's file; the categorical as its values (a `categorical` entry makes it misread v2
    dictionary pages, pyarrow's v2 files too)."""
    pytest.importorskip("fastparquet")
    df = FRAMES["named index"]().drop(columns=["b", "s", "f"]).dropna()  # columns fastparquet reads in v2 pages
    gpuwrite.write_table(df, tmp_path / "ours.parquet", fallback_encoding="plain")
    pq.write_table(pa.Table.from_pandas(df), tmp_path / "pa.parquet", use_deprecated_int96_timestamps=True)
    done = subprocess.run([sys.executable, "-c", _FASTPARQUET, str(tmp_path / "ours.parquet"),
                           str(tmp_path / "pa.parquet")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    ours, theirs = (pd.read_pickle(tmp_path / f"{n}.parquet.pkl") for n in ("ours", "pa"))
    assert ours.index.equals(df.index) and ours.index.name == "k"
    assert list(ours["c"]) == list(df["c"]) and ours["t"].equals(df["t"])
    pd.testing.assert_frame_equal(ours.drop(columns="c"), theirs.drop(columns="c"))


@pytest.mark.spark
def test_spark_reads_what_it_reads_from_pyarrows_file(tmp_path, spark):
    """Spark ignores the pandas key: it reads the frame's file exactly as pyarrow's file of the frame (with
    Spark's INT96 timestamps), while pandas gets the frame back from both."""
    df = FRAMES["integer index"]()
    gpuwrite.write_table(df, tmp_path / "ours.parquet")
    pq.write_table(pa.Table.from_pandas(df), tmp_path / "pa.parquet", use_deprecated_int96_timestamps=True)
    _assert_same(pd.read_parquet(tmp_path / "ours.parquet"), pd.read_parquet(tmp_path / "pa.parquet"))
    ours, theirs = (spark.read.parquet(str(tmp_path / n)) for n in ("ours.parquet", "pa.parquet"))
    assert ours.schema == theirs.schema and "__index_level_0__" in ours.columns
    assert sorted(map(str, ours.collect())) == sorted(map(str, theirs.collect()))
