"""The compiled planner (gpuwrite.pipeline.plan, kernels/plan/schedule.py) and the shared row-group driver
(backends.rowgroup.PlannedRowGroup over backends.host_steps) decide exactly what parquet-java's record-at-a-time
order decides (tests/plan_reference.py): the same page checks and page ends, the same row-group cuts, the same bytes.

Random tables (nulls, booleans, ints, doubles, strings, decimals, INT96, lists and structs), random page and
block settings, windows growing as the writer grows them, driven with real chunk encoders or with stand-in
encoders of arbitrary page sizes; the driver planning ahead in steps (CPU) or the whole window at once (GPU).
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from gpuwrite.kernels.plan import schedule as k
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_reference import BlockCheck, ListEncoders, OnLeafData, PagePlanner, RowGroupBuilder, host_driver

from gpuwrite.encode.chunk import ChunkEncoder, ChunkOptions
from gpuwrite.encode.compress import compressor
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.leafdata import LeafData
from gpuwrite.pipeline.plan import BlockReplay, ColumnArrays, PageSchedule
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema, Leaf

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- random tables ---------------------------------------------------------------------------------------


def _nulls(rng: np.random.Generator, n: int, share: float) -> np.ndarray | None:
    """A null mask (None without nulls)."""
    if share == 0:
        return None
    return rng.random(n) < share


def _column(rng: np.random.Generator, kind: str, n: int, share: float) -> tuple[pa.Field, pa.Array]:
    """One random column of `kind` with about `share` nulls."""
    mask = _nulls(rng, n, share)
    small = int(rng.integers(1, 50))
    if kind == "bool":
        return pa.field(kind, pa.bool_()), pa.array(rng.random(n) < 0.3, mask=mask)
    if kind == "int32":
        return pa.field(kind, pa.int32()), pa.array(rng.integers(0, small, n).astype(np.int32), mask=mask)
    if kind == "int64":
        return pa.field(kind, pa.int64(), nullable=mask is not None), pa.array(rng.integers(-2**40, 2**40, n),
                                                                               mask=mask)
    if kind == "double":
        return pa.field(kind, pa.float64()), pa.array(rng.normal(size=n), mask=mask)
    if kind == "string":
        lengths = rng.integers(0, 30, n) * (rng.random(n) < 0.9) + (rng.random(n) < 0.02) * 400
        words = ["x" * int(m) + str(int(v)) for m, v in zip(lengths, rng.integers(0, small, n), strict=True)]
        return pa.field(kind, pa.string()), pa.array(words, pa.string(), mask=mask)
    if kind.startswith("dec"):
        precision = {"dec7": 7, "dec18": 18, "dec25": 25}[kind]
        values = [decimal.Decimal(int(v)).scaleb(-2) for v in rng.integers(-10**6, 10**6, n)]
        return pa.field(kind, pa.decimal128(precision, 2)), pa.array(values, pa.decimal128(precision, 2), mask=mask)
    if kind == "ts":
        micros = rng.integers(0, 10**15, n)
        return pa.field(kind, pa.timestamp("us", tz="UTC")), pa.array(micros, pa.timestamp("us", tz="UTC"),
                                                                     mask=mask)
    if kind == "list_int":
        return pa.field(kind, pa.list_(pa.int32())), _lists(rng, pa.array(rng.integers(0, small, 4 * n + 1)
                                                                           .astype(np.int32)), n, share)
    if kind == "list_str":
        words = pa.array(["w" * int(m) for m in rng.integers(0, 12, 4 * n + 1)], pa.string())
        return pa.field(kind, pa.list_(pa.string())), _lists(rng, words, n, share)
    if kind == "struct":
        inner = pa.StructArray.from_arrays(
            [pa.array(rng.integers(0, small, n).astype(np.int32), mask=_nulls(rng, n, share)),
             pa.array([str(v) for v in rng.integers(0, 1000, n)], pa.string(), mask=_nulls(rng, n, share))],
            names=["x", "s"], mask=pa.array(mask) if mask is not None else None)
        return pa.field(kind, inner.type), inner
    assert kind == "list_list"
    inner = _lists(rng, pa.array(rng.integers(0, small, 16 * n + 1), pa.int64(), mask=_nulls(rng, 16 * n + 1, share)),
                   4 * n, share)
    return pa.field(kind, pa.list_(pa.list_(pa.int64()))), _lists(rng, inner, n, share)


def _lists(rng: np.random.Generator, values: pa.Array, n: int, share: float) -> pa.Array:
    """n lists of 0..6 elements over `values` (taken in order), some null."""
    sizes = rng.integers(0, 7, n) * (rng.random(n) < 0.8)
    sizes = np.minimum(np.cumsum(sizes), len(values))
    offsets = np.concatenate(([0], sizes)).astype(np.int32)
    mask = _nulls(rng, n, share)
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(mask) if mask is not None else None)


KINDS = ["bool", "int32", "int64", "double", "string", "dec7", "dec18", "dec25", "ts", "list_int", "list_str",
         "struct", "list_list"]


@dataclass
class Case:
    """A random table with the settings to write it."""

    table: pa.Table
    opts: WriteOptions
    step: int  # rows each window grows by

    @property
    def leaves(self) -> list[Leaf]:
        """The table's Parquet leaves."""
        return list(FileSchema.from_arrow(self.table.schema, self.opts).leaves)


