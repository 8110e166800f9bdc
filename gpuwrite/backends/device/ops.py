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
import weakref
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


NO_DEVICE = "no CUDA device/driver found"


def gpu_problem() -> str | None:
    """Why the GPU backend cannot run here, or None when it can (a CUDA device, the simulator or the
    stand-in device)."""
    found = gpu_check()
    return None if found is None else found[0]


def gpu_check() -> tuple[str, BaseException | None] | None:
    """Why the GPU backend cannot run here and the error that told (None if none did), or None when it can.
    A missing GPU or driver is NO_DEVICE; CuPy's own error (cudaErrorInsufficientDriver,
    cudaErrorNoDevice...) is the second item."""
    if standin_active() or simulated():
        return None
    from .cuda_packages import driver_cuda_version, install_hint, installed, package_problem

    driver = driver_cuda_version()
    mismatch = package_problem(driver, installed())
    if mismatch:
        return mismatch, None
    try:
        import cupy
    except ImportError:
        return f"CuPy is not installed ({install_hint(driver)})", None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return f"{NO_DEVICE} (CuPy sees no CUDA device)", None
    except Exception as exc:  # CuPy raises its own CUDARuntimeError types when there is no driver
        return f"{NO_DEVICE} (CuPy: {type(exc).__name__}: {exc})", exc
    try:
        from numba import cuda
    except ImportError:
        return f"numba.cuda is not available ({install_hint(driver)})", None
    if not cuda.is_available():
        return f"{NO_DEVICE} (numba.cuda sees no CUDA device)", None
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
    serial: Callable[..., int] | None = None


