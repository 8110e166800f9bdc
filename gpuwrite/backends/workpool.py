"""A file's worker threads, with two queues: work the writer waits for now, and work it will need later.

The CPU backend encodes a batch of pages on every thread and the writer waits for all of them; the rows after
the window are converted meanwhile as background work (`window.RowWindow`), which a thread takes only when no
page is waiting. A thread that finishes its last page early, or that would idle while the writer plans the next
batch or writes a row group, converts rows instead; the pages are never delayed behind a conversion queued
before them (a plain FIFO pool would run that conversion first).

The thread that waits for jobs (the writer, in `wait_in_order`) is one of the workers: it runs the jobs it
waits for that no thread has taken yet, so a machine of N cores runs N - 1 threads (`WorkPool.parallel`).
Waiting on one thread while N more encoded put N + 1 busy threads on N cores, and every job's hand-off woke
a sleeping writer: on 2 cores, one thread plus the writer wrote every bench table 4-11% faster than two
threads and a waiting writer (wide 11%, in-process A/B), with less CPU.

A pool's threads outlive it: once it shuts down they wait, parked, for the next pool (a writer's next file)
and end after `IDLE_SECONDS` without one. glibc gives each thread a malloc arena and keeps what the thread
frees there for its next allocations; a thread that ends hands its arena to whichever thread starts next,
which in a process that also runs other libraries' thread pools (polars') is often not ours, so threads
started afresh for every file met fresh memory: ~34,000 page faults (130 MB zeroed) and 0.45 -> 0.64 s for a
store_sales file written between polars writes, measured; none with the same threads kept.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

Job = tuple[Future, Callable[..., Any], tuple[Any, ...]]

IDLE_SECONDS = 10.0  # a parked thread ends after this long without a pool to serve


class _Queues:
    """What the threads share (they hold this, not the pool, so a pool that is dropped unclosed is collected and
    its threads end)."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.now: deque[Job] = deque()
        self.later: deque[Job] = deque()
        self.stopping = False
        self.serving = 0  # threads serving these queues (shutdown waits for them to leave)

    def take(self) -> Job | None:
        """The next job (pages first), waiting for one; None once stopping and nothing is queued."""
        with self.lock:
            while not (self.now or self.later or self.stopping):
                self.lock.wait()
            if self.now:
                return self.now.popleft()
            if self.later:
                return self.later.popleft()
            return None

    def claim(self, wanted: set[int]) -> Job | None:
        """The first queued job (pages first) whose future's id is in `wanted`, taken off its queue so no
        thread runs it; None when none of them is queued."""
        with self.lock:
            for queue in (self.now, self.later):
                for i, job in enumerate(queue):
                    if id(job[0]) in wanted:
                        del queue[i]
                        return job
        return None

    def stop(self) -> None:
        """Let the threads leave once the queues are empty."""
        with self.lock:
            self.stopping = True
            self.lock.notify_all()

    def join(self) -> None:
        """A thread starts serving these queues."""
        with self.lock:
            self.serving += 1

    def leave(self) -> None:
        """A thread stops serving these queues (they stopped and are empty)."""
        with self.lock:
            self.serving -= 1
            self.lock.notify_all()

    def wait_left(self) -> None:
        """Wait until every thread has left (after stop)."""
        with self.lock:
            while self.serving > 0:
                self.lock.wait()


class _Parked:
    """Threads waiting for a pool: each parked thread's slot, handed a pool's queues when one needs it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.slots: list[_Slot] = []

    def adopt(self, queues: _Queues, name: str) -> bool:
        """Hand `queues` to a parked thread (renamed `name`); False when none is parked."""
        with self.lock:
            if not self.slots:
                return False
            slot = self.slots.pop()
        queues.join()
        slot.thread.name = name
        slot.queues = queues
        slot.ready.set()
        return True

    def park(self) -> _Queues | None:
        """Called by a thread whose pool stopped: the next pool's queues, or None after IDLE_SECONDS."""
        slot = _Slot(threading.current_thread())
        with self.lock:
            self.slots.append(slot)
        if not slot.ready.wait(IDLE_SECONDS):
            with self.lock:
                if slot in self.slots:  # not adopted meanwhile: end
                    self.slots.remove(slot)
                    return None
            slot.ready.wait()  # adopted just as the wait ended
        return slot.queues


class _Slot:
    """One parked thread's mailbox."""

    def __init__(self, thread: threading.Thread) -> None:
        self.thread = thread
        self.ready = threading.Event()
        self.queues: _Queues | None = None


_PARKED = _Parked()


def _forget_parked() -> None:
    """In a forked child the parent's parked threads do not exist: start with none."""
    global _PARKED
    _PARKED = _Parked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parked)


def _serve(queues: _Queues | None) -> None:
    """A worker thread: serve a pool until it stops, then park for the next one; end when none comes."""
    while queues is not None:
        try:
            _run(queues)
        finally:
            queues.leave()
        queues = _PARKED.park()


def _run(queues: _Queues) -> None:
    """Run a pool's jobs until it stops and its queues are empty."""
    while (job := queues.take()) is not None:
        _execute(job)
        del job


def _execute(job: Job) -> None:
    """Run one job (unless it was cancelled) and settle its future with the result or the exception."""
    future, fn, args = job
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args)
    except BaseException as exc:  # handed to whoever waits for the future
        future.set_exception(exc)
    else:
        future.set_result(result)


