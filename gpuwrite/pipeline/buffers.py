"""Large host arrays kept for reuse across row groups and writes (the CPU path's converted rows).

A write converts its rows into arrays of its own (`leafdata.LeafBuffer`): for a table of decimals and nullable
keys, about as many bytes as the Arrow input. Memory fresh from the system is zeroed page by page on first
touch, which costs the writing threads system time (a store_sales write spent up to a second of it after
another library's write had churned memory). So arrays of `MIN_BYTES` or more are cut from slabs the process
keeps: a slab is free again once no array made from it is alive (its reference count says so; nothing is
recycled while a view of it exists), and free slabs are released once no write has asked for one in
`RETAIN_SECONDS` (30 s), or in twice the longest of the
last few idle gaps after which the process came back for more (at most `RETAIN_MAX_SECONDS`), beyond
`RETAIN_BYTES`, when a larger array is needed than any of them (a stream whose row groups grow), or at
`release_memory()`. The gaps: a benchmark writing store_sales with gpuwrite between pyarrow, polars and DuckDB
(or a loop that writes every 15 s) left gpuwrite idle just over 10 s now and then, and every such write paid for
its memory afresh, as a process's first write does (47 new slabs, ~50,000 page faults, +0.4 CPU-s: the slow
rounds of issue 32).
The GPU backend keeps its upload staging buffers by the same rules (`Slabs` with an allocator of pinned memory:
`backends/device/copies.py`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from . import heap

MIN_BYTES = 1 << 20  # smaller arrays come from the allocator as usual
# free slabs are released this long after the last request, at least: 10 s was too eager where memory handed back
# is slow to take again (this machine's VM: a store_sales write after 12 s idle re-faulted its 42,000 pages at
# ~40 us each, 6x a first touch, and took 1.2-1.6 s instead of 0.5 s, the first such gap of every process)
RETAIN_SECONDS = 30.0
RETAIN_MAX_SECONDS = 120.0  # ... and at most, however far apart the process's writes come
IDLE_GAP = 1.0  # a request after this long without one starts a new write's requests (its gap is recorded)
GAPS_KEPT = 4  # the idle gaps remembered (the longest of them, twice over, sets how long free slabs stay)
RETAIN_BYTES = 4 << 30  # free slabs beyond this are released at once


def _refs(slabs: list[np.ndarray], i: int) -> int:
    """References to slabs[i] as seen from here (compared with `_FREE`: arrays cut from it add one each)."""
    return sys.getrefcount(slabs[i])


_FREE = _refs([np.empty(1, dtype=np.uint8)], 0)  # a slab only the list holds (measured, not assumed)


def _slab_bytes(need: int) -> int:
    """A slab's size for `need` bytes: rounded up to an eighth of its power of two (at least 1 MiB), so arrays
    of nearly the same size (the next row group's) fit the same slab."""
    grain = max(MIN_BYTES, 1 << max(0, need.bit_length() - 4))
    return -(-need // grain) * grain


def _host_slab(nbytes: int) -> np.ndarray:
    """A new uninitialised host slab of `nbytes` bytes."""
    return np.empty(nbytes, dtype=np.uint8)


class Slabs:
    """Slabs kept for reuse and their reaper: the process's host slabs (`empty`), or another kind of host memory
    (`alloc`: bytes -> uint8 array, such as the GPU backend's pinned staging buffers) under the same rules;
    `released` runs after the reaper let slabs go (memory an allocator of `alloc` keeps goes back too)."""

    def __init__(self, alloc: Callable[[int], np.ndarray] = _host_slab, name: str = "gpuwrite_buffers",
                 released: Callable[[], Any] = heap.trim) -> None:
        self.alloc, self.name, self.released = alloc, name, released
        self.lock = threading.Lock()
        self.slabs: list[np.ndarray] = []
        self.clock: Callable[[], float] = time.monotonic  # (tests give their own)
        self.last_request: float | None = None
        self.gaps: deque[float] = deque(maxlen=GAPS_KEPT)  # idle seconds before the last writes' requests
        self.reaper: threading.Thread | None = None
        self.created = 0  # slabs allocated from the system (tests count them)
        self.created_bytes = 0  # ... and their bytes (memory a write may touch afresh: bench/first_write.py)
        self.reused = 0  # requests served by a free slab

    def free_bytes(self) -> int:
        """Bytes held by slabs no array uses."""
        with self.lock:
            return sum(self.slabs[i].nbytes for i in range(len(self.slabs)) if _refs(self.slabs, i) == _FREE)

    def take(self, need: int) -> np.ndarray:
        """A free slab of at least `need` bytes (the smallest not over twice that), or a new one."""
        with self.lock:
            now = self.clock()
            if self.last_request is not None and now - self.last_request >= IDLE_GAP:
                self.gaps.append(now - self.last_request)
            self.last_request = now
            best = -1
            for i in range(len(self.slabs)):
                size = self.slabs[i].nbytes
                if need <= size <= 2 * need + MIN_BYTES and _refs(self.slabs, i) == _FREE \
                        and (best < 0 or size < self.slabs[best].nbytes):
                    best = i
            if best >= 0:
                self.reused += 1
                return self.slabs[best]
            self._release_smaller(need)
            self._trim(RETAIN_BYTES)
            slab = self.alloc(_slab_bytes(need))
            self.slabs.append(slab)
            self.created += 1
            self.created_bytes += slab.nbytes
            if self.reaper is None:
                self.reaper = threading.Thread(target=self._reap, name=self.name, daemon=True)
                self.reaper.start()
            return slab

    def touch(self) -> None:
        """Count now as the last request: a slab let go now (a write's staging buffer, at its end) is kept
        until `release_at` counted from now, not from when it was taken (a long write would lose it at once)."""
        with self.lock:
            self.last_request = self.clock()

    def _release_smaller(self, need: int) -> None:
        """Release the free slabs smaller than `need` bytes (called with the lock held): when requests outgrow
        the slabs (a stream's row groups grow), the old ones would only add to the new ones' memory."""
        self.slabs = [self.slabs[i] for i in range(len(self.slabs))
                      if self.slabs[i].nbytes >= need or _refs(self.slabs, i) != _FREE]

    def _trim(self, keep: int) -> int:
        """Release free slabs (largest first) until at most `keep` bytes of them remain; bytes released.
        Called with the lock held."""
        free = sorted((i for i in range(len(self.slabs)) if _refs(self.slabs, i) == _FREE),
                      key=lambda i: -self.slabs[i].nbytes)
        held = sum(self.slabs[i].nbytes for i in free)
        drop: set[int] = set()
        for i in free:
            if held <= keep:
                break
            held -= self.slabs[i].nbytes
            drop.add(i)
        released = sum(self.slabs[i].nbytes for i in drop)
        self.slabs = [s for i, s in enumerate(self.slabs) if i not in drop]
        return released

    def release(self) -> int:
        """Release every free slab now; bytes released."""
        with self.lock:
            return self._trim(0)

    def release_at(self) -> float:
        """When the free slabs go if no request comes before (on `clock`): RETAIN_SECONDS after the last
        request, or twice the longest recent idle gap if longer (up to RETAIN_MAX_SECONDS), so that a process
        writing every few seconds keeps its memory warm between writes and one that stops gives it back."""
        last = self.last_request if self.last_request is not None else self.clock()
        return last + min(RETAIN_MAX_SECONDS, max(RETAIN_SECONDS, 2 * max(self.gaps, default=0.0)))

    def _reap(self) -> None:
        """Release the free slabs once no request came until `release_at`; end when no slab is left."""
        while True:
            with self.lock:
                wait = self.release_at() - self.clock()
                if wait <= 0:
                    if self._trim(0):
                        self.released()  # host slabs under heap.MMAP_THRESHOLD were freed into the heap
                    if not self.slabs:
                        self.reaper = None
                        return
                    wait = RETAIN_SECONDS  # slabs in use: look again later
            time.sleep(min(max(wait, 0.01), RETAIN_SECONDS))


_SLABS = Slabs()
# Page buffers and compressed pages (`page_buffer`, `Arena`): slabs of their own, so that these requests, at
# times set by the encoding threads, do not take the slabs the conversion's requests of the same sizes reuse
_PAGE_SLABS_NAME = "gpuwrite_page_buffers"
_PAGE_SLABS = Slabs(name=_PAGE_SLABS_NAME)

# A thread's arena slab (`Arena`): a few pages of a megabyte each fit one
ARENA_SLAB_BYTES = 8 << 20
ARENA_ALIGN = 64  # each take starts at a multiple of this (a cache line: typed views of it are aligned)


class Arena:
    """Byte arrays cut one after another from kept slabs, each thread from a slab of its own (no lock), for
    arrays let go about together: a file's compressed pages and its dictionaries' hash tables, dropped once their
    row group is written.

    From malloc they went back to the C heap after every write, and any library's `malloc_trim(0)` hands the
    heap's free memory to the system: DuckDB's idle worker threads call it, so in a process that also wrote
    with DuckDB, gpuwrite's next write page-faulted its pages in afresh (a store_sales write: ~29,000 faults,
    +0.1 s of system time; strings +18% wall, wide +35%, measured with a `malloc_trim(0)` before each write).
    A slab holds nothing back from the heap's trim or the reaper once nothing cut from it is alive."""

    def __init__(self, slab_bytes: int = ARENA_SLAB_BYTES) -> None:
        self.slab_bytes = slab_bytes
        self._local = threading.local()  # this thread's slab and the first byte not taken from it

    def take(self, n: int) -> np.ndarray:
        """`n` uninitialised bytes (uint8) after this thread's last `take` (from the next multiple of ARENA_ALIGN),
        from a new slab when they do not fit in its slab (the rest of that one stays unused until it is free
        again)."""
        local = self._local
        slab: np.ndarray | None = getattr(local, "slab", None)
        pos: int = -(-local.pos // ARENA_ALIGN) * ARENA_ALIGN if slab is not None else 0
        if slab is None or pos + n > slab.nbytes:
            slab, pos = _PAGE_SLABS.take(max(n, self.slab_bytes)), 0
            local.slab = slab
        local.pos = pos + n
        return slab[pos:pos + n]

    def keep(self, taken: np.ndarray, n: int) -> np.ndarray:
        """The first `n` bytes of `taken`, this thread's last `take`: the bytes after them go to its next one."""
        self._local.pos -= taken.nbytes - n
        return taken[:n]


def _after_fork() -> None:
    """A forked child (a Spark Python worker) starts with no slabs of its own: the parent's lock may have been
    held by its reaper, which does not exist in the child."""
    global _SLABS, _PAGE_SLABS
    _SLABS = Slabs()
    _PAGE_SLABS = Slabs(name=_PAGE_SLABS_NAME)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def empty(count: int, dtype: Any, reserve: int = 0) -> np.ndarray:
    """An uninitialised 1-D array of `count` elements of `dtype`, as np.empty; large ones cut from a kept slab.
    `reserve`: elements a later array of the same role is expected to reach (a layout rebuilt as its window
    grows): a large array's slab is asked for that size, so each rebuild fits the slab the last one let go of
    (untouched pages of it cost no memory), rather than a new, larger one per rebuild."""
    return _cut(_SLABS, count, np.dtype(dtype), reserve)


def page_buffer(nbytes: int) -> np.ndarray:
    """An uninitialised uint8 array of `nbytes` for encoding pages into, as `empty` (a kept slab from `MIN_BYTES`),
    from the page slabs: let go once its pages are compressed or copied out of it."""
    return _cut(_PAGE_SLABS, nbytes, np.dtype(np.uint8))


def _cut(slabs: Slabs, count: int, dtype: np.dtype, reserve: int = 0) -> np.ndarray:
    """An uninitialised 1-D array of `count` elements of `dtype`: from NumPy (owning its memory) under
    `MIN_BYTES`, else the first bytes of a slab of `slabs` big enough for `reserve` elements too."""
    need = count * dtype.itemsize
    if need < MIN_BYTES:
        return np.empty(count, dtype=dtype)
    return slabs.take(max(need, reserve * dtype.itemsize))[:need].view(dtype)


def touch() -> None:
    """The host slabs count now as last asked for (`Slabs.touch`)."""
    _SLABS.touch()


def release_memory() -> int:
    """Give the host memory gpuwrite keeps for reuse (free conversion buffers) back now; the bytes released.

    It is released anyway `RETAIN_SECONDS` after the last write asked for some (longer for a process whose
    writes come further apart: `Slabs.release_at`); buffers of a write still open
    are kept. The C heap's free memory (`heap.trim`) goes back too."""
    released = _SLABS.release() + _PAGE_SLABS.release()
    heap.trim()
    return released


def kept_bytes() -> int:
    """Host memory kept for reuse and not in use now."""
    return _SLABS.free_bytes() + _PAGE_SLABS.free_bytes()
