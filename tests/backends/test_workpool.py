"""The CPU backend's threads: pages the writer waits for run before rows converted ahead, threads kept from one\npool (file) to the next (issue 15)."""

from __future__ import annotations

import gc
import os
import threading
import time

import pytest

from gpuwrite.backends import workpool
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


def test_threads_start_on_use_up_to_workers_and_end_after_their_last_pool(monkeypatch) -> None:
    monkeypatch.setattr(workpool, "IDLE_SECONDS", 0.3)
    pool = WorkPool(3, name="wp-test")
    assert not [t for t in threading.enumerate() if t.name.startswith("wp-test")]
    for future in [pool.submit(time.sleep, 0.01) for _ in range(10)]:
        future.result(timeout=10)
    threads = [t for t in threading.enumerate() if t.name.startswith("wp-test")]
    assert len(threads) == 3
    pool.shutdown(wait=True)
    for thread in threads:
        thread.join(timeout=10)
    assert not any(t.is_alive() for t in threads)  # parked, then ended: no pool came for them
    with pytest.raises(ValueError, match="at least 1"):
        WorkPool(0)


def test_the_next_pool_adopts_the_last_ones_threads(monkeypatch) -> None:
    """Threads are kept across pools (a writer's files): the next pool's jobs run on the same threads, which
    keep their malloc arenas (see the module's docstring)."""
    monkeypatch.setattr(workpool, "IDLE_SECONDS", 30.0)
    first = WorkPool(2, name="wp-first")
    for future in [first.submit(time.sleep, 0.02) for _ in range(4)]:
        future.result(timeout=10)
    threads = [t for t in threading.enumerate() if t.name.startswith("wp-first")]
    assert len(threads) == 2
    first.shutdown(wait=True)
    deadline = time.monotonic() + 10
    while not all(any(slot.thread is t for slot in workpool._PARKED.slots) for t in threads):
        assert time.monotonic() < deadline, "the first pool's threads did not park"
        time.sleep(0.01)
    second = WorkPool(2, name="wp-second")
    ran = {f.result(timeout=10) for f in [second.submit(threading.get_ident) for _ in range(4)]}
    assert ran <= {t.ident for t in threads}  # no thread started: the parked ones serve the new pool
    assert sorted(t.name for t in threads) == ["wp-second_0", "wp-second_1"]
    assert all(t.is_alive() for t in threads)
    second.shutdown(wait=True)


def test_shutdown_waits_for_queued_jobs() -> None:
    pool = WorkPool(1, name="wp-wait")
    done: list[int] = []
    for i in range(5):
        pool.submit(lambda i=i: (time.sleep(0.01), done.append(i)))
    pool.shutdown(wait=True)
    assert done == [0, 1, 2, 3, 4]


def test_a_pool_dropped_without_shutdown_releases_its_threads(monkeypatch) -> None:
    monkeypatch.setattr(workpool, "IDLE_SECONDS", 0.3)
    pool = WorkPool(2, name="wp-dropped")
    pool.submit(time.sleep, 0).result(timeout=10)
    threads = [t for t in threading.enumerate() if t.name.startswith("wp-dropped")]
    assert threads
    del pool
    gc.collect()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(t.is_alive() for t in threads)


def test_a_forked_child_starts_without_the_parents_parked_threads(monkeypatch) -> None:
    monkeypatch.setattr(workpool, "IDLE_SECONDS", 30.0)
    pool = WorkPool(1, name="wp-fork")
    pool.submit(time.sleep, 0).result(timeout=10)
    pool.shutdown(wait=True)
    deadline = time.monotonic() + 10
    while not workpool._PARKED.slots and time.monotonic() < deadline:
        time.sleep(0.01)
    assert workpool._PARKED.slots
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a new pool must start a thread of its own and run its job
        try:
            child = WorkPool(1, name="wp-child")
            ok = child.submit(pow, 2, 10).result(timeout=10) == 1024 and not workpool._PARKED.slots
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.waitpid(pid, 0)


