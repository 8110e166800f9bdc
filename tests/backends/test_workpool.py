"""The CPU backend's threads: pages the writer waits for run before rows converted ahead (issue 15)."""

from __future__ import annotations

import gc
import threading
import time

import pytest

from gpuwrite.backends.workpool import WorkPool


def test_waited_for_jobs_run_before_background_jobs_queued_earlier() -> None:
    pool = WorkPool(1)
    gate = threading.Event()
    order: list[str] = []
    try:
        blocker = pool.submit(gate.wait)  # holds the only thread while the queues fill
        later = [pool.submit_later(order.append, f"later{i}") for i in range(3)]
        now = [pool.submit(order.append, f"now{i}") for i in range(3)]
        gate.set()
        for future in [blocker, *now, *later]:
            future.result(timeout=10)
    finally:
        pool.shutdown()
    assert order == ["now0", "now1", "now2", "later0", "later1", "later2"]


def test_results_exceptions_and_cancellation() -> None:
    pool = WorkPool(2)
    gate = threading.Event()
    try:
        assert pool.submit(pow, 2, 10).result(timeout=10) == 1024
        with pytest.raises(ZeroDivisionError):
            pool.submit(lambda: 1 / 0).result(timeout=10)
        blockers = [pool.submit(gate.wait) for _ in range(2)]
        queued = pool.submit_later(pow, 3, 3)
        assert queued.cancel()  # not started: both threads are held
        gate.set()
        for future in blockers:
            future.result(timeout=10)
        assert queued.cancelled()
    finally:
        pool.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(pow, 2, 2)


def test_threads_start_on_use_up_to_workers_and_end_at_shutdown() -> None:
    pool = WorkPool(3, name="wp-test")
    assert not [t for t in threading.enumerate() if t.name.startswith("wp-test")]
    for future in [pool.submit(time.sleep, 0.01) for _ in range(10)]:
        future.result(timeout=10)
    threads = [t for t in threading.enumerate() if t.name.startswith("wp-test")]
    assert len(threads) == 3
    pool.shutdown(wait=True)
    assert not any(t.is_alive() for t in threads)
    with pytest.raises(ValueError, match="at least 1"):
        WorkPool(0)


def test_a_pool_dropped_without_shutdown_ends_its_threads() -> None:
    pool = WorkPool(2, name="wp-dropped")
    pool.submit(time.sleep, 0).result(timeout=10)
    threads = [t for t in threading.enumerate() if t.name.startswith("wp-dropped")]
    assert threads
    del pool
    gc.collect()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
