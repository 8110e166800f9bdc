"""The page indexes' fast paths give the bytes of the generic Thrift structs they replace."""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuwrite.assemble.indexes import _boundary_order, column_index, offset_index, offset_index_bytes
from gpuwrite.encode.stats import stats_of
from gpuwrite.format.enums import BoundaryOrder
from gpuwrite.format.thrift import serialize
from gpuwrite.options.model import WriteOptions
from gpuwrite.page_model import EncodedPage, PageSections, PageSpan, PageStats
from gpuwrite.schema import FileSchema, Leaf


def _leaf(t: pa.DataType) -> Leaf:
    """The one leaf of a one-column schema of type `t`."""
    return FileSchema.from_arrow(pa.schema([pa.field("c", t)]), WriteOptions()).leaves[0]


def _page(leaf: Leaf, body: int, header: int, first_row: int, stats: PageStats | None = None,
          byte_array_bytes: int | None = None) -> EncodedPage:
    """A page with a `header`-byte header, a `body`-byte body, starting at `first_row`."""
    sections = PageSections(body=bytes(body), rep_len=0, def_len=0, values_len=body, compressed=False, crc=None)
    return EncodedPage(span=PageSpan(0, 1, 0, 1, 0, 1), first_row=first_row, encoding=0, sections=sections,
                       stats=stats or PageStats(null_count=0, num_values=0), byte_array_bytes=byte_array_bytes,
                       header=bytes(header))


@pytest.mark.parametrize("t", [pa.float64(), pa.string()])
@pytest.mark.parametrize("n", [0, 1, 14, 15, 200])
def test_offset_index_bytes_match_the_generic_struct(t: pa.DataType, n: int) -> None:
    """Offsets, sizes and first rows across varint widths (and 15+ pages: the long list header)."""
    leaf = _leaf(t)
    pages = [_page(leaf, body=(i * 7919) % 70_000, header=20 + i % 5, first_row=i * 20_000 + (i % 3) * 99,
                   byte_array_bytes=i * 1_234_567) for i in range(n)]
    offsets = [4 + i * 1_000_003 + (1 << 40 if i > 100 else 0) for i in range(n)]
    assert offset_index_bytes(leaf, pages, offsets) == serialize(offset_index(leaf, pages, offsets))


def test_offset_index_bytes_reject_an_i32_overflow() -> None:
    """A page size past i32 is refused as the generic writer refuses it."""
    leaf = _leaf(pa.int64())
    page = _page(leaf, body=0, header=0, first_row=0)
    page.header = memoryview(bytearray(0))
    page.sections = PageSections(body=_Huge(), rep_len=0, def_len=0, values_len=0, compressed=False,  # type: ignore[arg-type]
                                 crc=None)
    with pytest.raises(ValueError, match="i32"):
        offset_index_bytes(leaf, [page], [4])


class _Huge:
    """A body that claims 2**31 bytes."""

    def __len__(self) -> int:
        return 1 << 31


@pytest.mark.parametrize("t,fmt", [(pa.float64(), "<d"), (pa.float32(), "<f")])
def test_float_column_index_normalises_zeros_and_orders_pages(t: pa.DataType, fmt: str) -> None:
    """min +0.0 -> -0.0, max -0.0 -> +0.0, boundary order over the normalised bounds, a null page."""
    leaf = _leaf(t)

    def stats(lo: float, hi: float) -> PageStats:
        bits = [int.from_bytes(struct.pack(fmt, v), "little", signed=True) for v in (lo, hi)]
        return stats_of(leaf, 5, 0, (bits[0], bits[1]), True)

    pages = [_page(leaf, 1, 1, 0, stats(-3.0, -0.0)), _page(leaf, 1, 1, 5, stats(0.0, 0.0)),
             _page(leaf, 1, 1, 10, PageStats(null_count=5, num_values=0)), _page(leaf, 1, 1, 15, stats(0.0, 2.5))]
    index = column_index(leaf, pages, 64)
    assert index is not None
    assert index.min_values == [struct.pack(fmt, -3.0), struct.pack(fmt, -0.0), b"", struct.pack(fmt, -0.0)]
    assert index.max_values == [struct.pack(fmt, 0.0), struct.pack(fmt, 0.0), b"", struct.pack(fmt, 2.5)]
    assert index.null_pages == [False, False, True, False]
    assert index.boundary_order == 1  # ASCENDING: -3 <= -0, 0 <= 0 <= 2.5 once zeros are normalised


def test_float_column_index_dropped_for_a_nan_bound() -> None:
    """A page whose max is NaN: parquet-java writes no column index for the chunk."""
    leaf = _leaf(pa.float64())
    nan_bits = int.from_bytes(struct.pack("<d", float("nan")), "little", signed=True)
    st = stats_of(leaf, 3, 0, (int.from_bytes(struct.pack("<d", 1.0), "little"), nan_bits), True)
    assert column_index(leaf, [_page(leaf, 1, 1, 0, st)], 64) is None


@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), max_size=12))
def test_boundary_order_follows_every_consecutive_pair(keys: list[tuple[int, int]]) -> None:
    """ASCENDING when each page's (min, max) is at least the one before it in both keys, else DESCENDING when at
    most, else UNORDERED (no pages, or one: ASCENDING, as parquet-java's builder says)."""
    pairs = list(zip(keys, keys[1:], strict=False))
    if all(a[0] <= b[0] and a[1] <= b[1] for a, b in pairs):
        expected = BoundaryOrder.ASCENDING
    elif all(a[0] >= b[0] and a[1] >= b[1] for a, b in pairs):
        expected = BoundaryOrder.DESCENDING
    else:
        expected = BoundaryOrder.UNORDERED
    assert _boundary_order(keys) == expected
