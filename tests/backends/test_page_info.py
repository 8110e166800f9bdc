"""Per-page bookkeeping steps over a window cut into pages (kernels/plan/page_layout.py twins, on the stand-in
device), against the CPU path: `encode.dictionary.Dictionary` fed page by page and the chunk's first-page
test (`kernels.fallback.keeps_dictionary` on `encode.chunk._encode_ids` sizes) for PAGE_INFO, the host
LeafData for EXTREMES, and `plain_page_of_values` / `Dictionary.plain_page` for DICT_PAGES."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from gpuwrite.kernels.encode.fallback import keeps_dictionary
from gpuwrite.kernels.encode.stats import float_nans
from gpuwrite.kernels.plan.layout import CT_DICT, CT_ENT, CT_VALUES
from gpuwrite.kernels.plan.page_layout import (
    I_BYTES,
    I_ENTRIES,
    I_KEEPS,
    I_OVERFLOWED,
    I_VALUE_BYTES,
    I_WIDTH,
)
from layout_cases import (
    FILL,
    PagedWindow,
    dictionary_page_args,
    entries_of,
    extremes_args,
    info_args,
    paged_window,
    plain_bytes,
    run_step,
    value_position,
)

from gpuwrite.backends.device import steps
from gpuwrite.backends.device.ops import Device
from gpuwrite.encode.chunk import _encode_ids
from gpuwrite.encode.dictionary import Dictionary, plain_page_of_values
from gpuwrite.encode.rules import raw_value_bytes

BYTE_KINDS = ("bytes", "flba", "int96")


def pages_of(w: PagedWindow, c: int) -> list[int]:
    """Column c's pages, in row order."""
    mine = np.flatnonzero(w.col == c)
    return mine[np.argsort(w.a[mine], kind="stable")].tolist()


def check_column_info(w: PagedWindow, c: int, info: np.ndarray, limit: int) -> Counter[str]:
    """Column c's page info against the CPU dictionary fed page by page; what was checked, counted."""
    leaf, data = w.leaves[c], w.datas[c]
    ref = Dictionary(leaf, limit) if w.cols[c, CT_DICT] else None
    seen: Counter[str] = Counter()
    overflowed = False
    for p in pages_of(w, c):
        va, vb, row = int(w.va[p]), int(w.vb[p]), info[p]
        seen["empty"] += va == vb
        nbytes = int(data.byte_offsets[vb] - data.byte_offsets[va]) if leaf.kind in BYTE_KINDS else 0
        assert row[I_VALUE_BYTES] == nbytes, (leaf.name, p)
        if ref is None:
            assert row[[I_ENTRIES, I_BYTES, I_OVERFLOWED, I_WIDTH]].tolist() == [0, 0, 0, 0], (leaf.name, p)
            assert row[I_KEEPS] == 1
            seen["plain"] += 1
            continue
        if not overflowed:
            ids, over = ref.insert(data, va, vb)
            overflowed = over >= 0
        assert row[I_OVERFLOWED] == overflowed, (leaf.name, p)
        if overflowed:  # the host falls back; the first-page test is not taken
            assert row[I_KEEPS] == 1, (leaf.name, p)
            seen["overflowed"] += 1
            seen["first overflowed"] += w.a[p] == 0
            continue
        body = _encode_ids(ids, ref.size)  # bit width byte + RLE runs of the page's ids
        assert (row[I_ENTRIES], row[I_BYTES], row[I_WIDTH]) == (ref.size, ref.byte_size, body[0]), (leaf.name, p)
        keeps = True
        if w.a[p] == 0:
            keeps = keeps_dictionary(len(body), ref.byte_size, raw_value_bytes(leaf, data, va, vb))
            seen[f"first keeps={keeps}"] += 1
            seen["first empty"] += va == vb
        assert row[I_KEEPS] == keeps, (leaf.name, p)
        seen["dictionary"] += 1
    return seen


@pytest.mark.parametrize(("seed", "rows", "limit", "distinct"), [
    (1, 1500, 1 << 20, 50), (2, 1500, 300, 50), (3, 1500, 1 << 20, 5000), (4, 1500, 64, 5000),
    (5, 40, 1 << 20, 3), (6, 800, 2000, 400), (11, 600, 10, 5000)])
def test_page_info_equals_the_cpu_dictionary_page_by_page(seed: int, rows: int, limit: int, distinct: int) -> None:
    w = paged_window(rows, seed, limit, distinct)
    (info,) = run_step(Device("standin"), steps.PAGE_INFO, len(w.col), info_args(w), [10])
    seen: Counter[str] = Counter()
    for c in range(len(w.leaves)):
        seen += check_column_info(w, c, info, limit)
    assert seen["dictionary"] + seen["overflowed"] >= 8 and seen["plain"] >= 2, seen
    assert seen["empty"] >= 1 and seen["first empty"] >= 1, seen
    if limit < 1000:
        assert seen["overflowed"] > 0, seen
    if limit < 16:  # a few entries overflow it: first pages too
        assert seen["first overflowed"] > 0, seen


