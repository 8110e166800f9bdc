"""A chunk's statistics merged from its pages' in one pass equal their definition over the pages."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpuwrite.encode.stats import merge
from gpuwrite.page_model import PageStats


@st.composite
def _page_stats(draw: st.DrawFn) -> PageStats:
    """A page's statistics: no values, or small integer bounds with their bytes, maybe NaNs."""
    values = draw(st.integers(0, 3))
    out = PageStats(null_count=draw(st.integers(0, 3)), num_values=values)
    if values:
        lo, hi = sorted(draw(st.tuples(st.integers(-2, 2), st.integers(-2, 2))))
        out.min_key, out.max_key, out.min_bytes, out.max_bytes = lo, hi, bytes([lo + 2]), bytes([hi + 2])
        out.all_same = draw(st.booleans())
        out.nan_count = draw(st.integers(0, values))
        if out.nan_count:
            out.max_not_nan_key, out.max_not_nan_bytes = lo, bytes([lo + 2])
    return out


@given(st.lists(_page_stats(), max_size=6))
def test_merge_is_the_pages_totals_and_extremes(pages: list[PageStats]) -> None:
    """Counts summed, the first smallest min and first largest max (their keys and bytes), `all_same` only when
    every page with values says so and all share one min, NaNs summed with the largest non-NaN max."""
    out = merge(pages)
    filled = [p for p in pages if p.num_values > 0]
    assert (out.null_count, out.num_values) == (sum(p.null_count for p in pages), sum(p.num_values for p in pages))
    if not filled:
        assert (out.min_key, out.max_key, out.min_bytes, out.nan_count) == (None, None, b"", 0)
        return
    lo, hi = min(filled, key=lambda p: p.min_key), max(filled, key=lambda p: p.max_key)
    assert (out.min_key, out.min_bytes, out.max_key, out.max_bytes) == (lo.min_key, lo.min_bytes, hi.max_key,
                                                                        hi.max_bytes)
    assert out.all_same == (all(p.all_same for p in filled) and len({p.min_bytes for p in filled}) == 1)
    assert out.nan_count == sum(p.nan_count for p in filled)
    tops = [(p.max_not_nan_key, p.max_not_nan_bytes) if p.nan_count else (p.max_key, p.max_bytes)
            for p in filled if p.num_values > p.nan_count]
    if out.nan_count and tops:
        assert (out.max_not_nan_key, out.max_not_nan_bytes) == max(tops, key=lambda t: t[0])
