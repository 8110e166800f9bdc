"""Page headers: the DATA_PAGE_V2 header of each finished data page and the DICTIONARY_PAGE header of a
chunk's dictionary, serialized in front of their bodies."""

from __future__ import annotations

from collections.abc import Iterable

from ..encode.chunk import DictionaryPage, EncodedPage
from ..format.enums import Encoding, PageType
from ..format.structs import DataPageHeaderV2, DictionaryPageHeader, PageHeader
from ..format.thrift import serialize


def data_page_header(page: EncodedPage) -> bytes:
    """The serialized DATA_PAGE_V2 header of a finished page."""
    s = page.sections
    return serialize(PageHeader(
        type=PageType.DATA_PAGE_V2, uncompressed_page_size=page.uncompressed_size,
        compressed_page_size=len(s.body), crc=s.crc, data_page_header_v2=DataPageHeaderV2(
            num_values=page.num_values, num_nulls=page.num_nulls, num_rows=page.num_rows, encoding=page.encoding,
            definition_levels_byte_length=s.def_len, repetition_levels_byte_length=s.rep_len,
            is_compressed=s.compressed)))


def stamp_headers(pages: Iterable[EncodedPage]) -> None:
    """Give each page its header (its size on disk, which the row-group checks count, includes it)."""
    for page in pages:
        page.header = data_page_header(page)


def dictionary_header(page: DictionaryPage) -> bytes:
    """The serialized DICTIONARY_PAGE header (PLAIN entries) of a chunk's dictionary page."""
    return serialize(PageHeader(
        type=PageType.DICTIONARY_PAGE, uncompressed_page_size=page.uncompressed_size,
        compressed_page_size=len(page.body), crc=page.crc,
        dictionary_page_header=DictionaryPageHeader(num_values=page.num_values, encoding=Encoding.PLAIN)))
