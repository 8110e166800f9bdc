"""A file's worker threads, with two queues: work the writer waits for now, and work it will need later.

The CPU backend encodes a batch of pages on every thread and the writer waits for all of them; the rows after
the window are converted meanwhile as background work (`window.RowWindow`), which a thread takes only when no
page is waiting. A thread that finishes its last page early, or that would idle while the writer plans the next
batch or writes a row group, converts rows instead; the pages are never delayed behind a conversion queued
before them (a plain FIFO pool would run that conversion first).
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

Job = tuple[Future, Callable[..., Any], tuple[Any, ...]]


class _Queues:
    """What the threads share (they hold this, not the pool, so a pool that is dropped unclosed is collected and
    its threads end)."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.now: deque[Job] = deque()
        self.later: deque[Job] = deque()
        self.stopping = False

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

    def stop(self) -> None:
        """Let the threads end once the queues are empty."""
        with self.lock:
            self.stopping = True
            self.lock.notify_all()


def _run(queues: _Queues) -> None:
    """A worker thread: run jobs until the pool stops."""
    while (job := queues.take()) is not None:
        future, fn, args = job
        if not future.set_running_or_notify_cancel():
            continue
        try:
            result = fn(*args)
        except BaseException as exc:  # handed to whoever waits for the future
            future.set_exception(exc)
        else:
            future.set_result(result)
        del job, future, fn, args


def wait_in_order(futures: list[Future], done: Callable[[int], None] | None = None) -> None:
    """Wait for jobs in the order given (schema order), so a failure raised is the first job's, as when they
    ran one after another; the jobs not started yet are cancelled once one fails. `done(i)` runs here once
    job i and every job before it have finished."""
    try:
        for i, future in enumerate(futures):
            future.result()
            if done is not None:
                done(i)
    finally:
        for future in futures:
            future.cancel()


class WorkPool:
    """`workers` threads (started on first use) running `submit`ted jobs before `submit_later` ones, each queue in
    order. Futures are `concurrent.futures.Future`; a job not started yet can be cancelled."""

    def __init__(self, workers: int, name: str = "gpuwrite") -> None:
        if workers < 1:
            raise ValueError(f"WorkPool: workers must be at least 1, got {workers}")
        self.workers = workers
        self.name = name
        self._queues = _Queues()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._finalizer = weakref.finalize(self, _Queues.stop, self._queues)

    def _queue(self, queue: deque[Job], fn: Callable[..., Any], args: tuple[Any, ...]) -> Future:
        if self._closed:
            raise RuntimeError("WorkPool: cannot submit after shutdown")
        future: Future = Future()
        with self._queues.lock:
            queue.append((future, fn, args))
            self._queues.lock.notify()
        if len(self._threads) < self.workers:
            thread = threading.Thread(target=_run, args=(self._queues,), daemon=True,
                                      name=f"{self.name}_{len(self._threads)}")
            thread.start()
            self._threads.append(thread)
        return future

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run fn(*args) before any background job not started yet."""
        return self._queue(self._queues.now, fn, args)

    def submit_later(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run fn(*args) when no `submit`ted job is waiting."""
        return self._queue(self._queues.later, fn, args)

    def shutdown(self, wait: bool = True) -> None:
        """Run what is queued, then end the threads (waiting for them when `wait`)."""
        self._closed = True
        self._finalizer()
        if wait:
            for thread in self._threads:
                thread.join()
