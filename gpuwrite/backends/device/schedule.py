"""parquet-java's page checks and row-group replay over a window on the device: the compiled planner
(`kernels/plan/schedule.py`, the same code the CPU backend calls on the host) run as device steps over the window's
arenas, so the host never holds the levels. The page checks run in segments of rows, all at once (`plan`:
kernels/plan/planner.py, plan_count / plan_walk / plan_emit), the replay as one block after a thread per page
has marked each column's counts and level meters every planner.MARK_ROWS rows (replay_marks).

The planner's column data is the window itself: `desc` from the column table, level bytes from `lev` (widths
above 1), 1-bit level streams packed into `bits` by one launch, indexes from `idx`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuwrite.kernels.plan import planner as P
from gpuwrite.kernels.plan import schedule as k
from gpuwrite.kernels.plan.layout import (
    CT_DEF,
    CT_DEFW,
    CT_ENTRIES,
    CT_ENTRY,
    CT_KIND,
    CT_OFFS,
    CT_REP,
    CT_REPW,
    CT_VBEFORE,
    K_BYTES,
    K_FLBA,
    K_INT96,
)
from gpuwrite.kernels.plan.planner import LS_COUNT, LS_WORD

from ...options.model import WriteOptions
from ...pipeline.plan import page_ends, plan_growing, schedule_params
from . import steps
from .encode import PageTable
from .ops import Device
from .window import DeviceWindow


def planner_columns(cols: np.ndarray, ones: int) -> tuple[np.ndarray, np.ndarray]:
    """(desc for the planner kernels, 1-bit level streams to pack: int64[K, 3] of lev position, levels, first
    word). 1-bit streams (flat definition levels, and repetition / definition levels of width 1) are read from
    `bits` at a bit offset; wider ones from `lev` at a byte offset. An optional flat column without nulls reads
    the shared run of ones (its levels are all 1)."""
    desc = np.full((cols.shape[0], k.D_COUNT), -1, dtype=np.int64)
    streams: list[tuple[int, int, int]] = []
    words = 0

    def stream(lev: int, count: int) -> int:
        nonlocal words
        streams.append((lev, count, words))
        first = words
        words += (count + 63) // 64 + 1
        return 64 * first

    for c in range(cols.shape[0]):
        kind = int(cols[c, CT_KIND])
        d = desc[c]
        d[k.D_KIND] = kind  # sizes the raw values (kernels/fallback.raw_size)
        d[k.D_REPW], d[k.D_DEFW] = cols[c, CT_REPW], cols[c, CT_DEFW]
        d[k.D_ENTRY], d[k.D_VBEFORE] = cols[c, CT_ENTRY], cols[c, CT_VBEFORE]
        if kind in (K_BYTES, K_FLBA, K_INT96):
            d[k.D_OFFS] = cols[c, CT_OFFS]
        entries = int(cols[c, CT_ENTRIES])
        for field, width, where in ((k.D_REP, cols[c, CT_REPW], cols[c, CT_REP]),
                                    (k.D_DEF, cols[c, CT_DEFW], cols[c, CT_DEF])):
            if width == 0:
                continue
            if where < 0 and field == k.D_DEF:
                where = ones  # optional, no nulls in the window (yet): all ones
            if where < 0:
                continue
            d[field] = stream(int(where), entries) if width == 1 else int(where)
    return desc, np.array(streams, dtype=np.int64).reshape(-1, 3)


class DeviceSchedule:
    """The page planner and the row-group replay of one row group, on the device."""

    def __init__(self, device: Device, win: DeviceWindow, opts: WriteOptions) -> None:
        self.device, self.win = device, win
        desc, streams = planner_columns(win.cols, win.ones)
        self.ncols = len(desc)
        nwords = int(streams[:, LS_WORD].max() + (streams[:, LS_COUNT].max() + 63) // 64 + 2) if len(streams) else 2
        self.bits = device.full(nwords, 0, np.uint64)
        if len(streams):
            parts = P.pack_parts(streams)
            device.launch(steps.PACK_LEVELS, len(parts), device.upload(parts), device.upload(streams), win.arenas.lev,
                          self.bits)
        self.desc_host, self.desc = desc, device.upload(desc)
        self.words = win.arenas.lev.view(np.uint64)
        self.params = device.upload(schedule_params(opts))
        self.sched = device.upload(np.array([opts.page_size_check_min, 0, 0], dtype=np.int64))
        cursors = device.full(2 * self.ncols * k.S_COUNT, 0, np.int64).reshape(2, self.ncols, k.S_COUNT)
        self.cursor, self.replay_cursor = cursors[0], cursors[1]
        self.block = device.upload(np.array([k.MIN_RECORDS_FOR_BLOCK_CHECK, 0, -1], dtype=np.int64))
        # every check is at least min(check_min, check_max, page row limit) rows after the last, but columns'
        # page row limits can add a check each: a first guess, grown when the planner says it is full
        spacing = max(1, min(opts.page_size_check_min, opts.page_size_check_max, opts.page_row_count_limit))
        events = win.rows // spacing + self.ncols + 2
        self._arrays(events, 2 * events + self.ncols)
        self.status = device.empty(1, np.int64)
        self.plan_status = device.empty(3, np.int64)
        self.next_row = opts.page_size_check_min  # the next page check's row, as the last plan left it
        self.seg_rows = P.segment_rows(opts.page_row_count_limit)
        self.params_host = schedule_params(opts)
        self.seg_checks = P.segment_checks(self.seg_rows, self.ncols, self.params_host)
        self.bad: np.ndarray | None = None  # host copy of win.bad, once read
        self.events = self.flushes = 0

    def _arrays(self, events: int, flushes: int) -> None:
        """Event and page arrays of these capacities."""
        d = self.device  # the planner writes every entry before anything reads it
        self.ev_row = d.empty(events, np.int64)
        self.ev_end = d.empty(events, np.int64)
        self.ev_lev = d.empty(events * self.ncols, np.int32).reshape(events, self.ncols)
        self.fl_col = d.empty(flushes, np.int64)
        self.fl_start = d.empty(flushes, np.int64)

    def _grow(self, events: int, flushes: int) -> None:
        """Room for `events` checks and `flushes` pages (doubling), keeping the arrays' contents."""
        d = self.device
        if events > len(self.ev_row):
            size = max(events, 2 * len(self.ev_row))
            self.ev_row, self.ev_end, self.ev_lev = (d.grown(a, size) for a in (self.ev_row, self.ev_end, self.ev_lev))
        if flushes > len(self.fl_col):
            size = max(flushes, 2 * len(self.fl_col) + self.ncols)
            self.fl_col, self.fl_start = (d.grown(a, size) for a in (self.fl_col, self.fl_start))

    def _walks(self, horizon: int) -> tuple[int, tuple[Any, ...], tuple[Any, ...]]:
        """Launch the segments' counts and both walks of each segment from the next check up to `horizon`: (the
        segments, plan_emit's first arguments: segs, sched, cursor and the chains)."""
        d, ar = self.device, self.win.arenas
        segs = P.segment_table(self.next_row, horizon, self.seg_rows)
        n, e, c = len(segs), self.seg_checks, self.ncols
        f = e * c + c  # a walk needs room for a check's pages before each check
        dsegs = d.upload(segs)
        ones = d.empty(n * c, np.int64).reshape(n, c)
        chain = (d.empty(2 * n * P.X_COUNT, np.int64).reshape(2, n, P.X_COUNT),
                 d.empty(2 * n * c * k.S_COUNT, np.int64).reshape(2, n, c, k.S_COUNT),
                 d.empty(2 * n * e, np.int64).reshape(2, n, e), d.empty(2 * n * e, np.int64).reshape(2, n, e),
                 d.empty(2 * n * e * c, np.int32).reshape(2, n, e, c),
                 d.empty(2 * n * f, np.int64).reshape(2, n, f), d.empty(2 * n * f, np.int64).reshape(2, n, f))
        starts = d.empty(n * e * c, np.int64).reshape(n, e, c)
        d.launch(steps.PLAN_COUNT, n, self.desc, self.bits, dsegs, self.cursor, ones)
        for kernel, w in ((steps.PLAN_SPEC, P.W_SPEC), (steps.PLAN_FIX, P.W_FIX)):
            d.launch(kernel, n, w, self.desc, ar.lev, self.words, self.bits, ar.idx, self.params, dsegs, ones,
                     self.sched, self.cursor, *chain, starts)
        return n, (dsegs, self.sched, self.cursor), chain

    def plan(self, horizon: int) -> tuple[PageTable, np.ndarray]:
        """Plan every check up to `horizon`: the new pages (in check order, then column order; their entries
        and values still to be found), and each column's open page start after them."""
        first_event, first_flush = self.events, self.flushes
        n, head, chain = self._walks(horizon)
        while True:
            self.device.launch(steps.PLAN_EMIT, n, *head, *chain, self.ev_row, self.ev_end, self.ev_lev, self.fl_col,
                               self.fl_start, self.plan_status)
            got = self._read(first_event, first_flush)
            sched, plan_status = got[0], got[1]
            status = int(plan_status[0])
            if status != k.PLAN_FULL:
                break
            self._grow(int(plan_status[1]), int(plan_status[2]))  # emitted again into room for all
        if status == P.PLAN_BROKEN:
            raise RuntimeError("page planner: a segment's checks outgrew their bound (planner.segment_checks)")
        if status == P.PLAN_AGAIN:
            got = self._rest(horizon, got, first_event, first_flush)
            sched = got[0]
        self.next_row = int(sched[k.SC_NEXT])
        self.events, self.flushes = int(sched[k.SC_EVENTS]), int(sched[k.SC_FLUSHES])
        cursor = got[2]
        col, start = got[4][:self.flushes - first_flush], got[5][:self.flushes - first_flush]
        ev_row, ev_end = got[6][:self.events - first_event], got[7][:self.events - first_event]
        end = page_ends(ev_row, ev_end, first_flush)
        return PageTable(col, start, end, np.zeros_like(col), np.zeros_like(col), np.zeros_like(col),
                         np.zeros_like(col)), cursor

    def _rest(self, horizon: int, got: list[np.ndarray], first_event: int, first_flush: int) -> list[np.ndarray]:
        """A segment's walks did not meet (its chain from the guess never joined the true one): the checks from its
        end up to `horizon` are one chain, each check's row following from the state the last one left, a
        sequential walk that a CPU core runs about 100 times faster than one GPU thread (1.1 ms against a modeled
        0.12 s for a million rows of strings, docs/gpu.md). So the host runs it (`schedule.plan_pages`, the CPU
        backend's planner) over the window's level bytes, 1-bit streams and indexes read back with one sync, and
        copies the new checks, pages and state back. `got`: the plan's read (`_read`); returns it as `_read` would
        after the rest."""
        d, ar = self.device, self.win.arenas
        sched = got[0].copy()
        ev0, fl0 = int(sched[k.SC_EVENTS]), int(sched[k.SC_FLUSHES])
        lev, bits, index, cursor = d.download_many([ar.lev, self.bits, ar.idx, self.cursor], "plan rest")
        rows = max(0, horizon - int(sched[k.SC_NEXT]) + 1)
        room = P.segment_checks(rows, self.ncols, self.params_host)  # a bound on the checks those rows hold
        fl_col = np.zeros(fl0 + (room + 1) * self.ncols, np.int64)
        cursor = cursor.copy()
        ev_row, ev_end, ev_lev, fl_col, fl_start = plan_growing(  # (the arrays hold the rest: never grown)
            (self.desc_host, lev, lev.view(np.uint64), bits, index), self.params_host, horizon, sched, cursor,
            [np.zeros(ev0 + room, np.int64), np.zeros(ev0 + room, np.int64),
             np.zeros((ev0 + room, self.ncols), np.int32), fl_col, np.zeros_like(fl_col)])
        ev1, fl1 = int(sched[k.SC_EVENTS]), int(sched[k.SC_FLUSHES])
        self._grow(ev1, fl1)
        d.upload_into(self.sched, 0, sched)
        d.upload_into(self.cursor.reshape(-1), 0, cursor)
        d.upload_into(self.ev_row, ev0, ev_row[ev0:ev1])
        d.upload_into(self.ev_end, ev0, ev_end[ev0:ev1])
        d.upload_into(self.ev_lev.reshape(-1), ev0 * self.ncols, ev_lev[ev0:ev1])
        d.upload_into(self.fl_col, fl0, fl_col[fl0:fl1])
        d.upload_into(self.fl_start, fl0, fl_start[fl0:fl1])
        # the checks and pages before the rest were read with the plan
        ev_row[first_event:ev0], ev_end[first_event:ev0] = got[6][:ev0 - first_event], got[7][:ev0 - first_event]
        fl_col[first_flush:fl0], fl_start[first_flush:fl0] = got[4][:fl0 - first_flush], got[5][:fl0 - first_flush]
        return [sched, np.array([k.PLAN_DONE, ev1, fl1], np.int64), cursor[:, k.S_START], got[3],
                fl_col[first_flush:fl1], fl_start[first_flush:fl1], ev_row[first_event:ev1], ev_end[first_event:ev1]]

    def _read(self, first_event: int, first_flush: int) -> list[np.ndarray]:
        """One sync: the planner's counters and status, the conversion's and the value checks' refusals, and its
        pages and events read to the arrays' capacity (the counts are known only after the read)."""
        got: list[np.ndarray] = self.device.download_many(
            [self.sched, self.plan_status, self.cursor[:, k.S_START], self._errs(), self.fl_col[first_flush:],
             self.fl_start[first_flush:], self.ev_row[first_event:], self.ev_end[first_event:],
             *([self.win.bad] if self.win.bad is not None and self.bad is None else [])], "plan")
        if len(got) > 8:
            self.bad = got[8]  # the value checks' results (checks.py), read with the same sync
        self._refuse(got[3])
        return got

    def _errs(self) -> Any:
        """The conversion's refusals, read with the planner's first sync (a placeholder when none are kept)."""
        return self.win.errs if self.win.errs is not None else self.status

    def _refuse(self, errs: np.ndarray) -> None:
        """Raise the CPU path's error when the conversion refused a value."""
        if self.win.errs is None:
            return
        from .convert import conversion_error

        err = conversion_error(errs, self.win.converted)
        if err is not None:
            raise err

    def replay(self, sizes: Any, available: int, final: bool) -> tuple[int, Any]:
        """Replay the memory checks with the stored sizes of every planned page (device array, planner order);
        launched, not waited for: (the status array, the replay state) for the caller to read with its next
        sync."""
        d, ar = self.device, self.win.arenas
        n = self.flushes
        limits = d.upload(np.array([available, int(final), self.events], dtype=np.int64))
        e = self.events  # the checks planned: the replay reads no further (and its cost model counts them)
        every = P.MARK_ROWS  # each column's counts and meters marked every `every` rows, its pages in parallel
        cells = max(1, (available - 1) // every + 1)
        marks = d.empty(self.ncols * cells * P.MK_COUNT, np.int64).reshape(self.ncols, cells, P.MK_COUNT)
        d.launch(steps.REPLAY_MARKS, n + self.ncols, self.desc, ar.lev, self.words, self.bits, ar.idx,
                 self.ev_row[:e], self.ev_end[:e], self.fl_col, self.fl_start, self.cursor, self.sched, limits, every,
                 marks)
        d.launch(steps.REPLAY, 1, self.desc, ar.lev, self.words, self.bits, ar.idx, self.params, limits, self.sched,
                 self.ev_row[:e], self.ev_end[:e], self.ev_lev[:e], self.fl_col, sizes, self.block,
                 self.replay_cursor, self.status, marks, every)
        return n, (self.status, self.block, self.replay_cursor[:, k.S_START], self.ev_end)
