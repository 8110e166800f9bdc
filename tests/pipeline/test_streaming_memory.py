"""A streaming writer's memory stays about one row group (plus a conversion step) whatever the rows written
(issue 33, item 4): a conversion step that held several row groups used to end only one of them, so the
converted rows piled up until close(), and with row-count-limited row groups the Arrow rows waited for a
128 MiB step. Measured with tracemalloc (the converted rows are NumPy arrays; the input batches too)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import gpuwrite

SCHEMA = pa.schema([("x", pa.int64())])
BATCH_ROWS = 100_000


def _batches(total: int, random: bool) -> Iterator[pa.RecordBatch]:
    """`total` int64 rows in batches of BATCH_ROWS, each a fresh NumPy array (so tracemalloc sees the input the
    writer holds): random values, or one value repeated."""
    rng = np.random.default_rng(5)
    for _ in range(total // BATCH_ROWS):
        values = rng.integers(0, 1 << 62, BATCH_ROWS) if random else np.full(BATCH_ROWS, 7, dtype=np.int64)
        yield pa.record_batch([pa.array(values)], schema=SCHEMA)


def _stream(path: str, total: int, random: bool, step: int | None = None, **options: int) -> tuple[list[int], list[int]]:
    """Write the batches through a ParquetWriter (converting `step` bytes of Arrow rows at a time when given);
    traced bytes in use after each batch, and the rows it held (written to it, not in a finished row group).
    A short stream first loads the kernels the write uses (once per process, not the stream's memory)."""
    with gpuwrite.ParquetWriter(path, SCHEMA, device="cpu", **options) as writer:  # loads the kernels untraced
        for batch in _batches(10 * BATCH_ROWS, random):
            writer.write(batch)
    traced, held = [], []
    tracemalloc.start()
    try:
        with gpuwrite.ParquetWriter(path, SCHEMA, device="cpu", **options) as writer:
            if step is not None:
                writer._window.convert_bytes = step  # type: ignore[union-attr]
            for done, batch in enumerate(_batches(total, random), 1):
                writer.write(batch)
                del batch
                traced.append(tracemalloc.get_traced_memory()[0])
                held.append(done * BATCH_ROWS - writer._assembler.num_rows)
    finally:
        tracemalloc.stop()
    return traced, held


def _assert_flat(traced: list[int], held: list[int], bound_rows: int, bound_bytes: int) -> None:
    """The writer never held more than `bound_rows` rows nor `bound_bytes` of traced memory, and its memory in
    the stream's last quarter stays within the third quarter's peak (plus 2 MB: the footer's metadata grows a
    little with each row group; allocator noise)."""
    quarter = len(traced) // 4
    assert max(held) <= bound_rows, f"held up to {max(held):,} rows"
    assert max(traced) <= bound_bytes, f"memory reached {max(traced) / 1e6:.1f} MB"
    third, last = max(traced[2 * quarter:3 * quarter]), max(traced[3 * quarter:])
    assert last <= third + (2 << 20), f"memory grew from {third / 1e6:.1f} MB to {last / 1e6:.1f} MB"


def test_row_count_limited_row_groups_are_written_as_the_rows_arrive(tmp_path):
    """200k-row row groups (row_group_size) of 6M rows: each reaches the file within a step of its rows
    arriving, so the memory after the first row groups is flat (before: every batch waited for a 128 MiB
    step, and the whole stream was held until close)."""
    path = str(tmp_path / "rows.parquet")
    traced, held = _stream(path, 6_000_000, random=False, row_group_size=200_000)
    rows = 3 * 200_000 + BATCH_ROWS
    _assert_flat(traced, held, bound_rows=rows, bound_bytes=8 * rows)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == 6_000_000
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [200_000] * 30


def test_a_step_holding_several_row_groups_ends_them_all(tmp_path):
    """Row groups of about 40k random rows (256 KiB block_size) and 4 MiB conversion steps (the 32 MiB floor
    made small): every row group a step holds is cut before the next step, so the rows held stay within a
    step and a row group (before: one row group per step, and the rest piled up for the whole write)."""
    path = str(tmp_path / "bytes.parquet")
    traced, held = _stream(path, 4_000_000, random=True, step=4 << 20, block_size=256 << 10)
    step_rows = (4 << 20) // 8
    _assert_flat(traced, held, bound_rows=3 * step_rows, bound_bytes=8 * (4 << 20))
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == 4_000_000 and meta.num_row_groups > 50
