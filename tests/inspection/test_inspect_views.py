"""`inspect`'s views: the summary (statistics in logical types), the page index, --column, --head, datasets,
and what the format version means; checked against pyarrow's reading of the same files."""

from __future__ import annotations

import datetime as dt
import json
import re
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.inspection.text import format_inspect, format_page_index, format_summary, size_text
from gpuwrite.inspection.values import display, logical_value, stat_value
from gpuwrite.tools.cli import main

ROWS = 5_000


@pytest.fixture(scope="module")
def typed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A gpuwrite file with dates, decimals (INT32, INT64, FLBA), strings, INT96 timestamps and a struct, in
    several pages per chunk."""
    path = tmp_path_factory.mktemp("views") / "typed.parquet"
    n = ROWS
    table = pa.table({
        "day": pa.array([dt.date(2000, 1, 1) + dt.timedelta(days=(i * 37) % 9000) for i in range(n)]),
        "price": pa.array([Decimal(i % 1000 - 300).scaleb(-2) for i in range(n)], pa.decimal128(7, 2)),
        "big": pa.array([Decimal(i * 10**7).scaleb(-4) if i % 9 else None for i in range(n)], pa.decimal128(18, 4)),
        "huge": pa.array([Decimal(i * 10**20 - 5).scaleb(-3) for i in range(n)], pa.decimal128(30, 3)),
        "name": pa.array([f"name {i % 211:03d}" for i in range(n)]),
        "ts": pa.array([dt.datetime(2021, 3, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=i * 61)
                        for i in range(n)], pa.timestamp("us", tz="UTC")),
        "item": pa.array([{"id": i, "tag": f"t{i % 5}"} for i in range(n)]),
    })
    gpuwrite.write_table(table, path, page_row_count_limit=1_000, block_row_count_limit=2_500)
    return path


def _summary_row(text: str, column: str) -> list[str]:
    """The cells of one column's line in the summary table (split on runs of 2+ spaces)."""
    for line in text.splitlines():
        if line.startswith(column + " "):
            return re.split(r"\s{2,}", line.strip())
    raise AssertionError(f"no summary line for {column}: {text}")


def test_summary_statistics_in_logical_types(typed: Path) -> None:
    """Min and max over all row groups, as dates, scaled decimals and text, equal pyarrow's computed values;
    the null count is the column's; each row group has a line."""
    info = gpuwrite.inspect(typed)
    text = format_summary(info)
    table = pq.read_table(typed)
    for column in ("day", "price", "big", "huge"):
        values = table.column(column)
        cells = _summary_row(text, column)
        low, high = pc.min_max(values).values()
        assert cells[-2:] == [display(low.as_py()), display(high.as_py())], column
        assert cells[-3] == f"{values.null_count:,}", column
    low, high = pc.min_max(table.column("name")).values()
    assert _summary_row(text, "name")[-2:] == [repr(low.as_py()), repr(high.as_py())]
    assert _summary_row(text, "price")[1] == "DECIMAL(7,2) INT32"
    assert _summary_row(text, "huge")[1] == "DECIMAL(30,3) FIXED_LEN_BYTE_ARRAY(13)"
    assert _summary_row(text, "ts")[1] == "timestamp INT96"
    meta = pq.ParquetFile(typed).metadata
    assert meta.num_row_groups == 2
    for i in range(meta.num_row_groups):
        assert re.search(rf"^\s+{i}\s+{meta.row_group(i).num_rows:,}\s", text, re.MULTILINE)
    compressed = sum(meta.row_group(i).column(j).total_compressed_size for i in range(meta.num_row_groups)
                     for j in range(meta.num_columns))
    assert f"-> {size_text(compressed)}" in text


