"""One row group, for either backend: plan pages ahead, encode them in batches, replay the row-group checks.

parquet-java's page checks depend only on buffered (raw) sizes, so the compiled planner (`plan.PageSchedule`)
lays out a batch of pages of every column before anything is encoded; the backend encodes the batch (all
columns at once); then the row-group memory checks are replayed over the produced sizes in the order
parquet-java runs them (`plan.BlockReplay`: at each record count the page check, then the memory check).
When the row group ends inside the batch, the pages past the cut are dropped and the pages open at the cut
are encoded again, ending there. At the end of the input, the last pages of every column are encoded in the
same batch as the pages before them. The result is exactly the row groups, pages and bytes of parquet-java's
record-at-a-time writer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..encode.chunk import EncodedChunk
from ..encode.rules import raw_value_bytes
from ..options.model import WriteOptions
from ..pipeline.leafdata import LeafData
from ..pipeline.plan import CUT, NEED_PLAN, NOT_YET, BlockReplay, ColumnArrays, PageSchedule
from ..pipeline.window import Window
from ..schema import Leaf
from .base import ColumnEncoders, Stage

OVERSHOOT = 1.1  # plan this much past the estimated end of the row group, so one batch usually reaches it


def _raw_bytes_per_row(leaves: Sequence[Leaf], window: Sequence[LeafData]) -> float:
    """PLAIN-equivalent bytes per row over the window (what a row group's size is first measured in)."""
    rows = max(1, window[0].num_rows) if window else 1
    total = sum(raw_value_bytes(leaf, d, 0, d.num_values) + d.num_rows // 8
                for leaf, d in zip(leaves, window, strict=True))
    return max(1.0, total / rows)


class PlannedRowGroup:
    """The shared row-group driver (a `base.RowGroupBuilder`) over any backend's `ColumnEncoders`.

    `one_batch`: plan the whole window at once (the GPU backend: a fixed number of launches per row group);
    otherwise batches reach a bit past the row group's estimated end, so little is encoded in vain.
    """

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, encoders: ColumnEncoders,
                 one_batch: bool = False) -> None:
        self.leaves = list(leaves)
        self.opts = opts
        self.encoders = encoders
        self.one_batch = one_batch
        self.schedule = PageSchedule(leaves, opts)
        self.replay = BlockReplay(self.schedule)
        self.planned_upto = 0  # every page check at or before this row has been planned
        self.encoded = 0  # stored bytes of the pages encoded so far
        self.final_pages: dict[int, tuple[int, int]] = {}  # column -> last page, encoded ahead at the input's end
        self._cols: ColumnArrays | None = None
        self._cols_of: Sequence[LeafData] | None = None
        self.stage: Stage | None = None
        self._staged = 0  # columns handed to `stage` in the current batch

    def _columns(self, window: Sequence[LeafData]) -> ColumnArrays:
        """The window laid out for the planner (again only when the window changed)."""
        if self._cols is None or self._cols_of is not window:
            self._cols, self._cols_of = ColumnArrays.build(self.leaves, window), window
        return self._cols

    def _horizon(self, window: Sequence[LeafData], stop: int) -> int:
        """Rows to plan up to next: the whole window, or up to a bit past the estimated end of the row group
        (from the stored bytes per row so far, or raw bytes before any page is encoded)."""
        if self.one_batch:
            return stop
        least = max(1, self.opts.page_row_count_limit // 4)
        if self.planned_upto == 0 or self.encoded == 0:
            step = int(self.opts.block_size / _raw_bytes_per_row(self.leaves, window))
        else:
            per_row = self.encoded / self.planned_upto
            step = int(max(0.0, self.opts.block_size - self.encoded) / per_row * OVERSHOOT)
        return min(stop, self.planned_upto + max(least, step))

    def _plan(self, window: Sequence[LeafData], horizon: int, final: bool) -> None:
        """Plan the page checks up to `horizon`, encode the pages they end as one batch (and, at the end of
        the input, each column's last page), and give the replay their sizes."""
        s = self.schedule
        first = s.events
        s.plan(self._columns(window), horizon)
        self.planned_upto = horizon
        batch = s.pages(first, s.events)
        ranges: list[list[tuple[int, int]]] = [[] for _ in self.leaves]
        for c, a, b in zip(batch.column.tolist(), batch.start.tolist(), batch.end.tolist(), strict=True):
            ranges[c].append((a, b))
        last = final and horizon == window[0].num_rows
        if last:
            starts = s.open_starts()
            self.final_pages = {c: (int(starts[c]), horizon) for c in range(len(self.leaves)) if starts[c] < horizon}
            for c, span in self.final_pages.items():
                ranges[c].append(span)
        # The batch that reaches the end of the input usually ends the row group there: its chunks are staged
        # (written) as they are done, while later columns still encode; the cut replaces any that change.
        done = self._stage_upto if last and self.stage is not None else None
        self._staged = 0
        if any(ranges):
            self.encoders.encode(ranges, done)
        if done is not None:
            done(len(self.leaves) - 1)
        sizes = [self.encoders.pages(c)[o].size for c, o in zip(batch.column.tolist(), batch.ordinal.tolist(),
                                                               strict=True)]
        self.encoded += sum(sizes) + sum(self.encoders.pages(c)[-1].size for c in self.final_pages)
        self.replay.set_sizes(s.events, np.array(sizes, dtype=np.int64))

    def _stage_upto(self, column: int) -> None:
        """Stage the chunks of every column up to `column` not staged yet (a column without pages in the batch
        is done already)."""
        assert self.stage is not None
        for c in range(self._staged, column + 1):
            self.stage(c, self.encoders.chunk(c))
        self._staged = max(self._staged, column + 1)

    def advance(self, rows: Window, available: int, final: bool) -> int | None:
        """Run the checks over rows 0..available; return the row count if the row group ends, else None."""
        window = rows.leaves()
        self.encoders.load(window)
        stop = min(available, self.opts.block_row_count_limit)
        while True:
            status = self.replay.advance(self._columns(window), available, final)
            if status == CUT:
                return self._cut()
            if status == NOT_YET:
                return None
            if status == NEED_PLAN:
                self._plan(window, max(self.schedule.next_page_check, self._horizon(window, stop)), final)

    def _cut(self) -> int:
        """End the row group at the replay's cut: drop pages planned past it, end each open page there (the
        last pages encoded ahead are kept when the cut is the input's end)."""
        cut = self.replay.cut
        assert cut is not None
        kept = self.replay.kept_pages()
        opened = dict(self.replay.open_pages())
        ahead = {c for c, (a, b) in self.final_pages.items() if b == cut and opened.get(c) == a}
        last: list[list[tuple[int, int]]] = [[] for _ in self.leaves]
        for c in range(len(self.leaves)):
            self.encoders.truncate(c, int(kept[c]) + (1 if c in ahead else 0))
            if c in opened and c not in ahead:
                last[c].append((opened[c], cut))
        if any(last):
            self.encoders.encode(last)
        return cut

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks of this row group, in schema order."""
        return self.encoders.finish()
