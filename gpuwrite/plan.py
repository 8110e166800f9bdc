"""Where pages and row groups end, decided exactly as parquet-java's writer decides while it writes.

Page checks (ColumnWriteStoreBase.sizeCheck) and row-group memory checks
(InternalParquetRecordWriter.checkBlockSizeReached) happen at record counts that depend on the sizes seen
so far; this module replays that schedule over whole columns, asking the chunk encoders for a page whenever
parquet-java would write one. Row-group checks count finished pages at their compressed size, so pages are
encoded as the schedule reaches them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .columns import LeafData
from .encode.chunk import ChunkEncoder, EncodedChunk, EncodedPage, LevelMeter, raw_value_bytes
from .options import WriteOptions
from .schema import Leaf

MIN_RECORDS_FOR_BLOCK_CHECK = 100  # SPEC: InternalParquetRecordWriter.MINIMUM_RECORD_COUNT_FOR_CHECK
MAX_RECORDS_FOR_BLOCK_CHECK = 10_000  # SPEC: InternalParquetRecordWriter.MAXIMUM_RECORD_COUNT_FOR_CHECK
THRESHOLD_TOLERANCE_RATIO = 0.1  # SPEC: ColumnWriteStoreBase.THRESHOLD_TOLERANCE_RATIO
LONG_MAX = 2**63 - 1


Runner = Callable[[Callable[..., EncodedPage], list[tuple]], list[EncodedPage]]


def serial(fn: Callable[..., EncodedPage], jobs: list[tuple]) -> list[EncodedPage]:
    """Run the page jobs one after the other."""
    return [fn(*job) for job in jobs]


def _encode(encoder: ChunkEncoder, data: LeafData, start: int, row: int) -> EncodedPage:
    """One page job: encoder writes rows start..row of data."""
    return encoder.encode_page(data, start, row)


def _java_long_add(a: int, b: int) -> int:
    """a + b with Java's 64-bit wrap-around."""
    s = (a + b) & ((1 << 64) - 1)
    return s - (1 << 64) if s >= 1 << 63 else s


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
    """Replays parquet-java's page and row-group checks for one row group, encoding pages as they end."""

    def __init__(self, leaves: Sequence[Leaf], encoders: Sequence[ChunkEncoder], opts: WriteOptions,
                 run: Runner = serial) -> None:
        self.run = run
        self.leaves = list(leaves)
        self.encoders = list(encoders)
        self.opts = opts
        self.planner = PagePlanner(leaves, opts)
        self.blocks = BlockCheck(opts)
        self.produced = [0] * len(leaves)

    def _write_pages(self, columns: list[int], datas: Sequence[LeafData], row: int) -> None:
        """Each listed column writes its open page, rows page_start..row (columns encode concurrently)."""
        jobs = [(self.encoders[c], datas[c], self.planner.page_start[c], row) for c in columns]
        for c, page in zip(columns, self.run(_encode, jobs), strict=True):
            self.produced[c] += page.size
            self.planner.close(c, row)

    def advance(self, datas: Sequence[LeafData], available: int, final: bool) -> int | None:
        """Run the checks over rows 0..available; return the row count if the row group ends, else None.

        With `final`, the group ends at `available` at the latest (the end of the input).
        """
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
