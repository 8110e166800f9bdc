"""The CPU backend's page-encoding threads: one per core, at most `limit_threads` (a Spark task's cores), the
same bytes with any count."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from gpuwrite.api import write_table
from gpuwrite.backends import cpu


@pytest.fixture(autouse=True)
def _no_limit() -> Iterator[None]:
    yield
    cpu.limit_threads(None)


def _workers(pool: object) -> int:
    """Jobs a file's pages run on at once: the pool's threads and the writing thread that waits for them."""
    return 1 if pool is None else pool.parallel  # type: ignore[attr-defined]


def test_limit_caps_the_threads_of_files_opened_afterwards() -> None:
    cores = os.cpu_count() or 1
    assert _workers(cpu.page_pool(50)) == min(cores, 50)
    cpu.limit_threads(1)
    assert cpu.page_pool(50) is None  # one thread: the pages are encoded on the writing thread
    cpu.limit_threads(3)
    assert _workers(cpu.page_pool(50)) == min(cores, 3)
    assert _workers(cpu.page_pool(2)) == min(cores, 2)
    cpu.limit_threads(None)
    assert _workers(cpu.page_pool(50)) == min(cores, 50)
    with pytest.raises(ValueError, match="at least 1"):
        cpu.limit_threads(0)


@pytest.mark.parametrize("small_job", [None, 0])
def test_same_bytes_on_one_thread_and_on_several(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 small_job: int | None) -> None:
    """Columns encoded side by side (grouped as the pool groups small jobs, or each its own job) give the bytes
    one thread gives (threads used though the columns are too small to gain from them)."""
    monkeypatch.setattr("gpuwrite.backends.workpool.PARALLEL_JOB_BYTES", 0)
    if small_job is not None:
        monkeypatch.setattr("gpuwrite.backends.workpool.SMALL_JOB", small_job)
    table = pa.table({f"c{i}": pa.array([(r * (i + 3)) % 97 for r in range(5000)], pa.int64()) for i in range(6)})
    one, many = tmp_path / "one.parquet", tmp_path / "many.parquet"
    cpu.limit_threads(1)
    write_table(table, str(one), device="cpu")
    cpu.limit_threads(None)
    write_table(table, str(many), device="cpu")
    assert one.read_bytes() == many.read_bytes()


def test_chunks_are_built_in_their_columns_jobs_not_when_staged(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The chunks staged as their columns finish (dictionary pages compressed) are built in the columns' jobs,
    on the pool's threads or on the writing thread while it waits for them; staging only finds them made."""
    import threading

    from gpuwrite.encode.chunk import ChunkEncoder

    if cpu.page_pool(4) is None:
        pytest.skip("one core: no pool")
    in_job = threading.local()
    built: list[tuple[bool, bool]] = []  # (inside a job, on the writing thread) per chunk built
    build, run = ChunkEncoder._build, cpu.CpuEncoders._encode_columns

    def spy(self: ChunkEncoder) -> object:
        built.append((getattr(in_job, "on", False), threading.current_thread() is threading.main_thread()))
        return build(self)

    def job(self: cpu.CpuEncoders, *args: object) -> None:
        in_job.on = True
        try:
            run(self, *args)  # type: ignore[arg-type]
        finally:
            in_job.on = False

    monkeypatch.setattr(ChunkEncoder, "_build", spy)
    monkeypatch.setattr(cpu.CpuEncoders, "_encode_columns", job)
    table = pa.table({f"c{i}": [j % (5 + i) for j in range(60_000)] for i in range(4)})
    write_table(table, tmp_path / "t.parquet")
    assert len(built) >= 4 and all(inside for inside, _ in built)


def _start_order(monkeypatch: pytest.MonkeyPatch, table: pa.Table) -> tuple[list[int], list[int]]:
    """Encode `table` as a write's last batch (3 pages of all its rows, on a 2-thread pool): the columns in the
    order their jobs were started, and in the order their chunks were handed on."""
    from gpuwrite.backends.workpool import WorkPool
    from gpuwrite.encode.compress import compressor
    from gpuwrite.options.model import WriteOptions
    from gpuwrite.pipeline.columns import leaf_data
    from gpuwrite.pipeline.rebase import RebaseOptions
    from gpuwrite.schema import FileSchema

    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    options = cpu.ChunkOptions.for_leaves(schema.leaves, opts, compressor(opts.compression))
    pool = WorkPool(2)
    started: list[int] = []
    submit = pool.submit

    def record(fn: object, jobs: list, *args: object) -> object:
        started.append(jobs[0][0])
        return submit(fn, jobs, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(pool, "submit", record)
    encoders = cpu.CpuEncoders(schema.leaves, options, pool)
    encoders.load([leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts)) for leaf in schema.leaves])
    written: list[int] = []
    try:
        encoders.encode([[(0, table.num_rows)]] * 3, written.append)
    finally:
        pool.shutdown()
    return started, written


