"""Page headers, the structs written once per page, serialized on the host by the device's own writers
(`kernels/page_layout.data_page_v2_header` / `dictionary_page_header`, one compiled call each): the same bytes
as `serialize(PageHeader(...))` (tests/format/test_page_header.py) at a fraction of the generic writer's cost,
which a file pays thousands of times."""

from __future__ import annotations

import numpy as np

from gpuwrite.kernels.plan.page_layout import HEADER_BOUND
from gpuwrite.kernels.plan.page_layout import data_page_v2_header as write_data_page_v2
from gpuwrite.kernels.plan.page_layout import dictionary_page_header as write_dictionary_page
from gpuwrite.kernels.plan.page_layout import page_headers as write_data_page_v2_headers

from .thrift import out_of_range

_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1


def _check_i32(values: tuple[int, ...]) -> None:
    """Raise for the first value outside i32, as the generic writer does (a silent wrap would corrupt)."""
    if min(values) < _I32_MIN or max(values) > _I32_MAX:
        raise out_of_range("i32", next(v for v in values if not _I32_MIN <= v <= _I32_MAX))


def data_page_v2_header(*, uncompressed_page_size: int, compressed_page_size: int, crc: int | None,
                        num_values: int, num_nulls: int, num_rows: int, encoding: int,
                        definition_levels_byte_length: int, repetition_levels_byte_length: int,
                        is_compressed: bool) -> bytes:
    """PageHeader(type=DATA_PAGE_V2, ..., data_page_header_v2=DataPageHeaderV2(...)) serialized; no
    statistics in the header (parquet-java writes them to the column index only). A value outside i32 raises
    as the generic writer does."""
    return data_page_v2_header_of((uncompressed_page_size, compressed_page_size, 0 if crc is None else crc, num_values,
                                   num_nulls, num_rows, int(encoding), definition_levels_byte_length,
                                   repetition_levels_byte_length), crc is not None, is_compressed)


def data_page_v2_header_of(values: tuple[int, int, int, int, int, int, int, int, int], has_crc: bool,
                           is_compressed: bool) -> bytes:
    """`data_page_v2_header` of its fields in order (uncompressed and compressed sizes, CRC or 0, num_values,
    num_nulls, num_rows, encoding, definition and repetition level lengths) as one tuple: the CPU path's call
    for every page (keyword arguments cost it a fifth of the header's time)."""
    _check_i32(values)
    out = np.empty(HEADER_BOUND, dtype=np.uint8)
    end = write_data_page_v2(out, 0, values[0], values[1], has_crc, *values[2:], bool(is_compressed))
    return out[:end].tobytes()


def data_page_v2_headers(fields: np.ndarray, crc: np.ndarray, has_crc: bool) -> list[memoryview] | None:
    """`data_page_v2_header_of` of many pages in one compiled call (`kernels/page_layout.page_headers`, the
    device's twin): `fields` int64[F_COUNT, pages] in the kernels' field order, `crc` each page's CRC as an
    unsigned 32-bit value (read with `has_crc` only). Each header is a view of one shared buffer. None when a
    value lies outside i32: the caller then writes the pages one by one, raising the per-page error. A column's
    pages cost a call each before (its argument handling, an allocation and a copy: 8-10 us a page)."""
    n = fields.shape[1]
    if n == 0:
        return []
    if int(fields.min()) < _I32_MIN or int(fields.max()) > _I32_MAX:
        return None
    if has_crc and (int(crc.min()) < 0 or int(crc.max()) > 0xFFFFFFFF):
        return None
    out = np.empty(n * HEADER_BOUND, dtype=np.uint8)
    starts = np.arange(0, n * HEADER_BOUND, HEADER_BOUND, dtype=np.int64)
    sizes = np.empty(n, dtype=np.int64)
    write_data_page_v2_headers(n, fields, crc, has_crc, out, starts, sizes)
    view = out.data
    return [view[a:a + k] for a, k in zip(starts.tolist(), sizes.tolist(), strict=True)]


def dictionary_page_header(*, uncompressed_page_size: int, compressed_page_size: int, crc: int | None,
                           num_values: int) -> bytes:
    """PageHeader(type=DICTIONARY_PAGE, ..., dictionary_page_header=DictionaryPageHeader(num_values,
    encoding=PLAIN)) serialized. A value outside i32 raises as the generic writer does."""
    values = (uncompressed_page_size, compressed_page_size, 0 if crc is None else crc, num_values)
    _check_i32(values)
    out = np.empty(HEADER_BOUND, dtype=np.uint8)
    end = write_dictionary_page(out, 0, values[0], values[1], crc is not None, values[2], values[3])
    return out[:end].tobytes()
