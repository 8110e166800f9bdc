"""parquet-java's page and row-group checks in plain Python, record count by record count: the readable
reference the compiled planner (`gpuwrite.pipeline.plan`, `kernels/plan/schedule.py`) is tested against.

`PagePlanner` is ColumnWriteStoreBase.sizeCheck, `LevelMeter` the bytes its RLE level encoders have emitted,
`BlockCheck` InternalParquetRecordWriter.checkBlockSizeReached, and `RowGroupBuilder` interleaves them as the
writer does while it writes, encoding each page when its check ends it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gpuwrite.kernels.encode.rle import rle_emitted_size

from gpuwrite.assemble.pages import stamp_headers
from gpuwrite.backends.base import ColumnEncoders, PageRanges
from gpuwrite.backends.host_steps import HostSteps
from gpuwrite.backends.rowgroup import PlannedRowGroup
from gpuwrite.encode.chunk import ChunkEncoder
from gpuwrite.encode.rules import raw_value_bytes
from gpuwrite.options.model import LONG_MAX, WriteOptions
from gpuwrite.page_model import EncodedChunk
from gpuwrite.pipeline.leafdata import LeafData
from gpuwrite.pipeline.window import LeafWindow
from gpuwrite.schema import Leaf

MIN_RECORDS_FOR_BLOCK_CHECK = 100  # SPEC: InternalParquetRecordWriter.MINIMUM_RECORD_COUNT_FOR_CHECK
MAX_RECORDS_FOR_BLOCK_CHECK = 10_000  # SPEC: InternalParquetRecordWriter.MAXIMUM_RECORD_COUNT_FOR_CHECK
THRESHOLD_TOLERANCE_RATIO = 0.1  # SPEC: ColumnWriteStoreBase.THRESHOLD_TOLERANCE_RATIO


def _java_long_add(a: int, b: int) -> int:
    """a + b with Java's 64-bit wrap-around."""
    s = (a + b) & ((1 << 64) - 1)
    return s - (1 << 64) if s >= 1 << 63 else s


class LevelMeter:
    """Tracks the bytes parquet-java's level encoders (repetition, then definition) have emitted for the
    current page."""

    def __init__(self, leaf: Leaf) -> None:
        self.def_width = leaf.def_width
        self.rep_width = leaf.rep_width
        self.state = np.zeros(6, dtype=np.int64)
        self.rep_state = np.zeros(6, dtype=np.int64)
        self.upto = 0
        self.size = 0

    def reset(self, row: int) -> None:
        """A new page starts at `row`."""
        self.state[:] = 0
        self.rep_state[:] = 0
        self.upto = row
        self.size = 0

    def bytes_until(self, data: LeafData, row: int) -> int:
        """Emitted bytes once rows up to `row` are fed (rows are fed once, in order)."""
        if self.def_width == 0 and self.rep_width == 0:
            return 0
        if row > self.upto:
            ea, eb = data.entry_index(self.upto), data.entry_index(row)
            size = 0
            if self.rep_width:
                assert data.rep is not None
                size += int(rle_emitted_size(data.rep, ea, eb, self.rep_width, self.rep_state))
            if self.def_width:
                size += int(rle_emitted_size(data.def_levels, ea, eb, self.def_width, self.state))
            self.size = size
            self.upto = row
        return self.size


