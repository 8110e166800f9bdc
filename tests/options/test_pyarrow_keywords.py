"""pyarrow's other write_table keywords (issue 34): each accepted with pyarrow's meaning where gpuwrite can
honour it, or refused saying what gpuwrite writes instead, never an "unknown option" pointing elsewhere."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite import OptionError, WriteOptions
from gpuwrite.options.pyarrow_keywords import PYARROW_BLOOM_FPP, PYARROW_BLOOM_NDV, RULES

REPO = Path(__file__).resolve().parents[2]
TABLE = pa.table({"id": pa.array(range(3_000), pa.int64()),
                  "city": pa.array(["Oslo", "Lima", "Pune"] * 1_000),
                  "at": pa.array([1_600_000_000_000_000 + i for i in range(3_000)], pa.timestamp("us", "UTC"))})
# pyarrow's parameters that are not write options (the data, where it goes, pyarrow's **kwargs), and the
# keywords tests/options/test_keywords.py covers as aliases
NOT_OPTIONS = {"self", "table", "where", "schema", "filesystem", "kwargs", "options"}
ALIASES = {"compression", "compression_level", "data_page_size", "row_group_size", "use_dictionary",
           "write_statistics"}


def _pyarrow_keywords() -> dict[str, Any]:
    """Every option keyword of pq.write_table and pq.ParquetWriter, with pyarrow's default."""
    out: dict[str, Any] = {}
    for fn in (pq.write_table, pq.ParquetWriter.__init__):
        for name, param in inspect.signature(fn).parameters.items():
            if name not in NOT_OPTIONS | ALIASES and param.kind is not param.VAR_KEYWORD:
                out[name] = param.default
    return out


def _bytes(tmp_path: Path, name: str, **keywords: Any) -> bytes:
    """The bytes of TABLE written with these keywords."""
    path = tmp_path / f"{name}.parquet"
    gpuwrite.write_table(TABLE, path, **keywords)
    return path.read_bytes()


def _refused(tmp_path: Path, **keywords: Any) -> str:
    """The OptionError message of a write with these keywords; nothing is left behind."""
    with pytest.raises(OptionError) as err:
        gpuwrite.write_table(TABLE, tmp_path / "refused.parquet", **keywords)
    assert not (tmp_path / "refused.parquet").exists()
    return str(err.value)


@pytest.mark.parametrize(("name", "default"), sorted(_pyarrow_keywords().items()))
def test_every_pyarrow_keyword_is_known(tmp_path: Path, name: str, default: Any) -> None:
    """Each of pyarrow's keywords, at pyarrow's default, is written or refused for a reason: never an unknown
    option, never a "did you mean" pointing at another option (version= suggested spark_version)."""
    value = True if name in ("use_deprecated_int96_timestamps", "write_page_index") else default
    try:
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet", **{name: value})
    except OptionError as err:
        assert "unknown option" not in str(err) and "did you mean" not in str(err), str(err)
        assert name in str(err)
    assert name in inspect.signature(gpuwrite.write_table).parameters
    assert name in inspect.signature(gpuwrite.ParquetWriter).parameters


def test_version_and_data_page_version(tmp_path: Path) -> None:
    """version "2.4" / "2.6" and data_page_version "2.0" are what gpuwrite writes (the same bytes); "1.0" of
    either is refused saying gpuwrite writes DATA_PAGE_V2 pages only."""
    plain = _bytes(tmp_path, "plain")
    assert _bytes(tmp_path, "v26", version="2.6") == plain
    assert _bytes(tmp_path, "v24", version="2.4") == plain
    assert _bytes(tmp_path, "dpv2", data_page_version="2.0") == plain
    message = _refused(tmp_path, version="1.0")
    assert "version='1.0' is not supported" in message and "DATA_PAGE_V2 pages only" in message
    assert "PARQUET_2_0" in message and "spark_version" not in message
    message = _refused(tmp_path, data_page_version="1.0")
    assert "DATA_PAGE_V2 pages only" in message and "v1 pages are not written" in message
    assert "data_page_size" not in message
    assert "'1.0', '2.4', '2.6'" in _refused(tmp_path, version="2.0")


