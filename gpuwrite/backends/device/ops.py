"""The device behind one interface, in three modes, with every launch, copy and sync counted in one place.

* ``cuda``: CuPy arrays and numba.cuda kernels on a GPU.
* ``sim``: numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): NumPy arrays, the CUDA kernels run as Python
  threads. CI runs the GPU backend this way (small inputs).
* ``standin``: the cost model's device: NumPy arrays, each kernel replaced by its sequential CPU twin
  (compiled with numba), each copy by a NumPy copy. The time spent inside twins and copies is kept apart
  (`Counters.standin_s`), so the rest of a write's wall time is the host work no GPU can remove.

Every device operation of the GPU backend goes through `Device` (`launch`, `upload`, `download`, `sync`), and
the counters are incremented there and nowhere else, so the cost model cannot miss one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Mode = Literal["cuda", "sim", "standin"]
Geometry = Literal["block", "thread"]
THREADS = 128  # threads per block on a GPU
SIM_THREADS = 8  # under the simulator (each simulated thread is a Python thread: few keep CI fast)

_STANDIN = {"on": False}


def simulated() -> bool:
    """Whether numba.cuda is numba's CUDA simulator (set NUMBA_ENABLE_CUDASIM=1 before importing numba)."""
    from numba.core import config

    return bool(getattr(config, "ENABLE_CUDASIM", False)) or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


@contextlib.contextmanager
def standin() -> Iterator[None]:
    """Within the block, device='gpu' runs on the stand-in device (the cost model's; see the module doc)."""
    before = _STANDIN["on"]
    _STANDIN["on"] = True
    try:
        yield
    finally:
        _STANDIN["on"] = before


def standin_active() -> bool:
    """Whether `standin()` is in effect."""
    return _STANDIN["on"]


def gpu_problem() -> str | None:
    """Why the GPU backend cannot run here, or None when it can (a CUDA device, the simulator or the
    stand-in device)."""
    if standin_active() or simulated():
        return None
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed (pip install 'gpuwrite[gpu]')"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy sees no CUDA device"
    except Exception as exc:  # CuPy raises its own CUDARuntimeError types when there is no driver
        return f"CuPy cannot reach a CUDA device ({type(exc).__name__}: {exc})"
    try:
        from numba import cuda
    except ImportError:
        return "numba.cuda is not available (pip install 'numba-cuda[cu12]')"
    if not cuda.is_available():
        return "numba.cuda sees no CUDA device"
    return None


@dataclass(frozen=True)
class Kernel:
    """A device step: its CUDA kernel (built lazily, once) and its sequential CPU twin.

    `geometry` "block": one thread block per item (page, column, chunk), `kernel[items, threads](*args)`.
    `geometry` "thread": one thread per item, `kernel[blocks, threads](items, *args)` (the kernel checks the
    bound). The twin is `twin(items, *args)` for both: a compiled loop doing what the whole grid does.
    """

    name: str
    cuda: Callable[[], Any]
    twin: Callable[..., Any]
    geometry: Geometry = "block"


@dataclass
class Counters:
    """What a write asked of the device."""

    launches: int = 0
    syncs: int = 0
    h2d_bytes: int = 0
    d2h_bytes: int = 0
    h2d_copies: int = 0
    d2h_copies: int = 0
    standin_s: float = 0.0  # stand-in mode: seconds inside twins and copies
    by_kernel: dict[str, int] = field(default_factory=dict)
    waits: dict[str, int] = field(default_factory=dict)  # syncs that read no array, by what they wait for

    def as_dict(self) -> dict[str, Any]:
        """The counters as plain numbers."""
        return {"launches": self.launches, "syncs": self.syncs, "h2d_bytes": self.h2d_bytes,
                "d2h_bytes": self.d2h_bytes, "h2d_copies": self.h2d_copies, "d2h_copies": self.d2h_copies,
                "standin_s": self.standin_s, "by_kernel": dict(self.by_kernel),
                "waits": dict(self.waits)}


