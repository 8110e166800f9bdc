"""Encode behind the transfer: a Spark task's batches are received on the calling thread and written on a
worker thread, so the encode of one batch overlaps the arrival of the next.

In a `mapInArrow` task the Python worker spends most of its time waiting for the JVM to build Arrow batches
row by row; the writer's kernels release the GIL, so receiving and encoding run side by side. A bounded queue
keeps at most `depth` batches in flight (memory stays bounded); an error on either side stops the other.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_END = object()  # the input ended
_ABORT = object()  # the receiving side failed: the worker must give up


class InputAborted(Exception):
    """Raised inside the worker's iterator when the receiving thread failed."""


class _Channel(Generic[T]):
    """A bounded queue the receiving thread fills and the worker drains, either side able to stop early."""

    def __init__(self, depth: int) -> None:
        self.queue: queue.Queue[object] = queue.Queue(maxsize=depth)
        self.worker_done = threading.Event()

    def put(self, item: object) -> bool:
        """Hand `item` to the worker; False when the worker has already finished (nothing more is wanted)."""
        while not self.worker_done.is_set():
            try:
                self.queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def items(self) -> Iterator[T]:
        """The worker's view: items until the input ends (InputAborted when the receiver failed)."""
        while True:
            item = self.queue.get()
            if item is _END:
                return
            if item is _ABORT:
                raise InputAborted("the task's input failed while it was being written")
            yield item  # type: ignore[misc]


def encode_behind(batches: Iterator[T], consume: Callable[[Iterator[T]], R], depth: int = 4,
                  timings: dict[str, float] | None = None) -> R:
    """Run `consume(iterator)` on a worker thread while this thread receives `batches` into it.

    Returns what `consume` returns. An exception in `consume` stops the receiving and is raised here; an
    exception while receiving makes the worker's iterator raise (so `consume` aborts its files) and is
    raised here after the worker has stopped. `timings` receives `receive_s` (until the input ended) and
    `tail_s` (from then until the worker finished: the encode the transfer did not hide).
    """
    start = time.perf_counter()
    channel: _Channel[T] = _Channel(depth)
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["value"] = consume(channel.items())
        except BaseException as err:  # handed to the calling thread
            outcome["error"] = err
        finally:
            channel.worker_done.set()

    worker = threading.Thread(target=work, name="gpuwrite-encode", daemon=True)
    worker.start()
    try:
        for batch in batches:
            if not channel.put(batch):
                break
    except BaseException:
        channel.put(_ABORT)
        worker.join()
        raise
    received = time.perf_counter()
    channel.put(_END)
    worker.join()
    if timings is not None:
        timings["receive_s"] = received - start
        timings["tail_s"] = time.perf_counter() - received
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