class PagePlanner:
    """parquet-java's page checks (ColumnWriteStoreBase.sizeCheck): at which record counts pages end.

    They depend only on buffered sizes (emitted level bytes plus PLAIN-equivalent value bytes), never on how
    the values end up encoded, so a GPU backend can plan a whole row group's pages before encoding any.
    """

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions) -> None:
        self.leaves = list(leaves)
        self.opts = opts
        self.tolerance = int(np.float32(opts.page_size) * np.float32(THRESHOLD_TOLERANCE_RATIO))
        self.page_start = [0] * len(leaves)
        self.meters = [LevelMeter(leaf) for leaf in leaves]
        self.next_page_check = opts.page_size_check_min

    def buffered(self, c: int, data: LeafData, row: int) -> int:
        """Bytes column c holds for its open page at `row`: emitted levels plus raw values."""
        start = self.page_start[c]
        levels = self.meters[c].bytes_until(data, row)
        va, vb = int(data.value_index(start)), int(data.value_index(row))
        return levels + raw_value_bytes(self.leaves[c], data, va, vb)

    def close(self, c: int, row: int) -> None:
        """Column c wrote its open page, ending at `row`."""
        self.page_start[c] = row
        self.meters[c].reset(row)

    def size_check(self, datas: Sequence[LeafData], row: int) -> list[int]:
        """SPEC: ColumnWriteStoreBase.sizeCheck at record count `row`: the columns whose page ends here.

        Sets the next check; the caller writes those pages and calls close() for each.
        """
        o = self.opts
        min_wait = LONG_MAX
        next_row_count_check = row + o.page_row_count_limit
        flush = []
        for c, data in enumerate(datas):
            used = self.buffered(c, data, row)
            rows = row - self.page_start[c]
            entries = data.entry_index(row) - data.entry_index(self.page_start[c])
            remaining = o.page_size - used
            if (remaining <= self.tolerance or rows >= o.page_row_count_limit
                    or entries >= o.page_value_count_threshold):
                flush.append(c)
                remaining = o.page_size
            else:
                next_row_count_check = min(next_row_count_check, self.page_start[c] + o.page_row_count_limit)
            to_fill = o.page_size_check_max if used == 0 else (rows * remaining) // used
            min_wait = min(min_wait, to_fill)
        if min_wait == LONG_MAX:
            min_wait = o.page_size_check_min
        if o.page_size_check_estimate:
            nxt = row + min(max(min_wait // 2, o.page_size_check_min), o.page_size_check_max)
        else:
            nxt = row + o.page_size_check_min
        self.next_page_check = min(nxt, next_row_count_check)
        return flush


class BlockCheck:
    """parquet-java's row-group memory checks (InternalParquetRecordWriter.checkBlockSizeReached)."""

    def __init__(self, opts: WriteOptions) -> None:
        self.block = opts.block_size
        self.next_mem_check = MIN_RECORDS_FOR_BLOCK_CHECK

    def full(self, mem: int, row: int) -> bool:
        """Whether the row group ends at record count `row`, holding `mem` bytes; else set the next check."""
        record_size = mem // row
        block = self.block
        if mem > block - 2 * record_size:
            return True
        if record_size == 0:
            nxt = MIN_RECORDS_FOR_BLOCK_CHECK  # Java: long cast of +Infinity wraps the sum negative
        else:
            fit = int(np.float32(block) / np.float32(record_size))
            nxt = min(max(MIN_RECORDS_FOR_BLOCK_CHECK, _java_long_add(row, fit) // 2), row + MAX_RECORDS_FOR_BLOCK_CHECK)
        self.next_mem_check = max(nxt, row + 1)
        return False


class RowGroupBuilder:
    """parquet-java's order: at each record count the page check (pages encoded as it ends them), then the
    memory check; the row group ends where the memory check finds it full. `encoders` are ChunkEncoders or
    anything with encode_page(data, a, b) -> a page with `size`, and finish()."""

    def __init__(self, leaves: Sequence[Leaf], encoders: Sequence[Any], opts: WriteOptions) -> None:
        self.leaves = list(leaves)
        self.encoders = list(encoders)
        self.opts = opts
        self.planner = PagePlanner(leaves, opts)
        self.blocks = BlockCheck(opts)
        self.produced = [0] * len(leaves)

    def _write_pages(self, columns: list[int], datas: Sequence[LeafData], row: int) -> None:
        """Each listed column writes its open page, rows page_start..row."""
        for c in columns:
            page = self.encoders[c].encode_page(datas[c], self.planner.page_start[c], row)
            if isinstance(self.encoders[c], ChunkEncoder):
                stamp_headers([page])
            self.produced[c] += page.size
            self.planner.close(c, row)

    def advance(self, datas: Sequence[LeafData], available: int, final: bool) -> int | None:
        """Run the checks over rows 0..available; the row count if the row group ends, else None."""
        limit = self.opts.block_row_count_limit
        planner, blocks = self.planner, self.blocks
        while True:
            row = min(planner.next_page_check, blocks.next_mem_check, limit)
            if row > available:
                if final and available > 0:
                    self._flush(datas, available)
                    return available
                return None
            if row == planner.next_page_check:
                self._write_pages(planner.size_check(datas, row), datas, row)
            if row >= limit or (row == blocks.next_mem_check and blocks.full(self._memory(datas, row), row)):
                self._flush(datas, row)
                return row

    def _memory(self, datas: Sequence[LeafData], row: int) -> int:
        """Bytes the row group holds at `row`: written pages plus open pages."""
        return sum(self.produced[c] + self.planner.buffered(c, d, row) for c, d in enumerate(datas))

    def _flush(self, datas: Sequence[LeafData], row: int) -> None:
        """Every column with open rows writes its last page (ColumnWriteStoreBase.flush)."""
        self._write_pages([c for c in range(len(datas)) if self.planner.page_start[c] < row], datas, row)

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks of this row group, in schema order."""
        return [e.finish() for e in self.encoders]


class ListEncoders:
    """The driver's ColumnEncoders over a list of chunk encoders (or stand-ins), one column each."""

    def __init__(self, encoders: list[Any]) -> None:
        self.encoders = encoders
        self.window: Sequence[LeafData] = ()

    def load(self, window: Sequence[LeafData]) -> None:
        self.window = window

    def encode(self, ranges: PageRanges, done: Callable[[int], None] | None = None) -> None:
        for c, spans in enumerate(ranges):
            for a, b in spans:
                page = self.encoders[c].encode_page(self.window[c], a, b)
                if isinstance(self.encoders[c], ChunkEncoder):
                    stamp_headers([page])
            if done is not None and spans:
                done(c)

    def chunk(self, column: int) -> Any:
        return self.encoders[column].finish()

    def pages(self, column: int) -> list[Any]:
        return self.encoders[column].pages  # type: ignore[no-any-return]

    def truncate(self, column: int, keep: int) -> None:
        self.encoders[column].truncate(keep)

    def finish(self) -> list[Any]:
        return [e.finish() for e in self.encoders]


class WholeWindowSteps(HostSteps):
    """The host steps with the GPU backend's horizon: the whole window planned and encoded as one batch, so the
    driver's one-batch path (the device's) runs over host encoders."""

    def horizon(self, stop: int) -> int:
        """The whole window (up to the row-group row limit)."""
        return stop


def host_driver(leaves: Sequence[Leaf], opts: WriteOptions, encoders: ColumnEncoders,
                whole_window: bool = False) -> PlannedRowGroup[Any, Any]:
    """The shared row-group driver over host steps with these encoders (the CPU backend's horizon, or the
    device's: the whole window)."""
    steps = WholeWindowSteps if whole_window else HostSteps
    return PlannedRowGroup(steps(leaves, opts, encoders), opts)


class OnLeafData:
    """A row-group builder driven, like the reference, with lists of LeafData (wrapped as windows)."""

    def __init__(self, builder: Any) -> None:
        self.builder = builder

    def advance(self, datas: Sequence[LeafData], available: int, final: bool) -> int | None:
        return self.builder.advance(LeafWindow(list(datas)), available, final)  # type: ignore[no-any-return]

    def finish(self) -> Any:
        return self.builder.finish()