# A job's hand-off (queue, wake-up, future) costs about what its Python calls for a small column do: jobs
# estimated below this many bytes of work (JOB_OVERHEAD counted for each) share one hand-off, so a table of
# 20,000 one-row columns is not 20,000 hand-offs (they cost it 0.4 s, more than the threads saved).
SMALL_JOB = 1 << 16
JOB_OVERHEAD = 1 << 12


def grouped(costs: list[int], small: int | None = None) -> list[range]:
    """Consecutive job indexes in groups to run as one job each: a job costing `small` (SMALL_JOB when None)
    or more alone, cheaper ones together while their costs (plus JOB_OVERHEAD each) stay within it. Linear in
    the jobs."""
    small = SMALL_JOB if small is None else small
    groups: list[range] = []
    start = total = 0
    for i, cost in enumerate(costs):
        cost += JOB_OVERHEAD
        if cost >= small or total + cost > small:
            if start < i:
                groups.append(range(start, i))
            start, total = i, 0
        total += cost
        if total >= small:
            groups.append(range(start, i + 1))
            start, total = i + 1, 0
    if start < len(costs):
        groups.append(range(start, len(costs)))
    return groups


# Jobs averaging less work than this (in the bytes SMALL_JOB counts) run on the calling thread: each column also
# costs ~50-300 us of Python, which holds the GIL, so threads add only hand-offs and contention to small ones
# (80 columns of 20,000 doubles, 160 KB each: 64 ms on two threads, 55 ms on one; of 50,000, 400 KB each:
# 86 ms on two, 112 ms on one; a 100-row write of them: 34 ms on two, 24 ms on one).
PARALLEL_JOB_BYTES = 1 << 18


def worth_threads(costs: Sequence[int]) -> bool:
    """Whether jobs of these costs gain from running on the pool: two or more of them, averaging at least
    PARALLEL_JOB_BYTES."""
    return len(costs) > 1 and sum(costs) >= PARALLEL_JOB_BYTES * len(costs)


def start_order(costs: list[int], workers: int, in_schema_order: bool) -> list[int]:
    """The order to submit jobs of these costs to `workers` threads: costliest first (a large job started last
    holds one thread while the others idle); or, when their results are taken in schema order as they finish
    (chunks written while later columns encode), schema order, except that jobs costing at least half a
    thread's share of the batch start first, costliest first (a timeseries' status strings, last in the
    schema, otherwise ran alone after the other columns had finished)."""
    by_cost = sorted(range(len(costs)), key=lambda i: -costs[i])
    if not in_schema_order:
        return by_cost
    share = sum(costs) / (2 * workers)
    big = [i for i in by_cost if costs[i] >= share]
    first = set(big)
    return big + [i for i in range(len(costs)) if i not in first]


def wait_in_order(futures: list[Future], done: Callable[[int], None] | None = None,
                  pool: WorkPool | None = None) -> None:
    """Wait for jobs in the order given (schema order), so a failure raised is the first job's, as when they
    ran one after another; the jobs not started yet are cancelled once one fails. `done(i)` runs here once
    job i and every job before it have finished. With `pool` (the one they were submitted to), this thread runs
    those of them no thread has taken yet itself, in queue order, until job i is done: it is one of the pool's
    workers (`WorkPool.parallel`), not a sleeper woken at every job's end."""
    wanted = {id(f) for f in futures} if pool is not None else set()
    try:
        for i, future in enumerate(futures):
            while pool is not None and not future.done() and (job := pool.claim(wanted)) is not None:
                _execute(job)
                del job
            future.result()
            if done is not None:
                done(i)
    finally:
        for future in futures:
            future.cancel()


class WorkPool:
    """`workers` threads (started on first use) running `submit`ted jobs before `submit_later` ones, each queue in
    order, and the thread waiting for them in `wait_in_order` beside them. Futures are
    `concurrent.futures.Future`; a job not started yet can be cancelled."""

    def __init__(self, workers: int, name: str = "gpuwrite") -> None:
        if workers < 1:
            raise ValueError(f"WorkPool: workers must be at least 1, got {workers}")
        self.workers = workers
        self.name = name
        self._queues = _Queues()
        self._threads = 0  # threads serving this pool (parked ones adopted, or started)
        self._closed = False
        self._finalizer = weakref.finalize(self, _Queues.stop, self._queues)

    def _queue(self, queue: deque[Job], fn: Callable[..., Any], args: tuple[Any, ...]) -> Future:
        if self._closed:
            raise RuntimeError("WorkPool: cannot submit after shutdown")
        future: Future = Future()
        with self._queues.lock:
            queue.append((future, fn, args))
            self._queues.lock.notify()
        if self._threads < self.workers:
            name = f"{self.name}_{self._threads}"
            if not _PARKED.adopt(self._queues, name):
                self._queues.join()
                threading.Thread(target=_serve, args=(self._queues,), daemon=True, name=name).start()
            self._threads += 1
        return future

    def claim(self, wanted: set[int]) -> Job | None:
        """The first queued job whose future's id is in `wanted`, taken off the queues for the caller to run
        (`wait_in_order`); None when none of them is queued."""
        return self._queues.claim(wanted)

    @property
    def parallel(self) -> int:
        """Jobs running at once while a thread waits for them in `wait_in_order`: the threads and that one."""
        return self.workers + 1

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run fn(*args) before any background job not started yet."""
        return self._queue(self._queues.now, fn, args)

    def submit_later(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run fn(*args) when no `submit`ted job is waiting."""
        return self._queue(self._queues.later, fn, args)

    def shutdown(self, wait: bool = True) -> None:
        """Run what is queued, then release the threads to park for the next pool (waiting for that when
        `wait`)."""
        self._closed = True
        self._finalizer()
        if wait:
            self._queues.wait_left()