@st.composite
def cases(draw: st.DrawFn, max_rows: int = 3000, max_columns: int = 6) -> Case:
    """Random tables and settings: tiny to large pages, row/value limits, block sizes cutting row groups."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    rows = draw(st.integers(1, max_rows))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=max_columns))
    fields, arrays = [], []
    for i, kind in enumerate(kinds):
        share = draw(st.sampled_from([0.0, 0.0, 0.02, 0.3, 1.0]))
        field, arr = _column(rng, kind, rows, share)
        fields.append(field.with_name(f"{kind}_{i}"))
        arrays.append(arr)
    check_min = draw(st.sampled_from([1, 3, 10, 50, 100]))
    opts = WriteOptions(
        compression=draw(st.sampled_from(["uncompressed", "snappy", "zstd"])),
        page_size=draw(st.sampled_from([1, 9, 64, 300, 700, 2000, 5000, 8192, 30_000, 1 << 20])),
        page_row_count_limit=draw(st.sampled_from([1, 7, 120, 1000, 20_000])),
        page_value_count_threshold=draw(st.sampled_from([5, 300, (2**31 - 1) // 2])),
        page_size_check_min=check_min,
        page_size_check_max=draw(st.sampled_from([check_min, 500, 10_000])),
        page_size_check_estimate=draw(st.booleans()),
        block_size=draw(st.sampled_from([1, 500, 5000, 40_000, 1 << 20, 128 << 20])),
        block_row_count_limit=draw(st.sampled_from([2**31 - 1, 2**31 - 1, 150, 999])),
        dictionary_page_size=draw(st.sampled_from([64, 1 << 20])),
    )
    step = draw(st.sampled_from([rows, 1, 97, 1024]))
    if step == 1 and rows > 400:
        step = 13  # growing a window row by row costs rows squared
    return Case(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), opts, step)


# -- drivers ---------------------------------------------------------------------------------------------


def _window(case: Case, leaves: Sequence[Leaf], first: int, rows: int) -> list[LeafData]:
    """LeafData of rows first..first+rows of the table, as the writer converts a window."""
    part = case.table.slice(first, rows)
    return [leaf_data(part.column(leaf.index), leaf, RebaseOptions.of(case.opts)) for leaf in leaves]


def drive(case: Case, make: Callable[[list[Leaf]], Any]) -> list[tuple[int, Any]]:
    """Write the table as writer.py does (windows growing by case.step, concatenated): (rows, chunks) per
    row group."""
    leaves = case.leaves
    out = []
    first, total = 0, case.table.num_rows
    while first < total:
        builder = make(leaves)
        datas: list[LeafData] | None = None
        rows = 0
        while True:
            want = min(rows + case.step, total - first)
            fresh = _window(case, leaves, first + rows, want - rows)
            datas = fresh if datas is None else [LeafData.concat([a, b]) for a, b in zip(datas, fresh, strict=True)]
            rows = want
            cut = builder.advance(datas, rows, first + rows == total)
            if cut is not None:
                break
        out.append((cut, builder.finish()))
        first += cut
    return out


def _encoders(leaves: Sequence[Leaf], opts: WriteOptions) -> list[ChunkEncoder]:
    """Fresh chunk encoders, as the CPU backend makes them."""
    compress = compressor(opts.compression, opts.compression_level)
    return [ChunkEncoder(leaf, ChunkOptions.for_leaf(leaf, opts, compress)) for leaf in leaves]


def planned(encoders: list[Any], opts: WriteOptions, leaves: Sequence[Leaf],
            whole_window: bool = False) -> Any:
    """The shared row-group driver over host steps with these encoders (the CPU's horizon, or the whole window
    as the GPU backend plans it)."""
    return OnLeafData(host_driver(leaves, opts, ListEncoders(encoders), whole_window))


@dataclass
class FakePage:
    """A page of a made-up stored size."""

    column: int
    start: int
    end: int

    @property
    def size(self) -> int:
        """Some size that depends on the page (and grows with its rows)."""
        return (self.start * 2654435761 + self.end * 40503 + self.column * 97) % 997 + 3 * (self.end - self.start)


class FakeEncoder:
    """Stands in for a ChunkEncoder: records the pages asked for, of FakePage sizes."""

    def __init__(self, column: int) -> None:
        self.column = column
        self.pages: list[FakePage] = []

    def encode_page(self, data: LeafData, a: int, b: int) -> FakePage:
        """Record page a..b."""
        assert self.pages[-1].end == a if self.pages else a == 0
        self.pages.append(FakePage(self.column, a, b))
        return self.pages[-1]

    def truncate(self, keep: int) -> None:
        """Forget the pages after the first `keep`."""
        del self.pages[keep:]

    def finish(self) -> list[tuple[int, int]]:
        """The pages' row ranges."""
        return [(p.start, p.end) for p in self.pages]


