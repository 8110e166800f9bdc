"""Row groups on the GPU: plan pages first, encode them in batches, then find where the row group ends.

parquet-java's page checks depend only on buffered (raw) sizes, so the planner (`plan.PagePlanner`) lays out
the pages of about a row group's worth of rows before anything is encoded. Each batch of planned pages is
encoded on the device, then the row-group memory checks are replayed over the produced sizes in the order
parquet-java runs them. When the row group ends inside the batch, the pages beyond the cut are dropped and
the pages open at the cut are encoded again, ending there. The result is the CPU path's row groups, pages
and bytes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from ...columns import LeafData
from ...encode.chunk import EncodedChunk, LevelMeter, raw_value_bytes
from ...options import WriteOptions
from ...plan import BlockCheck, PagePlanner
from ...schema import Leaf
from .arrays import DeviceArrays
from .codecs import HostCodec, NvcompCodec
from .column import DeviceColumn


def _raw_bytes_per_row(leaves: Sequence[Leaf], datas: Sequence[LeafData]) -> float:
    """PLAIN-equivalent bytes per row over the window (what a row group's size is first measured in)."""
    rows = max(1, datas[0].num_rows) if datas else 1
    total = sum(raw_value_bytes(leaf, d, 0, d.num_values) + d.num_rows // 8 for leaf, d in zip(leaves, datas,
                                                                                                 strict=True))
    return max(1.0, total / rows)


class DeviceRowGroupBuilder:
    """The GPU counterpart of `plan.RowGroupBuilder`: same interface, same cuts, pages encoded in batches."""

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, arrays: DeviceArrays,
                 codec: HostCodec | NvcompCodec) -> None:
        self.leaves = list(leaves)
        self.opts = opts
        self.columns = [DeviceColumn(leaf, opts, arrays, codec) for leaf in leaves]
        self.planner = PagePlanner(leaves, opts)
        self.planned_upto = 0  # every page check at or before this row has been planned
        self.events: deque[tuple[int, list[int]]] = deque()  # page checks planned, not yet replayed
        self.pending: list[list[tuple[int, int]]] = [[] for _ in leaves]  # planned pages not yet encoded
        # replay of the memory checks
        self.blocks = BlockCheck(opts)
        self.produced = [0] * len(leaves)
        self.start = [0] * len(leaves)
        self.meters = [LevelMeter(leaf) for leaf in leaves]
        self.accounted = [0] * len(leaves)  # pages of each column counted in `produced`

    def _plan(self, datas: Sequence[LeafData], horizon: int) -> None:
        """Run the page checks up to `horizon` and encode the pages they close, as one batch per column."""
        planner = self.planner
        while planner.next_page_check <= horizon:
            row = planner.next_page_check
            flush = planner.size_check(datas, row)
            for c in flush:
                self.pending[c].append((planner.page_start[c], row))
                planner.close(c, row)
            self.events.append((row, flush))
        self.planned_upto = horizon
        for c, column in enumerate(self.columns):
            if self.pending[c]:
                column.encode(self.pending[c])
                self.pending[c] = []

    def _memory(self, datas: Sequence[LeafData], row: int) -> int:
        """Bytes the row group holds at `row` (finished pages at their stored size plus open pages raw)."""
        total = 0
        for c, data in enumerate(datas):
            va, vb = int(data.value_index(self.start[c])), int(data.value_index(row))
            total += self.produced[c] + self.meters[c].bytes_until(data, row)
            total += raw_value_bytes(self.leaves[c], data, va, vb)
        return total

    def advance(self, datas: Sequence[LeafData], available: int, final: bool) -> int | None:
        """Run the checks over rows 0..available; return the row count if the row group ends, else None."""
        for column, data in zip(self.columns, datas, strict=True):
            column.load(data)
        limit = self.opts.block_row_count_limit
        stop = min(available, limit)
        step = max(self.opts.page_row_count_limit // 4, int(self.opts.block_size / _raw_bytes_per_row(
            self.leaves, datas)))
        blocks = self.blocks
        while True:
            if self.planned_upto < stop and not self.events:
                self._plan(datas, min(stop, self.planned_upto + step))
            next_event = self.events[0][0] if self.events else self.planner.next_page_check
            row = min(next_event, blocks.next_mem_check, limit)
            if row > self.planned_upto and self.planned_upto < stop:
                self._plan(datas, min(stop, max(row, self.planned_upto + step)))
                continue
            if row > available:
                if final and available > 0:
                    return self._cut(datas, available)
                return None
            if self.events and row == self.events[0][0]:
                _, flush = self.events.popleft()
                for c in flush:
                    self.produced[c] += self.columns[c].pages[self.accounted[c]].size
                    self.accounted[c] += 1
                    self.start[c] = row
                    self.meters[c].reset(row)
            if row >= limit or (row == blocks.next_mem_check and blocks.full(self._memory(datas, row), row)):
                return self._cut(datas, row)

    def _cut(self, datas: Sequence[LeafData], row: int) -> int:
        """End the row group at `row`: drop pages planned past it, encode each open page up to it."""
        for c, column in enumerate(self.columns):
            column.truncate(self.accounted[c])
            if self.start[c] < row:
                column.encode([(self.start[c], row)])
        return row

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks of this row group, in schema order."""
        return [column.finish() for column in self.columns]
