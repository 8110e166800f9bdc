"""Page headers: the DATA_PAGE_V2 header of each finished data page and the DICTIONARY_PAGE header of a
chunk's dictionary, serialized in front of their bodies."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import ValueCheckError
from ..format.page_header import data_page_v2_header_of, data_page_v2_headers, dictionary_page_header
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


BATCH_HEADERS = 4  # a column's batch of at least this many pages has its headers written in one call


def _header_fields(page: EncodedPage) -> tuple[int, int, int, int, int, int, int, int, int]:
    """A page's header fields in the kernels' order (page_layout.F_*)."""
    a, b, ea, eb, va, vb = page.span
    s = page.sections
    return (eb - ea, eb - ea - (vb - va), b - a, page.encoding, s.def_len, s.rep_len, int(s.compressed),
            page.uncompressed_size, len(s.body))


def stamp_headers(pages: Sequence[EncodedPage]) -> None:
    """Give each page its header (its size on disk, which the row-group checks count, includes it): a batch of
    a column's pages in one compiled call, the same bytes as `data_page_header` writes one page at a time (which
    still writes a short batch, and any page whose sizes or CRC are out of range, raising its error)."""
    if len(pages) >= BATCH_HEADERS:
        has_crc = pages[0].sections.crc is not None
        if all((p.sections.crc is not None) == has_crc for p in pages):
            fields = np.array([_header_fields(p) for p in pages], dtype=np.int64).T.copy()
            crc = (np.array([p.sections.crc for p in pages], dtype=np.int64) & 0xFFFFFFFF if has_crc
                   else np.zeros(len(pages), dtype=np.int64))
            headers = data_page_v2_headers(fields, crc, has_crc)
            if headers is not None:
                for page, header in zip(pages, headers, strict=True):
                    page.header = header
                return
    for page in pages:
        page.header = data_page_header(page)


def dictionary_header(page: DictionaryPage) -> bytes:
    """The serialized DICTIONARY_PAGE header (PLAIN entries) of a chunk's dictionary page."""
    return dictionary_page_header(uncompressed_page_size=page.uncompressed_size,
                                  compressed_page_size=len(page.body), crc=page.crc, num_values=page.num_values)
