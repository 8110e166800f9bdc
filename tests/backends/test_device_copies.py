"""The device's copies (backends/device/copies.py and Device's copy and wait methods), on the stand-in device:
uploads through one reused staging buffer, downloads with one wait, every host wait counted by name, and a
row group's bytes read back and written while the next row group's device work is queued."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.backends.device.copies import Event, Filled, stage_all, trace_events
from gpuwrite.backends.device.ops import Device, standin
from gpuwrite.tools.demo_data import store_sales_table

SETTINGS: dict[str, Any] = {"block_size": 256 << 10, "page_size": 8 << 10}


def _write(path: Path, rows: int) -> tuple[list[Event], Any, int]:
    """A multi-row-group write on the stand-in device: its event order, device and row groups."""
    table = store_sales_table(rows)
    with standin(), trace_events() as log:
        writer = gpuwrite.ParquetWriter(path, table.schema, device="gpu", **SETTINGS)
        writer.write(table)
        result = writer.close()
    gpuwrite.write_table(table, path.with_suffix(".cpu"), device="cpu", **SETTINGS)
    assert path.read_bytes() == path.with_suffix(".cpu").read_bytes()
    return log, writer._backend.device, len(result.footer.row_groups)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Event], Any, int]:
    return _write(tmp_path_factory.mktemp("copies") / "gpu.parquet", 30_000)


def test_next_row_groups_launches_are_queued_before_the_bytes_are_written(
        written: tuple[list[Event], Any, int]) -> None:
    log, _, groups = written
    assert groups >= 3
    where = {event: i for i, event in reversed(list(enumerate(log)))}  # first occurrence
    writes = [i for i, (what, _) in enumerate(log) if what == "write"]
    assert [log[i][1] for i in writes] == [str(n) for n in range(groups)]  # file order unchanged
    # within one write() call; at its end the last row group is written (the caller sees the file so far)
    overlapped = [n for n in range(groups - 1) if where[("load", str(n + 1))] < writes[n]]
    assert len(overlapped) >= groups - 2
    for n in overlapped:
        between = log[where[("load", str(n + 1))]:writes[n]]
        assert sum(1 for what, _ in between if what == "launch") >= 10  # conversion, checks, dictionary, plan
        assert ("launch", "plan") in between
        # the host waits for nothing of the next row group before writing this one's bytes
        assert [e for e in between if e[0] == "wait"] == [("wait", "row group bytes")]
    for n in range(groups):
        start = writes[n - 1] if n else 0
        queued = [i for i in range(start, writes[n]) if log[i] == ("d2h", "row group bytes")]
        waits = [i for i in range(queued[0], writes[n]) if log[i][0] == "wait"]
        # the row group's bytes queued in one download, one host wait for all of them, right before the write
        assert queued and waits[-1] == writes[n] - 1 and log[waits[-1]] == ("wait", "row group bytes")
        assert sum(1 for i in waits if log[i] == ("wait", "row group bytes")) == 1


def test_every_host_wait_is_a_named_sync(written: tuple[list[Event], Any, int]) -> None:
    log, device, groups = written
    c = device.counters
    assert c.syncs == sum(c.waits.values()) == sum(1 for what, _ in log if what == "wait")
    # dictionary pages' sizes are read on their own only where they were not made with a batch (builder.py)
    assert c.waits["row group bytes"] == groups and c.waits.get("dictionary sizes", 0) <= groups


def test_a_row_group_waits_at_most_eight_times(tmp_path: Path) -> None:
    table = store_sales_table(20_000)
    with standin(), trace_events() as log:
        writer = gpuwrite.ParquetWriter(tmp_path / "one.parquet", table.schema, device="gpu", compression="snappy")
        writer.write(table)
        result = writer.close()
    c = writer._backend.device.counters  # type: ignore[attr-defined]
    assert len(result.footer.row_groups) == 1
    assert sum(1 for what, _ in log if what == "wait") == c.syncs == sum(c.waits.values()) <= 8
    assert c.waits["compressed sizes"] >= 1  # the codec's read of nvCOMP's sizes is a host wait too
    assert c.waits["plan"] == c.waits["batch and replay"] == c.waits["row group bytes"] == 1


def test_uploads_go_through_one_reused_staging_buffer(written: tuple[list[Event], Any, int]) -> None:
    log, device, groups = written
    uploads = sum(1 for what, _ in log if what == "h2d")
    assert uploads == device.counters.h2d_copies > 20 * groups
    assert 1 <= device.staging.allocations <= 4  # grown a few times, then reused by every row group
    assert device.staging.used == 0 and not device.staging.retired  # free again after the last wait


def test_staging_is_reused_after_a_wait_and_grown_when_full() -> None:
    device = Device("standin")
    a = device.upload(np.arange(1000, dtype=np.int64))
    first = device.staging.buf
    b = device.upload(np.arange(10, dtype=np.int32).reshape(2, 5))
    assert device.staging.buf is first and device.staging.allocations == 1
    device.download(a)
    assert device.staging.used == 0
    big = np.ones(3 << 20, dtype=np.uint8)
    c = device.upload(big)
    assert device.staging.allocations == 2 and device.staging.buf is not first
    assert device.staging.retired == []  # nothing was staged since the wait: the old buffer is not kept
    device.upload(big)
    assert device.staging.allocations == 3 and len(device.staging.retired) == 1  # its copy may be in flight
    got = device.download_many([a, b, c], "check")
    assert device.staging.retired == [] and device.staging.used == 0
    assert np.array_equal(got[0], np.arange(1000)) and got[1].shape == (2, 5) and got[1][1, 4] == 9
    assert np.array_equal(got[2], big)
    dst = device.empty(20, np.int64)
    device.upload_into(dst, 5, np.arange(3, dtype=np.int64))
    assert device.download(dst)[5:8].tolist() == [0, 1, 2]


def test_downloads_are_one_sync_and_later_ones_wait_only_when_read() -> None:
    device = Device("standin")
    arrays = [device.upload(np.arange(n, dtype=np.int64)) for n in (3, 5, 7)]
    with trace_events() as log:
        device.trace = log
        got = device.download_many(arrays, "sizes")
        pending = device.download_later(arrays[:2], "bytes")
        ran: list[str] = []
        device.defer(lambda: ran.append(str(len(pending.result()))))
        assert device.counters.syncs == 1 and device.counters.waits == {"sizes": 1}
        device.download(arrays[2], "next")  # the deferred work runs first: its wait, then this one
    assert [len(g) for g in got] == [3, 5, 7] and ran == ["2"]
    assert device.counters.syncs == 3 and device.counters.waits == {"sizes": 1, "bytes": 1, "next": 1}
    assert [e for e in log if e[0] == "wait"] == [("wait", "sizes"), ("wait", "bytes"), ("wait", "next")]
    assert pending.result()[1].tolist() == [0, 1, 2, 3, 4] and device.counters.syncs == 3  # read once


def test_an_aborted_write_drops_the_pending_row_group(tmp_path: Path) -> None:
    table = store_sales_table(3_000)
    with standin():
        writer = gpuwrite.ParquetWriter(tmp_path / "x.parquet", table.schema, device="gpu", **SETTINGS)
        writer.write(table)
        device = writer._backend.device  # type: ignore[attr-defined]
        device.defer(lambda: (_ for _ in ()).throw(AssertionError("written after abort")))
        writer.abort()
    assert device.deferred == [] and not (tmp_path / "x.parquet").exists()


def test_a_windows_uploads_are_staged_in_one_buffer_reserved_for_them(tmp_path: Path) -> None:
    """The window's Arrow buffers and tables are known before they are staged: one staging buffer of their size
    is allocated (pinned on a GPU: locked and touched once) instead of a series of doubling ones, and the small
    uploads after it do not double that buffer."""
    from gpuwrite.backends.device.convert import build_window
    from gpuwrite.options.model import WriteOptions
    from gpuwrite.schema import FileSchema

    table = store_sales_table(40_000)
    opts = WriteOptions()
    device = Device("standin")
    build_window(device, table, FileSchema.from_arrow(table.schema, opts).leaves, opts)
    assert device.staging.allocations == 1
    staged = device.counters.h2d_bytes  # the decimals narrowed: about 0.4x the Arrow bytes
    assert staged <= len(device.staging.buf) < 1.2 * staged + (1 << 20) and staged < table.nbytes
    device.upload(np.ones((6 << 20) // 8, dtype=np.int64))  # more than is left: a buffer of its size, not 2x
    assert device.staging.allocations == 2 and len(device.staging.buf) < table.nbytes


@pytest.fixture
def fresh_slabs() -> Any:
    """A private set of the process's host slabs (the stand-in's staging buffers come from them)."""
    from gpuwrite.pipeline import buffers

    saved = buffers._SLABS
    buffers._SLABS = buffers.Slabs()
    yield buffers._SLABS
    buffers._SLABS.release()
    buffers._SLABS = saved


def test_a_warm_write_stages_in_the_slab_the_last_write_let_go(tmp_path: Path, fresh_slabs: Any) -> None:
    """The staging buffer (pinned on a GPU: locked once) is kept for the next write, so a warm write neither
    allocates nor first-touches a row group's worth of host memory again; release_memory() lets it go."""
    from gpuwrite.pipeline import buffers

    table = store_sales_table(20_000)
    for n in range(2):
        with standin():
            writer = gpuwrite.ParquetWriter(tmp_path / f"{n}.parquet", table.schema, device="gpu")
            writer.write(table)
            writer.close()
        if n == 0:
            created, kept = fresh_slabs.created, buffers.kept_bytes()
            assert created >= 1 and kept >= 0.4 * table.nbytes  # the staging buffer (decimals narrowed), free
    assert fresh_slabs.created == created and fresh_slabs.reused >= 1  # the second write took the kept slab
    assert buffers.kept_bytes() == kept
    assert gpuwrite.release_memory() >= kept and buffers.kept_bytes() == 0


