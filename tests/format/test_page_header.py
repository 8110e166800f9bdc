"""The page headers the host writes with the device's serializers (kernels/page_layout.data_page_v2_header,
dictionary_page_header) against the declared structs' generic serializer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.format.enums import Encoding, PageType
from gpuwrite.format.page_header import data_page_v2_header, dictionary_page_header
from gpuwrite.format.structs import DataPageHeaderV2, DictionaryPageHeader, PageHeader
from gpuwrite.format.thrift import serialize

I32 = st.integers(-(1 << 31), (1 << 31) - 1)
SIZE = st.integers(0, (1 << 31) - 1) | st.sampled_from([0, 1, 63, 64, 127, 128, 16383, 16384])
FIELDS = ("uncompressed_page_size", "compressed_page_size", "crc", "num_values", "num_nulls", "num_rows", "encoding",
          "definition_levels_byte_length", "repetition_levels_byte_length", "is_compressed")


def generic(**f: int | bool | None) -> bytes:
    """The header through the declared structs' generic writer."""
    return serialize(PageHeader(
        type=PageType.DATA_PAGE_V2, uncompressed_page_size=f["uncompressed_page_size"],
        compressed_page_size=f["compressed_page_size"], crc=f["crc"], data_page_header_v2=DataPageHeaderV2(
            num_values=f["num_values"], num_nulls=f["num_nulls"], num_rows=f["num_rows"], encoding=f["encoding"],
            definition_levels_byte_length=f["definition_levels_byte_length"],
            repetition_levels_byte_length=f["repetition_levels_byte_length"], is_compressed=f["is_compressed"])))


@settings(deadline=None)  # the first example compiles the kernel-side writer when the numba cache is cold
@given(st.tuples(SIZE, SIZE, st.none() | I32, SIZE, SIZE, SIZE, st.integers(0, 9), SIZE, SIZE, st.booleans()))
def test_same_bytes_as_the_generic_writer(values: tuple) -> None:
    """Every field's value range, with and without a CRC, compressed or not: byte for byte the same."""
    fields = dict(zip(FIELDS, values, strict=True))
    assert data_page_v2_header(**fields) == generic(**fields)


@pytest.mark.parametrize("field", [f for f in FIELDS if f != "is_compressed"])
def test_a_value_outside_i32_raises_as_the_generic_writer_does(field: str) -> None:
    fields: dict = dict(zip(FIELDS, (10, 10, 5, 1, 0, 1, 8, 0, 0, True), strict=True))
    fields[field] = 1 << 31
    with pytest.raises(ValueError, match="does not fit in a Thrift i32") as fast:
        data_page_v2_header(**fields)
    with pytest.raises(ValueError) as slow:
        generic(**fields)
    assert str(fast.value) == str(slow.value)


DICT_FIELDS = ("uncompressed_page_size", "compressed_page_size", "crc", "num_values")


def generic_dictionary(**f: int | None) -> bytes:
    """The DICTIONARY_PAGE header (PLAIN entries) through the declared structs' generic writer."""
    return serialize(PageHeader(
        type=PageType.DICTIONARY_PAGE, uncompressed_page_size=f["uncompressed_page_size"],
        compressed_page_size=f["compressed_page_size"], crc=f["crc"],
        dictionary_page_header=DictionaryPageHeader(num_values=f["num_values"], encoding=Encoding.PLAIN)))


@settings(deadline=None)
@given(st.tuples(SIZE, SIZE, st.none() | I32, SIZE))
def test_dictionary_header_same_bytes_as_the_generic_writer(values: tuple) -> None:
    fields = dict(zip(DICT_FIELDS, values, strict=True))
    assert dictionary_page_header(**fields) == generic_dictionary(**fields)


@pytest.mark.parametrize("field", DICT_FIELDS)
def test_a_dictionary_header_value_outside_i32_raises_as_the_generic_writer_does(field: str) -> None:
    fields: dict = dict(zip(DICT_FIELDS, (10, 10, 5, 3), strict=True))
    fields[field] = -(1 << 31) - 1
    with pytest.raises(ValueError, match="does not fit in a Thrift i32") as fast:
        dictionary_page_header(**fields)
    with pytest.raises(ValueError) as slow:
        generic_dictionary(**fields)
    assert str(fast.value) == str(slow.value)
