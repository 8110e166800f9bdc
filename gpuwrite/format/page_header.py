"""The DATA_PAGE_V2 page header, the one struct written once per page, composed straight into compact-protocol
bytes: the same bytes as `serialize(PageHeader(...))` (tests/format/test_page_header.py) at a fraction of the
generic writer's cost, which a file pays thousands of times."""

from __future__ import annotations

from .enums import PageType
from .thrift import CT_FALSE, CT_I32, CT_STRUCT, CT_TRUE, out_of_range

_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_NEXT_I32 = (1 << 4) | CT_I32  # short field header: the next field id, type i32
# PageHeader fields 1..3 (type, uncompressed_page_size, compressed_page_size) start with the type's value
_TYPE = bytes([_NEXT_I32, PageType.DATA_PAGE_V2 << 1, _NEXT_I32])
_V2_AFTER_CRC = (4 << 4) | CT_STRUCT  # data_page_header_v2 (field 8) after crc (field 4)
_V2_AFTER_SIZE = (5 << 4) | CT_STRUCT  # ... after compressed_page_size (field 3): no crc
_COMPRESSED = {True: bytes([(1 << 4) | CT_TRUE, 0, 0]), False: bytes([(1 << 4) | CT_FALSE, 0, 0])}


def _i32(buf: bytearray, v: int) -> None:
    """Append an i32 as a zigzag varint (a value outside i32 raises, as the generic writer does)."""
    if not _I32_MIN <= v <= _I32_MAX:
        raise out_of_range("i32", v)
    n = (v << 1) ^ (v >> 31)
    while n > 0x7F:
        buf.append((n & 0x7F) | 0x80)
        n >>= 7
    buf.append(n)


def data_page_v2_header(*, uncompressed_page_size: int, compressed_page_size: int, crc: int | None,
                        num_values: int, num_nulls: int, num_rows: int, encoding: int,
                        definition_levels_byte_length: int, repetition_levels_byte_length: int,
                        is_compressed: bool) -> bytes:
    """PageHeader(type=DATA_PAGE_V2, ..., data_page_header_v2=DataPageHeaderV2(...)) serialized; no
    statistics in the header (parquet-java writes them to the column index only)."""
    buf = bytearray(_TYPE)
    _i32(buf, uncompressed_page_size)
    buf.append(_NEXT_I32)
    _i32(buf, compressed_page_size)
    if crc is not None:
        buf.append(_NEXT_I32)
        _i32(buf, crc)
        buf.append(_V2_AFTER_CRC)
    else:
        buf.append(_V2_AFTER_SIZE)
    for v in (num_values, num_nulls, num_rows, encoding, definition_levels_byte_length,
              repetition_levels_byte_length):
        buf.append(_NEXT_I32)
        _i32(buf, v)
    buf += _COMPRESSED[is_compressed]  # field 7 (a bool's value is its type), then the two stop bytes
    return bytes(buf)
