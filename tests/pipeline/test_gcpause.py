"""The garbage collector is off while a writer encodes, and comes back as the caller had it."""

from __future__ import annotations

import gc
import threading

import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.backends import cpu
from gpuwrite.pipeline.gcpause import collector_paused


@pytest.fixture(autouse=True)
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_pause_turns_the_collector_off_and_back_on():
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_pause_leaves_a_collector_the_caller_turned_off():
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_pause_ends_with_the_last_of_concurrent_writes():
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with collector_paused():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other write still runs
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_pause_ends_when_the_body_raises():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_pages_are_encoded_with_the_collector_off(tmp_path, monkeypatch):
    seen: list[bool] = []
    encode = cpu.CpuEncoders.encode

    def spy(self, *args, **kwargs):
        seen.append(gc.isenabled())
        return encode(self, *args, **kwargs)

    monkeypatch.setattr(cpu.CpuEncoders, "encode", spy)
    table = pa.table({"a": list(range(50_000)), "b": [str(i % 7) for i in range(50_000)]})
    gpuwrite.write_table(table, tmp_path / "t.parquet")
    with gpuwrite.ParquetWriter(tmp_path / "s.parquet", table.schema, row_group_size=10_000) as writer:
        for batch in table.to_batches(max_chunksize=12_000):
            writer.write(batch)
    assert seen and not any(seen)
    assert gc.isenabled()


def test_a_failed_write_turns_the_collector_back_on(tmp_path, monkeypatch):
    def fail(self, *args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr(cpu.CpuEncoders, "encode", fail)
    with pytest.raises(OSError, match="disk gone"):
        gpuwrite.write_table(pa.table({"a": [1, 2, 3]}), tmp_path / "t.parquet")
    assert gc.isenabled()
    assert not list(tmp_path.iterdir())


def test_the_result_is_summarized_with_the_collector_off(tmp_path, monkeypatch):
    """The result's footer summary is built when first read, with the collector off: its passes would
    otherwise visit the file's chunk metadata as the summary's objects are made (0.5 s at 20,000 columns)."""
    from gpuwrite.pipeline import writer

    seen: list[bool] = []
    summarize = writer.summarize

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return summarize(*args, **kwargs)

    monkeypatch.setattr(writer, "summarize", spy)
    result = gpuwrite.write_table(pa.table({f"c{i}": [i] for i in range(50)}), tmp_path / "t.parquet")
    assert seen == [] and gc.isenabled()  # not built by the write
    assert len(result.footer.row_groups[0].columns) == 50 and seen == [False]
    assert gc.isenabled()
