"""The device's copies, in every mode: one host staging buffer that every upload passes through (pinned on a
GPU, reused across row groups, grown when a row group needs more), downloads into fresh host buffers (pinned on
a GPU) with one host wait for all of them, downloads queued now and waited for later (a row group's bytes,
read back while the next row group's kernels run), and the order of these events for tests (`trace_events`).

Only the allocation of pinned memory and the CUDA copy calls differ between modes (`Device`'s CUDA-only
parts); which buffer, which stream, when the host waits and what overlaps is decided here and in `Device`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

ALIGN = 256  # every staged array starts on this many bytes (any dtype's alignment; CUDA copies like it)
MIN_STAGING = 1 << 20  # the staging buffer's first size

Event = tuple[str, str]  # (what, which): ("launch", kernel), ("h2d", ""), ("d2h", wait name), ("wait", name)...

_TRACE: dict[str, list[Event] | None] = {"log": None}


@contextlib.contextmanager
def trace_events() -> Iterator[list[Event]]:
    """Within the block, every Device records the order of its copies queued, launches queued, host waits and
    the row groups' host writes in the list yielded (tests assert the overlap structure with it)."""
    before = _TRACE["log"]
    log: list[Event] = []
    _TRACE["log"] = log
    try:
        yield log
    finally:
        _TRACE["log"] = before


def trace_log() -> list[Event] | None:
    """The list `trace_events` records into, or None outside it."""
    return _TRACE["log"]


def _rounded(n: int) -> int:
    """`n` rounded up to ALIGN."""
    return -(-int(n) // ALIGN) * ALIGN


class Staging:
    """The host buffer uploads are staged in (pinned on a GPU: the copy engine reads it while the host goes
    on): a bump allocation, reset after each host wait on the writer's stream (every copy queued before is then
    done), so one buffer serves every row group. When a row group needs more, a larger buffer replaces it (the
    old one is kept until the next wait: copies from it may still be queued)."""

    def __init__(self, alloc: Callable[[int], np.ndarray]) -> None:
        self.alloc = alloc  # bytes -> uint8 host array (pinned on a GPU)
        self.buf = np.zeros(0, dtype=np.uint8)
        self.used = 0
        self.retired: list[np.ndarray] = []
        self.allocations = 0  # buffers allocated so far (reuse shows as a count that stops growing)
        self.step = 0  # the size `stage` last grew the buffer to: it doubles that, not a `reserve`d buffer

    def stage(self, host: np.ndarray) -> np.ndarray:
        """A copy of contiguous `host` in the staging buffer (same dtype and shape), for an async copy."""
        n = int(host.nbytes)
        start = _rounded(self.used)
        if start + n > len(self.buf):
            if self.used:
                self.retired.append(self.buf)
            self.step = max(2 * self.step, _rounded(n) + ALIGN, MIN_STAGING)
            self.buf = self.alloc(self.step)
            self.allocations += 1
            start = 0
        self.used = start + n
        view = self.buf[start:start + n].view(host.dtype).reshape(host.shape)
        np.copyto(view, host)
        return view

    def reserve(self, sizes: list[int]) -> None:
        """Make room for arrays of `sizes` bytes staged next (a window's uploads, known before they are staged)
        in the buffer: one allocation of what they need where growing as they come allocates (and, pinned, locks
        and first touches) a series of doubling buffers."""
        need = sum(_rounded(n) for n in sizes)
        if _rounded(self.used) + need <= len(self.buf):
            return
        if self.used:
            self.retired.append(self.buf)
        self.buf = self.alloc(max(need + ALIGN, MIN_STAGING))
        self.allocations += 1
        self.used = 0

    def release(self) -> None:
        """Let the buffer go (the write is over: on a GPU, its pinned memory goes back to CuPy's pinned pool)."""
        self.buf = np.zeros(0, dtype=np.uint8)
        self.step = 0
        self.reset()

    def reset(self) -> None:
        """The host waited for the writer's stream: every staged copy is done; the buffer is free again."""
        self.used = 0
        self.retired.clear()


def host_views(block: np.ndarray, devs: list[Any]) -> list[np.ndarray]:
    """Host arrays shaped as `devs`, laid out in `block` (uint8 of at least `download_bytes(devs)`)."""
    out, pos = [], 0
    for dev in devs:
        n = int(dev.nbytes)
        out.append(block[pos:pos + n].view(np.dtype(dev.dtype)).reshape(dev.shape))
        pos = _rounded(pos + n)
    return out


def download_bytes(devs: list[Any]) -> int:
    """Bytes of the host block that holds a host copy of each of `devs`."""
    return sum(_rounded(int(d.nbytes)) for d in devs) + ALIGN


class PendingDownload:
    """Host copies of device arrays queued on the copy stream: `result()` waits for them (one host wait, a
    counted sync) and gives them; the device arrays are held until then."""

    def __init__(self, wait: Callable[[], None], hosts: list[np.ndarray], devs: list[Any]) -> None:
        self._wait: Callable[[], None] | None = wait
        self.hosts = hosts
        self._devs = devs  # the sources stay allocated until the copies are done

    def result(self) -> list[np.ndarray]:
        """The host copies, after one wait (the first call only)."""
        if self._wait is not None:
            wait, self._wait = self._wait, None
            wait()
            self._devs = []
        return self.hosts


__all__ = ["Event", "PendingDownload", "Staging", "download_bytes", "host_views", "trace_events", "trace_log"]
