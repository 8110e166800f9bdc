"""Time the page / row-group planning of a store_sales-shaped table: the record-at-a-time Python reference
(tests/plan_reference.py) vs the compiled planner (gpuwrite.pipeline.plan) in the shared row-group driver.

One untimed pass writes the table with real chunk encoders (the reference RowGroupBuilder, windows as the writer
drives them:
windows of rows converted ahead, grown when no row group ends inside), recording every window, every advance
call and every page's stored size. The timed passes repeat exactly those advance calls with stand-in encoders
that return the recorded sizes, so they time the planning and the memory-check replay only (no conversion, no
encoding): each builder asks for the very same pages (checked). Also timed: the page checks alone, and the GPU
backend's order (plan the whole window, then replay the memory checks over the sizes; a copy of
backends/device/builder.py's loop against BlockReplay), same cuts checked. Reports the median of --repeats
runs.

    .venv/bin/python bench/schedule_bench.py                    # 2,880,404 rows (TPC-DS SF1 store_sales)
    .venv/bin/python bench/schedule_bench.py --rows 300000 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from plan_reference import (  # noqa: E402
    BlockCheck,
    LevelMeter,
    ListEncoders,
    OnLeafData,
    PagePlanner,
    RowGroupBuilder,
    host_driver,
)

from gpuwrite.assemble.pages import stamp_headers  # noqa: E402
from gpuwrite.encode.chunk import ChunkEncoder, ChunkOptions  # noqa: E402
from gpuwrite.encode.compress import compressor  # noqa: E402
from gpuwrite.encode.rules import raw_value_bytes  # noqa: E402
from gpuwrite.options.model import WriteOptions  # noqa: E402
from gpuwrite.pipeline.columns import leaf_data  # noqa: E402
from gpuwrite.pipeline.leafdata import LeafData  # noqa: E402
from gpuwrite.pipeline.plan import CUT, BlockReplay, ColumnArrays, PageSchedule  # noqa: E402
from gpuwrite.pipeline.rebase import RebaseOptions  # noqa: E402
from gpuwrite.schema import FileSchema, Leaf  # noqa: E402
from gpuwrite.tools.demo_data import DEMO_ROWS, store_sales_table  # noqa: E402

CPU = False  # time in process CPU seconds (--cpu-time)


@dataclass
class Call:
    """One advance call of the recorded write."""

    group: int
    datas: list[LeafData]
    available: int
    final: bool


class Recorder:
    """A real chunk encoder that remembers each page's stored size."""

    def __init__(self, encoder: ChunkEncoder, sizes: dict[tuple[int, int], int]) -> None:
        self.encoder = encoder
        self.sizes = sizes

    def encode_page(self, data: LeafData, a: int, b: int) -> Any:
        """Encode and record."""
        page = self.encoder.encode_page(data, a, b)
        stamp_headers([page])
        self.sizes[(a, b)] = page.size
        return page

    def finish(self) -> Any:
        """The real chunk."""
        return self.encoder.finish()


@dataclass
class Sized:
    """A page of a recorded size."""

    size: int


class Replayer:
    """Stands in for a chunk encoder: returns the recorded size of each page asked for."""

    def __init__(self, sizes: dict[tuple[int, int], int]) -> None:
        self.sizes = sizes
        self.asked: list[tuple[int, int]] = []
        self.pages: list[Sized] = []

    def encode_page(self, data: LeafData, a: int, b: int) -> Sized:
        """The page's recorded size."""
        self.asked.append((a, b))
        # a last page encoded ahead at the input's end, where the row group then ends before it, was never
        # encoded by the reference: it is dropped at the cut, and its size decides nothing
        self.pages.append(Sized(self.sizes.get((a, b), 0)))
        return self.pages[-1]

    def truncate(self, keep: int) -> None:
        """Forget the pages after the first `keep` (the row group ended before them)."""
        del self.asked[keep:], self.pages[keep:]

    def finish(self) -> list[tuple[int, int]]:
        """The pages asked for."""
        return self.asked


def _convert(table: pa.Table, leaves: Sequence[Leaf], opts: WriteOptions, first: int, rows: int) -> list[LeafData]:
    """A window's LeafData, as writer.py converts it."""
    part = table.slice(first, rows)
    return [leaf_data(part.column(leaf.index), leaf, RebaseOptions.of(opts)) for leaf in leaves]


