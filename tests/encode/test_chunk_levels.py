"""encode/chunk: level sections; a page whose entries all hold a value gets its one-run definition levels
without the RLE encoder, with the encoder's bytes; sibling nested leaves encode their shared level sections once."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuwrite.encode.chunk as chunk_module
from gpuwrite.encode.chunk import (
    ChunkEncoder,
    ChunkOptions,
    SharedLevels,
    _rle_levels,
    _run_of,
    encode_levels,
    encoded_page,
)
from gpuwrite.encode.compress import compressor
from gpuwrite.encode.stats import level_histogram, repetition_histogram
from gpuwrite.options.model import WriteOptions
from gpuwrite.page_model import PageSections, PageSpan, PageStats
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.leafdata import LeafBuffer
from gpuwrite.pipeline.levels import LevelMemo
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COUNTS = st.integers(8, 70_000) | st.sampled_from([8, 9, 15, 16, 63, 64, 504, 505, 8191, 8192, 20_000, 65_536])


@SETTINGS
@given(st.integers(1, 8).flatmap(lambda w: st.tuples(st.just(w), st.integers(0, (1 << w) - 1))), COUNTS)
def test_run_of_equals_encoder(width_level: tuple[int, int], count: int) -> None:
    """`_run_of` gives the RLE encoder's bytes for `count` equal levels at every level width."""
    width, level = width_level
    levels = np.full(count, level, dtype=np.uint8)
    assert _run_of(level, count, width) == _rle_levels(levels, 0, count, width)


def _nulls(rng: np.random.Generator, rows: int) -> np.ndarray:
    """A few stretches of nulls, all in the first half of the rows."""
    nulls = np.zeros(rows, dtype=bool)
    for start in rng.integers(0, rows // 2, 3):
        nulls[start:min(start + int(rng.integers(1, 30)), rows // 2)] = True
    return nulls


def _table(rng: np.random.Generator, rows: int) -> pa.Table:
    """Flat and nested nullable columns (lists of 0..3, empty ones too; a struct with a nullable field) whose
    nulls lie in the first half."""
    ints = pa.array(rng.integers(-50, 50, rows), mask=_nulls(rng, rows))
    lists = pa.array([None if n else [float(x) for x in range(int(k))]
                      for n, k in zip(_nulls(rng, rows), rng.integers(0, 4, rows), strict=True)],
                     pa.list_(pa.float64()))
    inner = pa.array(rng.integers(0, 9, rows).astype(np.int32), mask=_nulls(rng, rows))
    structs = pa.StructArray.from_arrays([inner], names=["x"], mask=pa.array(_nulls(rng, rows)))
    return pa.table({"i": ints, "l": lists, "s": structs})


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(20, 300))
def test_encode_levels_equals_encoder(seed: int, rows: int) -> None:
    """Every page's level sections equal the encoder's over its levels, pages with and without nulls alike (the
    pages of the second half hold no null)."""
    rng = np.random.default_rng(seed)
    table = _table(rng, rows)
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    fast = 0
    for leaf in schema.leaves:
        data = leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts))
        cuts = sorted({0, rows // 2, rows, *rng.integers(1, rows // 2, 5).tolist()})
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            span = PageSpan.of(data, a, b)
            rep = _rle_levels(data.rep, span.ea, span.eb, leaf.rep_width) if leaf.max_rep else b""
            assert encode_levels(leaf, data, span) == (rep, _rle_levels(data.def_levels, span.ea, span.eb,
                                                                        leaf.def_width))
            fast += span.num_nulls == 0 and span.num_values >= 8
    assert fast > 0  # the one-run path was taken


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(20, 300))
def test_page_histograms_count_every_level(seed: int, rows: int) -> None:
    """A page's SizeStatistics histograms hold, per level, how many of its entries are at it: the repetition
    histogram of a single list (taken from the page's rows) and of a list of lists (counted), the definition
    histograms (counted) — each equal to np.bincount over the page's entries, at every cut of the rows."""
    rng = np.random.default_rng(seed)
    nested = pa.array([None if k % 11 == 5 else [None if (k + j) % 7 == 3 else list(range((k + j) % 3))
                                                  for j in range(int(rng.integers(0, 4)))] for k in range(rows)],
                      pa.list_(pa.list_(pa.int32())))
    table = _table(rng, rows).append_column("ll", nested)
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    seen = set()
    for leaf in schema.leaves:
        data = leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts))
        cuts = sorted({0, rows, *rng.integers(1, rows, 6).tolist()})
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            span = PageSpan.of(data, a, b)
            page = encoded_page(leaf, data, span, first_row=a, encoding=0, sections=PageSections(b"", 0, 0, 0, False, None),
                                stats=PageStats(null_count=0, num_values=0))
            if leaf.max_rep:
                want = np.bincount(data.rep[span.ea:span.eb], minlength=leaf.max_rep + 1).tolist()
                assert page.rep_histogram == want
                assert repetition_histogram(data.rep, span.ea, span.eb, span.num_rows, leaf.max_rep) == want
                seen.add(("rep", leaf.max_rep))
            if leaf.max_def > 1:
                want = np.bincount(data.def_levels[span.ea:span.eb], minlength=leaf.max_def + 1).tolist()
                assert page.def_histogram == want == level_histogram(data.def_levels, span.ea, span.eb, leaf.max_def)
                seen.add(("def", leaf.max_def))
    assert {("rep", 1), ("rep", 2)} <= seen and any(k == "def" for k, _ in seen)


def test_sibling_leaves_share_their_level_sections_with_the_same_pages(monkeypatch) -> None:
    """A list of structs whose fields hold no nulls of their own: its leaves' pages come out as each encodes
    them alone, while each page's repetition and definition sections and histograms are encoded once for all
    three (a field with nulls of its own keeps its own definition levels)."""
    rng = np.random.default_rng(3)
    rows = [None if k % 13 == 0 else [{"a": int(rng.integers(0, 50)), "b": float(j), "c": None if j == 2 else "x"}
                                      for j in range(k % 5)] for k in range(3_000)]
    item = pa.struct([("a", pa.int64()), ("b", pa.float64()), ("c", pa.string())])
    table = pa.Table.from_pylist([{"items": r} for r in rows], schema=pa.schema([("items", pa.list_(item))]))
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    memo = LevelMemo()
    datas = []
    for leaf in schema.leaves:  # as the window converts them: one memo for the column's leaves
        buffer = LeafBuffer()
        buffer.append(leaf_data(table.column(0).chunks[0], leaf, RebaseOptions.of(opts), buffer, memo))
        datas.append(buffer.view())
    ranges = [(a, min(3_000, a + 700)) for a in range(0, 3_000, 700)]

    def pages(shared: SharedLevels | None) -> list[list[tuple]]:
        out = []
        for leaf, data in zip(schema.leaves, datas, strict=True):
            encoder = ChunkEncoder(leaf, ChunkOptions.for_leaf(leaf, opts, compressor(opts.compression)))
            encoder.shared = shared
            out.append([(bytes(p.sections.body), p.sections.rep_len, p.sections.def_len, p.rep_histogram,
                         p.def_histogram, p.stats) for p in encoder.encode_pages(data, ranges)])
        return out

    alone = pages(None)
    calls: list[int] = []
    rle = chunk_module._rle_levels

    def counting(*args):
        calls.append(1)
        return rle(*args)

    monkeypatch.setattr(chunk_module, "_rle_levels", counting)
    assert pages(SharedLevels()) == alone
    # repetition sections once for the three leaves, definition sections once for a and b and once for c
    assert len(calls) == len(ranges) * 3
