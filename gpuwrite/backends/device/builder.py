"""The GPU backend: one row group at a time, the whole window on the device in a fixed handful of launches.

Per row group: the window's columns go to the device (arenas), their dictionaries are built, the compiled
planner plans every page of the window (and, at the end of the input, each column's last page), every page of
every column is encoded as one batch, the row-group memory checks are replayed over the stored sizes (all on
the device), and the file's bytes are gathered in file order and read back once. When the row group ends
inside the window, the pages past the cut are dropped and the pages open at the cut are encoded again as a
second batch. The decisions are parquet-java's, so the files are the CPU path's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpuwrite.kernels.plan import schedule as k

from ...encode.chunk import Compressor, EncodedChunk
from ...options.model import WriteOptions
from ...pipeline.window import Window
from ...schema import Leaf
from ..base import RowGroupBuilder, Stage
from . import steps
from .checks import check_error, check_table, device_checked, launch_checks
from .chunks import KeptPages, assemble_chunks
from .codecs import PageCodec, page_codec
from .dictionary import DeviceDictionary, build_dictionary
from .encode import BatchSetup, EncodedBatch, PageTable, encode_planned, spans_and_info
from .ops import Device
from .schedule import DeviceSchedule
from .window import DeviceWindow, window_on_device


class DeviceRowGroup:
    """One row group on the device (a `base.RowGroupBuilder`)."""

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, device: Device, codec: PageCodec | None,
                 first_row: int = 0) -> None:
        self.leaves, self.opts, self.device, self.codec = list(leaves), opts, device, codec
        self.first_row = first_row  # the row group's first row in the file (error messages)
        self.stage: Stage | None = None  # not called: the row group's pages come back from one batch
        self.checks = check_table(self.leaves, opts.validate)
        self.rows_kept = 0
        self.window: Window | None = None
        self.win: DeviceWindow | None = None
        self.dic: DeviceDictionary | None = None
        self.batches: list[EncodedBatch] = []
        self.kept = KeptPages.of([])

    def _batch(self, table: PageTable, fell_back: np.ndarray) -> tuple[EncodedBatch, np.ndarray]:
        """Encode the pages of `table` (column and rows; entries and values are found first) as the next batch."""
        assert self.win is not None and self.dic is not None
        table, info = spans_and_info(self.device, self.win, self.dic, table)
        batch, fell = encode_planned(self.device, (self.win, self.dic), table, info,
                                     BatchSetup(self.codec, self.opts.page_checksum, fell_back,
                                                self.opts.fallback_encoding == "plain"))
        self.batches.append(batch)
        return batch, fell

    def advance(self, window: Window, available: int, final: bool) -> int | None:
        """Plan, encode and replay the whole window; the row count where the row group ends, or None when it
        goes on past the window (the window then grows and this starts over)."""
        self.window, self.batches = window, []
        d, opts = self.device, self.opts
        arrow = window.arrow()
        self.win = window_on_device(d, arrow, self.leaves, opts)
        self.win.bad = launch_checks(d, self.win.converted, self.checks)
        self.dic = build_dictionary(d, self.win.cols, self.win.dev_cols, self.win.arenas, opts.dictionary_page_size)
        sched = DeviceSchedule(d, self.win, opts)
        stop = min(available, opts.block_row_count_limit)
        planned, open_starts = sched.plan(stop)
        if sched.bad is not None and self.checks is not None:
            err = check_error(sched.bad, self.checks, self.leaves, (self.first_row, arrow))
            if err is not None:
                raise err
        n_planned = len(planned.table)
        extra = [(c, int(open_starts[c]), available) for c in range(len(self.leaves))
                 if final and stop == available and open_starts[c] < available]
        table = PageTable.concat([planned.table, _pages(extra)])
        batch, fell = self._batch(table, np.zeros(len(self.leaves), dtype=bool))
        assert batch.order is not None
        position = np.empty(len(table), dtype=np.int64)
        position[batch.order] = np.arange(len(table))
        sizes = d.empty(max(1, n_planned), np.int64)
        d.launch(steps.FLUSH_SIZES, n_planned, d.upload(position[:n_planned]), batch.header_len, batch.body_len, sizes)
        _, state = sched.replay(sizes, available, final)
        status, block, starts, ev_end = batch.fetch_with(d, list(state))
        if int(status[0]) != k.REPLAY_CUT:
            return None
        cut, applied = int(block[k.B_CUT]), int(block[k.B_EVENTS])
        self.rows_kept = cut
        kept = int(ev_end[applied - 1]) if applied > 0 else 0  # planned pages the row group keeps
        parts = [(table.col[:kept], 0, position[:kept])]
        ahead = {c: j for j, (c, a, _) in enumerate(extra, start=n_planned) if cut == available and starts[c] == a}
        reopen = []
        for c in range(len(self.leaves)):
            if c in ahead:
                parts.append((np.array([c]), 0, position[[ahead[c]]]))
            elif starts[c] < cut:
                reopen.append((c, int(starts[c]), cut))
        if reopen:
            fell = fell.copy()
            fell[[c for c, a, _ in reopen if a == 0]] = False  # a chunk cut inside its first page tests it again
            again, _ = self._batch(_pages(reopen), fell)
            again.fetch(d)
            assert again.order is not None
            where = np.empty(len(reopen), dtype=np.int64)
            where[again.order] = np.arange(len(reopen))  # batch position of the page given j-th
            parts.append((np.array([c for c, _, _ in reopen]), 1, where))
        self.kept = KeptPages.of(parts)
        return cut

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks: bytes and bloom filters made on the device, read back in one copy."""
        assert self.win is not None and self.dic is not None
        return assemble_chunks(self.device, (self.win, self.dic), self.leaves, self.batches, self.kept,
                               (self.codec, self.opts.page_checksum),
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

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, compress: Compressor) -> None:
        self.leaves, self.opts = leaves, opts
        self.device = Device()
        self.codec = page_codec(opts.compression, opts.compression_level, self.device)
        self.rows_done = 0  # rows of the row groups before the open one
        self._last: DeviceRowGroup | None = None

    def checks_values(self, leaf: Leaf) -> bool:
        """Flat leaves' values are checked on the device, where they are converted (`checks.py`)."""
        return device_checked(leaf)

    def row_group(self) -> RowGroupBuilder:
        """A builder for the next row group (its first row in the file: the rows of those before)."""
        if self._last is not None:
            self.rows_done += self._last.rows_kept
        self._last = DeviceRowGroup(self.leaves, self.opts, self.device, self.codec, self.rows_done)
        return self._last

    def close(self) -> None:
        """Nothing to release beyond what CuPy's pool keeps."""
