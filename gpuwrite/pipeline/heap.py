"""The C heap's settings for repeated writes: freed memory kept for the next write instead of handed back.

A write's temporaries (a nested leaf's positions and levels, page buffers, compressed pages: a few KB to tens of
MB each) come from malloc. glibc serves those over its mmap threshold (128 KiB at first, raised only as far as
the largest block freed so far) with fresh mappings, and gives the top of its heap back once 128 KiB of it is
free; memory fresh from the system is zeroed page by page on first touch. So every warm write page-faulted
again: 5,000-10,000 minor faults (20-40 MB zeroed, 20-50 ms of system time on 2 cores) per write of the bench's
strings, wide or nested table, varying from one write to the next with what the process freed between
(another library's write, a thread that ended), measured with getrusage; none with the settings below.
`enable` (once per process, from the CPU backend) makes every thread allocate from the main heap and raises
both thresholds, so freed blocks stay there for the next write (nested: 0.099-0.132 s of CPU per write with
3,600-7,700 faults, 0.090-0.098 s with about 10, same process, polars writes between);
`trim` (from `api.release_memory`) hands the free memory back at once, as does any other library's
`malloc_trim(0)` (DuckDB's idle threads call it): the largest temporaries (compressed pages, page buffers)
therefore come from kept slabs instead (`buffers.Arena`, `buffers.page_buffer`). Other allocators (jemalloc, musl) have
no mallopt: nothing changes there. The settings are process-wide (they apply to the user's own allocations too);
`GPUWRITE_HEAP_TUNING=0` in the environment leaves glibc's defaults untouched.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

TUNING_ENV = "GPUWRITE_HEAP_TUNING"  # "0": keep glibc's own settings (the process's heap is not gpuwrite's alone)
M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD = 64 << 20  # blocks up to this come from the heap (larger ones: buffers.py's kept slabs)
TRIM_THRESHOLD = 256 << 20  # free memory at the heap's top kept up to this
ARENAS = 1  # every thread allocates from the main heap: a thread's own heaps (64 MiB each) are unmapped as
# soon as they are empty, so a worker thread's temporaries faulted in afresh every few writes even so

_lock = threading.Lock()
_state: dict[str, bool] = {"tried": False, "enabled": False}


def _libc() -> ctypes.CDLL | None:
    """glibc, when this process runs on it (None elsewhere: no mallopt to call)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018 -- raises AttributeError off glibc
    except (OSError, AttributeError):
        return None
    return libc


def enable() -> bool:
    """Keep freed heap memory for the next write (once per process; later calls return the first's answer);
    whether glibc took the settings."""
    with _lock:
        if not _state["tried"]:
            _state["tried"] = True
            libc = None if os.environ.get(TUNING_ENV, "1") == "0" else _libc()
            _state["enabled"] = libc is not None and all(
                libc.mallopt(key, value) for key, value in ((M_ARENA_MAX, ARENAS), (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                                                            (M_TRIM_THRESHOLD, TRIM_THRESHOLD)))
        return _state["enabled"]


def trim() -> None:
    """Hand the heap's free memory back to the system now (after `enable`; nothing otherwise)."""
    if _state["enabled"]:
        libc = _libc()
        if libc is not None:
            libc.malloc_trim(0)
