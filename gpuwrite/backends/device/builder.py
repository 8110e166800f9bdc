"""The GPU backend: one row group at a time, the whole window on the device in a fixed handful of launches.

The row-group steps (`base.RowGroupSteps`) of the shared driver (`backends.rowgroup.PlannedRowGroup`), on the
device. Each `advance` starts over: the window's columns go to the device (arenas), their dictionaries are
built; the compiled planner plans every page of the window (the horizon is the whole window), every page of
every column (and, at the end of the input, each column's last page) is encoded as one batch, the row-group
memory checks are replayed over the stored sizes (all on the device), and the batch's results and the replay's
are read back in one sync. When the row group ends inside the window, the pages open at the cut are encoded
again as a second batch, unless the cut is one the batch guessed: the pages open at the last row groups' cuts
(alike rows end row groups at the same row) are in the first batch, and the dictionary pages the likeliest cut
needs too (compressed in its codec call, their sizes read with the replay). Each column's page open at
the replay's cut is found after the replay (spans and dictionary state) and read with its sync, so a second batch
waits only for its values' lengths and its compressed sizes: the host lays out its pages from those, and its
results are read with the row group's bytes. The file's bytes are gathered in
file order and read back once, at `finish`. The decisions are the driver's, so the files are the CPU path's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gpuwrite.kernels.plan import schedule as k
from gpuwrite.kernels.plan.page_layout import I_COUNT

from ...format.enums import Encoding
from ...options.model import WriteOptions
from ...page_model import EncodedChunk
from ...pipeline.plan import NEED_PLAN
from ...pipeline.window import Window
from ...schema import Leaf
from ..base import PageSpans, RowGroupBuilder, Stage
from ..rowgroup import PlannedRowGroup
from . import steps
from .checks import check_error, check_table, device_checked, launch_checks
from .chunks import KeptPages, ReadyDict, queue_chunks
from .codecs import PageCodec, page_codec
from .dict_pages import Counts, dictionary_counts
from .dictionary import DeviceDictionary, build_dictionary
from .encode import BatchSetup, EncodedBatch, PageTable, encode_planned, spans_and_info
from .ops import Device
from .schedule import DeviceSchedule
from .window import DeviceWindow, window_on_device

GUESSES = 3  # the last row groups whose row counts are guessed as the open one's cut
GUESS_SHARE = 8  # the pages of guesses past the first: at most 1 / GUESS_SHARE of the planned pages


class DeviceSteps:
    """One row group's steps on the device (a `base.RowGroupSteps`): the planner, the encoder batches and the
    replay over the window's arenas; only counts, statuses and the batches' per-page results come back."""

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, device: Device, codec: PageCodec | None,
                 first_row: int = 0, guesses: Sequence[int] = ()) -> None:
        """`guesses`: rows the row group may end at (the last row groups' row counts): the pages open there are
        encoded with the first batch, so a cut at one of them needs no second batch."""
        self.leaves, self.opts, self.device, self.codec = list(leaves), opts, device, codec
        self.first_row = first_row  # the row group's first row in the file (error messages)
        self.guesses = list(guesses)
        self.planned_to = 0  # the horizon of the last plan
        self.input_rows: int | None = None  # the window's rows when they end the input (the replay's first call)
        self.guessed: dict[tuple[int, int, int], int] = {}  # (column, first row, guessed cut) -> index in the table
        self.ready: ReadyDict | None = None  # dictionary pages made with the first batch, their sizes read
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
        # each column's page open at the replay's cut, found with the replay and read with its sync: (pages
        # (column, first row, cut), their spans (ea, eb, va, vb), their dictionary state) for the second batch
        self.opened: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

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
        self.planned_to = horizon
        if self.sched.bad is not None and self.checks is not None:
            err = check_error(self.sched.bad, self.checks, self.leaves, (self.first_row, self.arrow))
            if err is not None:
                raise err
        return planned

    def open_starts(self) -> np.ndarray:
        """Each column's open page start after the planned pages (read with the plan's sync)."""
        return self.starts

    def _batch(self, table: PageTable, fell_back: np.ndarray,
               dictionaries: Callable[[np.ndarray, np.ndarray], Counts] | None = None,
               info: np.ndarray | None = None, early: bool = False) -> tuple[EncodedBatch, np.ndarray]:
        """Encode the pages of `table` as the next batch (with the dictionary pages `dictionaries` says): without
        `info`, `table` gives column and rows and its entries, values and dictionary state are found first (one
        sync); with it, they are known. `early`: `BatchSetup.early`."""
        assert self.win is not None and self.dic is not None
        if info is None:
            table, info = spans_and_info(self.device, self.win, self.dic, table)
        batch, fell = encode_planned(self.device, (self.win, self.dic), table, info,
                                     BatchSetup(self.codec, self.opts.page_checksum, fell_back,
                                                self.opts.fallback_encoding == "plain", dictionaries, early))
        self.batches.append(batch)
        return batch, fell

    def encode(self, batch: PageTable, last: PageSpans, stage: Stage | None) -> Any:
        """Encode the planned pages and `last` as one batch; the planned pages' stored sizes, in planner order,
        left on the device (flush_sizes). `stage` is not called: the chunks exist only once read back."""
        d = self.device
        planned = len(batch)
        # a page per column a guess: past the first guess, at most 1 / GUESS_SHARE of the planned pages (a wide
        # table's row group holds few pages a column, and its batch would grow by a page per column a guess)
        tries = self.guesses[:max(1, planned // (GUESS_SHARE * max(1, len(self.leaves))))]
        guessed = guessed_pages(batch, len(self.leaves), tries, self.planned_to, bool(last))
        self.table = PageTable.concat([batch, _pages(last), _pages(guessed)])
        self.last = {c: j for j, (c, _, _) in enumerate(last, start=planned)}
        self.guessed = {page: j for j, page in enumerate(guessed, start=planned + len(last))}
        self.ready = None
        kept = self._kept_at_guess(planned, len(last), guessed, self.planned_to == self.input_rows)
        encoded, self.fell = self._batch(self.table, np.zeros(len(self.leaves), dtype=bool),
                                         lambda dict_page, info: self._counts(kept, dict_page, info))
        assert encoded.order is not None
        self.position = np.empty(len(self.table), dtype=np.int64)
        self.position[encoded.order] = np.arange(len(self.table))
        sizes = d.empty(max(1, planned), np.int64)
        d.launch(steps.FLUSH_SIZES, planned, d.upload(self.position[:planned]), encoded.header_len,
                 encoded.body_len, sizes)
        return sizes

    def _kept_at_guess(self, planned: int, last: int, guessed: list[tuple[int, int, int]],
                       reaches_end: bool) -> np.ndarray:
        """The table's pages a row group keeps when it ends at the likeliest cut: the input's end when the batch
        reaches it (every planned page and the last pages: there may be none, when a page check at the end ended
        every page), else the first guess (its planned pages ending there or before, and the pages open there);
        none without a guess."""
        if reaches_end:
            return np.arange(planned + last)
        if not guessed:
            return np.zeros(0, dtype=np.int64)
        r = guessed[0][2]
        ahead = [j for page, j in self.guessed.items() if page[2] == r]
        return np.concatenate([np.flatnonzero(self.table.b[:planned] <= r), np.array(ahead, dtype=np.int64)])

    def _counts(self, kept: np.ndarray, dict_page: np.ndarray, info: np.ndarray) -> Counts:
        """The dictionary pages' entries (and bytes) the `kept` pages of the table need, given each page's
        dictionary choice and state."""
        assert self.win is not None
        encoding = np.where(dict_page[kept], int(Encoding.RLE_DICTIONARY), int(Encoding.PLAIN))
        return dictionary_counts(self.win.cols, self.table.col[kept], encoding, info[kept])

    def _counts_with(self, before: tuple[np.ndarray, np.ndarray, np.ndarray], pages: PageSpans,
                     dict_page: np.ndarray, info: np.ndarray) -> Counts:
        """The dictionary pages' entries (and bytes) the row group needs: its pages kept from the first batch
        (column, encoding, info) and the second batch's `pages` (their dictionary choice and state)."""
        assert self.win is not None
        col = np.array([c for c, _, _ in pages], dtype=np.int64)
        encoding = np.where(dict_page, int(Encoding.RLE_DICTIONARY), int(Encoding.PLAIN))
        return dictionary_counts(self.win.cols, np.concatenate([before[0], col]),
                                 np.concatenate([before[1], encoding]), np.concatenate([before[2], info]))

    def replay(self, sizes: Any, available: int, final: bool) -> int:
        """Replay the checks on the device over the batch's sizes, read back with the batch's results in one
        sync. Without sizes nothing is planned since `load`: NEED_PLAN, and nothing launched."""
        if sizes is None:
            self.input_rows = available if final else None
            return NEED_PLAN
        assert self.sched is not None
        _, state = self.sched.replay(sizes, available, final)
        opened = self._open_pages(available)
        dicts = self.batches[-1].dicts
        sized = [dicts[0].header_len, dicts[0].body_len, dicts[0].crc] if dicts is not None else []
        got = self.batches[-1].fetch_with(self.device, list(state) + opened + sized)
        status, self.block, self.starts, self.ev_end = got[:4]
        self.opened = (got[4], got[5], got[6])
        if dicts is not None:
            self.ready = (dicts[0], got[7:], dicts[1])
        return int(status[0])

    def _open_pages(self, available: int) -> list[Any]:
        """Each column's page open at the replay's cut (empty where none is open, or without a cut), its spans
        and dictionary state, launched after the replay (device arrays: pages, spans, info) so that they are read
        with its sync: a cut that no guess foresaw needs no sync of its own to find them."""
        assert self.win is not None and self.dic is not None and self.sched is not None
        d, n, ar, dic = self.device, len(self.leaves), self.win.arenas, self.dic
        pages = d.empty(3 * n, np.int64).reshape(3, n)
        spans = d.empty(4 * n, np.int64).reshape(4, n)
        d.launch(steps.OPEN_SPANS, n, self.sched.block, self.sched.replay_cursor, available, self.win.dev_cols,
                 ar.idx, pages, spans)
        info = d.empty(n * I_COUNT, np.int64).reshape(n, I_COUNT)
        d.launch(steps.PAGE_INFO, n, pages[0], pages[1], spans[2], spans[3], self.win.dev_cols, ar.idx, dic.ids,
                 dic.efirst, dic.ebytes, dic.overflow, info)
        return [pages, spans, info]

    def _found(self, pages: PageSpans) -> tuple[PageTable, np.ndarray] | None:
        """`pages` (open at the cut) with their spans and dictionary state as read with the replay; None when
        they are not the pages found there."""
        if self.opened is None:
            return None
        found, spans, info = self.opened
        col = np.array([c for c, _, _ in pages], dtype=np.int64)
        want = np.array([(a, b) for _, a, b in pages], dtype=np.int64).reshape(-1, 2)
        if not np.array_equal(found[1:, col].T, want):
            return None
        return PageTable(col, want[:, 0].copy(), want[:, 1].copy(), *(spans[:, col].copy())), info[col]

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
        """The pages open at the cut: those encoded with the first batch at a guessed cut are kept from it, the
        rest encoded as a second batch (a column whose page starts at row 0, its chunk cut inside its first page,
        tests its dictionary again: its fallback is undone). Compressed, the host lays out the second batch's
        pages (and the dictionary pages made with it) without reading its results: they are read with the row
        group's bytes (`chunks.queue_chunks`)."""
        ready = [self.guessed[(c, a, b)] for c, a, b in pages if (c, a, b) in self.guessed]
        if ready:
            self.kept.append((self.table.col[ready], 0, self.position[ready]))
            pages = [(c, a, b) for c, a, b in pages if (c, a, b) not in self.guessed]
            if not pages:
                return
        fell = self.fell.copy()
        fell[[c for c, a, _ in pages if a == 0]] = False
        first = self.batches[0]
        kept = KeptPages.of(self.kept)  # all from the first batch so far
        assert first.order is not None and np.all(kept.batch == 0)
        before = (kept.col, first.encoding[kept.index], first.info[kept.index])
        found = self._found(pages)
        table, info = found if found is not None else (_pages(pages), None)
        made = self.ready[2] if self.ready is not None else None

        def counts(dict_page: np.ndarray, info: np.ndarray) -> Counts:
            """The dictionary pages the row group needs; none to make when the first batch made those."""
            need = self._counts_with(before, pages, dict_page, info)
            return {} if need == made else need

        again, _ = self._batch(table, fell, counts, info, early=True)
        dicts = again.dicts
        if again.known is not None:  # compressed: its results are read with the row group's bytes
            if dicts is not None:
                self.ready = (dicts[0], None, dicts[1])
        else:
            sized = [dicts[0].header_len, dicts[0].body_len, dicts[0].crc] if dicts is not None else []
            got = again.fetch_with(self.device, sized, "batch")
            if dicts is not None:
                self.ready = (dicts[0], got, dicts[1])
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
                            blooms=[self.opts.bloom_filter(leaf.dotted) for leaf in self.leaves], ready=self.ready)