def _fakes(leaves: Sequence[Leaf]) -> list[Any]:
    return [FakeEncoder(c) for c in range(len(leaves))]


def _chunk_bytes(chunks: list[Any]) -> list[Any]:
    """Everything a chunk writes: dictionary page and data pages, byte for byte, with their rows."""
    return [(c.dictionary, [(p.first_row, p.num_rows, bytes(p.header), bytes(p.body)) for p in c.pages])
            for c in chunks]


# -- tests -----------------------------------------------------------------------------------------------


@SETTINGS
@given(cases(max_rows=1500, max_columns=5))
def test_builder_writes_what_the_python_planner_writes(case: Case) -> None:
    """Row groups, pages and their bytes: the driver equals parquet-java's record order."""
    opts = case.opts
    python = drive(case, lambda leaves: RowGroupBuilder(leaves, _encoders(leaves, opts), opts))
    compiled = drive(case, lambda leaves: planned(_encoders(leaves, opts), opts, leaves))
    assert [rows for rows, _ in compiled] == [rows for rows, _ in python]
    for (_, a), (_, b) in zip(compiled, python, strict=True):
        assert _chunk_bytes(a) == _chunk_bytes(b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(max_rows=6000, max_columns=8), st.booleans())
def test_cuts_and_pages_for_any_page_sizes(case: Case, whole_window: bool) -> None:
    """With stand-in pages of arbitrary sizes (more rows, many cuts): the same pages kept, the same cuts."""
    opts = case.opts
    python = drive(case, lambda leaves: RowGroupBuilder(leaves, _fakes(leaves), opts))
    compiled = drive(case, lambda leaves: planned(_fakes(leaves), opts, leaves, whole_window))
    assert compiled == python


