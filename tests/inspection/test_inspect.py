"""gpuwrite.inspect: its description of a file agrees with pyarrow's metadata, page by page, for any writer."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from corpus import corpus_file

import gpuwrite
from gpuwrite.format.footer_reader import named
from gpuwrite.format.thrift import decode_struct
from gpuwrite.inspection.file import format_inspect
from gpuwrite.tools.demo_data import store_sales_table

FOREIGN_FILES = ("alltypes_tiny_pages.parquet", "datapage_v2.snappy.parquet")
DATA_PAGE_TYPES = ("DATA_PAGE", "DATA_PAGE_V2")
PAGE_LINE = re.compile(r"^\s+\d+\s+[\d,]+\s+(DATA_PAGE_V2|DATA_PAGE|DICTIONARY_PAGE|INDEX_PAGE)\s", re.MULTILINE)


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, gpuwrite.FileResult]:
    """A store_sales file by gpuwrite with several row groups and several pages per chunk."""
    path = tmp_path_factory.mktemp("inspect") / "store_sales.parquet"
    result = gpuwrite.write_table(store_sales_table(60_000), path,
                                  options={"parquet.block.size": "1000000", "parquet.page.row.count.limit": "8000"})
    assert len(result.footer.row_groups) > 1
    return path, result


def _foreign(name: str) -> Path:
    """A parquet-testing file, read in place (skipped without ../shared, failed under CI)."""
    return corpus_file(name)


def _data_pages(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunk's data pages (v1 or v2)."""
    return [p for p in chunk["pages"] if p["type"] in DATA_PAGE_TYPES]


def _value_encodings(page: dict[str, Any]) -> set[str]:
    """Encodings a page header declares for its values (and, for v1 pages, its levels)."""
    for kind in ("data_page_header", "data_page_header_v2", "dictionary_page_header"):
        head = page.get(kind)
        if head is not None:
            keys = ("encoding", "definition_level_encoding", "repetition_level_encoding")
            return {head[k] for k in keys if k in head}
    return set()


def check_against_pyarrow(path: Path, info: dict[str, Any]) -> None:
    """Every row group and column chunk of `info` agrees with pyarrow's metadata and with its own pages."""
    meta = pq.ParquetFile(path).metadata
    assert info["footer"]["num_rows"] == meta.num_rows
    assert info["footer"]["created_by"] == meta.created_by
    assert len(info["row_groups"]) == meta.num_row_groups
    for i, rg in enumerate(info["row_groups"]):
        pa_rg = meta.row_group(i)
        assert rg["num_rows"] == pa_rg.num_rows
        assert len(rg["columns"]) == pa_rg.num_columns
        for j, chunk in enumerate(rg["columns"]):
            col = pa_rg.column(j)
            where = f"row group {i} column {chunk['path']}"
            assert chunk["path"] == col.path_in_schema, where
            assert chunk["physical_type"] == col.physical_type, where
            assert tuple(chunk["encodings"]) == col.encodings, where
            assert chunk["num_values"] == col.num_values, where
            assert chunk["total_compressed_size"] == col.total_compressed_size, where
            assert chunk["data_page_offset"] == col.data_page_offset, where
            assert "page_error" not in chunk, where

            pages = chunk["pages"]
            data = _data_pages(chunk)
            dictionary = [p for p in pages if p["type"] == "DICTIONARY_PAGE"]
            assert data, where
            if col.has_dictionary_page:
                assert [p["offset"] for p in dictionary] == [pages[0]["offset"]] == [col.dictionary_page_offset]
                assert data[0]["offset"] == col.data_page_offset, where
            elif dictionary:
                # old parquet-mr leaves dictionary_page_offset unset and points data_page_offset at the dictionary
                assert [p["offset"] for p in dictionary] == [pages[0]["offset"]] == [col.data_page_offset]
            else:
                assert data[0]["offset"] == col.data_page_offset, where
            assert sum(_page_values(p) for p in data) == col.num_values, where
            assert sum(p["header_size"] + p["compressed_page_size"] for p in pages) == col.total_compressed_size
            used = set().union(*(_value_encodings(p) for p in pages))
            assert used <= set(col.encodings), where
            if chunk["encoding_stats"]:
                stats = Counter({(s["page_type"], s["encoding"]): s["count"] for s in chunk["encoding_stats"]})
                seen = Counter((p["type"], _page_encoding(p)) for p in pages)
                assert seen == stats, where
            if chunk["offset_index_offset"] is not None:
                assert len(data) == len(_offset_index(path, chunk)["page_locations"]), where


