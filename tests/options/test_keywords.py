"""pyarrow's vocabulary (issue 18): aliases mean what they mean in pyarrow and write the bytes the gpuwrite
spelling writes, compression=None is uncompressed, a string is one column, unknown names suggest the closest
known one, and the public writers show their real signatures and documented keywords."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
import gpuwrite.spark
from gpuwrite import OptionError, WriteOptions
from gpuwrite.options.aliases import ALIASES, UNSET, Unset
from gpuwrite.options.keywords import OPTION_KEYWORDS, OPTIONS_DOC, WriteKeywords

TABLE = pa.table({"id": pa.array(range(5_000), pa.int64()),
                  "city": pa.array(["Oslo", "Lima", "Pune", "Kyiv"] * 1_250),
                  "x": pa.array([i * 0.5 for i in range(5_000)])})


def _bytes(tmp_path: Path, name: str, **keywords: object) -> bytes:
    """The bytes of TABLE written with these keywords."""
    path = tmp_path / f"{name}.parquet"
    gpuwrite.write_table(TABLE, path, **keywords)
    return path.read_bytes()


def _dataset(path: Path, **keywords: object) -> Path:
    """TABLE written as a dataset at `path` with these keywords."""
    gpuwrite.write_dataset(TABLE, path, **keywords)
    return path


def test_row_group_size_counts_rows_as_pyarrow(tmp_path: Path) -> None:
    """row_group_size is rows per row group (block_row_count_limit), not bytes: same bytes as the gpuwrite name."""
    alias = _bytes(tmp_path, "alias", row_group_size=1_200)
    assert alias == _bytes(tmp_path, "field", block_row_count_limit=1_200)
    meta = pq.read_metadata(tmp_path / "alias.parquet")
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [1_200] * 4 + [200]


def test_data_page_size_is_page_size(tmp_path: Path) -> None:
    """data_page_size is page_size in bytes."""
    assert _bytes(tmp_path, "alias", data_page_size=4_096) == _bytes(tmp_path, "field", page_size=4_096)
    assert _bytes(tmp_path, "alias") != _bytes(tmp_path, "small", page_size=4_096)


def test_use_dictionary_bool_list_and_string(tmp_path: Path) -> None:
    """use_dictionary: a bool for every column, or the columns (a list, or one name) to dictionary-encode."""
    assert _bytes(tmp_path, "off", use_dictionary=False) == _bytes(tmp_path, "off2", enable_dictionary=False)
    listed = _bytes(tmp_path, "list", use_dictionary=["city"])
    assert listed == _bytes(tmp_path, "one", use_dictionary="city")
    assert listed == _bytes(tmp_path, "fields", enable_dictionary=False, column_dictionary={"city": True})
    meta = pq.read_metadata(tmp_path / "list.parquet").row_group(0)
    encodings = {meta.column(i).path_in_schema: meta.column(i).encodings for i in range(3)}
    assert "RLE_DICTIONARY" in encodings["city"]
    assert "RLE_DICTIONARY" not in encodings["id"] and "RLE_DICTIONARY" not in encodings["x"]


@pytest.mark.parametrize("spelling", [None, "none", "NONE", "uncompressed"])
def test_compression_none_is_uncompressed(tmp_path: Path, spelling: str | None) -> None:
    """compression=None (pyarrow's) and "none" write UNCOMPRESSED chunks, as compression="uncompressed" does."""
    data = _bytes(tmp_path, "none", compression=spelling)
    assert data == _bytes(tmp_path, "uncompressed", compression="uncompressed")
    meta = pq.read_metadata(tmp_path / "none.parquet")
    assert {meta.row_group(0).column(i).compression for i in range(3)} == {"UNCOMPRESSED"}
    assert pq.read_table(tmp_path / "none.parquet").equals(TABLE)


def test_not_given_keywords_leave_options_and_defaults_alone(tmp_path: Path) -> None:
    """Keywords not given do not override keys or a WriteOptions: the default codec is snappy, a key's codec
    and level survive, and existing spellings write the same bytes as before."""
    assert _bytes(tmp_path, "default") == _bytes(tmp_path, "snappy", compression="snappy")
    assert pq.read_metadata(tmp_path / "default.parquet").row_group(0).column(0).compression == "SNAPPY"
    keyed = _bytes(tmp_path, "keyed", options={"parquet.compression": "zstd",
                                               "parquet.compression.codec.zstd.level": "9"})
    assert keyed == _bytes(tmp_path, "kw", compression="zstd", compression_level=9)
    opts = WriteOptions(compression="gzip", compression_level=1)
    assert _bytes(tmp_path, "obj", options=opts) == _bytes(tmp_path, "gz", compression="gzip", compression_level=1)
    zstd = WriteOptions(compression="zstd")
    assert _bytes(tmp_path, "obj_none", options=zstd, compression=None) == _bytes(tmp_path, "u", compression=None)


def test_write_statistics(tmp_path: Path) -> None:
    """write_statistics=True is what gpuwrite does anyway; False or a column list is refused, saying why."""
    assert _bytes(tmp_path, "stats", write_statistics=True) == _bytes(tmp_path, "plain")
    for value in (False, ["id"]):
        with pytest.raises(OptionError, match="write_statistics.*not supported.*every column"):
            gpuwrite.write_table(TABLE, tmp_path / "x.parquet", write_statistics=value)
    assert not (tmp_path / "x.parquet").exists()


def test_alias_and_field_together_is_an_error() -> None:
    """An alias and the field it stands for, both given, are refused naming both."""
    with pytest.raises(OptionError, match="'page_size' and 'data_page_size' set the same thing"):
        WriteOptions.from_conf(None, page_size=1024, data_page_size=2048)
    with pytest.raises(OptionError, match="'use_dictionary' and 'enable_dictionary'"):
        WriteOptions.from_conf(None, use_dictionary=True, enable_dictionary=False)


def test_alias_errors_name_the_alias() -> None:
    """A bad value given through an alias is reported under the alias."""
    with pytest.raises(OptionError, match="option 'row_group_size' must be a positive integer, got 0"):
        WriteOptions.from_conf(None, row_group_size=0)
    with pytest.raises(OptionError, match="use_dictionary must be a column name or a list"):
        WriteOptions.from_conf(None, use_dictionary=3)
    with pytest.raises(OptionError, match="a codec per column is not supported"):
        WriteOptions.from_conf(None, compression={"id": "zstd"})


@pytest.mark.parametrize(("call", "message"), [
    (lambda p: gpuwrite.write_table(TABLE, p, row_group_sise=10), "'row_group_sise' (did you mean 'row_group_size'?)"),
    (lambda p: gpuwrite.write_table(TABLE, p, compresion="zstd"), "(did you mean 'compression'?)"),
    (lambda p: gpuwrite.ParquetWriter(p, TABLE.schema, page_sise=10), "(did you mean 'page_size'?)"),
    (lambda p: gpuwrite.write_dataset(TABLE, p, partition_col=["city"]), "(did you mean 'partition_cols'?)"),
    (lambda p: gpuwrite.write_table(TABLE, p, options={"parquet.page.sise": "1"}),
     "'parquet.page.sise' (did you mean 'parquet.page.size'?)"),
    (lambda p: gpuwrite.write_table(TABLE, p, options={"parquet.bloom.filter.enable#id": "true"}),
     "(did you mean 'parquet.bloom.filter.enabled#id'?)"),
    (lambda p: gpuwrite.write_table(TABLE, p, options={"row_group_size": "10"}),
     "row_group_size is a keyword, not a Spark / parquet-java key"),
    (lambda p: WriteOptions.from_conf(None, datetime_rebse="LEGACY"), "(did you mean 'datetime_rebase'?)"),
])
def test_unknown_names_suggest_the_closest(tmp_path: Path, call, message: str) -> None:
    """Unknown keywords and keys are OptionErrors naming the closest known name; nothing is written."""
    with pytest.raises(OptionError, match="unknown option") as err:
        call(tmp_path / "out")
    assert message in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_nothing_close_suggests_nothing() -> None:
    """A name far from every known one gets no suggestion."""
    with pytest.raises(OptionError) as err:
        WriteOptions.from_conf(None, zzzzzz=1)
    assert str(err.value) == "unknown option 'zzzzzz'"


def test_partition_cols_and_a_string_partition_by(tmp_path: Path) -> None:
    """partition_cols is pyarrow's name for partition_by; a string is one column, not its characters."""
    table = pa.table({"year": [2020, 2021, 2020], "v": [1, 2, 3]})
    for name, keywords in {"by": {"partition_by": "year"}, "cols": {"partition_cols": ["year"]},
                           "cols_str": {"partition_cols": "year"}}.items():
        result = gpuwrite.write_dataset(table, tmp_path / name, **keywords)
        assert sorted(p.name for p in (tmp_path / name).iterdir() if p.is_dir()) == ["year=2020", "year=2021"]
        assert result.num_rows == 3
    with pytest.raises(gpuwrite.GpuwriteError, match="partition_by and partition_cols"):
        gpuwrite.write_dataset(table, tmp_path / "both", partition_by="year", partition_cols="year")
    assert not (tmp_path / "both").exists()


def test_bloom_filter_columns_takes_one_name(tmp_path: Path) -> None:
    """A string where a list of columns goes is that one column."""
    assert WriteOptions(bloom_filter_columns="id").bloom_filter_columns == {"id": True}


PUBLIC_WRITERS = [gpuwrite.write_table, gpuwrite.ParquetWriter, gpuwrite.write_dataset]


def test_keywords_are_the_option_fields_and_aliases() -> None:
    """WriteKeywords, the one list of option keywords, is every WriteOptions field and every pyarrow alias,
    each once, and its types are what the writers accept: not given is UNSET for compression, None for the rest."""
    fields = [f.name for f in dataclasses.fields(WriteOptions)]
    assert len(OPTION_KEYWORDS) == len(set(OPTION_KEYWORDS))
    assert set(OPTION_KEYWORDS) == {*fields, *ALIASES}
    assert set(WriteKeywords.__optional_keys__) == set(OPTION_KEYWORDS) and not WriteKeywords.__required_keys__
    hints = typing.get_type_hints(WriteKeywords)
    assert all(type(None) in typing.get_args(hint) for hint in hints.values())
    assert [name for name, hint in hints.items() if Unset in typing.get_args(hint)] == ["compression"]


@pytest.mark.parametrize("fn", PUBLIC_WRITERS, ids=lambda f: f.__name__)
def test_public_writers_take_the_keywords_once(fn) -> None:
    """Each writer declares `**keywords: Unpack[WriteKeywords]` (no keyword spelt out again), and its shown
    signature lists every option keyword, typed and defaulting to "not given"; its docstring documents each."""
    declared = inspect.signature((fn.__init__ if inspect.isclass(fn) else fn).__wrapped__).parameters
    spread = [p for p in declared.values() if p.kind is p.VAR_KEYWORD]
    assert [(p.name, p.annotation) for p in spread] == [("keywords", "Unpack[WriteKeywords]")]
    assert not set(declared) & set(OPTION_KEYWORDS)
    params = inspect.signature(fn).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values())
    assert [k for k in OPTION_KEYWORDS if k not in params] == []
    for name in OPTION_KEYWORDS:
        assert params[name].kind is params[name].KEYWORD_ONLY
        assert params[name].annotation is not inspect.Parameter.empty
        assert params[name].default is (UNSET if name == "compression" else None)
    doc = inspect.getdoc(fn.__init__ if inspect.isclass(fn) else fn) or ""
    assert all(name in doc for name in OPTION_KEYWORDS), [n for n in OPTION_KEYWORDS if n not in doc]
    assert "rows per row group" in doc and "bytes" in doc