def test_first_page_test_goes_both_ways() -> None:
    """Windows with few and with many distinct values: the dictionary is kept on some chunks' first page and
    dropped on others."""
    seen: Counter[str] = Counter()
    for seed, rows, distinct in ((5, 40, 3), (3, 300, 5000)):
        w = paged_window(rows, seed, 1 << 20, distinct)
        (info,) = run_step(Device("standin"), steps.PAGE_INFO, len(w.col), info_args(w), [10])
        for c in range(len(w.leaves)):
            seen += check_column_info(w, c, info, 1 << 20)
    assert seen["first keeps=True"] > 0 and seen["first keeps=False"] > 0, seen


def value_bits(w: PagedWindow, c: int, i: int) -> int:
    """Value i of fixed-width column c as raw bits, read from the host LeafData (floats as IEEE bits)."""
    values = w.datas[c].value_array
    kind = w.leaves[c].kind
    if kind == "float":
        return int(values.view(np.int32)[i])
    if kind == "double":
        return int(values.view(np.int64)[i])
    return int(values[i])


@pytest.mark.parametrize("seed", [7, 8])
def test_extremes_read_the_values_at_the_min_max_positions(seed: int) -> None:
    w = paged_window(600, seed, 1 << 20)
    args = extremes_args(w, np.random.default_rng(seed))
    imin, imax = args[2][0], args[2][1]
    (out,) = run_step(Device("standin"), steps.EXTREMES, len(w.col), args, [8])
    checked = 0
    for p in range(len(w.col)):
        c = int(w.col[p])
        leaf, data = w.leaves[c], w.datas[c]
        if imin[p] < 0:
            assert out[p].tolist() == [0, 0, 0, 0], p
            continue
        base = value_position(w, c, 0)
        lo, hi = int(imin[p]) - base, int(imax[p]) - base  # value indices within the column
        assert w.va[p] <= min(lo, hi) and max(lo, hi) < w.vb[p]
        if leaf.fixed_width:
            assert out[p, :2].tolist() == [value_bits(w, c, lo), value_bits(w, c, hi)], (leaf.name, p)
            if leaf.kind in ("float", "double"):  # NaN count and the largest non-NaN value, as the CPU finds them
                bits = data.value_array.view(np.int32 if leaf.kind == "float" else np.int64)
                nans, top = float_nans(bits, int(w.va[p]), int(w.vb[p]), leaf.kind == "float")
                assert out[p, 2] == nans and (top < 0 or out[p, 3] == bits[top]), (leaf.name, p)
        else:
            offsets, raw = data.byte_offsets, data.byte_data
            for k, v in ((0, lo), (2, hi)):
                off, length = int(out[p, k]), int(out[p, k + 1])
                assert length == offsets[v + 1] - offsets[v], (leaf.name, p)
                assert w.arenas["dat"][off:off + length].tobytes() == raw[offsets[v]:offsets[v + 1]].tobytes()
        checked += 1
    assert checked > 20


@pytest.mark.parametrize(("seed", "distinct"), [(9, 50), (10, 5000)])
def test_dictionary_pages_are_plain_pages_of_the_first_entries(seed: int, distinct: int) -> None:
    w = paged_window(1500, seed, 1 << 20, distinct)
    rng = np.random.default_rng(seed)
    totals = [entries_of(w, int(c)) for c in w.dict_columns]
    counts = np.array([rng.integers(0, t + 1) for t in totals], dtype=np.int64)
    counts[0], counts[-1] = totals[0], 0  # a whole dictionary, an empty one
    expected = []
    for k, c in enumerate(w.dict_columns.tolist()):
        leaf, data, count = w.leaves[c], w.datas[c], int(counts[k])
        base = int(w.cols[c, CT_ENT])
        page = plain_page_of_values(leaf, data, w.dictionary["efirst"][base:base + count])
        ref = Dictionary(leaf, 1 << 30)
        ref.insert(data, 0, int(w.cols[c, CT_VALUES]))
        assert ref.size == totals[k] and ref.plain_page(count) == page, leaf.name  # CPU insert, same bytes
        assert plain_bytes(w, c, count) == len(page), leaf.name  # the running bytes size the page
        expected.append(page)
    args = dictionary_page_args(w, counts, [len(e) for e in expected])
    (out,) = run_step(Device("standin"), steps.DICT_PAGES, len(counts), args, [9])
    for k, page in enumerate(expected):
        start = int(args[10][k])
        assert out[start:start + len(page)].tobytes() == page, w.leaves[int(w.dict_columns[k])].name
        assert (out[start + len(page):start + len(page) + 3] == FILL).all()
    assert sum(len(e) for e in expected) > 1000
