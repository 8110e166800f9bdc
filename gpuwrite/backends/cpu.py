"""The CPU backend: one `encode.chunk.ChunkEncoder` per column (numba kernels, which release the GIL), the
columns of a batch encoded concurrently on a thread pool."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from ..assemble.pages import stamp_headers
from ..encode.chunk import ChunkEncoder, ChunkOptions, SharedLevels
from ..encode.rules import raw_value_bytes
from ..options.model import WriteOptions
from ..page_model import Compressor, EncodedChunk, EncodedPage
from ..pipeline import buffers, heap
from ..pipeline.leafdata import LeafData
from ..schema import Leaf
from .base import PageRanges, RowGroupBuilder
from .host_steps import HostSteps
from .rowgroup import PlannedRowGroup
from .workpool import WorkPool, grouped, start_order, wait_in_order, worth_threads

# A byte string's hashing, dictionary lookup and statistics cost about as much per value as encoding this many
# more bytes of fixed-width values (measured on a timeseries: 2 M short status strings, 12 MB PLAIN, took
# 3.5x the CPU of the 16 MB timestamp column; counted by their bytes alone, the strings started second and
# ended the write alone)
BYTES_VALUE_COST = 16

_thread_limit: int | None = None  # cores this process may use for a file's pages (None: every core)


def limit_threads(cores: int | None) -> None:
    """Encode each file's pages on at most `cores` threads in this process (None: one per core).

    For a process that is given a share of the machine, as a Spark executor's Python worker is given
    spark.task.cpus cores per task: more threads than that only add hand-offs between threads that wait
    for the same cores. Files opened afterwards use the limit; the bytes are the same with any count.
    """
    global _thread_limit
    if cores is not None and cores < 1:
        raise ValueError(f"limit_threads: cores must be at least 1, got {cores}")
    _thread_limit = cores


def page_pool(columns: int) -> WorkPool | None:
    """Threads for page encoding (and for converting rows ahead: `window.RowWindow`): one per core (at most
    `limit_threads`, at most one per column), the writing thread one of them (it runs the jobs it waits for:
    `workpool.wait_in_order`); None when that is one."""
    parallel = min(os.cpu_count() or 1, columns, _thread_limit or columns)
    return WorkPool(parallel - 1) if parallel > 1 else None


class CpuEncoders:
    """The CPU `ColumnEncoders` of one row group (driven by `host_steps.HostSteps`)."""

    def __init__(self, leaves: Sequence[Leaf], chunk_options: Sequence[ChunkOptions], pool: WorkPool | None) -> None:
        """`chunk_options`: each leaf's, built once per file (`ChunkOptions.for_leaf`)."""
        self.encoders = [ChunkEncoder(leaf, options) for leaf, options in zip(leaves, chunk_options, strict=True)]
        shared = SharedLevels()  # sibling nested leaves' pages: their common level sections encoded once
        for encoder in self.encoders:
            if encoder.leaf.nested:
                encoder.shared = shared
        self.pool = pool
        self.window: Sequence[LeafData] = ()

    def load(self, window: Sequence[LeafData]) -> None:
        """Encode from this window from now on."""
        self.window = window

    def _encode_column(self, c: int, ranges: Sequence[tuple[int, int]]) -> None:
        """One column's new pages, headers included."""
        stamp_headers(self.encoders[c].encode_pages(self.window[c], ranges))

    def encode(self, ranges: PageRanges, done: Callable[[int], None] | None = None) -> None:
        """Each column's next pages; columns run concurrently on the pool (cheap ones a group of neighbours per
        job: `workpool.grouped`), or here when they are too small to gain from threads (`workpool.worth_threads`).
        `done(c)` runs on this thread, in schema order, once column c's pages (and those of every column before
        it) are encoded."""
        jobs = [(c, r) for c, r in enumerate(ranges) if r]
        costs = [self._cost(c, r) for c, r in jobs] if self.pool is not None and len(jobs) > 1 else []
        groups = grouped(costs)
        if self.pool is None or len(groups) < 2 or not worth_threads(costs):
            self._encode_columns(jobs, done)
            return
        # the costliest groups first (longest-first scheduling: a large string column started last would hold
        # one thread while the other idles), waited for in schema order so a failure is the first column's; the
        # last batch (`done`, whose chunks are written in schema order as they finish) in schema order but for
        # its largest groups, so the file is written while later columns encode instead of after the costliest
        # ones (workpool.start_order)
        order = [groups[k] for k in start_order([sum(costs[i] for i in g) for g in groups], self.pool.parallel,
                                                done is not None)]
        # chunks staged as they finish are built in their columns' jobs too (dictionary page compressed there, on
        # a pool thread or on this one while it waits), not when staged
        futures = {g.start: self.pool.submit(self._encode_columns, [jobs[i] for i in g], None, done is not None)
                   for g in order}

        def finished(k: int) -> None:
            assert done is not None
            for i in groups[k]:
                done(jobs[i][0])

        wait_in_order([futures[g.start] for g in groups], None if done is None else finished, self.pool)

    def _encode_columns(self, jobs: Sequence[tuple[int, Sequence[tuple[int, int]]]],
                        done: Callable[[int], None] | None = None, finish: bool = False) -> None:
        """Several columns' new pages, one after another (`done(c)` after each, when given; `finish`: each
        column's chunk built too, so that `chunk(c)` returns it ready-made)."""
        for c, r in jobs:
            self._encode_column(c, r)
            if finish:
                self.encoders[c].finish()
            if done is not None:
                done(c)

    def _cost(self, c: int, ranges: Sequence[tuple[int, int]]) -> int:
        """A column's pages' PLAIN-equivalent bytes, what their encoding's time mostly follows, and for byte
        strings BYTES_VALUE_COST more per value. Measured over each run of adjoining pages at once (a batch's
        pages of a column usually adjoin): a value_index and raw_value_bytes call a page cost a wide table's
        main thread 1-2 ms before any column could start."""
        data, leaf = self.window[c], self.encoders[c].leaf
        per_value = 0 if leaf.fixed_width else BYTES_VALUE_COST
        cost = 0
        i = 0
        while i < len(ranges):
            a, b = ranges[i]
            i += 1
            while i < len(ranges) and ranges[i][0] == b:
                b = ranges[i][1]
                i += 1
            va, vb = data.value_index(a), data.value_index(b)
            cost += raw_value_bytes(leaf, data, va, vb) + per_value * (vb - va)
        return cost

    def pages(self, column: int) -> Sequence[EncodedPage]:
        """The column's pages so far."""
        return self.encoders[column].pages

    def truncate(self, column: int, keep: int) -> None:
        """Drop the column's pages after the first `keep`, restoring its dictionary."""
        self.encoders[column].truncate(keep)

    def chunk(self, column: int) -> EncodedChunk:
        """The column's chunk as its pages stand (the same object while they do not change)."""
        return self.encoders[column].finish()

    def finish(self) -> list[EncodedChunk]:
        """The finished chunks, in schema order."""
        return [e.finish() for e in self.encoders]