def test_the_last_batch_starts_its_costliest_column_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch whose chunks are written as they finish starts a column costing more than half a thread's
    share first, even when it is last in the schema (it would otherwise run alone after the others)."""
    rows = 40_000
    table = pa.table({"ts": pa.array(range(rows), pa.int64()), "id": pa.array([i % 7 for i in range(rows)], pa.int32()),
                      "text": pa.array([f"{i:08d} some words of text" for i in range(rows)])})
    started, written = _start_order(monkeypatch, table)
    assert started[0] == 2 and sorted(started) == [0, 1, 2]
    assert written == [0, 1, 2]  # still handed on in schema order


def test_short_strings_start_before_a_column_of_more_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A timeseries' status strings (few PLAIN bytes a value, but each hashed and looked up in the dictionary)
    start before the timestamps, which have more bytes but cost less: started second, the strings ended the
    write alone."""
    rows = 40_000
    table = pa.table({"ts": pa.array(range(rows), pa.int64()), "id": pa.array([i % 7 for i in range(rows)], pa.int32()),
                      "status": pa.array(["ok", "warn", "ok", "ok"] * (rows // 4))})
    started, _ = _start_order(monkeypatch, table)
    assert started == [2, 0, 1]


def test_cost_of_adjoining_pages_is_measured_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A column's cost over a batch of adjoining pages is its bytes over their whole span, found with two value
    lookups, not two a page (a wide table's 80 columns of pages cost the main thread ~1 ms before any column
    started); pages apart are measured apart."""
    from gpuwrite.encode.compress import compressor
    from gpuwrite.options.model import WriteOptions
    from gpuwrite.pipeline.columns import leaf_data
    from gpuwrite.pipeline.leafdata import LeafData
    from gpuwrite.pipeline.rebase import RebaseOptions
    from gpuwrite.schema import FileSchema

    rows = 10_000
    table = pa.table({"x": pa.array([None if i % 10 == 0 else i for i in range(rows)], pa.int64())})
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    options = cpu.ChunkOptions.for_leaves(schema.leaves, opts, compressor(opts.compression))
    encoders = cpu.CpuEncoders(schema.leaves, options, None)
    encoders.load([leaf_data(table.column(0), schema.leaves[0], RebaseOptions.of(opts))])
    lookups: list[int] = []
    value_index = LeafData.value_index
    monkeypatch.setattr(LeafData, "value_index", lambda self, row: lookups.append(row) or value_index(self, row))
    pages = [(a, a + 1000) for a in range(0, rows, 1000)]
    assert encoders._cost(0, pages) == 9000 * 8  # the non-null values' PLAIN bytes
    assert lookups == [0, rows]
    lookups.clear()
    assert encoders._cost(0, [(0, 1000), (5000, 6000)]) == 1800 * 8
    assert lookups == [0, 1000, 5000, 6000]


@pytest.mark.parametrize("rows, on_pool", [(2_000, False), (60_000, True)])
def test_columns_too_small_for_threads_are_encoded_on_the_writing_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: int, on_pool: bool) -> None:
    """A batch whose columns average less than PARALLEL_JOB_BYTES of work is encoded and converted on the
    writing thread (no job reaches the pool: their Python would only contend for the GIL there); larger
    columns go to the pool. The bytes are the same either way."""
    from gpuwrite.backends.workpool import PARALLEL_JOB_BYTES, WorkPool

    if cpu.page_pool(4) is None:
        pytest.skip("one core: no pool")
    assert 2_000 * 8 < PARALLEL_JOB_BYTES < 60_000 * 8  # the columns' PLAIN bytes, either side
    jobs: list[int] = []
    queue = WorkPool._queue
    monkeypatch.setattr(WorkPool, "_queue", lambda self, *args: (jobs.append(1), queue(self, *args))[1])
    table = pa.table({f"c{i}": pa.array([(r * (i + 3)) % 1000 for r in range(rows)], pa.int64()) for i in range(4)})
    write_table(table, tmp_path / "t.parquet", device="cpu")
    assert bool(jobs) == on_pool
    cpu.limit_threads(1)
    write_table(table, tmp_path / "one.parquet", device="cpu")
    assert (tmp_path / "t.parquet").read_bytes() == (tmp_path / "one.parquet").read_bytes()
