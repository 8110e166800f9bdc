"""The hand-composed DATA_PAGE_V2 header against the declared structs' generic serializer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuwrite.format.enums import PageType
from gpuwrite.format.page_header import data_page_v2_header
from gpuwrite.format.structs import DataPageHeaderV2, PageHeader
from gpuwrite.format.thrift import serialize

I32 = st.integers(-(1 << 31), (1 << 31) - 1)
SIZE = st.integers(0, (1 << 31) - 1) | st.sampled_from([0, 1, 63, 64, 127, 128, 16383, 16384])


def generic(u: int, c: int, crc: int | None, nv: int, nn: int, nr: int, enc: int, d: int, r: int,
            comp: bool) -> bytes:
    return serialize(PageHeader(
        type=PageType.DATA_PAGE_V2, uncompressed_page_size=u, compressed_page_size=c, crc=crc,
        data_page_header_v2=DataPageHeaderV2(num_values=nv, num_nulls=nn, num_rows=nr, encoding=enc,
                                             definition_levels_byte_length=d, repetition_levels_byte_length=r,
                                             is_compressed=comp)))


@given(SIZE, SIZE, st.none() | I32, SIZE, SIZE, SIZE, st.integers(0, 9), SIZE, SIZE, st.booleans())
def test_same_bytes_as_the_generic_writer(u: int, c: int, crc: int | None, nv: int, nn: int, nr: int, enc: int,
                                          d: int, r: int, comp: bool) -> None:
    """Every field's value range, with and without a CRC, compressed or not: byte for byte the same."""
    assert data_page_v2_header(u, c, crc, nv, nn, nr, enc, d, r, comp) == generic(u, c, crc, nv, nn, nr, enc, d, r,
                                                                                   comp)


@pytest.mark.parametrize("field", range(9))
def test_a_value_outside_i32_raises_as_the_generic_writer_does(field: int) -> None:
    u, c, crc, nv, nn, nr, enc, d, r = (1 << 31 if k == field else v
                                        for k, v in enumerate((10, 10, 5, 1, 0, 1, 8, 0, 0)))
    with pytest.raises(ValueError, match="does not fit in a Thrift i32") as fast:
        data_page_v2_header(u, c, crc, nv, nn, nr, enc, d, r, True)
    with pytest.raises(ValueError) as slow:
        generic(u, c, crc, nv, nn, nr, enc, d, r, True)
    assert str(fast.value) == str(slow.value)