def test_summary_is_short_and_says_the_format_in_one_line(typed: Path) -> None:
    """The default view is a few dozen lines (not one per page) and says the format in one short line (the
    paragraph on what version 1 with v2 pages means is --pages' alone); Spark's schema JSON is shown by its
    length only."""
    info = gpuwrite.inspect(typed)
    text = format_summary(info)
    pages = sum(len(c["pages"]) for rg in info["row_groups"] for c in rg["columns"])
    assert pages > 20 and len(text.splitlines()) < 30
    format_lines = [line for line in text.splitlines() if "format" in line]
    assert format_lines == ["format: DATA_PAGE_V2 pages (Parquet v2), footer version 1 (parquet-java's for every "
                            "file)"]
    assert "CURRENT_VERSION" not in text
    explained = format_inspect(info)
    assert "format version 1" in explained and "CURRENT_VERSION" in explained and "DATA_PAGE_V2" in explained
    assert "Spark's schema as JSON" in text and '"fields"' not in text


def test_format_version_of_a_pyarrow_v1_page_file(tmp_path: Path) -> None:
    """A pyarrow file with format 2.6 and v1 pages: version 2, DATA_PAGE pages."""
    path = tmp_path / "pa.parquet"
    pq.write_table(pa.table({"a": list(range(100))}), path, version="2.6", data_page_version="1.0")
    info = gpuwrite.inspect(path)
    assert "format: DATA_PAGE pages (v1), footer version 2 (Arrow C++'s for format 2.x)" in format_summary(info)
    explained = format_inspect(info)
    assert "format version 2" in explained and "Arrow C++" in explained and "DATA_PAGE (v1 pages" in explained