def guessed_pages(batch: PageTable, cols: int, guesses: Sequence[int], horizon: int,
                  final: bool) -> list[tuple[int, int, int]]:
    """(column, first row, guess) of each page open at each guessed cut, given the planned pages `batch` (the page
    check at R ends its pages before the memory check there can cut): a column's page open at R starts where its
    last page ending at or before R ends (or at row 0). Only guesses inside the window (not its end when the input
    ends there: the last pages are encoded then), and no page starting at row 0 (a chunk cut inside its first page
    tests its dictionary again, which the first batch's choice does not)."""
    out: list[tuple[int, int, int]] = []
    for r in dict.fromkeys(guesses):
        if not 0 < r <= horizon or (final and r == horizon):
            continue
        ends = np.where(batch.b <= r, batch.b, 0)
        start = np.zeros(cols, dtype=np.int64)
        np.maximum.at(start, batch.col, ends)
        out += [(int(c), int(start[c]), int(r)) for c in np.flatnonzero((start > 0) & (start < r))]
    return out


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
        self.cuts: list[int] = []  # the rows of the row groups before the open one, in order
        self._last: PlannedRowGroup[PageTable, Any] | None = None

    def checks_values(self, leaf: Leaf) -> bool:
        """Flat leaves' values are checked on the device, where they are converted (`checks.py`)."""
        return device_checked(leaf)

    def row_group(self) -> RowGroupBuilder:
        """A builder for the next row group (its first row in the file: the rows of those before)."""
        if self._last is not None:
            self.rows_done += self._last.rows_kept
            self.cuts.append(self._last.rows_kept)
        # the row group likely ends where one of the last ended (the memory checks close in on the same row when
        # the rows are alike): the pages open there are encoded with the first batch
        recent = self.cuts[-GUESSES:][::-1]  # most recent first; the most frequent first of all
        guesses = sorted(dict.fromkeys(recent), key=lambda r: -recent.count(r))
        row_steps = DeviceSteps(self.leaves, self.opts, self.device, self.codec, self.rows_done, guesses)
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