def _python_checks(leaves: Sequence[Leaf], datas: Sequence[LeafData], opts: WriteOptions,
                   horizon: int) -> list[tuple[int, list[int]]]:
    """plan.PagePlanner's checks up to horizon: (row, columns whose page ends there)."""
    planner = PagePlanner(leaves, opts)
    out = []
    while planner.next_page_check <= horizon:
        row = planner.next_page_check
        flush = planner.size_check(datas, row)
        for c in flush:
            planner.close(c, row)
        out.append((row, flush))
    return out


@SETTINGS
@given(cases(max_rows=6000, max_columns=8), st.lists(st.integers(0, 6000), max_size=5))
def test_page_checks_equal_the_python_planner(case: Case, horizons: list[int]) -> None:
    """Every check row and the columns it ends, planned in pieces up to random horizons."""
    leaves = case.leaves
    datas = _window(case, leaves, 0, case.table.num_rows)
    n = case.table.num_rows
    schedule = PageSchedule(leaves, case.opts, capacity=1)
    cols = ColumnArrays.build(leaves, datas)
    for h in [*sorted(min(h, n) for h in horizons), n]:
        schedule.plan(cols, h)
        assert schedule.next_page_check > h
    got = [(int(schedule.event_rows[e]), schedule.flush_columns[schedule.flush_range(e)].tolist())
           for e in range(schedule.events)]
    assert got == _python_checks(leaves, datas, case.opts, n)
    starts = dict.fromkeys(range(len(leaves)), 0)
    counts = dict.fromkeys(range(len(leaves)), 0)
    batch = schedule.pages(0, schedule.events)
    for c, a, b, ordinal in zip(batch.column.tolist(), batch.start.tolist(), batch.end.tolist(),
                                batch.ordinal.tolist(), strict=True):
        assert a == starts[c] < b  # each column's pages follow one another
        assert ordinal == counts[c]
        starts[c] = b
        counts[c] += 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("check_min", [1, 100])
def test_page_checks_near_every_threshold(kind: str, check_min: int) -> None:
    """Page sizes swept from a few rows' to many rows' worth of bytes, with nulls: decisions at the tolerance
    edge depend on every byte of the measured sizes (levels included)."""
    rng = np.random.default_rng(sum(map(ord, kind)) + check_min)
    field, arr = _column(rng, kind, 4000, 0.05)
    table = pa.Table.from_arrays([arr], schema=pa.schema([field]))
    for page_size in np.unique(np.geomspace(40, 40_000, 25).astype(int)).tolist():
        opts = WriteOptions(page_size=int(page_size), page_size_check_min=check_min, page_row_count_limit=3000)
        case = Case(table, opts, 4000)
        leaves = case.leaves
        datas = _window(case, leaves, 0, 4000)
        schedule = PageSchedule(leaves, opts)
        schedule.plan(ColumnArrays.build(leaves, datas), 4000)
        got = [(int(schedule.event_rows[e]), schedule.flush_columns[schedule.flush_range(e)].tolist())
               for e in range(schedule.events)]
        assert got == _python_checks(leaves, datas, opts, 4000), page_size


@SETTINGS
@given(cases(max_rows=6000, max_columns=8), st.booleans())
def test_replay_over_a_planned_window(case: Case, final: bool) -> None:
    """The GPU backend's order: plan the whole window, size every planned page, replay; the cut, the kept
    pages and the pages open at the cut are what plan.RowGroupBuilder writes in the first row group."""
    leaves = case.leaves
    n = case.table.num_rows
    datas = _window(case, leaves, 0, n)
    opts = case.opts
    reference = RowGroupBuilder(leaves, _fakes(leaves), opts)
    cut = reference.advance(datas, n, final)
    schedule = PageSchedule(leaves, opts)
    replay = BlockReplay(schedule)
    cols = ColumnArrays.build(leaves, datas)
    events = schedule.plan(cols, min(n, opts.block_row_count_limit))
    batch = schedule.pages(0, events)
    sizes = np.array([FakePage(c, a, b).size for c, a, b in zip(batch.column, batch.start, batch.end,
                                                                 strict=True)], dtype=np.int64)
    replay.set_sizes(events, sizes)
    status = replay.advance(cols, n, final)
    if cut is None:
        assert status == k.REPLAY_NOT_YET
        return
    assert status == k.REPLAY_CUT and replay.cut == cut
    kept = replay.kept_pages()
    pages: dict[int, list[tuple[int, int]]] = {c: [] for c in range(len(leaves))}
    for j in range(int(schedule.ev_end[replay.applied - 1]) if replay.applied else 0):
        pages[int(batch.column[j])].append((int(batch.start[j]), int(batch.end[j])))
    assert [len(pages[c]) for c in pages] == kept.tolist()
    for c, start in replay.open_pages():
        pages[c].append((start, cut))
    assert [pages[c] for c in pages] == reference.finish()


