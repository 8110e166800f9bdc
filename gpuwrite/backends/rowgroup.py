"""One row group, for either backend: plan pages ahead, encode them in batches, replay the row-group checks.

parquet-java's page checks depend only on buffered (raw) sizes, so the planner (`plan.PagePlanner`) lays out
a batch of pages before anything is encoded; the backend encodes the batch (all columns at once); then the
row-group memory checks are replayed over the produced sizes in the order parquet-java runs them (at each
record count: page checks first, then the memory check). When the row group ends inside the batch, the pages
past the cut are dropped and the pages open at the cut are encoded again, ending there. The result is
exactly the row groups, pages and bytes of parquet-java's record-at-a-time writer.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from ..encode.chunk import EncodedChunk
from ..encode.rules import raw_value_bytes
from ..leafdata import LeafData
from ..options import WriteOptions
from ..plan import BlockCheck, LevelMeter, PagePlanner
from ..schema import Leaf
from .base import ColumnEncoders

OVERSHOOT = 1.1  # plan this much past the estimated end of the row group, so one batch usually reaches it


def _raw_bytes_per_row(leaves: Sequence[Leaf], window: Sequence[LeafData]) -> float:
    """PLAIN-equivalent bytes per row over the window (what a row group's size is first measured in)."""
    rows = max(1, window[0].num_rows) if window else 1
    total = sum(raw_value_bytes(leaf, d, 0, d.num_values) + d.num_rows // 8
                for leaf, d in zip(leaves, window, strict=True))
    return max(1.0, total / rows)


class PlannedRowGroup:
    """The shared row-group driver (a `base.RowGroupBuilder`) over any backend's `ColumnEncoders`."""

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, encoders: ColumnEncoders) -> None:
        self.leaves = list(leaves)
        self.opts = opts
        self.encoders = encoders
        self.planner = PagePlanner(leaves, opts)
        self.planned_upto = 0  # every page check at or before this row has been planned
        self.events: deque[tuple[int, list[int]]] = deque()  # page checks planned, not yet replayed
        # replay of the memory checks
        self.blocks = BlockCheck(opts)
        self.produced = [0] * len(leaves)  # bytes of each column's pages replayed so far
        self.start = [0] * len(leaves)  # first row of each column's open page in the replay
        self.meters = [LevelMeter(leaf) for leaf in leaves]
        self.accounted = [0] * len(leaves)  # pages of each column counted in `produced`
        self.replayed = 0  # last record count the replay reached

    def _plan(self, window: Sequence[LeafData], horizon: int) -> None:
        """Run the page checks up to `horizon` and encode the pages they close, as one batch."""
        planner = self.planner
        batch: list[list[tuple[int, int]]] = [[] for _ in self.leaves]
        while planner.next_page_check <= horizon:
            row = planner.next_page_check
            flush = planner.size_check(window, row)
            for c in flush:
                batch[c].append((planner.page_start[c], row))
                planner.close(c, row)
            self.events.append((row, flush))
        self.planned_upto = horizon
        if any(batch):
            self.encoders.encode(batch)

    def _memory(self, window: Sequence[LeafData], row: int) -> int:
        """Bytes the row group holds at `row` (finished pages at their stored size plus open pages raw)."""
        total = 0
        for c, data in enumerate(window):
            va, vb = data.value_index(self.start[c]), data.value_index(row)
            total += self.produced[c] + self.meters[c].bytes_until(data, row)
            total += raw_value_bytes(self.leaves[c], data, va, vb)
        return total

    def _step(self, window: Sequence[LeafData]) -> int:
        """Rows to plan in the next batch: up to the estimated end of the row group (from the stored bytes per
        row so far, or raw bytes before any page is replayed), a little past it, at least a few pages."""
        least = max(1, self.opts.page_row_count_limit // 4)
        produced = sum(self.produced)
        if self.replayed == 0 or produced == 0:
            return max(least, int(self.opts.block_size / _raw_bytes_per_row(self.leaves, window)))
        per_row = produced / self.replayed
        remaining = max(0.0, self.opts.block_size - produced) / per_row
        return max(least, int(remaining * OVERSHOOT) - (self.planned_upto - self.replayed))

    def advance(self, window: Sequence[LeafData], available: int, final: bool) -> int | None:
        """Run the checks over rows 0..available; return the row count if the row group ends, else None."""
        self.encoders.load(window)
        limit = self.opts.block_row_count_limit
        stop = min(available, limit)
        blocks = self.blocks
        while True:
            if self.planned_upto < stop and not self.events:
                self._plan(window, min(stop, self.planned_upto + self._step(window)))
            next_event = self.events[0][0] if self.events else self.planner.next_page_check
            row = min(next_event, blocks.next_mem_check, limit)
            if row > self.planned_upto and self.planned_upto < stop:
                self._plan(window, min(stop, max(row, self.planned_upto + self._step(window))))
                continue
            if row > available:
                if final and available > 0:
                    return self._cut(window, available)
                return None
            self.replayed = row
            if self.events and row == self.events[0][0]:
                _, flush = self.events.popleft()
                for c in flush:
                    self.produced[c] += self.encoders.pages(c)[self.accounted[c]].size
                    self.accounted[c] += 1
                    self.start[c] = row
                    self.meters[c].reset(row)
            if row >= limit or (row == blocks.next_mem_check and blocks.full(self._memory(window, row), row)):
                return self._cut(window, row)

    def _cut(self, window: Sequence[LeafData], row: int) -> int:
        """End the row group at `row`: drop pages planned past it, encode each open page up to it."""
        last: list[list[tuple[int, int]]] = [[] for _ in self.leaves]
        for c in range(len(self.leaves)):
            self.encoders.truncate(c, self.accounted[c])
            if self.start[c] < row:
                last[c].append((self.start[c], row))
        if any(last):
            self.encoders.encode(last)
        return row

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks of this row group, in schema order."""
        return self.encoders.finish()