def test_a_row_groups_bytes_come_back_into_a_kept_slab(tmp_path: Path, fresh_slabs: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A large download (a row group's bytes) lands in a block cut from a slab kept for the next write, as the
    staging buffer is: a warm write takes no new slab for it. On a GPU the block is pinned, and a fresh one per
    write was a cudaHostAlloc of the file's size each time (CuPy's pinned pool is emptied at close); small
    downloads still come from the allocator."""
    from gpuwrite.pipeline import buffers

    large: list[tuple[int, bool]] = []  # each large block's bytes, and whether a kept slab holds it
    original = Device._host_block

    def host_block(self: Device, n: int) -> np.ndarray:
        block = original(self, n)
        if n >= buffers.MIN_BYTES:
            large.append((n, any(np.shares_memory(block, slab) for slab in fresh_slabs.slabs)))
        return block

    monkeypatch.setattr(Device, "_host_block", host_block)
    table = store_sales_table(200_000)
    created = []
    for n in range(2):
        with standin():
            writer = gpuwrite.ParquetWriter(tmp_path / f"{n}.parquet", table.schema, device="gpu")
            writer.write(table)
            result = writer.close()
        created.append(fresh_slabs.created)
    assert len(large) >= 2 and max(n for n, _ in large) >= 0.9 * result.size  # the row group's bytes
    assert all(kept for _, kept in large), large
    assert created[1] == created[0]  # the second write's staging and download blocks: the kept slabs
    assert (tmp_path / "0.parquet").read_bytes() == (tmp_path / "1.parquet").read_bytes()


def test_letting_go_of_the_staging_buffer_restarts_the_slabs_idle_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write longer than the slabs' retention would otherwise lose its staging buffer as soon as it ends."""
    from gpuwrite.pipeline import buffers

    touched: list[int] = []
    monkeypatch.setattr(buffers, "touch", lambda: touched.append(1))
    device = Device("standin")
    device.upload(np.arange(1000, dtype=np.int64))
    assert touched == []
    device.staging.release()
    assert touched == [1]


def test_pinned_staging_slabs_are_kept_and_given_back_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a GPU the staging slabs are pinned (their allocator faked here): one slab serves the next write, and
    release_pinned() frees it and CuPy's pinned pool."""
    from gpuwrite.backends.device import copies

    made: list[int] = []
    freed: list[int] = []
    monkeypatch.setattr(copies, "_PINNED", [])
    monkeypatch.setattr(copies, "_pinned_slab", lambda n: made.append(n) or np.empty(n, dtype=np.uint8))
    monkeypatch.setattr(copies, "_free_pinned_pool", lambda: freed.append(1))
    staging = copies.Staging(lambda n: copies.staging_block(n, True), lambda: copies.staging_let_go(True))
    staging.reserve([3 << 20])
    first = staging.buf
    staging.release()
    del first
    staging.reserve([3 << 20])
    assert len(made) == 1 and staging.allocations == 2  # the same slab, not a second pinned allocation
    staging.release()
    assert copies.release_pinned() >= 3 << 20 and freed == [1]
    assert copies.release_pinned() == 0


def test_a_device_is_freed_by_reference_counting() -> None:
    """The staging buffer's allocator holds no reference to its Device: with the collector paused (as during a
    write), a dropped Device goes at once, and with it what it holds."""
    import gc
    import weakref

    gc.disable()
    try:
        device = Device("standin")
        device.upload(np.arange(10, dtype=np.int64))
        ref = weakref.ref(device)
        del device
        assert ref() is None
    finally:
        gc.enable()


def test_the_staging_copy_is_counted_where_it_happens() -> None:
    """The memcpy into the staging buffer is host work in every mode: counted apart (part of the host floor),
    and carried over when counters are absorbed."""
    device = Device("standin")
    assert device.counters.staging_s == 0.0
    device.upload(np.ones(1 << 20, dtype=np.int64))
    summary = device.counters.as_dict()
    assert summary["staging_s"] > 0 and "staging_cpu_s" in summary
    other = Device("standin")
    other.counters.absorb(device.counters)
    assert other.counters.staging_s == summary["staging_s"] and device.counters.staging_s == 0.0


def _decimal_table(n: int, seed: int = 5) -> pa.Table:
    """Decimals the device keeps as INT32 / INT64 (decimal128 and decimal256, with nulls) beside one it keeps
    as FIXED_LEN_BYTE_ARRAY (precision 20)."""
    from decimal import Decimal

    rng = np.random.default_rng(seed)
    mask = rng.random(n) < 0.1

    def column(precision: int, t: pa.DataType) -> pa.Array:
        limit = 10 ** min(precision, 18) - 1
        values = rng.integers(-limit, limit, n)
        return pa.array([None if m else Decimal(int(v)).scaleb(-2) for v, m in zip(values, mask, strict=True)], t)

    return pa.table({"p7": column(7, pa.decimal128(7, 2)), "p15": column(15, pa.decimal128(15, 2)),
                     "w12": column(12, pa.decimal256(12, 2)), "p20": column(18, pa.decimal128(20, 2)),
                     "k": pa.array(np.arange(n, dtype=np.int64))})


def test_decimals_kept_as_ints_go_up_at_the_width_they_are_stored(tmp_path: Path) -> None:
    """A decimal of precision <= 18 is staged as its low 4 / 8 bytes (written in the pass that copied all 16 /
    32 before): the window's uploads shrink by what the conversion never read, and the file is the CPU path's,
    values checked or not."""
    from identity_corpus import _assert_identical

    from gpuwrite.backends.device.convert import build_window
    from gpuwrite.options.model import WriteOptions
    from gpuwrite.schema import FileSchema

    n = 20_000
    table = _decimal_table(n)
    opts = WriteOptions()
    device = Device("standin")
    build_window(device, table, FileSchema.from_arrow(table.schema, opts).leaves, opts)
    arrow_values = n * (16 + 16 + 32 + 16 + 8)
    narrowed = n * (4 + 8 + 8 + 16 + 8)
    assert narrowed <= device.counters.h2d_bytes < narrowed + 0.1 * arrow_values  # bitmaps and tables besides
    with standin():
        for options in ({}, {"validate": False}, {"compression": "uncompressed", "enable_dictionary": False}):
            _assert_identical(tmp_path, table, **options)


def _wide_word(precision: int, width: int, row: int, n: int = 3000) -> pa.Table:
    """decimal(precision, 0) values 0..n-1, but row `row`'s high word set: its low word alone lies in range."""
    t = pa.decimal128(precision, 0) if width == 128 else pa.decimal256(precision, 0)
    words = np.zeros((n, width // 64), dtype=np.int64)
    words[:, 0] = np.arange(n)
    words[row, 1] = 1  # 2**64 + row
    return pa.table({"d": pa.Array.from_buffers(t, n, [None, pa.py_buffer(words.tobytes())])})


@pytest.mark.parametrize("precision, width", [(7, 128), (18, 128), (9, 256)])
def test_a_value_beyond_its_low_word_is_refused_like_the_cpu_path(tmp_path: Path, precision: int,
                                                                  width: int) -> None:
    """Narrowed on the host, a value whose low word is in range but whose high word is not its sign is still
    refused at its row, with the CPU path's words; with validate=False both write its low word."""
    from gpuwrite.errors import ValueCheckError

    table = _wide_word(precision, width, 1234)
    errors = []
    for device in ("cpu", "gpu"):
        with standin(), pytest.raises(ValueCheckError) as err:
            gpuwrite.write_table(table, tmp_path / f"{device}.parquet", device=device)
        errors.append(str(err.value))
    assert all("column 'd'" in e and "row 1234 of the file" in e for e in errors)
    assert errors[0].split(": ", 1)[1] == errors[1].split(": ", 1)[1]  # the same description of the value
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    for device in ("cpu", "gpu"):
        with standin():
            gpuwrite.write_table(table, tmp_path / f"{device}.parquet", device=device, validate=False)
    assert (tmp_path / "cpu.parquet").read_bytes() == (tmp_path / "gpu.parquet").read_bytes()


class _Slow(Filled):
    """A computed upload that takes a while (so a helper thread is sure to take some) and says who made it."""

    def __init__(self, value: int) -> None:
        self.value, self.nbytes, self.size, self.by = value, 64, 64, ""

    def fill(self, out: np.ndarray) -> None:
        import threading
        import time

        time.sleep(0.02)
        out[:] = self.value
        self.by = threading.current_thread().name


@pytest.mark.parametrize("helpers", [0, 1, 3])
def test_computed_uploads_are_staged_with_helper_threads(helpers: int) -> None:
    """stage_all: plain copies on the calling thread as they come, computed ones (`Filled`) shared with the
    helpers; each job's `done` on the calling thread, once, with its staged bytes."""
    import threading

    buf = np.zeros(64 * 10, dtype=np.uint8)
    hosts: list[np.ndarray | Filled] = [np.full(16, i, dtype=np.int32) if i % 3 == 0 else _Slow(i) for i in range(10)]
    jobs = [(h, buf[64 * i:64 * i + 64]) for i, h in enumerate(hosts)]
    done: list[tuple[int, str]] = []

    def record(i: int, staged: np.ndarray) -> None:
        assert np.array_equal(staged, hosts[i]) if isinstance(hosts[i], np.ndarray) else (staged == i).all()
        done.append((i, threading.current_thread().name))

    stage_all(jobs, helpers, record)
    assert sorted(i for i, _ in done) == list(range(10))
    assert {name for _, name in done} == {threading.current_thread().name}
    order = [i for i, _ in done]
    assert order == (list(range(10)) if helpers == 0 else [0, 3, 6, 9, 1, 2, 4, 5, 7, 8])  # plain ones as staged
    makers = {h.by for h in hosts if isinstance(h, _Slow)}
    assert (len(makers) > 1) == (helpers > 0)
