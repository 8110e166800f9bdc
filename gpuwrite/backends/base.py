"""The seam between the pipeline and a backend: what a row-group builder does, the steps a backend runs for
the shared row-group driver (`backends.rowgroup.PlannedRowGroup`), and the column encoders the host steps drive
(`backends.host_steps.HostSteps`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import numpy as np

from ..page_model import EncodedChunk
from ..pipeline.leafdata import LeafData
from ..pipeline.window import Window
from ..schema import Leaf

PageRanges = Sequence[Sequence[tuple[int, int]]]


class SizedPage(Protocol):
    """What the row-group replay reads of a finished page."""

    @property
    def size(self) -> int:
        """Bytes on disk, header included."""  # per column, the window rows a..b of each new page, in order


Stage = Callable[[int, EncodedChunk], None]  # (column, its chunk): write it ahead of the row group's end


class RowGroupBuilder(Protocol):
    """Builds one row group from a window of rows that may grow: finds where parquet-java would end it.
    `stage`, when the writer sets it: called in schema order with each chunk of the last row group as soon as
    its pages are encoded, before the row group's end is confirmed (a chunk that changes after is replaced)."""

    stage: Stage | None

    def advance(self, window: Window, available: int, final: bool) -> int | None:
        """Run the checks over rows 0..available of the window; the row count where the row group ends, or
        None when it goes on past `available` (with `final`, it ends at `available` at the latest)."""

    def finish(self) -> list[EncodedChunk]:
        """The row group's finished chunks, in schema order."""


BatchT = TypeVar("BatchT")  # a backend's planned pages (plan.PageBatch on the host, a page table read back)
SizesT = TypeVar("SizesT")  # a backend's stored page sizes (a host array, or a device array not read yet)
PageSpans = Sequence[tuple[int, int, int]]  # pages as (column, first row, end row)


class RowGroupSteps(Protocol[BatchT, SizesT]):
    """What a backend runs for the shared row-group driver (`backends.rowgroup.PlannedRowGroup`), which takes
    every decision; the steps only carry them out (CPU: `backends.host_steps`; GPU: `backends.device.builder`).

    Each `advance` of the driver loads the window, then loops: replay the row-group checks; on NEED_PLAN plan
    up to `horizon`, encode that batch (with each column's last page at the input's end), replay again. At a
    cut: `ended`, `keep`, `reencode` the pages open there. Rows are counted from the row group's first row."""

    def load(self, window: Window) -> None:
        """The row group's window so far (it only grows within a row group)."""

    def horizon(self, stop: int) -> int:
        """The row to plan the page checks up to next (at most `stop`, at least the next unplanned check)."""

    def plan(self, horizon: int) -> BatchT:
        """Plan every page check at a row <= horizon: the pages they end."""

    def open_starts(self) -> np.ndarray:
        """First row of each column's open page after the last `plan` (int64[C])."""

    def encode(self, batch: BatchT, last: PageSpans, stage: Stage | None) -> SizesT:
        """Encode the batch's pages and `last` (each column's last page, at the input's end) as one batch; their
        stored sizes for `replay`. `stage`: hand over each column's chunk as it is done, if the backend can."""

    def replay(self, sizes: SizesT | None, available: int, final: bool) -> int:
        """Replay the row-group checks over rows 0..available, given the sizes of the pages planned since the
        last replay (None: none were): plan.CUT, plan.NOT_YET or plan.NEED_PLAN."""

    def ended(self) -> tuple[int, np.ndarray]:
        """After CUT: the cut row, and each column's open page start there (the page is open if it is < cut)."""

    def keep(self, ahead: Sequence[int]) -> None:
        """Drop the pages past the cut, keeping the last page encoded ahead for the columns in `ahead`."""

    def reencode(self, pages: PageSpans) -> None:
        """Encode again the pages open at the cut, ending there (a chunk cut inside its first page tests its
        dictionary again)."""

    def finish(self) -> list[EncodedChunk]:
        """The row group's finished chunks, in schema order."""


class ColumnEncoders(Protocol):
    """A backend's encoders for the column chunks of one row group, driven page range by page range by the host
    steps (`backends.cpu.CpuEncoders`; tests' stand-ins). Pages come back with their headers
    (`assemble.pages.stamp_headers`)."""

    def load(self, window: Sequence[LeafData]) -> None:
        """The window of the row group's rows so far (it only grows within a row group)."""

    def encode(self, ranges: PageRanges, done: Callable[[int], None] | None = None) -> None:
        """Encode each column's next pages; `done(c)`, in schema order, once column c's are encoded."""

    def chunk(self, column: int) -> EncodedChunk:
        """The column's chunk as its pages stand (the same object while they do not change)."""

    def pages(self, column: int) -> Sequence[SizedPage]:
        """The column's pages encoded so far."""

    def truncate(self, column: int, keep: int) -> None:
        """Drop the column's pages after the first `keep` (the row group ended before them)."""

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks (dictionary page, data pages, bloom filter), in schema order."""


class Backend(Protocol):
    """A device's long-lived resources for one file (threads, device memory, codecs), giving a fresh
    row-group builder per row group."""

    name: str  # "cpu" or "gpu"
    converts_on_host: bool  # builders read the window's rows as LeafData (else as Arrow: RowWindow / ArrowWindow)

    def row_group(self) -> RowGroupBuilder:
        """A builder for the file's next row group (parquet-java starts every row group afresh)."""

    def checks_values(self, leaf: Leaf) -> bool:
        """Whether the backend checks this leaf's values itself where it converts them (so the writer's batch
        checks need not read them: see validate.check_batch)."""

    def close(self) -> None:
        """Release the resources (threads, device memory)."""
