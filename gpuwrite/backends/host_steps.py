"""The row-group steps on the host (`base.RowGroupSteps`): the compiled planner and replay (`plan.PageSchedule`,
`plan.BlockReplay`) over a window of LeafData, pages encoded by any `base.ColumnEncoders` (the CPU backend's
`cpu.CpuEncoders`, tests' stand-ins). Batches reach a bit past the row group's estimated end, so little is
encoded in vain."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..encode.rules import raw_value_bytes
from ..options.model import WriteOptions
from ..page_model import EncodedChunk
from ..pipeline.leafdata import LeafData
from ..pipeline.plan import NEED_SIZES, BlockReplay, ColumnArrays, PageBatch, PageSchedule
from ..pipeline.window import Window
from ..schema import Leaf
from .base import ColumnEncoders, PageSpans, Stage

OVERSHOOT = 1.1  # plan this much past the estimated end of the row group, so one batch usually reaches it


def _raw_bytes_per_row(leaves: Sequence[Leaf], window: Sequence[LeafData]) -> float:
    """PLAIN-equivalent bytes per row over the window (what a row group's size is first measured in)."""
    rows = max(1, window[0].num_rows) if window else 1
    total = sum(raw_value_bytes(leaf, d, 0, d.num_values) + d.num_rows // 8
                for leaf, d in zip(leaves, window, strict=True))
    return max(1.0, total / rows)


class HostSteps:
    """One row group's planner, replay and column encoders on the host; the planner and replay resume as the
    window grows, and the encoders keep their pages."""

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, encoders: ColumnEncoders) -> None:
        self.leaves = list(leaves)
        self.opts = opts
        self.encoders = encoders
        self.schedule = PageSchedule(leaves, opts)
        self.blocks = BlockReplay(self.schedule)
        self.window: Sequence[LeafData] = ()
        self.planned_upto = 0  # every page check at or before this row has been planned
        self.encoded = 0  # stored bytes of the pages encoded so far
        self._cols: ColumnArrays | None = None
        self._cols_of: Sequence[LeafData] | None = None
        self.rows_hint = 0  # rows the row group is expected to reach (the window's hint, when it has one)
        self._stage: Stage | None = None
        self._staged = 0  # columns handed to `stage` in the current batch

    def load(self, window: Window) -> None:
        """Plan and encode from this window's LeafData from now on."""
        self.window = window.leaves()
        self.rows_hint = getattr(window, "rows_hint", 0)  # a LeafWindow's (RowWindow.extend): sizes the layout
        self.encoders.load(self.window)

    def _columns(self) -> ColumnArrays:
        """The window laid out for the planner (again only when the window changed)."""
        if self._cols is None or self._cols_of is not self.window:
            # the last layout let go of first: its slabs (sized for the whole row group) then take the new one
            self._cols = self._cols_of = None
            self._cols, self._cols_of = ColumnArrays.build(self.leaves, self.window, self.rows_hint), self.window
        return self._cols

    def horizon(self, stop: int) -> int:
        """The next check, or up to a bit past the estimated end of the row group if further (from the stored
        bytes per row so far, or raw bytes before any page is encoded), within `stop`."""
        least = max(1, self.opts.page_row_count_limit // 4)
        if self.planned_upto == 0 or self.encoded == 0:
            step = int(self.opts.block_size / _raw_bytes_per_row(self.leaves, self.window))
            # rows so wide that the block ends within a quarter page's rows (thousands of columns): plan to the
            # estimated end, not past it, where every column's pages would be encoded (and staged) in vain
            least = max(1, min(least, step))
        else:
            per_row = self.encoded / self.planned_upto
            step = int(max(0.0, self.opts.block_size - self.encoded) / per_row * OVERSHOOT)
        return max(self.schedule.next_page_check, min(stop, self.planned_upto + max(least, step)))

    def plan(self, horizon: int) -> PageBatch:
        """Plan the page checks up to `horizon`: the pages they end."""
        s = self.schedule
        first = s.events
        s.plan(self._columns(), horizon)
        self.planned_upto = horizon
        return s.pages(first, s.events)

    def open_starts(self) -> np.ndarray:
        """First row of each column's open page after the planned ones."""
        return self.schedule.open_starts()

    def encode(self, batch: PageBatch, last: PageSpans, stage: Stage | None) -> np.ndarray:
        """Encode the batch's pages and `last` on the column encoders (chunks staged in schema order as their
        columns are done, with `stage`); the stored sizes of the batch's pages, in planner order."""
        ranges: list[list[tuple[int, int]]] = [[] for _ in self.leaves]
        for c, a, b in zip(batch.column.tolist(), batch.start.tolist(), batch.end.tolist(), strict=True):
            ranges[c].append((a, b))
        for c, a, b in last:
            ranges[c].append((a, b))
        self._stage, self._staged = stage, 0
        done = self._stage_upto if stage is not None else None
        if any(ranges):
            self.encoders.encode(ranges, done)
        if done is not None:
            done(len(self.leaves) - 1)
        sizes = [self.encoders.pages(c)[o].size for c, o in zip(batch.column.tolist(), batch.ordinal.tolist(),
                                                               strict=True)]
        self.encoded += sum(sizes) + sum(self.encoders.pages(c)[-1].size for c, _, _ in last)
        return np.array(sizes, dtype=np.int64)

    def _stage_upto(self, column: int) -> None:
        """Stage the chunks of every column up to `column` not staged yet (a column without pages in the batch
        is done already)."""
        assert self._stage is not None
        for c in range(self._staged, column + 1):
            self._stage(c, self.encoders.chunk(c))
        self._staged = max(self._staged, column + 1)

    def replay(self, sizes: np.ndarray | None, available: int, final: bool) -> int:
        """Give the replay the sizes of the pages planned since the last call, and replay over rows
        0..available (NEED_SIZES cannot come back: every planned page has its size)."""
        if sizes is not None:
            self.blocks.set_sizes(self.schedule.events, sizes)
        status = self.blocks.advance(self._columns(), available, final)
        assert status != NEED_SIZES
        return status

    def ended(self) -> tuple[int, np.ndarray]:
        """The replay's cut and each column's open page start there."""
        cut = self.blocks.cut
        assert cut is not None
        return cut, self.blocks.open_starts()

    def keep(self, ahead: Sequence[int]) -> None:
        """Truncate each column to the pages of the applied checks (and its last page, for `ahead`)."""
        kept = self.blocks.kept_pages().tolist()
        for c in ahead:  # every column may be ahead (at the input's end): `c in ahead` per column was quadratic
            kept[c] += 1
        for c in range(len(self.leaves)):
            self.encoders.truncate(c, kept[c])

    def reencode(self, pages: PageSpans) -> None:
        """Encode the pages open at the cut again, ending there (the encoders restored their dictionaries)."""
        ranges: list[list[tuple[int, int]]] = [[] for _ in self.leaves]
        for c, a, b in pages:
            ranges[c].append((a, b))
        self.encoders.encode(ranges)

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks, in schema order."""
        return self.encoders.finish()