@pytest.mark.parametrize(("keywords", "timestamp_type"), [
    ({"use_deprecated_int96_timestamps": True}, "INT96"),
    ({"use_deprecated_int96_timestamps": False}, "TIMESTAMP_MICROS"),
    ({"use_deprecated_int96_timestamps": False, "coerce_timestamps": "ms"}, "TIMESTAMP_MILLIS"),
    ({"use_deprecated_int96_timestamps": True, "coerce_timestamps": "ms"}, "INT96"),  # pyarrow: INT96 wins
    ({"coerce_timestamps": "us"}, "TIMESTAMP_MICROS"),
    ({"coerce_timestamps": "ms"}, "TIMESTAMP_MILLIS"),
    ({"flavor": "spark"}, "INT96"),
])
def test_timestamp_keywords(tmp_path: Path, keywords: dict[str, Any], timestamp_type: str) -> None:
    """pyarrow's timestamp keywords choose timestamp_type as pyarrow would choose the physical type."""
    assert _bytes(tmp_path, "pyarrow", **keywords) == _bytes(tmp_path, "field", timestamp_type=timestamp_type)


def test_timestamp_keywords_refused(tmp_path: Path) -> None:
    """A unit Spark does not write is refused saying what is written; a contradiction names both keywords."""
    message = _refused(tmp_path, coerce_timestamps="ns")
    assert "INT96" in message and "timestamp_type" in message
    assert "set the same thing" in _refused(tmp_path, coerce_timestamps="ms", timestamp_type="TIMESTAMP_MICROS")
    assert "must be True or False" in _refused(tmp_path, use_deprecated_int96_timestamps="yes")


@pytest.mark.parametrize(("keyword", "value", "field"), [
    ("dictionary_pagesize_limit", 1024, "dictionary_page_size"),
    ("write_page_checksum", False, "page_checksum"),
    ("max_rows_per_page", 500, "page_row_count_limit"),
])
def test_other_names_of_fields(tmp_path: Path, keyword: str, value: Any, field: str) -> None:
    """pyarrow's names for WriteOptions fields write what the field writes (and change the file)."""
    written = _bytes(tmp_path, "pyarrow", **{keyword: value})
    assert written == _bytes(tmp_path, "field", **{field: value})
    assert written != _bytes(tmp_path, "default")
    assert "set the same thing" in _refused(tmp_path, **{keyword: value, field: value})


def test_bloom_filter_options(tmp_path: Path) -> None:
    """bloom_filter_options: a dict per column is its NDV and FPP; True takes pyarrow's defaults; False none."""
    given = _bytes(tmp_path, "given", use_dictionary=False, bloom_filter_options={"id": {"ndv": 3_000, "fpp": 0.1},
                                                                                  "city": True, "at": False})
    assert given == _bytes(tmp_path, "fields", use_dictionary=False,
                           bloom_filter_columns={"id": True, "city": True, "at": False},
                           bloom_filter_ndv={"id": 3_000, "city": PYARROW_BLOOM_NDV},
                           bloom_filter_fpp={"id": 0.1, "city": PYARROW_BLOOM_FPP})
    meta = pq.read_metadata(tmp_path / "given.parquet").row_group(0)
    assert [meta.column(i).bloom_filter_offset is not None for i in range(3)] == [True, True, False]
    assert "bloom_filter_options['id']" in _refused(tmp_path, bloom_filter_options={"id": {"size": 3}})


@pytest.mark.parametrize(("keyword", "accepted", "refused", "says"), [
    ("flavor", ["spark"], ["hive"], "Spark's layout"),
    ("write_page_index", [True], [False], "column index and an offset index"),
    ("store_schema", [False], [True], "Spark's schema"),
    ("use_compliant_nested_type", [True], [False], "'element'"),
    ("store_decimal_as_integer", [True], [False], "INT32 / INT64 up to 18 digits"),
    ("use_byte_stream_split", [False, []], [True, ["id"]], "BYTE_STREAM_SPLIT is not among them"),
    ("column_encoding", [{}], ["PLAIN", {"id": "PLAIN"}], "fallback_encoding"),
    ("sorting_columns", [[]], [[pq.SortingColumn(0)]], "sort the rows before writing"),
    ("encryption_properties", [], [object()], "does not encrypt"),
    ("write_batch_size", [], [1024], "page_size_check_min"),
    ("use_content_defined_chunking", [False], [True, {"min_chunk_size": 1}], "where parquet-java ends them"),
    ("write_time_adjusted_to_utc", [True, False], ["yes"], "True or False"),
    ("writer_engine_version", ["V2", "V1"], [], ""),
])
def test_accepted_where_it_is_what_gpuwrite_writes(tmp_path: Path, keyword: str, accepted: list[Any],
                                                   refused: list[Any], says: str) -> None:
    """A keyword asking for what gpuwrite writes anyway writes the same bytes; one asking for something else is
    refused, naming the keyword and saying what gpuwrite writes instead."""
    plain = _bytes(tmp_path, "plain")
    for value in accepted:
        assert _bytes(tmp_path, "accepted", **{keyword: value}) == plain
    for value in refused:
        message = _refused(tmp_path, **{keyword: value})
        assert message.startswith(f"option {keyword}") and says in message, message


