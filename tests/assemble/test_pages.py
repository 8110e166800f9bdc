"""Data page headers stamped a column's batch at a time (one compiled call) against the one-page writer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.assemble.pages import BATCH_HEADERS, data_page_header, stamp_headers
from gpuwrite.errors import ValueCheckError
from gpuwrite.format.page_header import data_page_v2_headers
from gpuwrite.options.model import INT_MAX
from gpuwrite.page_model import EncodedPage, PageSections, PageSpan, PageStats

SIZE = st.integers(0, 1 << 20) | st.sampled_from([0, 1, 63, 64, 127, 128, 16383, 16384, INT_MAX])


@st.composite
def pages(draw: st.DrawFn, has_crc: bool) -> EncodedPage:
    """A page with any spans, level lengths, encoding, compression and CRC (a signed i32, as pages keep it)."""
    a, rows, extra, values = draw(SIZE), draw(st.integers(0, 1 << 16)), draw(st.integers(0, 9)), draw(SIZE)
    ea = draw(SIZE)
    eb = ea + rows + extra
    va = draw(SIZE)
    vb = va + min(values, rows + extra)
    rep_len, def_len = draw(st.integers(0, 4096)), draw(st.integers(0, 4096))
    body = b"x" * draw(st.integers(0, 300))
    crc = draw(st.integers(-(1 << 31), (1 << 31) - 1)) if has_crc else None
    sections = PageSections(body, rep_len, def_len, draw(st.integers(0, 1 << 20)), draw(st.booleans()), crc)
    return EncodedPage(PageSpan(a, a + rows, ea, eb, va, vb), 0, draw(st.integers(0, 9)), sections,
                       PageStats(null_count=0, num_values=0), None, column="c")


@settings(deadline=None, max_examples=60)  # the first example may compile the batch writer (cold numba cache)
@given(st.booleans().flatmap(lambda crc: st.lists(pages(crc), min_size=0, max_size=12)))
def test_a_batch_has_the_bytes_of_one_page_at_a_time(batch: list[EncodedPage]) -> None:
    expected = [data_page_header(p) for p in batch]
    stamp_headers(batch)
    assert [bytes(p.header) for p in batch] == expected
    assert [p.size for p in batch] == [len(h) + len(p.sections.body) for p, h in zip(batch, expected, strict=True)]


def _page(values_len: int, crc: int | None = 7) -> EncodedPage:
    return EncodedPage(PageSpan(0, 10, 0, 10, 0, 10), 0, 0, PageSections(b"abc", 0, 2, values_len, True, crc),
                       PageStats(null_count=0, num_values=10), None, column="col.x")


def test_a_page_over_i32_in_a_batch_raises_the_one_page_error() -> None:
    """The batch writer refuses a value outside i32; the pages are then written one by one, and the page too
    large raises its own error naming the column."""
    batch = [_page(100) for _ in range(BATCH_HEADERS)] + [_page(INT_MAX)]
    with pytest.raises(ValueCheckError, match="column 'col.x'"):
        stamp_headers(batch)


def test_the_batch_writer_declines_values_outside_i32() -> None:
    fields = np.zeros((9, 3), dtype=np.int64)
    fields[7, 1] = 1 << 31
    assert data_page_v2_headers(fields, np.zeros(3, dtype=np.int64), False) is None
    fields[7, 1] = 5
    assert data_page_v2_headers(fields, np.full(3, 1 << 32, dtype=np.int64), True) is None
    headers = data_page_v2_headers(fields, np.full(3, 1 << 32, dtype=np.int64), False)
    assert headers is not None and len(headers) == 3


def test_mixed_checksums_in_one_batch_are_written_page_by_page() -> None:
    batch = [_page(100, crc=None if i % 2 else -5) for i in range(BATCH_HEADERS + 1)]
    expected = [data_page_header(p) for p in batch]
    stamp_headers(batch)
    assert [bytes(p.header) for p in batch] == expected
