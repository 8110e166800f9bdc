"""Layout tests of the compiled planner (gpuwrite.pipeline.plan, kernels/plan/schedule.py) and the row-group driver:
synthetic sizes in, page and row-group cuts out.

The expected cuts follow parquet-java's schedule worked by hand (ColumnWriteStoreBase.sizeCheck,
InternalParquetRecordWriter.checkBlockSizeReached); tests/pipeline/test_schedule.py compares the planner with the
record-at-a-time reference on random tables, and the whole-file parity tests compare the rules with
parquet-java itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from gpuwrite.kernels.plan import schedule as k
from gpuwrite.kernels.plan.level_meter import bits_emitted_size
from plan_reference import host_driver

from gpuwrite.backends.base import PageRanges
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.leafdata import LeafData
from gpuwrite.pipeline.plan import ColumnArrays, PageSchedule
from gpuwrite.pipeline.window import LeafWindow
from gpuwrite.schema import FileSchema, Leaf


def _leaves(types: Sequence[pa.DataType], opts: WriteOptions) -> tuple[Leaf, ...]:
    """The leaves of a flat schema with columns c0, c1, ... of the given types."""
    return FileSchema.from_arrow(pa.schema([(f"c{i}", t) for i, t in enumerate(types)]), opts).leaves


def _page_ends(types: Sequence[pa.DataType], window: Sequence[LeafData], opts: WriteOptions,
               rows: int) -> list[list[int]]:
    """Each column's page end rows when the page checks run up to `rows`."""
    leaves = _leaves(types, opts)
    schedule = PageSchedule(leaves, opts)
    schedule.plan(ColumnArrays.build(leaves, window), rows)
    ends: list[list[int]] = [[] for _ in window]
    batch = schedule.pages(0, schedule.events)
    for c, end in zip(batch.column.tolist(), batch.end.tolist(), strict=True):
        ends[c].append(end)
    return ends


def _longs(n: int) -> LeafData:
    """n non-null 8-byte values."""
    return LeafData(n, None, values=np.arange(n, dtype=np.int64))


def test_page_ends_follow_the_size_check_schedule() -> None:
    """8-byte values, 8000-byte pages (tolerance 800): checks at rows 100, 550, 775, 887, then 987 holds 7896
    bytes, within the tolerance, so the page ends there; each later page starts the schedule again."""
    ends = _page_ends([pa.int64()], [_longs(5000)], WriteOptions(page_size=8000), 5000)
    assert ends == [[987, 1962, 2937, 3912, 4887]]


def test_page_row_count_limit_ends_pages_exactly() -> None:
    ends = _page_ends([pa.int64()], [_longs(1000)], WriteOptions(page_row_count_limit=250), 1000)
    assert ends == [[250, 500, 750, 1000]]


def test_columns_end_pages_independently_and_share_the_schedule() -> None:
    """A 4-byte and an 8-byte column share one schedule (the next check is the nearest any column needs):
    alone, the wide column's 4th page would end at 3912; here the narrow column's checks at 3399, 3630 and
    3746 (where its own page ends) put a check at 3846, where the wide page holds 7272 bytes, within the
    800-byte tolerance."""
    window = [LeafData(5000, None, values=np.arange(5000, dtype=np.int32)), _longs(5000)]
    narrow, wide = _page_ends([pa.int32(), pa.int64()], window, WriteOptions(page_size=8000), 5000)
    assert wide == [987, 1962, 2937, 3846, 4821]
    assert narrow == [1862, 3746]


def test_booleans_count_packed_bits() -> None:
    """Booleans buffer one bit per value: 1000-byte pages hold about 7,500 values."""
    window = [LeafData(50_000, None, values=np.zeros(50_000, dtype=np.uint8))]
    assert _page_ends([pa.bool_()], window, WriteOptions(page_size=1000), 50_000) == [
        [7528, 15028, 22531, 30035, 37535, 45038]]