def test_allow_truncated_timestamps(tmp_path: Path) -> None:
    """Nanosecond timestamps (pandas' datetime64[ns]) with sub-microsecond parts are refused by default and, with
    allow_truncated_timestamps=True, cut toward zero as pyarrow's writer cuts them, nested ones too; values
    without such parts write the bytes their microseconds write either way."""
    ns = [1_000_001_999, -1_999, None]
    table = pa.table({"ts": pa.array(ns, pa.timestamp("ns")), "z": pa.array(ns, pa.timestamp("ns", "UTC")),
                      "l": pa.array([ns, [], None], pa.list_(pa.timestamp("ns")))})
    with pytest.raises(gpuwrite.GpuwriteError, match="allow_truncated_timestamps=True"):
        gpuwrite.write_table(table, tmp_path / "refused.parquet")
    assert not (tmp_path / "refused.parquet").exists()
    gpuwrite.write_table(table, tmp_path / "cut.parquet", allow_truncated_timestamps=True,
                         timestamp_type="TIMESTAMP_MICROS")
    pq.write_table(table, tmp_path / "pyarrow.parquet", coerce_timestamps="us", allow_truncated_timestamps=True)
    ours, theirs = pq.read_table(tmp_path / "cut.parquet"), pq.read_table(tmp_path / "pyarrow.parquet")
    for name in ("ts", "z"):
        assert ours.column(name).cast(pa.int64()).to_pylist() == [1_000_001, -1, None]
        assert ours.column(name).to_pylist() == theirs.column(name).to_pylist()
    assert ours.column("l").to_pylist() == theirs.column("l").to_pylist()
    whole = pa.table({"ts": pa.array([1_000, -2_000], pa.timestamp("ns"))})
    gpuwrite.write_table(whole, tmp_path / "whole_ns.parquet", allow_truncated_timestamps=True)
    gpuwrite.write_table(whole.cast(pa.schema([("ts", pa.timestamp("us"))])), tmp_path / "whole_us.parquet")
    assert (tmp_path / "whole_ns.parquet").read_bytes() == (tmp_path / "whole_us.parquet").read_bytes()
    with pytest.raises(OptionError, match="allow_truncated_timestamps must be True or False"):
        WriteOptions(allow_truncated_timestamps=1)  # type: ignore[arg-type]


def test_truncated_timestamps_stream_into_a_writer(tmp_path: Path) -> None:
    """ParquetWriter with allow_truncated_timestamps takes batches of the given (nanosecond) schema."""
    schema = pa.schema([("ts", pa.timestamp("ns"))])
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", schema, allow_truncated_timestamps=True) as writer:
        writer.write(pa.table({"ts": pa.array([1_500], pa.timestamp("ns"))}))
        writer.write(pa.table({"ts": pa.array([2_999], pa.timestamp("ns"))}))
    assert pq.read_table(tmp_path / "w.parquet").column("ts").cast(pa.int64()).to_pylist() == [1, 2]


def test_docs_list_every_pyarrow_keyword() -> None:
    """docs/options.md's table of pyarrow's keywords has a row naming each."""
    text = (REPO / "docs" / "options.md").read_text()
    section = text[text.index("## pyarrow's keywords"):]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert [k for k in (*RULES, "allow_truncated_timestamps") if not any(f"`{k}`" in r for r in rows)] == []
