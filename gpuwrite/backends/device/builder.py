"""The GPU backend: one row group at a time, the whole window on the device in a fixed handful of launches.

The row-group steps (`base.RowGroupSteps`) of the shared driver (`backends.rowgroup.PlannedRowGroup`), on the
device. Each `advance` starts over: the window's columns go to the device (arenas), their dictionaries are
built; the compiled planner plans every page of the window (the horizon is the whole window), every page of
every column (and, at the end of the input, each column's last page) is encoded as one batch, the row-group
memory checks are replayed over the stored sizes (all on the device), and the batch's results and the replay's
are read back in one sync. When the row group ends inside the window, the pages open at the cut are encoded
again as a second batch. The file's bytes are gathered in file order and read back once, at `finish`. The
decisions are the driver's, so the files are the CPU path's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gpuwrite.kernels.plan import schedule as k

from ...options.model import WriteOptions
from ...page_model import EncodedChunk
from ...pipeline.plan import NEED_PLAN
from ...pipeline.window import Window
from ...schema import Leaf
from ..base import PageSpans, RowGroupBuilder, Stage
from ..rowgroup import PlannedRowGroup
from . import steps
from .checks import check_error, check_table, device_checked, launch_checks
from .chunks import KeptPages, queue_chunks
from .codecs import PageCodec, page_codec
from .dictionary import DeviceDictionary, build_dictionary
from .encode import BatchSetup, EncodedBatch, PageTable, encode_planned, spans_and_info
from .ops import Device
from .schedule import DeviceSchedule
from .window import DeviceWindow, window_on_device


class DeviceSteps:
    """One row group's steps on the device (a `base.RowGroupSteps`): the planner, the encoder batches and the
    replay over the window's arenas; only counts, statuses and the batches' per-page results come back."""

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, device: Device, codec: PageCodec | None,
                 first_row: int = 0) -> None:
        self.leaves, self.opts, self.device, self.codec = list(leaves), opts, device, codec
        self.first_row = first_row  # the row group's first row in the file (error messages)
        self.index = 0  # the row group's index in the file (the traced event order)
        self.checks = check_table(self.leaves, opts.validate)
        self.arrow: Any = None
        self.win: DeviceWindow | None = None
        self.dic: DeviceDictionary | None = None
        self.sched: DeviceSchedule | None = None
        self.batches: list[EncodedBatch] = []
        self.kept: list[tuple[np.ndarray, int, np.ndarray]] = []  # (columns, batch, index in it): KeptPages
        # the first batch: its page table (planned pages, then last pages), each page's batch position, the
        # columns that fell back, and each column's last page in the table
        self.table = _pages([])
        self.position = np.zeros(0, dtype=np.int64)
        self.fell = np.zeros(len(self.leaves), dtype=bool)
        self.last: dict[int, int] = {}
        # read back: open page starts (after the plan, then at the replay's stop), the replay's state
        self.starts = np.zeros(len(self.leaves), dtype=np.int64)
        self.block = np.zeros(k.B_COUNT, dtype=np.int64)
        self.ev_end = np.zeros(0, dtype=np.int64)

    def load(self, window: Window) -> None:
        """Start over on this window: its columns converted on the device, checked, their dictionaries built."""
        d, opts = self.device, self.opts
        self.batches, self.kept = [], []
        self.win = self.dic = self.sched = None  # a grown window starts over: the last one's arrays go first
        d.record("load", str(self.index))
        self.arrow = window.arrow()
        self.win = window_on_device(d, self.arrow, self.leaves, opts)
        self.win.bad = launch_checks(d, self.win.converted, self.checks)
        self.win.converted.inputs.pop("src", None)  # the raw Arrow copy: its last reader (the checks) is queued
        self.dic = build_dictionary(d, self.win.cols, self.win.dev_cols, self.win.arenas, opts.dictionary_page_size)
        self.sched = DeviceSchedule(d, self.win, opts)

    def horizon(self, stop: int) -> int:
        """The whole window: one plan, one batch, one replay per row group."""
        return stop

    def plan(self, horizon: int) -> PageTable:
        """Plan every check up to `horizon` on the device (one sync, which also reads the conversion's and the
        value checks' refusals: raised here as the CPU path's errors)."""
        assert self.sched is not None
        planned, self.starts = self.sched.plan(horizon)
        if self.sched.bad is not None and self.checks is not None:
            err = check_error(self.sched.bad, self.checks, self.leaves, (self.first_row, self.arrow))
            if err is not None:
                raise err
        return planned

    def open_starts(self) -> np.ndarray:
        """Each column's open page start after the planned pages (read with the plan's sync)."""
        return self.starts

    def _batch(self, table: PageTable, fell_back: np.ndarray) -> tuple[EncodedBatch, np.ndarray]:
        """Encode the pages of `table` (column and rows; entries and values are found first) as the next batch."""
        assert self.win is not None and self.dic is not None
        table, info = spans_and_info(self.device, self.win, self.dic, table)
        batch, fell = encode_planned(self.device, (self.win, self.dic), table, info,
                                     BatchSetup(self.codec, self.opts.page_checksum, fell_back,
                                                self.opts.fallback_encoding == "plain"))
        self.batches.append(batch)
        return batch, fell

    def encode(self, batch: PageTable, last: PageSpans, stage: Stage | None) -> Any:
        """Encode the planned pages and `last` as one batch; the planned pages' stored sizes, in planner order,
        left on the device (flush_sizes). `stage` is not called: the chunks exist only once read back."""
        d = self.device
        planned = len(batch)
        self.table = PageTable.concat([batch, _pages(last)])
        self.last = {c: j for j, (c, _, _) in enumerate(last, start=planned)}
        encoded, self.fell = self._batch(self.table, np.zeros(len(self.leaves), dtype=bool))
        assert encoded.order is not None
        self.position = np.empty(len(self.table), dtype=np.int64)
        self.position[encoded.order] = np.arange(len(self.table))
        sizes = d.empty(max(1, planned), np.int64)
        d.launch(steps.FLUSH_SIZES, planned, d.upload(self.position[:planned]), encoded.header_len,
                 encoded.body_len, sizes)
        return sizes

    def replay(self, sizes: Any, available: int, final: bool) -> int:
        """Replay the checks on the device over the batch's sizes, read back with the batch's results in one
        sync. Without sizes nothing is planned since `load`: NEED_PLAN, and nothing launched."""
        if sizes is None:
            return NEED_PLAN
        assert self.sched is not None
        _, state = self.sched.replay(sizes, available, final)
        status, self.block, self.starts, self.ev_end = self.batches[-1].fetch_with(self.device, list(state))
        return int(status[0])

    def ended(self) -> tuple[int, np.ndarray]:
        """The cut the replay found and each column's open page start there."""
        return int(self.block[k.B_CUT]), self.starts

    def keep(self, ahead: Sequence[int]) -> None:
        """Keep the planned pages of the applied checks (the first ones of the batch, in planner order) and the
        last pages of `ahead`."""
        applied = int(self.block[k.B_EVENTS])
        kept = int(self.ev_end[applied - 1]) if applied > 0 else 0
        self.kept = [(self.table.col[:kept], 0, self.position[:kept])]
        self.kept += [(np.array([c]), 0, self.position[[self.last[c]]]) for c in ahead]

    def reencode(self, pages: PageSpans) -> None:
        """The pages open at the cut as a second batch (a column whose page starts at row 0, its chunk cut inside
        its first page, tests its dictionary again: its fallback is undone)."""
        fell = self.fell.copy()
        fell[[c for c, a, _ in pages if a == 0]] = False
        again, _ = self._batch(_pages(pages), fell)
        again.fetch(self.device)
        assert again.order is not None
        where = np.empty(len(pages), dtype=np.int64)
        where[again.order] = np.arange(len(pages))  # batch position of the page given j-th
        self.kept.append((np.array([c for c, _, _ in pages]), len(self.batches) - 1, where))

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks: bytes and bloom filters made on the device, read back in one copy."""
        return self._queue()()

    def finish_later(self, write: Callable[[list[EncodedChunk]], None]) -> None:
        """Queue the chunks' read back on the copy stream and defer waiting for it and `write`: the device runs
        them before the host next waits for it (the next row group's first kernels are queued by then), or at
        `DeviceBackend.flush`."""
        finished, d, index = self._queue(), self.device, self.index

        def work() -> None:
            chunks = finished()
            d.record("write", str(index))
            write(chunks)

        d.defer(work)

    def _queue(self) -> Callable[[], list[EncodedChunk]]:
        """The chunks' bytes gathered on the device, their read back queued (`chunks.queue_chunks`)."""
        assert self.win is not None and self.dic is not None
        return queue_chunks(self.device, (self.win, self.dic), self.leaves, self.batches,
                            KeptPages.of(self.kept), (self.codec, self.opts.page_checksum),
                            blooms=[self.opts.bloom_filter(leaf.dotted) for leaf in self.leaves])


def _pages(rows: Sequence[tuple[int, int, int]]) -> PageTable:
    """A page table of (column, first row, end row) whose entries and values are still to be found."""
    arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
    zero = np.zeros(len(arr), dtype=np.int64)
    return PageTable(arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy(), zero, zero, zero, zero)


class DeviceBackend:
    """The GPU `Backend`: the device and its page codec, shared by the file's row groups."""

    name = "gpu"
    converts_on_host = False  # Arrow buffers go to the device as they are

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions) -> None:
        self.leaves, self.opts = leaves, opts
        self.device = Device()
        self.codec = page_codec(opts.compression, opts.compression_level, self.device)
        self.rows_done = 0  # rows of the row groups before the open one
        self.groups = 0  # row groups started
        self._last: PlannedRowGroup[PageTable, Any] | None = None

    def checks_values(self, leaf: Leaf) -> bool:
        """Flat leaves' values are checked on the device, where they are converted (`checks.py`)."""
        return device_checked(leaf)

    def row_group(self) -> RowGroupBuilder:
        """A builder for the next row group (its first row in the file: the rows of those before)."""
        if self._last is not None:
            self.rows_done += self._last.rows_kept
        row_steps = DeviceSteps(self.leaves, self.opts, self.device, self.codec, self.rows_done)
        row_steps.index = self.groups
        self.groups += 1
        self._last = PlannedRowGroup(row_steps, self.opts)
        return self._last

    def flush(self) -> None:
        """Write the row group whose read back is still pending (`DeviceSteps.finish_later`)."""
        self.device.flush()

    def close(self) -> None:
        """Drop the last row group's device arrays (and a pending write: after an abort, nothing more is written)
        and give CuPy's pooled memory back to the driver."""
        self.device.deferred.clear()
        self.device.staging.release()
        self._last = None
        self.device.release_pool()