class CpuBackend:
    """The CPU `Backend`: a thread pool shared by the file's row groups."""

    name = "cpu"
    converts_on_host = True

    def __init__(self, leaves: Sequence[Leaf], opts: WriteOptions, compress: Compressor) -> None:
        self.leaves, self.opts = leaves, opts
        # compressed pages from kept slabs, not malloc (`buffers.Arena`): the file's own, let go when it closes
        self.chunk_options = ChunkOptions.for_leaves(leaves, opts, compress, buffers.Arena())
        self.pool = page_pool(len(leaves))
        heap.enable()  # a write's freed temporaries kept for the next one, not page-faulted in afresh

    def checks_values(self, leaf: Leaf) -> bool:
        """No: the writer checks every batch's values before the CPU path converts them."""
        return False

    def row_group(self) -> RowGroupBuilder:
        """A builder for the next row group: the shared driver over the host steps and this file's threads."""
        encoders = CpuEncoders(self.leaves, self.chunk_options, self.pool)
        return PlannedRowGroup(HostSteps(self.leaves, self.opts, encoders), self.opts)

    def close(self) -> None:
        """Stop the threads, and let go of the chunk options (their arena holds a slab for each thread that
        encoded: a closed writer the caller keeps would keep them from the reaper and `release_memory`)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None
        self.chunk_options = []