def test_small_jobs_share_a_hand_off_and_large_ones_run_alone() -> None:
    """grouped: consecutive indexes, every job once, in order; a job of SMALL_JOB or more alone, cheap ones
    together up to SMALL_JOB (JOB_OVERHEAD counted for each), so 20,000 tiny jobs are a few hundred."""
    small, over = workpool.SMALL_JOB, workpool.JOB_OVERHEAD
    costs = [8, 8, small, 8, 2 * small, 8]
    groups = workpool.grouped(costs)
    assert [list(g) for g in groups] == [[0, 1], [2], [3], [4], [5]]
    tiny = workpool.grouped([8] * 20_000)
    assert [i for g in tiny for i in g] == list(range(20_000))
    assert all(sum(8 + over for _ in g) <= small for g in tiny)
    assert len(tiny) == -(-20_000 // (small // (8 + over)))
    assert workpool.grouped([]) == []
    assert [list(g) for g in workpool.grouped([8, 8, 8], small=0)] == [[0], [1], [2]]


def test_start_order_puts_the_largest_jobs_first() -> None:
    """Costliest first when results are taken in any order; in schema order otherwise, but for the jobs that
    cost at least half a thread's share of the batch, which start first (costliest first)."""
    timeseries = [16, 8, 8, 12]  # a timestamp, an id, a float, then the status strings last in the schema
    assert workpool.start_order(timeseries, 2, in_schema_order=False) == [0, 3, 1, 2]
    assert workpool.start_order(timeseries, 2, in_schema_order=True) == [0, 3, 1, 2]  # 11 is half a share
    wide = [16, 16, 16, 15] * 16  # even columns: schema order, so chunks are written while later ones encode
    assert workpool.start_order(wide, 2, in_schema_order=True) == list(range(64))
    assert workpool.start_order([1, 1, 1, 9], 2, in_schema_order=True) == [3, 0, 1, 2]
    assert workpool.start_order([1, 1, 1, 9], 4, in_schema_order=True) == [3, 0, 1, 2]
    assert workpool.start_order([], 2, in_schema_order=True) == []


def test_jobs_gain_from_threads_only_when_they_average_enough_work() -> None:
    """worth_threads: two jobs or more, averaging PARALLEL_JOB_BYTES or more; one job never."""
    at = workpool.PARALLEL_JOB_BYTES
    assert workpool.worth_threads([at, at])
    assert workpool.worth_threads([2 * at, 0])  # the average counts, not each job
    assert not workpool.worth_threads([at, at - 1])
    assert not workpool.worth_threads([100 * at])
    assert not workpool.worth_threads([])


def test_the_waiting_thread_runs_the_jobs_it_waits_for_that_no_thread_took() -> None:
    """wait_in_order with the pool: while the pool's only thread is held, the waiting thread runs the awaited
    jobs itself, in queue order, and `done` still follows schema order; a queued job it does not wait for is
    left to the pool; a failure is the first job's in order, and the jobs after it not started are cancelled."""
    pool = WorkPool(1, name="wp-help")
    gate = threading.Event()
    ran: list[tuple[str, str]] = []

    def job(label: str) -> str:
        ran.append((label, threading.current_thread().name))
        return label

    try:
        blocker = pool.submit(gate.wait)
        threading.Timer(10, gate.set).start()  # were nothing run here, the wait would end (and fail) after 10 s
        other = pool.submit(job, "other")  # queued first, not waited for below
        awaited = [pool.submit_later(job, "b"), pool.submit(job, "a")]  # pages first: "a" is ahead in the queues
        finished: list[int] = []
        workpool.wait_in_order(awaited, finished.append, pool)
        me = threading.current_thread().name
        assert ran == [("a", me), ("b", me)] and finished == [0, 1]
        assert [f.result() for f in awaited] == ["b", "a"] and not other.done()
        gate.set()
        assert other.result(timeout=10) == "other" and blocker.result(timeout=10)
        gate.clear()
        blocker = pool.submit(gate.wait)
        failing = [pool.submit(job, "c"), pool.submit(lambda: 1 / 0), pool.submit(job, "d")]
        with pytest.raises(ZeroDivisionError):
            workpool.wait_in_order(failing, None, pool)
        assert [label for label, _ in ran][-1] == "c" and failing[2].cancelled()
        gate.set()
    finally:
        gate.set()
        pool.shutdown()
