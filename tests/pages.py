"""Test helper: every page header of every column chunk of a Parquet file, decoded by field name."""

from __future__ import annotations

from typing import Any

from gpuwrite.format.footer_reader import iter_page_headers, named, read_footer


def pages_of(path: str) -> list[list[list[dict[str, Any]]]]:
    """pages[row_group][column] -> list of named PageHeader dicts (dictionary page first, if any)."""
    footer = read_footer(path)
    out = []
    with open(path, "rb") as f:
        for rg in footer[4]:
            cols = []
            for cc in rg[1]:
                cols.append([named("PageHeader", h, enum_names=True) for _, h, _ in iter_page_headers(f, cc)])
            out.append(cols)
    return out


def data_pages(path: str, row_group: int, column: int) -> list[dict[str, Any]]:
    """The DATA_PAGE_V2 headers (v2 part) of one chunk."""
    return [p["data_page_header_v2"] for p in pages_of(path)[row_group][column] if p["type"] == "DATA_PAGE_V2"]
