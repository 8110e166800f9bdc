"""Where numba caches gpuwrite's compiled CPU kernels, and a notice when a process has to compile them.

Kernels are compiled when the package is built and loaded from the cache shipped in it (`kernels/_disk_cache`);
a signature missing there is compiled on first use and cached on disk by numba (`NUMBA_CACHE_DIR` if set, else
`kernels/__pycache__` inside the installed package when writable, else the user's cache directory, e.g.
`~/.cache/numba`). A compile is seen through numba's own event stream (`numba:compile` fires only when a
signature is really compiled, never on a cache load), so the notice costs nothing on a warm cache.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

from numba.core import event

KERNEL_PACKAGE = "gpuwrite.kernels"
NOTICE_ENV = "GPUWRITE_COMPILE_NOTICE"  # "0" silences the one-line notice


def _kernel_module_values() -> list[Any]:
    """Every top-level value of every gpuwrite kernel module imported so far."""
    values: list[Any] = []
    for name, module in list(sys.modules.items()):
        if (name == KERNEL_PACKAGE or name.startswith(KERNEL_PACKAGE + ".")) and module is not None:
            values += list(vars(module).values())
    return values


def kernel_dispatchers() -> list[Any]:
    """The CPU dispatchers of every gpuwrite kernel module imported so far."""
    from numba.core.registry import CPUDispatcher

    seen = {id(value): value for value in _kernel_module_values() if isinstance(value, CPUDispatcher)}
    return list(seen.values())


def cache_dir() -> str | None:
    """The directory numba caches gpuwrite's kernels under (None if no kernel module is loaded): the common
    parent of the kernel folders' caches (kernels/ has one subfolder per job, each cached beside itself)."""
    paths = {str(path) for dispatcher in kernel_dispatchers()
             if (path := getattr(getattr(dispatcher, "stats", None), "cache_path", None))}
    return os.path.commonpath(sorted(paths)) if paths else None


def _cache_counts(dispatchers: list[Any]) -> tuple[int, int]:
    """(specialisations loaded from numba's disk cache, compiled) over `dispatchers`."""
    hits = misses = 0
    for dispatcher in dispatchers:
        stats = getattr(dispatcher, "stats", None)
        hits += sum((getattr(stats, "cache_hits", None) or {}).values())
        misses += sum((getattr(stats, "cache_misses", None) or {}).values())
    return hits, misses


def cache_counts() -> tuple[int, int]:
    """(signatures loaded from the disk cache, signatures compiled) so far over gpuwrite's kernels."""
    return _cache_counts(kernel_dispatchers())


def cuda_dispatchers() -> list[Any]:
    """The CUDA kernels (numba-cuda dispatchers, not device functions) of every gpuwrite kernel module imported so
    far, page kernels included; empty when numba.cuda is not loaded or is the simulator."""
    dispatcher_mod = sys.modules.get("numba.cuda.dispatcher")
    kind = getattr(dispatcher_mod, "CUDADispatcher", None)
    if kind is None:
        return []
    seen: dict[int, Any] = {}
    jit_mod = sys.modules.get(KERNEL_PACKAGE + "._jit")
    values = list(getattr(jit_mod, "_GLOBAL", {}).values()) + _kernel_module_values()
    for value in values:
        if isinstance(value, kind) and not value.targetoptions.get("device"):
            seen[id(value)] = value
    return list(seen.values())


def cuda_cache_counts() -> tuple[int, int]:
    """(CUDA kernel specialisations loaded from the disk cache, compiled) so far in this process."""
    return _cache_counts(cuda_dispatchers())


def signatures() -> dict[str, set[str]]:
    """Every compiled (or loaded) signature per kernel, as 'module.name' -> {'(int64, array(...))', ...}."""
    out: dict[str, set[str]] = {}
    for dispatcher in kernel_dispatchers():
        name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"
        out.setdefault(name, set()).update(str(sig) for sig in dispatcher.signatures)
    return out


class CompileWatch(event.Listener):
    """Counts gpuwrite kernel compiles (numba:compile events) and announces the first one in a process.

    A progress bar that is on screen claims the announcement (`claim`) and shows the compile itself; otherwise
    one line goes to stderr, once per process.
    """

    def __init__(self) -> None:
        self.compiled = 0  # signatures compiled in this process
        self.active = 0  # compiles in progress (nested: a kernel's callees compile inside it)
        self.first_at: float | None = None
        self.announced = False
        self._claims = 0
        self._lock = threading.Lock()

    @staticmethod
    def _ours(ev: Any) -> bool:
        """Whether the event is about one of gpuwrite's kernels."""
        data = ev.data if isinstance(ev.data, dict) else {}
        fn = getattr(data.get("dispatcher"), "py_func", None)
        module = getattr(fn, "__module__", "") or ""
        return module == KERNEL_PACKAGE or module.startswith(KERNEL_PACKAGE + ".")

    def on_start(self, ev: Any) -> None:
        """A compile starts: count it; announce the first one unless a progress bar shows it."""
        if not self._ours(ev):
            return
        with self._lock:
            self.active += 1
            if self.first_at is None:
                self.first_at = time.perf_counter()
            announce = not self.announced and not self._claims
            self.announced = True
        if announce and os.environ.get(NOTICE_ENV, "1") != "0":
            print(notice_text(), file=sys.stderr, flush=True)

    def on_end(self, ev: Any) -> None:
        """A compile ended."""
        if not self._ours(ev):
            return
        with self._lock:
            self.active = max(0, self.active - 1)
            self.compiled += 1

    def claim(self) -> None:
        """A progress bar is on screen and will show compiles: no separate line."""
        with self._lock:
            self._claims += 1
            self.announced = True

    def release(self) -> None:
        """The progress bar is gone."""
        with self._lock:
            self._claims = max(0, self._claims - 1)


def notice_text() -> str:
    """The one-line notice printed when a process compiles gpuwrite's kernels."""
    where = cache_dir()
    return ("gpuwrite: compiling kernels, first run only" + (f" (cached in {where}" if where else " (")
            + "; `gpuwrite warmup` does it ahead of time)")


WATCH = CompileWatch()
_installed = False


def install() -> None:
    """Listen for numba compiles (once per process), and import what numba's first call of any kernel with an
    array would: `typeof` checks for numpy.ma's MaskedArray, importing numpy.ma (~10-20 ms) inside a process's
    first write otherwise (the writer's imports load numba itself)."""
    global _installed
    if not _installed:
        import numpy.ma  # noqa: F401

        event.register("numba:compile", WATCH)
        _installed = True


def compile_note() -> str:
    """What a progress bar says while kernels compile ('' when none is compiling)."""
    if WATCH.active:
        return f"compiling kernels, first run only ({WATCH.compiled} done)"
    return ""