@dataclass
class Counters:
    """What a write asked of the device."""

    launches: int = 0
    syncs: int = 0
    h2d_bytes: int = 0
    d2h_bytes: int = 0
    h2d_copies: int = 0
    d2h_copies: int = 0
    d2d_bytes: int = 0  # device-to-device copies (input buffers taken on the device into the window's arena)
    d2d_copies: int = 0
    event_waits: int = 0  # device-side waits on a producer's event or stream (no host wait)
    standin_s: float = 0.0  # stand-in mode: seconds inside twins and copies
    standin_cpu_s: float = 0.0  # stand-in mode: CPU seconds of this process inside twins and copies
    by_kernel: dict[str, int] = field(default_factory=dict)
    waits: dict[str, int] = field(default_factory=dict)  # syncs that read no array, by what they wait for

    def as_dict(self) -> dict[str, Any]:
        """The counters as plain numbers."""
        return {"launches": self.launches, "syncs": self.syncs, "h2d_bytes": self.h2d_bytes,
                "d2h_bytes": self.d2h_bytes, "h2d_copies": self.h2d_copies, "d2h_copies": self.d2h_copies,
                "d2d_bytes": self.d2d_bytes, "d2d_copies": self.d2d_copies, "event_waits": self.event_waits,
                "standin_s": self.standin_s, "standin_cpu_s": self.standin_cpu_s, "by_kernel": dict(self.by_kernel),
                "waits": dict(self.waits)}

    def absorb(self, other: Counters) -> None:
        """Add `other`'s counts to these and zero them (work done for this write on another Device object)."""
        for name in ("launches", "syncs", "h2d_bytes", "d2h_bytes", "h2d_copies", "d2h_copies", "d2d_bytes",
                     "d2d_copies", "event_waits", "standin_s", "standin_cpu_s"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
            setattr(other, name, type(getattr(other, name))())
        for mine, theirs in ((self.by_kernel, other.by_kernel), (self.waits, other.waits)):
            for name, n in theirs.items():
                mine[name] = mine.get(name, 0) + n
            theirs.clear()


def _clock() -> tuple[float, float]:
    """(wall, process CPU) seconds now."""
    return time.perf_counter(), time.process_time()


def _add_standin(c: Counters, t: tuple[float, float]) -> None:
    """Add the wall and CPU time since `t` (a _clock()) to the stand-in's."""
    c.standin_s += time.perf_counter() - t[0]
    c.standin_cpu_s += time.process_time() - t[1]


_CUDA_IN_USE = False  # a Device ran on CUDA in this process: CuPy's pools may hold gpuwrite's memory


def release_pools() -> int:
    """Free CuPy's unused pooled memory if gpuwrite ran on CUDA in this process (`gpuwrite.release_memory`);
    the device bytes freed. Without that, CuPy is not touched (it fails on a machine without a GPU)."""
    if not _CUDA_IN_USE:
        return 0
    import cupy

    return free_cupy_pools(cupy)


def free_cupy_pools(cupy: Any) -> int:
    """Free the unused blocks of CuPy's default device and pinned-host pools; the device bytes freed."""
    pool = cupy.get_default_memory_pool()
    freed = int(pool.free_bytes())
    pool.free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()
    return freed


class Device:
    """Arrays, copies, launches and syncs of the GPU backend on one device (see the module doc for modes)."""

    def __init__(self, mode: Mode | None = None) -> None:
        if mode is None:
            mode = "standin" if standin_active() else "sim" if simulated() else "cuda"
        self.mode: Mode = mode
        self.counters = Counters()
        self.peak_bytes = 0  # most bytes of device arrays held at once (`_track`)
        self.live_bytes = 0
        self.pool_peak_bytes = 0  # CuPy's memory pool high-water mark (cuda mode)
        if mode == "cuda":
            import cupy

            from .rmm_pool import share_rmm_pool

            global _CUDA_IN_USE
            _CUDA_IN_USE = True
            share_rmm_pool(cupy)  # with cudf / RAPIDS in the process: one pool, RMM's
            self.xp: Any = cupy
            self.threads = THREADS
        else:
            self.xp = np
            self.threads = SIM_THREADS if mode == "sim" else THREADS

    # -- memory --------------------------------------------------------------------------------------

    def _track(self, arr: Any) -> Any:
        """Count `arr`'s bytes as held until it is freed; keep the high-water mark (`peak_bytes`): the device
        memory the backend holds at once, in every mode, so the bound per row group is measured."""
        n = int(arr.nbytes)
        self.live_bytes += n
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        weakref.finalize(arr, self._release, n)
        return arr

    def _release(self, n: int) -> None:
        self.live_bytes -= n

    def stream_ptr(self) -> int:
        """The writer's CUDA stream (`cudaStream_t` as an int: CuPy's current stream) that every launch, copy and
        codec call is queued on; 0 off CUDA."""
        return int(self.xp.cuda.get_current_stream().ptr) if self.mode == "cuda" else 0

    def release_pool(self) -> int:
        """Give the device memory CuPy's pools keep free (after this backend's arrays are dropped) back to the
        driver, so cudf / RMM or Spark in the same process can use it; the bytes returned (0 but on CUDA)."""
        if self.mode != "cuda":
            return 0
        return free_cupy_pools(self.xp)

    def empty(self, n: int, dtype: Any) -> Any:
        """An uninitialised device array."""
        return self._track(self.xp.empty(int(n), dtype=dtype))

    def full(self, n: int, value: int, dtype: Any) -> Any:
        """A device array filled with `value` (a fill launch on the device)."""
        self._count_launch("fill")
        t = _clock()
        out = self._track(self.xp.full(int(n), value, dtype=dtype))
        if self.mode == "standin":
            _add_standin(self.counters, t)
        return out

    def fill_range(self, dev: Any, start: int, n: int, value: int) -> None:
        """dev[start:start + n] = value (a fill launch on the device)."""
        self._count_launch("fill")
        t = _clock()
        dev[start:start + n] = value
        if self.mode == "standin":
            _add_standin(self.counters, t)

    def grown(self, dev: Any, size: int) -> Any:
        """A larger device array holding `dev`'s contents first (zeros after): one device copy."""
        self._count_launch("copy")
        t = _clock()
        out = self._track(self.xp.zeros((size, *dev.shape[1:]), dtype=dev.dtype))
        out[:len(dev)] = dev
        if self.mode == "standin":
            _add_standin(self.counters, t)
        return out

    def upload(self, host: Any) -> Any:
        """A device copy of host array `host` (host -> device)."""
        host = np.ascontiguousarray(host)
        c = self.counters
        c.h2d_bytes += host.nbytes
        c.h2d_copies += 1
        if self.mode == "cuda":
            return self._track(self.xp.asarray(host))
        t = _clock()
        out = self._track(host.copy())
        if self.mode == "standin":
            _add_standin(c, t)
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
        t = _clock()
        dst[offset:offset + n] = host
        if self.mode == "standin":
            _add_standin(c, t)

    def download(self, dev: Any) -> np.ndarray:
        """A host copy of device array `dev` (device -> host); the host waits for it: a sync."""
        c = self.counters
        c.syncs += 1
        c.d2h_copies += 1
        c.d2h_bytes += int(dev.nbytes)
        if self.mode == "cuda":
            return dev.get()  # type: ignore[no-any-return]
        t = _clock()
        out = np.array(dev, copy=True)
        if self.mode == "standin":
            _add_standin(c, t)
        return out

    def download_many(self, devs: list[Any]) -> list[np.ndarray]:
        """Host copies of several device arrays after one wait (one sync)."""
        c = self.counters
        c.syncs += 1
        out = []
        t = _clock()
        for dev in devs:
            c.d2h_copies += 1
            c.d2h_bytes += int(dev.nbytes)
            out.append(dev.get() if self.mode == "cuda" else np.array(dev, copy=True))
        if self.mode == "standin":
            _add_standin(c, t)
        return out

    def wait(self, name: str, read: Callable[[], Any] | None = None) -> Any:
        """The host waits for the device's work so far (a sync), then `read()`s what it produced (a library's
        result that lives on the host, such as nvCOMP's compressed sizes). `name` says what is waited for."""
        self.counters.syncs += 1
        self.counters.waits[name] = self.counters.waits.get(name, 0) + 1
        if self.mode == "cuda":
            self.xp.cuda.get_current_stream().synchronize()
        return read() if read is not None else None

    # -- data that is already on the device (device input) ---------------------------------------------

    def device_id(self) -> int:
        """The CUDA device this Device runs on (0 for the simulator and the stand-in device)."""
        if self.mode == "cuda":
            return int(self.xp.cuda.runtime.getDevice())
        return 0

    def wrap(self, ptr: int, nbytes: int, owner: Any) -> Any:
        """A uint8 device array over `nbytes` of device memory at `ptr` that `owner` keeps alive (no copy).
        In the simulator and stand-in modes device memory is host memory, so this is a NumPy view."""
        if nbytes <= 0 or not ptr:
            return self.xp.zeros(0, dtype=np.uint8)
        if self.mode == "cuda":
            cp = self.xp
            mem = cp.cuda.UnownedMemory(int(ptr), int(nbytes), owner, self.device_id())
            return cp.ndarray((int(nbytes),), dtype=cp.uint8, memptr=cp.cuda.MemoryPointer(mem, 0))
        import ctypes

        raw = (ctypes.c_uint8 * int(nbytes)).from_address(int(ptr))
        raw._owner = owner  # type: ignore[attr-defined]  # the view keeps the producer's memory alive
        return np.ctypeslib.as_array(raw)

    def wait_event(self, event_ptr: int) -> None:
        """Make the writer's stream wait on the producer's CUDA event (`cudaEvent_t*` of the Arrow C Device
        interface): a device-side wait, the host goes on."""
        self.counters.event_waits += 1
        if self.mode == "cuda":
            import ctypes

            event = ctypes.c_void_p.from_address(int(event_ptr)).value or 0
            self.xp.cuda.runtime.streamWaitEvent(self.xp.cuda.get_current_stream().ptr, event)

    def wait_stream(self, stream: int) -> None:
        """Make the writer's stream wait for work queued on the producer's stream (`__cuda_array_interface__`
        "stream"): an event recorded there, waited on by ours; the host goes on."""
        self.counters.event_waits += 1
        if self.mode == "cuda" and stream not in (0, None):
            cp = self.xp
            event = cp.cuda.Event(disable_timing=True)
            event.record(cp.cuda.ExternalStream(int(stream)))
            cp.cuda.get_current_stream().wait_event(event)

    def copy_into(self, dst: Any, offset: int, src: Any) -> None:
        """Copy device array `src` (uint8) into device array `dst` at element `offset`: a device-to-device copy,
        no host transfer."""
        n = int(src.size)
        c = self.counters
        c.d2d_bytes += int(src.nbytes)
        c.d2d_copies += 1
        t = _clock()
        dst[offset:offset + n] = src
        if self.mode == "standin":
            _add_standin(c, t)

    def valid_counts(self, bitmaps: list[tuple[Any, int, int]]) -> Any:
        """Set bits of each (device bitmap, first bit, bits), as a device int64 array (one launch)."""
        self._count_launch("count_valid")
        t = _clock()
        xp = self.xp
        out = xp.empty(max(1, len(bitmaps)), dtype=np.int64)
        for j, (bits, first, n) in enumerate(bitmaps):
            out[j] = xp.unpackbits(bits[first >> 3:(first + n + 7) >> 3], bitorder="little")[
                first & 7:(first & 7) + n].sum()
        if self.mode == "standin":
            _add_standin(self.counters, t)
        return out

    def pack_mask(self, mask: Any) -> Any:
        """A byte mask (nonzero: valid) as an Arrow validity bitmap on the device (one launch)."""
        self._count_launch("pack_mask")
        t = _clock()
        out = self.xp.packbits(mask.astype(bool), bitorder="little")
        if self.mode == "standin":
            _add_standin(self.counters, t)
        return out

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
            t = _clock()
            kernel.twin(items, *args)
            _add_standin(self.counters, t)
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
        t = _clock()
        out = fn(*args)
        if self.mode == "standin":
            _add_standin(self.counters, t)
        return out

    def _gauge(self) -> None:
        """Track the device memory pool's high-water mark (CuPy only)."""
        if self.mode == "cuda":
            used = int(self.xp.get_default_memory_pool().total_bytes())
            self.pool_peak_bytes = max(self.pool_peak_bytes, used)
