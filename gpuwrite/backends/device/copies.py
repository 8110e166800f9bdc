"""The device's copies, in every mode: one host staging buffer that every upload passes through (pinned on a
GPU, reused across row groups, grown when a row group needs more), downloads into host buffers (pinned on a GPU;
a large one kept for the next write as the staging buffer is) with one host wait for all of them, downloads
queued now and waited for later (a row group's bytes, read back while the next row group's kernels run), and the
order of these events for tests (`trace_events`).

Only the allocation of pinned memory and the CUDA copy calls differ between modes (`Device`'s CUDA-only
parts); which buffer, which stream, when the host waits and what overlaps is decided here and in `Device`.

The staging buffer, and a large download's buffer (a row group's bytes), are cut from a slab the process keeps
for the next write (`staging_block`): the CPU path's slabs (`pipeline/buffers.py`) off a GPU, pinned slabs of
the same kind on one, so a warm write neither locks (cudaHostAlloc) nor first-touches a row group's worth of host
memory again; both are released
`buffers.RETAIN_SECONDS` after the last write asked for one, or by `gpuwrite.release_memory()`. The first write
of a process (or after that delay) pays the allocation.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ...pipeline import buffers

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


_PINNED: list[buffers.Slabs] = []  # the process's pinned staging slabs (CUDA), made on first use


def _pinned_slab(nbytes: int) -> np.ndarray:
    """A new page-locked host slab of `nbytes` bytes (from CuPy's pinned pool)."""
    import cupyx

    return cupyx.empty_pinned((int(nbytes),), dtype=np.uint8)  # type: ignore[no-any-return]


def _free_pinned_pool() -> None:
    """Give CuPy's unused pinned blocks (the released slabs) back to the driver."""
    import cupy

    cupy.get_default_pinned_memory_pool().free_all_blocks()


def pinned_slabs() -> buffers.Slabs:
    """The process's pinned staging slabs (kept and reaped as `buffers`' host slabs are)."""
    if not _PINNED:
        _PINNED.append(buffers.Slabs(_pinned_slab, "gpuwrite_pinned", _free_pinned_pool))
    return _PINNED[0]


def staging_block(nbytes: int, pinned: bool) -> np.ndarray:
    """A uint8 host buffer of `nbytes` bytes to stage uploads (or receive a large download) in, cut from a slab
    kept for the next write: pinned on a GPU (so the copy engine reads or fills it while the host goes on), the
    CPU path's slabs elsewhere. Off a GPU this is the stand-in's model of the pinned slab: a warm write finds its
    pages touched already."""
    if pinned:
        return pinned_slabs().take(int(nbytes))[:int(nbytes)]
    return buffers.empty(int(nbytes), np.uint8)


def staging_let_go(pinned: bool) -> None:
    """A staging buffer was let go (a write ended): its slab is kept `buffers.RETAIN_SECONDS` from now."""
    if not pinned:
        buffers.touch()
    elif _PINNED:
        _PINNED[0].touch()


def release_pinned() -> int:
    """Let the free pinned staging slabs go now (`gpuwrite.release_memory`); the bytes released."""
    if not _PINNED:
        return 0
    released = _PINNED[0].release()
    if released:
        _free_pinned_pool()
    return released


if hasattr(os, "register_at_fork"):  # a forked child has no CUDA context of its parent's: no slabs either
    os.register_at_fork(after_in_child=_PINNED.clear)


class Filled:
    """A host array made straight into the staging buffer rather than copied there: an upload whose bytes are
    computed from the caller's (decimals narrowed to the width they are stored at: `sources.NarrowedDecimals`),
    so the host writes them once, in the pass it would copy them in."""

    nbytes: int  # the bytes it fills
    size: int  # the same (it is staged as uint8)

    def fill(self, out: np.ndarray) -> None:
        """Write the bytes into `out` (uint8[nbytes], in the staging buffer)."""
        raise NotImplementedError


class Staging:
    """The host buffer uploads are staged in (pinned on a GPU: the copy engine reads it while the host goes
    on): a bump allocation, reset after each host wait on the writer's stream (every copy queued before is then
    done), so one buffer serves every row group. When a row group needs more, a larger buffer replaces it (the
    old one is kept until the next wait: copies from it may still be queued)."""

    def __init__(self, alloc: Callable[[int], np.ndarray], let_go: Callable[[], None] | None = None) -> None:
        self.alloc = alloc  # bytes -> uint8 host array (pinned on a GPU)
        self.let_go = let_go  # called at `release` (the allocator's slabs are kept from then: `staging_let_go`)
        self.buf = np.zeros(0, dtype=np.uint8)
        self.used = 0
        self.retired: list[np.ndarray] = []
        self.allocations = 0  # buffers allocated so far (reuse shows as a count that stops growing)
        self.step = 0  # the size `stage` last grew the buffer to: it doubles that, not a `reserve`d buffer

    def stage(self, host: np.ndarray) -> np.ndarray:
        """A copy of contiguous `host` in the staging buffer (same dtype and shape), for an async copy."""
        return put(self.place(int(host.nbytes)), host)

    def place(self, n: int) -> np.ndarray:
        """`n` bytes of the buffer for an upload staged next (uint8; `put` fills it)."""
        start = _rounded(self.used)
        if start + n > len(self.buf):
            if self.used:
                self.retired.append(self.buf)
            self.step = max(2 * self.step, _rounded(n) + ALIGN, MIN_STAGING)
            self.buf = self.alloc(self.step)
            self.allocations += 1
            start = 0
        self.used = start + n
        return self.buf[start:start + n]

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
        if self.let_go is not None:
            self.let_go()

    def reset(self) -> None:
        """The host waited for the writer's stream: every staged copy is done; the buffer is free again."""
        self.used = 0
        self.retired.clear()


def put(view: np.ndarray, host: np.ndarray | Filled) -> np.ndarray:
    """`host` copied (a `Filled`: made) into `view` (uint8 of its bytes, in the staging buffer); the staged array
    (host's dtype and shape; uint8 for a Filled)."""
    if isinstance(host, Filled):
        host.fill(view)
        return view
    staged = view.view(host.dtype).reshape(host.shape)
    np.copyto(staged, host)
    return staged


_STAGERS: list[ThreadPoolExecutor] = []  # the threads that help stage a window's uploads, made on first use
os.register_at_fork(after_in_child=_STAGERS.clear)


def stage_helpers() -> int:
    """Threads that help the host stage a window's computed uploads (`Filled`): the cores it may use, up to 4,
    less its own."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(0, min(4, cores) - 1)


def stage_all(jobs: list[tuple[np.ndarray | Filled, np.ndarray]], helpers: int,
              done: Callable[[int, np.ndarray], None]) -> None:
    """Stage each (host array, staging view) of `jobs` (`put`); `done(i, staged)` is called on this thread once
    job i is staged, so its copy can be queued then. Plain copies run on this thread as they come (memory-bound:
    a second thread copies no faster on this machine); `Filled` ones (compute: decimals narrowed) are shared
    with up to `helpers` threads, which take them in order as each finishes one."""
    fills = [i for i, (host, _) in enumerate(jobs) if isinstance(host, Filled)]
    helpers = min(helpers, len(fills) - 1)
    if helpers <= 0:
        for i, (host, view) in enumerate(jobs):
            done(i, put(view, host))
        return
    if not _STAGERS:
        _STAGERS.append(ThreadPoolExecutor(max_workers=4, thread_name_prefix="gpuwrite-stage"))
    claim = iter(fills)
    lock = threading.Lock()
    staged: dict[int, np.ndarray] = {}

    def work() -> None:
        while True:
            with lock:
                i = next(claim, None)
            if i is None:
                return
            staged[i] = put(jobs[i][1], jobs[i][0])

    futures = [_STAGERS[0].submit(work) for _ in range(helpers)]
    for i, (host, view) in enumerate(jobs):
        if not isinstance(host, Filled):
            done(i, put(view, host))
    work()
    for f in futures:
        f.result()
    for i in fills:
        done(i, staged[i])


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


__all__ = ["Event", "Filled", "PendingDownload", "Staging", "download_bytes", "host_views", "pinned_slabs",
           "put", "release_pinned", "stage_all", "stage_helpers", "staging_block", "staging_let_go", "trace_events", "trace_log"]
