"""Flat INT32 / INT64 pages encoded in one compiled call (kernels/int_page) against the per-section path it
replaces (encode_levels, the dictionary's insert, _encode_ids / DELTA, page_stats): the same pages, byte for
byte, through dictionary overflow, a first page the dictionary does not pay for, and dropped pages."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
from encoder_pages import assert_same_chunks
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.encode.chunk import ChunkEncoder, ChunkOptions
from gpuwrite.encode.compress import compressor
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema


def _encoders(table: pa.Table, opts: WriteOptions, fused: bool) -> list[tuple[ChunkEncoder, object]]:
    schema = FileSchema.from_arrow(table.schema, opts)
    out = []
    for leaf in schema.leaves:
        enc = ChunkEncoder(leaf, ChunkOptions.for_leaf(leaf, opts, compressor(opts.compression)))
        assert enc._int_pages, leaf.dotted  # every column here takes the one-call path when asked to
        enc._int_pages = fused
        out.append((enc, leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts))))
    return out


@settings(max_examples=60, deadline=None)
@given(st.tuples(st.integers(1, 3000), st.integers(0, 2**32 - 1), st.sampled_from([1, 5, 300, 100_000]),
                 st.sampled_from([0.0, 0.05, 0.5]), st.booleans()),
       st.tuples(st.sampled_from([64, 1024, 1 << 20]), st.lists(st.integers(1, 700), min_size=1, max_size=8),
                 st.booleans()))
def test_one_call_pages_equal_the_per_section_pages(data_case: tuple, pages_case: tuple) -> None:
    """Columns of 1..3000 rows, few to many distinct values, with and without nulls; a dictionary limit that
    overflows at once, mid-chunk or never; pages of awkward lengths, some dropped and encoded again."""
    rows, seed, distinct, nulls, nullable = data_case
    limit, cuts, drop = pages_case
    rng = np.random.default_rng(seed)
    mask = (rng.random(rows) < nulls) if nullable and nulls else None
    table = pa.table({
        "i32": pa.array(rng.integers(-distinct, distinct, rows).astype(np.int32), mask=mask),
        "i64": pa.array(rng.integers(-distinct, distinct, rows) * 1_000_003, mask=mask),
        "day": pa.array(np.cumsum(rng.integers(0, 3, rows)).astype(np.int32), pa.date32()),
        "d": pa.array([Decimal(int(v)).scaleb(-2) for v in rng.integers(-10**6, 10**6, rows)], pa.decimal128(9, 2)),
    }, schema=pa.schema([pa.field("i32", pa.int32(), nullable), pa.field("i64", pa.int64(), nullable),
                         pa.field("day", pa.date32()), pa.field("d", pa.decimal128(9, 2))]))
    opts = WriteOptions(dictionary_page_size=limit, compression="snappy")
    bounds = [0]
    while bounds[-1] < rows:
        bounds.append(min(rows, bounds[-1] + cuts[len(bounds) % len(cuts)]))
    ranges = list(zip(bounds, bounds[1:], strict=False))
    for (fused, data), (plain, _) in zip(_encoders(table, opts, True), _encoders(table, opts, False), strict=True):
        assert_same_chunks(fused, plain, data, ranges, drop)

