"""Float / double pages: statistics first, and a page without NaN takes its PLAIN bytes straight from the input
(no canonical pass, no copy unless the page keeps them raw): the same pages, byte for byte, as the per-section
path with its canonical copy."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pytest
from encoder_pages import assert_same_chunks, page_fields
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.encode import chunk as chunk_module
from gpuwrite.encode import dictionary as dictionary_module
from gpuwrite.encode.chunk import ChunkEncoder, ChunkOptions
from gpuwrite.encode.compress import compressor
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.leafdata import LeafData
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema


def _encoders(table: pa.Table, opts: WriteOptions) -> list[tuple[ChunkEncoder, LeafData]]:
    schema = FileSchema.from_arrow(table.schema, opts)
    return [(ChunkEncoder(leaf, ChunkOptions.for_leaf(leaf, opts, compressor(opts.compression))),
             leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts))) for leaf in schema.leaves]


def _table(rows: int, seed: int) -> pa.Table:
    """Doubles and floats, nullable and not: random, repeated (dictionary), and with NaNs of odd payloads,
    -0.0 and infinities in some pages only."""
    rng = np.random.default_rng(seed)
    special = rng.standard_normal(rows)
    odd_nan = np.array([0x7FF0000000000001, -1, 0x7FF8000000000000], dtype=np.int64).view(np.float64)
    at = rng.integers(rows // 2, rows, 6)
    special[at] = np.concatenate([odd_nan, [-0.0, np.inf, -np.inf]])
    mask = rng.random(rows) < 0.1
    with np.errstate(invalid="ignore"):  # NaNs narrowed to float32
        special32 = special.astype(np.float32)
    return pa.table({
        "d": pa.array(rng.standard_normal(rows)),
        "d_null": pa.array(np.cumsum(rng.standard_normal(rows)), mask=mask),
        "d_nan": pa.array(special),
        "d_nan_null": pa.array(special, mask=mask),
        "d_rep": pa.array((rng.standard_normal(20) * 100)[rng.integers(0, 20, rows)]),
        "f": pa.array(rng.standard_normal(rows).astype(np.float32)),
        "f_nan": pa.array(special32, mask=mask),
    })


@pytest.mark.parametrize("codec", ["snappy", "uncompressed", "zstd"])
@pytest.mark.parametrize("dictionary", [True, False])
def test_float_pages_equal_the_canonical_copy_path(codec: str, dictionary: bool) -> None:
    """Every page (body, sections, CRC, statistics) as the path that copies canonical bits gives it."""
    table = _table(5_000, 7)
    opts = WriteOptions(compression=codec, enable_dictionary=dictionary, page_checksum=True)
    fast, slow = _encoders(table, opts), _encoders(table, opts)
    for (enc, data), (ref, ref_data) in zip(fast, slow, strict=True):
        ref._floats = False  # the per-section path: values, then statistics, with the canonical copy
        for a, b in ((0, 1_700), (1_700, 2_500), (2_500, 5_000)):
            page, ref_page = enc.encode_page(data, a, b), ref.encode_page(ref_data, a, b)
            assert page_fields(page) == page_fields(ref_page), enc.leaf.dotted


@pytest.mark.parametrize("dictionary", [True, False])
def test_a_page_without_nan_skips_the_canonical_pass(monkeypatch: pytest.MonkeyPatch, dictionary: bool) -> None:
    """No NaN in the page: its values are neither checked nor copied as canonical bits (PLAIN values and
    dictionary keys alike)."""
    def refuse(*args: object) -> None:
        raise AssertionError("canonical pass on a page without NaN")

    monkeypatch.setattr(chunk_module, "canonical_bits", refuse)
    monkeypatch.setattr(dictionary_module, "canonical_bits", refuse)
    table = pa.table({"d": pa.array(np.linspace(-5.0, 5.0, 3_000)), "f": pa.array(np.ones(3_000, np.float32))})
    for enc, data in _encoders(table, WriteOptions(compression="snappy", enable_dictionary=dictionary)):
        page = enc.encode_page(data, 0, 3_000)
        width = 8 if enc.leaf.kind == "double" else 4
        assert page.stats.num_values == 3_000
        if dictionary:  # the values went through the dictionary's insert (kept or not)
            assert enc.dictionary is not None and enc.dictionary.size > 0
        else:
            assert page.sections.values_len == 3_000 * width


def test_uncompressed_values_are_copied_out_of_the_input() -> None:
    """A page that keeps its values raw owns them: changing the input afterwards leaves the page as it was."""
    values = np.linspace(0.0, 1.0, 2_000)
    table = pa.table({"d": values}, schema=pa.schema([pa.field("d", pa.float64(), nullable=False)]))
    [(enc, data)] = _encoders(table, WriteOptions(compression="uncompressed", enable_dictionary=False))
    data = dataclasses.replace(data, values=values)  # a window over a buffer that is used again afterwards
    page = enc.encode_page(data, 0, 2_000)
    before = bytes(page.sections.body)
    assert before == values.tobytes()
    assert np.shares_memory(data.value_array, values)  # the page read the caller's own buffer
    values[:] = 9.0
    assert bytes(page.sections.body) == before


_SPECIAL = np.array([0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF, 0x7FF8000000000000, 0x8000000000000000, 0x7FF0000000000000,
                     0xFFF0000000000000, 0], dtype=np.uint64).view(np.float64)  # NaNs, -0.0, +-inf, 0.0


def _fused_and_reference(table: pa.Table, opts: WriteOptions) -> list[tuple[ChunkEncoder, ChunkEncoder, LeafData]]:
    """Per leaf: an encoder on the one-call path (kernels/float_page), one on the per-section path, the data."""
    out = []
    for (fused, data), (ref, _) in zip(_encoders(table, opts), _encoders(table, opts), strict=True):
        assert fused._float_pages, fused.leaf.dotted  # every column here takes the one-call path
        ref._float_pages = False  # encode_levels, page_stats, then _values
        out.append((fused, ref, data))
    return out


@settings(max_examples=60, deadline=None)
@given(st.tuples(st.integers(1, 2500), st.integers(0, 2**32 - 1), st.sampled_from([1, 7, 300, 100_000]),
                 st.sampled_from([0.0, 0.05, 0.9, 1.0]), st.sampled_from([0.0, 0.001, 0.2])),
       st.tuples(st.sampled_from([64, 1024, 1 << 20]), st.lists(st.integers(1, 600), min_size=1, max_size=6),
                 st.booleans(), st.booleans(), st.sampled_from(["snappy", "uncompressed"])))
def test_one_call_pages_equal_the_per_section_pages(data_case: tuple, pages_case: tuple) -> None:
    """Floats and doubles, nullable and not, of few to many distinct values, with NaNs (odd payloads), -0.0 and
    infinities in some pages, pages with no value (all null); a dictionary limit that overflows at once,
    mid-chunk or never, PLAIN or delta fallback; pages of awkward lengths, some dropped and encoded again: the
    same pages (body, sections, CRC, statistics) and dictionary, byte for byte."""
    rows, seed, distinct, nulls, specials = data_case
    limit, cuts, drop, plain, codec = pages_case
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal(distinct) * 100)[rng.integers(0, distinct, rows)]
    at = rng.random(rows) < specials
    values[at] = _SPECIAL[rng.integers(0, len(_SPECIAL), int(at.sum()))]
    mask = rng.random(rows) < nulls if nulls else None
    with np.errstate(invalid="ignore", over="ignore"):
        narrow = values.astype(np.float32)
    table = pa.table({"d": pa.array(values), "d_null": pa.array(values, mask=mask),
                      "f": pa.array(narrow), "f_null": pa.array(narrow, mask=mask)},
                     schema=pa.schema([pa.field("d", pa.float64(), nullable=False), pa.field("d_null", pa.float64()),
                                       pa.field("f", pa.float32(), nullable=False), pa.field("f_null", pa.float32())]))
    opts = WriteOptions(dictionary_page_size=limit, compression=codec, page_checksum=True,
                        fallback_encoding="plain" if plain else "delta")
    bounds = [0]
    while bounds[-1] < rows:
        bounds.append(min(rows, bounds[-1] + cuts[len(bounds) % len(cuts)]))
    ranges = list(zip(bounds, bounds[1:], strict=False))
    for fused, ref, data in _fused_and_reference(table, opts):
        assert_same_chunks(fused, ref, data, ranges, drop)


def test_one_call_path_is_taken_by_flat_float_leaves_only() -> None:
    """Flat floats and doubles (nullable or not) take the one-call path; a float inside a list does not."""
    table = pa.table({"d": pa.array([1.0, None]), "f": pa.array([1.0, 2.0], pa.float32()),
                      "l": pa.array([[1.0], [2.0, None]])})
    flags = {enc.leaf.dotted: enc._float_pages for enc, _ in _encoders(table, WriteOptions())}
    assert flags == {"d": True, "f": True, "l.list.element": False}
