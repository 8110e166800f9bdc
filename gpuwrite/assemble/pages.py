"""Page headers: the DATA_PAGE_V2 header of each finished data page and the DICTIONARY_PAGE header of a
chunk's dictionary, serialized in front of their bodies."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import ValueCheckError
from ..format.page_header import data_page_v2_header_of, dictionary_page_header
from ..options.model import INT_MAX
from ..page_model import DictionaryPage, EncodedPage


def data_page_header(page: EncodedPage) -> bytes:
    """The serialized DATA_PAGE_V2 header of a finished page; a page over Parquet's i32 sizes is an error
    naming the column and rows (single values that large are refused before encoding: validate.py)."""
    s = page.sections
    uncompressed, stored = page.uncompressed_size, len(s.body)
    size = max(uncompressed, stored)
    if size > INT_MAX:
        raise ValueCheckError(
            f"column {page.column!r}: the page of rows {page.first_row}..{page.first_row + page.num_rows - 1} "
            f"of its row group holds {size:,} bytes, more than a Parquet page can (sizes are 32-bit: at most "
            f"{INT_MAX:,}); lower parquet.page.size.row.check.min / page_size_check_min so that pages are "
            "checked sooner, or write smaller values")
    a, b, ea, eb, va, vb = page.span
    crc = s.crc
    return data_page_v2_header_of((uncompressed, stored, 0 if crc is None else crc, eb - ea, eb - ea - (vb - va),
                                   b - a, page.encoding, s.def_len, s.rep_len), crc is not None, s.compressed)


def stamp_headers(pages: Iterable[EncodedPage]) -> None:
    """Give each page its header (its size on disk, which the row-group checks count, includes it)."""
    for page in pages:
        page.header = data_page_header(page)


def dictionary_header(page: DictionaryPage) -> bytes:
    """The serialized DICTIONARY_PAGE header (PLAIN entries) of a chunk's dictionary page."""
    return dictionary_page_header(uncompressed_page_size=page.uncompressed_size,
                                  compressed_page_size=len(page.body), crc=page.crc, num_values=page.num_values)