def test_not_given_and_none_write_the_same_bytes(tmp_path: Path) -> None:
    """A keyword passed as None is "not given" (as when the writers spelt out `= None` defaults), through every
    writer: write_table hands its keywords to ParquetWriter, write_dataset resolves them itself."""
    assert _bytes(tmp_path, "none", page_size=None, row_group_size=None) == _bytes(tmp_path, "absent")
    gpuwrite.write_dataset(TABLE, tmp_path / "ds", page_size=None, data_page_size=4_096)
    gpuwrite.write_dataset(TABLE, tmp_path / "ds_field", page_size=4_096)
    files = [sorted(p.read_bytes() for p in (tmp_path / d).glob("*.parquet")) for d in ("ds", "ds_field")]
    assert files[0] and files[0] == files[1]  # the job uuid is in the file names, not in the bytes
    assert files[0] != sorted(p.read_bytes() for p in _dataset(tmp_path / "ds_default").glob("*.parquet"))


def test_every_field_is_documented_for_users() -> None:
    """OPTIONS_DOC names every WriteOptions field (a new field must be documented there)."""
    assert [f.name for f in dataclasses.fields(WriteOptions) if f.name not in OPTIONS_DOC] == []


def test_spark_write_parquet_has_its_real_signature() -> None:
    """gpuwrite.spark.write_parquet is the function itself (no **kwargs wrapper), importing no pyspark."""
    sig = inspect.signature(gpuwrite.spark.write_parquet)
    assert not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    assert {"mode", "partition_by", "partition_cols", "bucket_by", "sort_by", "max_records_per_file", "options",
            "table", "fallback", "device", "filesystem"} <= set(sig.parameters)
    doc = inspect.getdoc(gpuwrite.spark.write_parquet) or ""
    assert "partition_by" in doc and "default" in doc
    with pytest.raises(OptionError, match="did you mean 'partition_by'"):
        gpuwrite.spark.write_parquet(None, "x", partiton_by=["a"])