@st.composite
def memory_checks(draw: st.DrawFn) -> tuple[int, int, int]:
    """(mem, row, block_size): anywhere, or where the float32 estimate of the rows that fit decides the next
    check (it fits about `row` more rows), or where the Java long sum wraps."""
    how = draw(st.sampled_from(["any", "edge", "edge", "wrap"]))
    if how == "any":
        return draw(st.integers(0, 2**62)), draw(st.integers(1, 2**40)), draw(st.integers(1, 2**63 - 1))
    row = draw(st.integers(1, 2**33))
    record = draw(st.integers(1, 2**24)) if how == "edge" else draw(st.integers(0, 3))
    mem = record * row + draw(st.integers(0, row - 1))
    if how == "wrap":
        return mem, row, draw(st.integers(2**63 - 2**40, 2**63 - 1))  # float32 rounds the top 2**38 up
    fit = row + draw(st.integers(-30_000, 30_000))
    return mem, row, max(1, min(2**63 - 1, record * (row + fit) + draw(st.integers(0, record))))


@settings(max_examples=500, deadline=None)
@given(memory_checks())
def test_block_check_equals_python(check: tuple[int, int, int]) -> None:
    """One memory check (float32 estimate, long wrap-around) at any sizes: BlockCheck.full's answer and next
    check."""
    mem, row, block_size = check
    opts = WriteOptions(block_size=block_size)
    reference = BlockCheck(opts)
    block = np.array([100, 0, -1], dtype=np.int64)
    assert k.block_full(mem, row, block_size, block) == reference.full(mem, row)
    if not reference.full(mem, row):
        assert int(block[k.B_NEXT]) == reference.next_mem_check


@pytest.mark.parametrize("step", [1, 7, 30])
def test_window_gains_its_first_null(step: int) -> None:
    """An optional column whose first windows hold no nulls: its levels (all ones so far) still feed its level
    encoder, whose state decides the bytes once nulls come."""
    rng = np.random.default_rng(step)
    values = rng.integers(0, 1000, 300)
    mask = np.zeros(300, dtype=bool)
    mask[40:] = rng.random(260) < 0.3
    table = pa.table({"x": pa.array(values, pa.int64(), mask=mask)})
    for block_size in (1, 1 << 20):
        opts = WriteOptions(page_size=64, page_size_check_min=1, page_size_check_estimate=False,
                            block_size=block_size)
        case = Case(table, opts, step)
        python = drive(case, lambda leaves, o=opts: RowGroupBuilder(leaves, _fakes(leaves), o))
        compiled = drive(case, lambda leaves, o=opts: planned(_fakes(leaves), o, leaves))
        assert compiled == python


@pytest.mark.parametrize("estimate", [True, False])
def test_store_sales_shape(estimate: bool) -> None:
    """A store_sales slice with its defaults but small blocks: several row groups, every page where the
    Python planner puts it."""
    from gpuwrite.tools.demo_data import store_sales_table

    table = store_sales_table(60_000)
    opts = WriteOptions(block_size=600_000, page_size=64 << 10, page_size_check_estimate=estimate)
    case = Case(table, opts, 16_384)
    python = drive(case, lambda leaves: RowGroupBuilder(leaves, _fakes(leaves), opts))
    compiled = drive(case, lambda leaves: planned(_fakes(leaves), opts, leaves))
    assert len(python) > 2
    assert compiled == python