def _page_values(page: dict[str, Any]) -> int:
    """num_values from a data page's v1 or v2 header."""
    head = page.get("data_page_header_v2") or page.get("data_page_header") or {}
    return int(head["num_values"])


def _page_encoding(page: dict[str, Any]) -> str:
    """The value encoding a page header names."""
    head = page.get("data_page_header_v2") or page.get("data_page_header") or page.get("dictionary_page_header")
    assert head is not None
    return str(head["encoding"])


def _offset_index(path: Path, chunk: dict[str, Any]) -> dict[str, Any]:
    """The chunk's OffsetIndex (page index), decoded separately from the page walk, as a second page count."""
    with open(path, "rb") as f:
        f.seek(chunk["offset_index_offset"])
        return named("OffsetIndex", decode_struct(f.read(chunk["offset_index_length"])))


def test_ours_agrees_with_pyarrow_and_the_write_result(ours: tuple[Path, gpuwrite.FileResult]) -> None:
    """Our file: metadata as pyarrow reads it, data page counts as the writer reported them, all v2 pages."""
    path, result = ours
    info = gpuwrite.inspect(path)
    check_against_pyarrow(path, info)
    assert info["file_size"] == result.size == path.stat().st_size
    for rg, summary in zip(info["row_groups"], result.footer.row_groups, strict=True):
        for chunk, expected in zip(rg["columns"], summary.columns, strict=True):
            data = _data_pages(chunk)
            assert len(data) == expected.page_count > 1
            assert {p["type"] for p in data} == {"DATA_PAGE_V2"}
            assert tuple(chunk["encodings"]) == expected.encodings
            assert chunk["codec"] == "SNAPPY"
            assert all(p["crc"] is not None for p in chunk["pages"])


def test_statistics_are_decoded_for_obvious_types(ours: tuple[Path, gpuwrite.FileResult]) -> None:
    """INT32/INT64 statistics carry hex and the little-endian value, which equals pyarrow's min and max."""
    path, _ = ours
    info = gpuwrite.inspect(path)
    meta = pq.ParquetFile(path).metadata
    leaves = info["footer"]["schema"][1:]
    for i, rg in enumerate(info["row_groups"]):
        for j, chunk in enumerate(rg["columns"]):
            st = chunk["statistics"]
            pa_st = meta.row_group(i).column(j).statistics
            assert st["null_count"] == pa_st.null_count
            if leaves[j]["logical_type"] is None:
                assert st["min_value"]["value"] == pa_st.min
                assert st["max_value"]["value"] == pa_st.max
            width = 8 if chunk["physical_type"] == "INT64" else 4
            assert len(bytes.fromhex(st["min_value"]["hex"])) == width


@pytest.mark.parametrize("name", FOREIGN_FILES)
def test_foreign_file_agrees_with_pyarrow(name: str) -> None:
    """Files from parquet-mr (v1 and v2 pages, page index, encoding stats) are described as pyarrow sees them."""
    path = _foreign(name)
    info = gpuwrite.inspect(path)
    check_against_pyarrow(path, info)
    assert info["path"] == str(path)


def test_description_is_plain_json(ours: tuple[Path, gpuwrite.FileResult]) -> None:
    """The description survives a strict JSON round trip unchanged, for our file and a foreign one."""
    for path in (ours[0], _foreign(FOREIGN_FILES[0])):
        info = gpuwrite.inspect(path)
        assert json.loads(json.dumps(info, allow_nan=False)) == info


def test_text_has_one_line_per_page(ours: tuple[Path, gpuwrite.FileResult]) -> None:
    """format_inspect prints the footer, the schema and exactly one line for each page."""
    path, _ = ours
    info = gpuwrite.inspect(path)
    text = format_inspect(info)
    pages = sum(len(c["pages"]) for rg in info["row_groups"] for c in rg["columns"])
    assert len(PAGE_LINE.findall(text)) == pages
    assert "created by gpuwrite" in text
    assert "DECIMAL(7,2)" in text
    assert "ss_ticket_number" in text


def test_not_parquet_is_an_error(tmp_path: Path) -> None:
    """A file without the Parquet footer magic raises a GpuwriteError that says so."""
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 64)
    with pytest.raises(gpuwrite.GpuwriteError, match="magic"):
        gpuwrite.inspect(path)