def test_column_filter(typed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--column keeps one leaf, or all leaves of a group; an unknown name is an error listing the columns."""
    info = gpuwrite.inspect(typed)
    text = format_summary(info, ["price"])
    assert _summary_row(text, "price") and "\nday " not in text and "(sizes of the 1 column(s) shown)" in text
    pages = format_inspect(info, ["item"])
    assert "column item.id:" in pages and "column item.tag:" in pages and "column price:" not in pages
    assert main(["inspect", str(typed), "--column", "nope"]) == 2
    err = capsys.readouterr().err
    assert "'nope'" in err and "item.id" in err
    assert main(["inspect", str(typed), "--json", "--column", "price"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {c["path"] for rg in data["row_groups"] for c in rg["columns"]} == {"price"}


def _page_rows(text: str, group: int, column: str) -> list[list[str]]:
    """The page lines of one chunk in the --index view, split into cells."""
    lines = text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"row group {group}, column {column}:")))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def test_page_index_values_match_the_pages_rows(typed: Path) -> None:
    """Per page: first row and nulls from the offset/column index, min and max in logical types, equal to
    the min/max pyarrow computes over that page's rows."""
    info = gpuwrite.inspect(typed)
    text = format_page_index(info, ["day", "big"])
    table = pq.read_table(typed)
    meta = pq.ParquetFile(typed).metadata
    first = 0
    for group in range(meta.num_row_groups):
        for column in ("day", "big"):
            rows = _page_rows(text, group, column)
            starts = [int(r[1].replace(",", "")) for r in rows] + [meta.row_group(group).num_rows]
            assert starts[0] == 0 and len(rows) > 1
            for page, cells in enumerate(rows):
                values = table.column(column).slice(first + starts[page], starts[page + 1] - starts[page])
                low, high = pc.min_max(values).values()
                assert cells[4] == str(values.null_count) and cells[5] == "no"
                assert cells[6:] == [display(low.as_py()), display(high.as_py())], (group, column, page)
        first += meta.row_group(group).num_rows
    assert "boundary order" in text
    assert "offset index only (no column index)" in format_page_index(info, ["ts"])  # INT96 has no order


def test_head_preview(typed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--head N prints the first N rows as pyarrow reads them (INT96 as timestamps, decimals scaled)."""
    assert main(["inspect", str(typed), "--head", "3", "--column", "price", "--column", "ts"]) == 0
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if line.split() == ["price", "ts"])
    expected = pq.read_table(typed, columns=["price", "ts"]).slice(0, 3).to_pylist()
    for line, row in zip(out[at + 1:at + 4], expected, strict=True):
        assert line.split(None, 1) == [str(row["price"]), str(row["ts"].replace(tzinfo=None))]
    assert "(3 row(s) shown)" in out[at + 4]


def test_dataset_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A directory: files, rows and sizes as written, Hive partitions, Spark buckets, _SUCCESS; a stray
    non-Parquet file is reported, hidden files are not read."""
    table = pa.table({"k": pa.array([i % 4 for i in range(400)], pa.int32()),
                      "region": pa.array(["north", "south"] * 200), "v": pa.array(range(400), pa.int64())})
    root = tmp_path / "ds"
    result = gpuwrite.write_dataset(table, root, partition_by=["region"], bucket_by=(3, ["k"]))
    (root / "region=north" / "notes.txt").write_text("not parquet")
    (root / ".hidden.crc").write_text("x")
    info = gpuwrite.inspect(root)
    assert info["kind"] == "dataset" and info["num_rows"] == 400 == result.num_rows
    assert info["num_files"] == len(result.files)
    assert info["size"] == sum(f.size for f in result.files)
    assert info["partitions"] == {"region": ["north", "south"]} and info["success"]
    assert info["buckets"] == len({Path(f.path).name.split("_")[-1][:5] for f in result.files})
    assert [e["path"] for e in info["errors"]] == ["region=north/notes.txt"]
    assert len(info["schemas"]) == 1 and info["schemas"][0]["columns"] == ["k: INT32", "v: INT64"]
    assert main(["inspect", str(root), "--head", "2"]) == 0
    text = capsys.readouterr().out
    assert "400 rows" in text and "_SUCCESS present" in text and "region (2 values: north, south)" in text
    assert "buckets: " in text and "not readable as Parquet: region=north/notes.txt" in text
    assert re.search(r"^k\s+v\s+region$", text, re.MULTILINE)
    assert main(["inspect", str(root), "--pages"]) == 2


def _leaf(logical: Any = None, converted: Any = None, **extra: Any) -> dict[str, Any]:
    """A schema leaf as inspect describes one."""
    return {"logical_type": logical, "converted_type": converted, **extra}


def test_logical_values_of_every_kind() -> None:
    """INT96 as a timestamp, dates, scaled decimals (little- and big-endian), unsigned ints, legacy converted
    types, timestamps with nanoseconds, and text."""
    day = dt.datetime(2020, 2, 29, 13, 45, 10, 123456)
    midnight = dt.datetime(2020, 2, 29)
    nanos = (day - midnight) // dt.timedelta(microseconds=1) * 1000 + 789
    int96 = struct.pack("<qi", nanos, 2_440_588 + (midnight - dt.datetime(1970, 1, 1)).days)
    assert display(logical_value(int96, "INT96", _leaf())) == "2020-02-29 13:45:10.123456789Z"
    assert stat_value(struct.pack("<i", 18262), "INT32", None, _leaf({"DATE": {}}))["display"] == "2020-01-01"
    assert stat_value(struct.pack("<i", 18262), "INT32", None, _leaf(converted="DATE"))["display"] == "2020-01-01"
    assert stat_value(struct.pack("<i", 139), "INT32", None,
                      _leaf({"DECIMAL": {"scale": 2, "precision": 5}}))["display"] == "1.39"
    assert stat_value((-139).to_bytes(5, "big", signed=True), "FIXED_LEN_BYTE_ARRAY", None,
                      _leaf(converted="DECIMAL", scale=3))["display"] == "-0.139"
    assert stat_value(struct.pack("<i", -1), "INT32", None,
                      _leaf({"INTEGER": {"bitWidth": 32, "isSigned": False}}))["display"] == str(2**32 - 1)
    micros = {"TIMESTAMP": {"isAdjustedToUTC": False, "unit": {"MICROS": {}}}}
    assert stat_value(struct.pack("<q", 1_500_000), "INT64", None, _leaf(micros))["display"] == "1970-01-01 00:00:01.5"
    assert stat_value(struct.pack("<q", 1), "INT64", None, _leaf(converted="TIMESTAMP_MILLIS"))["display"] \
        == "1970-01-01 00:00:00.001Z"
    assert stat_value("åäö".encode(), "BYTE_ARRAY", None, _leaf({"STRING": {}}))["display"] == "åäö"
    assert stat_value(b"\xff\x00", "BYTE_ARRAY", None, _leaf())["display"] == "0xff00"
    raw = stat_value(struct.pack("<i", 7), "INT32")
    assert raw == {"hex": "07000000", "value": 7, "display": "7"}