class Device:
    """Arrays, copies, launches and syncs of the GPU backend on one device (see the module doc for modes)."""

    def __init__(self, mode: Mode | None = None) -> None:
        if mode is None:
            mode = "standin" if standin_active() else "sim" if simulated() else "cuda"
        self.mode: Mode = mode
        self.counters = Counters()
        self.peak_bytes = 0
        if mode == "cuda":
            import cupy

            self.xp: Any = cupy
            self.threads = THREADS
        else:
            self.xp = np
            self.threads = SIM_THREADS if mode == "sim" else THREADS

    # -- memory --------------------------------------------------------------------------------------

    def empty(self, n: int, dtype: Any) -> Any:
        """An uninitialised device array."""
        return self.xp.empty(int(n), dtype=dtype)

    def full(self, n: int, value: int, dtype: Any) -> Any:
        """A device array filled with `value` (a fill launch on the device)."""
        self._count_launch("fill")
        t = time.perf_counter()
        out = self.xp.full(int(n), value, dtype=dtype)
        if self.mode == "standin":
            self.counters.standin_s += time.perf_counter() - t
        return out

    def fill_range(self, dev: Any, start: int, n: int, value: int) -> None:
        """dev[start:start + n] = value (a fill launch on the device)."""
        self._count_launch("fill")
        t = time.perf_counter()
        dev[start:start + n] = value
        if self.mode == "standin":
            self.counters.standin_s += time.perf_counter() - t

    def grown(self, dev: Any, size: int) -> Any:
        """A larger device array holding `dev`'s contents first (zeros after): one device copy."""
        self._count_launch("copy")
        t = time.perf_counter()
        out = self.xp.zeros((size, *dev.shape[1:]), dtype=dev.dtype)
        out[:len(dev)] = dev
        if self.mode == "standin":
            self.counters.standin_s += time.perf_counter() - t
        return out

    def upload(self, host: Any) -> Any:
        """A device copy of host array `host` (host -> device)."""
        host = np.ascontiguousarray(host)
        c = self.counters
        c.h2d_bytes += host.nbytes
        c.h2d_copies += 1
        if self.mode == "cuda":
            return self.xp.asarray(host)
        t = time.perf_counter()
        out = host.copy()
        if self.mode == "standin":
            c.standin_s += time.perf_counter() - t
        return out

    def upload_into(self, dst: Any, offset: int, host: Any) -> None:
        """Copy host array `host` into device array `dst` at element `offset` (host -> device, same dtype):
        one copy, counted as `upload` counts."""
        host = np.ascontiguousarray(host)
        n = host.size
        c = self.counters
        c.h2d_bytes += host.nbytes
        c.h2d_copies += 1
        if self.mode == "cuda":
            dst[offset:offset + n].set(host)
            return
        t = time.perf_counter()
        dst[offset:offset + n] = host
        if self.mode == "standin":
            c.standin_s += time.perf_counter() - t

    def download(self, dev: Any) -> np.ndarray:
        """A host copy of device array `dev` (device -> host); the host waits for it: a sync."""
        c = self.counters
        c.syncs += 1
        c.d2h_copies += 1
        c.d2h_bytes += int(dev.nbytes)
        if self.mode == "cuda":
            return dev.get()  # type: ignore[no-any-return]
        t = time.perf_counter()
        out = np.array(dev, copy=True)
        if self.mode == "standin":
            c.standin_s += time.perf_counter() - t
        return out

    def download_many(self, devs: list[Any]) -> list[np.ndarray]:
        """Host copies of several device arrays after one wait (one sync)."""
        c = self.counters
        c.syncs += 1
        out = []
        t = time.perf_counter()
        for dev in devs:
            c.d2h_copies += 1
            c.d2h_bytes += int(dev.nbytes)
            out.append(dev.get() if self.mode == "cuda" else np.array(dev, copy=True))
        if self.mode == "standin":
            c.standin_s += time.perf_counter() - t
        return out

    def wait(self, name: str, read: Callable[[], Any] | None = None) -> Any:
        """The host waits for the device's work so far (a sync), then `read()`s what it produced (a library's
        result that lives on the host, such as nvCOMP's compressed sizes). `name` says what is waited for."""
        self.counters.syncs += 1
        self.counters.waits[name] = self.counters.waits.get(name, 0) + 1
        if self.mode == "cuda":
            self.xp.cuda.get_current_stream().synchronize()
        return read() if read is not None else None

    # -- launches ------------------------------------------------------------------------------------

    def _count_launch(self, name: str) -> None:
        c = self.counters
        c.launches += 1
        c.by_kernel[name] = c.by_kernel.get(name, 0) + 1

    def launch(self, kernel: Kernel, items: int, *args: Any) -> None:
        """Run `kernel` over `items` (pages, columns, chunks or values, by its geometry)."""
        if items <= 0:
            return
        self._count_launch(kernel.name)
        if self.mode == "standin":
            t = time.perf_counter()
            kernel.twin(items, *args)
            self.counters.standin_s += time.perf_counter() - t
            return
        compiled = kernel.cuda()
        if kernel.geometry == "block":
            compiled[items, self.threads](*args)
        else:
            compiled[(items + self.threads - 1) // self.threads, self.threads](items, *args)
        self._gauge()

    def host_step(self, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        """A step that is device work on a GPU but runs as host code in the stand-in / simulator modes (the
        page codec): counted as a launch, timed as stand-in work."""
        self._count_launch(name)
        t = time.perf_counter()
        out = fn(*args)
        if self.mode == "standin":
            self.counters.standin_s += time.perf_counter() - t
        return out

    def _gauge(self) -> None:
        """Track the device memory pool's high-water mark (CuPy only)."""
        if self.mode == "cuda":
            used = int(self.xp.get_default_memory_pool().total_bytes())
            self.peak_bytes = max(self.peak_bytes, used)