def record(table: pa.Table, opts: WriteOptions) -> tuple[list[Leaf], list[Call], list[list[dict]]]:
    """Write once with real encoders as writer.py drives them; the advance calls and page sizes."""
    leaves = list(FileSchema.from_arrow(table.schema, opts).leaves)
    calls: list[Call] = []
    sizes: list[list[dict]] = []
    first, total, last = 0, table.num_rows, 0
    per_row = max(1, table.nbytes // max(1, total))
    while first < total:
        group_sizes: list[dict] = [{} for _ in leaves]
        compress = compressor(opts.compression, opts.compression_level)
        encoders = [Recorder(ChunkEncoder(leaf, ChunkOptions.for_leaf(leaf, opts, compress)), s)
                    for leaf, s in zip(leaves, group_sizes, strict=True)]
        builder = RowGroupBuilder(leaves, encoders, opts)  # type: ignore[arg-type]
        # writer._initial_target
        target = (max(1024, last * 5 // 4) if last else
                  max(opts.page_row_count_limit, 8 * opts.block_size // per_row, 1024))
        while True:
            want = min(target, total - first)
            datas = _convert(table, leaves, opts, first, want)
            final = first + want == total
            calls.append(Call(len(sizes), datas, want, final))
            cut = builder.advance(datas, want, final)
            if cut is not None:
                break
            target *= 2
        sizes.append(group_sizes)
        first += cut
        last = cut
    return leaves, calls, sizes


def run(make: Callable[[list[Leaf], list[Any]], Any], leaves: list[Leaf], calls: list[Call],
        sizes: list[list[dict]]) -> tuple[float, list[Any]]:
    """Seconds to repeat the recorded advance calls with builder `make`; the pages each group asked for."""
    out = []
    builder = None
    group = -1
    start = time.process_time() if CPU else time.perf_counter()
    for call in calls:
        if call.group != group:
            if builder is not None:
                out.append(builder.finish())
            group = call.group
            builder = make(leaves, [Replayer(s) for s in sizes[group]])
        builder.advance(call.datas, call.available, call.final)
    seconds = (time.process_time() if CPU else time.perf_counter()) - start
    assert builder is not None
    out.append(builder.finish())
    return seconds, out


def planning_only(compiled: bool, leaves: list[Leaf], calls: list[Call], opts: WriteOptions,
                  cuts: list[int]) -> float:
    """Seconds for the page checks alone up to each row group's cut (last window of each group)."""
    last = {call.group: call for call in calls}
    start = time.process_time() if CPU else time.perf_counter()
    for group, call in last.items():
        if compiled:
            schedule = PageSchedule(leaves, opts)
            schedule.plan(ColumnArrays.build(leaves, call.datas), cuts[group])
        else:
            planner = PagePlanner(leaves, opts)
            while planner.next_page_check <= cuts[group]:
                row = planner.next_page_check
                for c in planner.size_check(call.datas, row):
                    planner.close(c, row)
    return (time.process_time() if CPU else time.perf_counter()) - start


def _python_device_flow(leaves: list[Leaf], call: Call, opts: WriteOptions, sizes: list[dict]) -> int | None:
    """The GPU backend's order in Python (backends/device/builder.py): plan the window's page checks with
    plan.PagePlanner, then replay the memory checks over the pages' sizes with plan.BlockCheck and fresh level
    meters."""
    datas, available = call.datas, call.available
    limit = opts.block_row_count_limit
    planner = PagePlanner(leaves, opts)
    events = []
    while planner.next_page_check <= min(available, limit):
        row = planner.next_page_check
        flush = planner.size_check(datas, row)
        events.append((row, [(c, planner.page_start[c]) for c in flush]))
        for c in flush:
            planner.close(c, row)
    blocks = BlockCheck(opts)
    produced, start = [0] * len(leaves), [0] * len(leaves)
    meters = [LevelMeter(leaf) for leaf in leaves]
    k = 0
    while True:
        page_check = events[k][0] if k < len(events) else planner.next_page_check
        row = min(page_check, blocks.next_mem_check, limit)
        if row > available:
            return available if call.final and available > 0 else None
        if k < len(events) and row == page_check:
            for c, a in events[k][1]:
                produced[c] += sizes[c].get((a, row), 0)  # pages past the cut were never encoded
                start[c] = row
                meters[c].reset(row)
            k += 1
        if row >= limit or row == blocks.next_mem_check and blocks.full(sum(
                produced[c] + meters[c].bytes_until(d, row) + raw_value_bytes(
                    leaf, d, int(d.value_index(start[c])), int(d.value_index(row)))
                for c, (leaf, d) in enumerate(zip(leaves, datas, strict=True))), row):
            return row


def _compiled_device_flow(leaves: list[Leaf], call: Call, opts: WriteOptions, sizes: list[dict]) -> int | None:
    """The same with gpuwrite.schedule: PageSchedule.plan, every planned page's size, BlockReplay.advance."""
    cols = ColumnArrays.build(leaves, call.datas)
    schedule = PageSchedule(leaves, opts)
    events = schedule.plan(cols, min(call.available, opts.block_row_count_limit))
    batch = schedule.pages(0, events)
    replay = BlockReplay(schedule)
    replay.set_sizes(events, np.array([sizes[c].get((a, b), 0) for c, a, b in zip(
        batch.column.tolist(), batch.start.tolist(), batch.end.tolist(), strict=True)], dtype=np.int64))
    return replay.cut if replay.advance(cols, call.available, call.final) == CUT else None


def device_flow(compiled: bool, leaves: list[Leaf], calls: list[Call], opts: WriteOptions,
                sizes: list[list[dict]]) -> tuple[float, list[int | None]]:
    """Seconds for the GPU backend's planning and replay over each row group's last window; the cuts."""
    last = {call.group: call for call in calls}
    flow = _compiled_device_flow if compiled else _python_device_flow
    start = time.process_time() if CPU else time.perf_counter()
    cuts = [flow(leaves, call, opts, sizes[group]) for group, call in last.items()]
    return (time.process_time() if CPU else time.perf_counter()) - start, cuts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=DEMO_ROWS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--block-size", type=int, default=None, help="parquet.block.size (default 128 MiB)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time in process CPU seconds (steadier on a shared machine) instead of wall seconds")
    args = parser.parse_args()
    global CPU
    CPU = args.cpu_time
    opts = WriteOptions() if args.block_size is None else WriteOptions(block_size=args.block_size)
    table = store_sales_table(args.rows)
    t = time.perf_counter()
    leaves, calls, sizes = record(table, opts)
    print(f"{args.rows} rows, {len(leaves)} columns, {len(sizes)} row groups, {len(calls)} advance calls; "
          f"recording pass {time.perf_counter() - t:.1f} s")

    def python(ls: list[Leaf], encs: list[Any]) -> Any:
        return RowGroupBuilder(ls, encs, opts)

    def compiled(ls: list[Leaf], encs: list[Any]) -> Any:
        return OnLeafData(host_driver(ls, opts, ListEncoders(encs)))

    run(compiled, leaves, calls, sizes)  # compile (numba caches on disk; first call loads)
    times: dict[str, list[float]] = {"python": [], "compiled": [], "python plan": [], "compiled plan": [],
                                     "python gpu-order": [], "compiled gpu-order": []}
    pages = {}
    for _ in range(args.repeats):
        for name, make in (("python", python), ("compiled", compiled)):
            seconds, pages[name] = run(make, leaves, calls, sizes)
            times[name].append(seconds)
    assert pages["python"] == pages["compiled"], "the builders asked for different pages"
    cuts = [group[0][-1][1] for group in pages["python"]]
    for _ in range(args.repeats):
        times["python plan"].append(planning_only(False, leaves, calls, opts, cuts))
        times["compiled plan"].append(planning_only(True, leaves, calls, opts, cuts))
        for name, compiled_flow in (("python gpu-order", False), ("compiled gpu-order", True)):
            seconds, flow_cuts = device_flow(compiled_flow, leaves, calls, opts, sizes)
            assert flow_cuts == cuts, (name, flow_cuts, cuts)
            times[name].append(seconds)
    print(f"row groups (rows): {cuts}")
    for name, samples in times.items():
        print(f"{name:14s} median {statistics.median(samples):.3f} s  samples "
              + " ".join(f"{s:.3f}" for s in samples))
    py, co = statistics.median(times["python"]), statistics.median(times["compiled"])
    unit = "CPU s" if CPU else "s"
    print(f"planning + replay: python {py:.3f} {unit}, compiled {co:.3f} {unit}, x{py / co:.1f}")
    py, co = statistics.median(times["python gpu-order"]), statistics.median(times["compiled gpu-order"])
    print(f"GPU backend's order (plan the window, then replay): python {py:.3f} {unit}, compiled {co:.3f} {unit}, "
          f"x{py / co:.1f}")


if __name__ == "__main__":
    main()