def _emitted(levels: np.ndarray) -> int:
    """Bytes parquet-java's RLE encoder has emitted after these 0 / 1 definition levels."""
    bits = np.zeros(-(-len(levels) // 64) * 8 + 8, dtype=np.uint8)
    packed = np.packbits(levels.astype(np.uint8), bitorder="little")
    bits[:len(packed)] = packed
    return int(bits_emitted_size(bits.view(np.uint64), 0, len(levels), np.zeros(6, dtype=np.int64)))


def test_level_meter_counts_emitted_runs_only() -> None:
    """Alternating nulls: 100 bit-packed groups of definition levels are two runs (63 + 37 groups), each with
    a header byte; a long run of present values emits nothing until it ends."""
    assert _emitted(np.tile([1, 0], 400)) == (1 + 63) + (1 + 37)
    assert _emitted(np.ones(800)) == 0


def test_block_check_schedule() -> None:
    """10,000-byte row groups: 1,000 bytes at row 100 is 10 bytes a record, so the next check is halfway to
    the estimated end ((100 + 1000) / 2 = 550); 9,990 bytes at row 550 is within two records of the limit."""
    block = np.array([100, 0, -1], dtype=np.int64)
    assert not k.block_full(1000, 100, 10_000, block)
    assert block[k.B_NEXT] == 550
    assert k.block_full(9990, 550, 10_000, block)


@dataclass
class _Page:
    """A page of a synthetic backend: its rows and size on disk."""

    a: int
    b: int
    size: int


@dataclass
class _FixedRatioEncoders:
    """A backend whose pages take `per_row` bytes a row: sizes in, cuts out."""

    per_row: int
    pages_of: list[list[_Page]] = field(default_factory=lambda: [[]])
    batches: list[list[int]] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)

    def load(self, window: Sequence[LeafData]) -> None:
        pass

    def encode(self, ranges: PageRanges, done=None) -> None:
        self.batches.append([len(r) for r in ranges])
        for c, (pages, r) in enumerate(zip(self.pages_of, ranges, strict=True)):
            pages.extend(_Page(a, b, (b - a) * self.per_row) for a, b in r)
            if done is not None and r:
                done(c)

    def chunk(self, column: int) -> list[_Page]:
        return list(self.pages_of[column])

    def pages(self, column: int) -> list[_Page]:
        return self.pages_of[column]

    def truncate(self, column: int, keep: int) -> None:
        if keep < len(self.pages_of[column]):
            self.dropped.append(len(self.pages_of[column]) - keep)
        del self.pages_of[column][keep:]

    def finish(self) -> list:
        return []


def test_row_group_ends_where_the_memory_check_fires_and_pages_past_it_are_dropped() -> None:
    """8-byte values stored at 4 bytes a row in 100,000-byte row groups: the memory check at row 24,707 sees
    the group full; the pages planned past it are dropped and the page open there ends at the cut."""
    opts = WriteOptions(page_size=8000, block_size=100_000)
    encoders = _FixedRatioEncoders(per_row=4)
    builder = host_driver(_leaves([pa.int64()], opts), opts, encoders)  # type: ignore[arg-type]
    cut = builder.advance(LeafWindow([_longs(100_000)]), 100_000, final=False)
    assert cut == 24_707
    pages = encoders.pages_of[0]
    assert [(p.a, p.b) for p in pages[-2:]] == [(23_412, 24_387), (24_387, 24_707)]
    assert all(p.b == q.a for p, q in zip(pages, pages[1:], strict=False)) and pages[0].a == 0
    assert encoders.dropped == [3]
    # first batch: a row group's worth of raw bytes (12,500 rows); then up to the estimated end; then the cut
    assert encoders.batches == [[12], [16], [1]]


def test_row_group_waits_for_more_rows_then_ends_at_the_input_end() -> None:
    opts = WriteOptions(page_size=8000, block_size=100_000)
    encoders = _FixedRatioEncoders(per_row=4)
    builder = host_driver(_leaves([pa.int64()], opts), opts, encoders)  # type: ignore[arg-type]
    window = LeafWindow([_longs(5000)])
    assert builder.advance(window, 5000, final=False) is None
    assert builder.advance(window, 5000, final=True) == 5000
    assert [p.b for p in encoders.pages_of[0]] == [987, 1962, 2937, 3912, 4887, 5000]


def test_at_the_input_end_the_last_pages_come_in_the_same_batch() -> None:
    """Planning the whole window (the GPU backend's one batch) at the end of the input: the five planned pages
    and each column's last page are encoded together, and kept when the row group ends at the input's end."""
    opts = WriteOptions(page_size=8000, block_size=100_000)
    encoders = _FixedRatioEncoders(per_row=4)
    builder = host_driver(_leaves([pa.int64()], opts), opts, encoders, whole_window=True)  # type: ignore[arg-type]
    assert builder.advance(LeafWindow([_longs(5000)]), 5000, final=True) == 5000
    assert encoders.batches == [[6]]
    assert [p.b for p in encoders.pages_of[0]] == [987, 1962, 2937, 3912, 4887, 5000]
    assert encoders.dropped == []


def test_whole_window_cut_inside_it_drops_the_last_pages_too() -> None:
    """The whole window planned at once, last pages included, but the memory check ends the row group at
    24,707: everything past it is dropped and the open page is encoded again up to the cut."""
    opts = WriteOptions(page_size=8000, block_size=100_000)
    encoders = _FixedRatioEncoders(per_row=4)
    builder = host_driver(_leaves([pa.int64()], opts), opts, encoders, whole_window=True)  # type: ignore[arg-type]
    assert builder.advance(LeafWindow([_longs(40_000)]), 40_000, final=True) == 24_707
    assert len(encoders.batches) == 2 and encoders.batches[1] == [1]
    assert [(p.a, p.b) for p in encoders.pages_of[0][-2:]] == [(23_412, 24_387), (24_387, 24_707)]


def test_the_batch_reaching_the_input_end_stages_every_chunk_in_schema_order() -> None:
    """With `stage` set, only the batch that reaches the end of the input hands over chunks: every column once,
    in schema order, each with its pages as they stand."""
    opts = WriteOptions(page_size=8000, block_size=10_000_000)
    encoders = _FixedRatioEncoders(per_row=4)
    encoders.pages_of = [[], []]
    builder = host_driver(_leaves([pa.int64(), pa.int64()], opts), opts, encoders)  # type: ignore[arg-type]
    staged: list[tuple[int, int]] = []
    builder.stage = lambda column, chunk: staged.append((column, len(chunk)))
    window = LeafWindow([_longs(3000), _longs(3000)])
    assert builder.advance(window, 2000, final=False) is None
    assert staged == []  # more rows may come: nothing is staged
    assert builder.advance(window, 3000, final=True) == 3000
    assert [c for c, _ in staged] == [0, 1]
    assert [n for _, n in staged] == [len(encoders.pages_of[0]), len(encoders.pages_of[1])]


def test_equal_index_parts_are_stored_once() -> None:
    """Sibling leaves of a repeated group share row entries and value counts: ColumnArrays keeps one copy,
    and each column's descriptor points at it; unequal parts (even with the same probe) stay apart."""
    from gpuwrite.pipeline.columns import leaf_data
    from gpuwrite.pipeline.plan import _Parts
    from gpuwrite.pipeline.rebase import RebaseOptions

    parts = _Parts(np.int64)
    a = np.array([0, 2, 5, 9], dtype=np.int64)
    assert parts.put(a) == 0
    assert parts.put(a.copy()) == 0  # equal content, another array
    b = np.array([0, 3, 5, 9], dtype=np.int64)  # same length, first, middle and last element as `a`
    assert parts.put(b) == 4
    assert parts.put(np.array([0, 2, 5], dtype=np.int64)) == 8
    joined = parts.join()
    assert joined[:11].tolist() == [0, 2, 5, 9, 0, 3, 5, 9, 0, 2, 5]

    typ = pa.list_(pa.struct([("x", pa.int64()), ("y", pa.int64())]))
    table = pa.table({"l": pa.array([[{"x": 1, "y": 2}], [], None, [{"x": 3, "y": 4}] * 3], type=typ)})
    opts = WriteOptions()
    leaves = FileSchema.from_arrow(table.schema, opts).leaves
    datas = [leaf_data(table.column(0).chunks[0], leaf, RebaseOptions.of(opts)) for leaf in leaves]
    cols = ColumnArrays.build(leaves, datas)
    assert cols.desc[0, k.D_ENTRY] == cols.desc[1, k.D_ENTRY]
    assert cols.desc[0, k.D_VBEFORE] == cols.desc[1, k.D_VBEFORE]
    data = datas[1]
    assert data.row_entry is not None and data.values_before is not None
    entry, vbefore = int(cols.desc[1, k.D_ENTRY]), int(cols.desc[1, k.D_VBEFORE])
    assert cols.index[entry:entry + len(data.row_entry)].tolist() == data.row_entry.tolist()
    assert cols.index[vbefore:vbefore + len(data.values_before)].tolist() == data.values_before.tolist()


def test_a_row_group_in_steps_lays_its_window_out_in_one_slab(tmp_path, monkeypatch) -> None:
    """The planner's layout, rebuilt as the window grows step by step, is cut each time from the one slab sized
    for the whole row group (issue 31: a first write took a new, larger slab per step, and a warm write two
    of them again, the smaller ones having been released); the file is the one a single step writes."""
    import gpuwrite
    from gpuwrite.pipeline import buffers, plan

    monkeypatch.setattr(buffers, "MIN_BYTES", 1 << 14)  # the layout of a small table comes from slabs too
    monkeypatch.setattr(buffers, "_SLABS", buffers.Slabs())
    slabs: dict[int, int] = {}
    join = plan._Parts.join

    def recorded(self: plan._Parts, *args: float) -> np.ndarray:
        out = join(self, *args)
        if out.base is not None:
            slabs[id(out.base)] = slabs.get(id(out.base), 0) + 1
        return out

    monkeypatch.setattr(plan._Parts, "join", recorded)
    rng = np.random.default_rng(8)
    rows = 400_000
    table = pa.table({f"c{i}": pa.array(rng.integers(0, 1000, rows).astype(np.int32), mask=rng.random(rows) < 0.05)
                      for i in range(4)})
    stepped = tmp_path / "stepped.parquet"
    with gpuwrite.ParquetWriter(str(stepped), table.schema, device="cpu") as writer:
        writer._window.convert_bytes = table.nbytes // 5  # type: ignore[union-attr]
        writer.write(table)
    try:
        assert sum(slabs.values()) >= 4  # laid out at each of the steps
        assert len(slabs) == 1
        whole = tmp_path / "whole.parquet"
        gpuwrite.write_table(table, str(whole), device="cpu")
        assert stepped.read_bytes() == whole.read_bytes()
    finally:
        buffers._SLABS.release()
