"""One row group, for both backends: every decision taken here, once, over a backend's `base.RowGroupSteps`.

parquet-java's page checks depend only on buffered (raw) sizes, so the compiled planner lays out a batch of
pages of every column before anything is encoded; the backend encodes the batch (all columns at once); then
the row-group memory checks are replayed over the produced sizes in the order parquet-java runs them (at each
record count the page check, then the memory check). How far a batch reaches is the steps' `horizon` (the CPU:
a bit past the row group's estimated end; the device: the whole window, a fixed number of launches). At the
end of the input each column's last page is encoded in the same batch as the pages before it. When the row
group ends inside the batch, the pages past the cut are dropped (the last pages kept when the cut is the
input's end) and the pages open at the cut are encoded again, ending there. The result is exactly the row
groups, pages and bytes of parquet-java's record-at-a-time writer.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Generic

import numpy as np

from ..options.model import WriteOptions
from ..page_model import EncodedChunk
from ..pipeline.plan import CUT, NEED_PLAN, NOT_YET
from ..pipeline.window import Window
from .base import BatchT, RowGroupSteps, SizesT, Stage


class PlannedRowGroup(Generic[BatchT, SizesT]):
    """The row-group driver of both backends (a `base.RowGroupBuilder`): plan, encode and replay through
    `steps` until the row group ends, then settle the pages at the cut."""

    def __init__(self, steps: RowGroupSteps[BatchT, SizesT], opts: WriteOptions) -> None:
        self.steps = steps
        self.row_limit = opts.block_row_count_limit
        self.final_pages: dict[int, tuple[int, int]] = {}  # column -> last page, encoded ahead at the input's end
        self.stage: Stage | None = None
        self.rows_kept = 0  # the row group's rows, once it ended

    def advance(self, window: Window, available: int, final: bool) -> int | None:
        """Run the checks over rows 0..available; return the row count if the row group ends, else None."""
        steps = self.steps
        steps.load(window)
        stop = min(available, self.row_limit)
        status = steps.replay(None, available, final)
        while status == NEED_PLAN:
            horizon = steps.horizon(stop)
            batch = steps.plan(horizon)
            last: list[tuple[int, int, int]] = []
            reaches_end = final and horizon == available
            if reaches_end:
                starts = steps.open_starts().tolist()
                last = [(c, a, horizon) for c, a in enumerate(starts) if a < horizon]
                self.final_pages = {c: (a, b) for c, a, b in last}
            # The batch that reaches the end of the input usually ends the row group there: its chunks may be
            # staged (written) as they are done; the cut replaces any that change.
            sizes = steps.encode(batch, last, self.stage if reaches_end else None)
            status = steps.replay(sizes, available, final)
        if status == CUT:
            return self._cut()
        if status != NOT_YET:
            raise AssertionError(f"row-group replay returned {status} after its pages were sized")
        return None

    def _cut(self) -> int:
        """End the row group at the replay's cut: drop pages planned past it, end each open page there (the
        last pages encoded ahead are kept when the cut is the input's end)."""
        cut, starts = self.steps.ended()
        ahead = [c for c, (a, b) in self.final_pages.items() if b == cut and int(starts[c]) == a]
        self.steps.keep(ahead)
        reopen = _open_pages(starts, cut, set(ahead))
        if reopen:
            self.steps.reencode(reopen)
        self.rows_kept = cut
        return cut

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks of this row group, in schema order."""
        return self.steps.finish()

    def finish_later(self, write: Callable[[list[EncodedChunk]], None]) -> None:
        """Hand the finished chunks to `write`: now, or later when the steps read them back asynchronously (their
        own `finish_later`: the device's, which writes them while the next row group's kernels run)."""
        later = getattr(self.steps, "finish_later", None)
        if later is None:
            write(self.finish())
        else:
            later(write)


def _open_pages(starts: np.ndarray, cut: int, ahead: AbstractSet[int]) -> list[tuple[int, int, int]]:
    """(column, first row, cut) of each page open at the cut whose last page was not encoded ahead (a set: every
    column of a wide table can be ahead, and a list made this quadratic, 1.5 s at 20,000 columns)."""
    return [(int(c), int(starts[c]), cut) for c in np.flatnonzero(starts < cut) if int(c) not in ahead]
