"""The device behind one interface, in three modes, with every launch, copy and sync counted in one place.

* ``cuda``: CuPy arrays and numba.cuda kernels on a GPU.
* ``sim``: numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): NumPy arrays, the CUDA kernels run as Python
  threads. CI runs the GPU backend this way (small inputs).
* ``standin``: the cost model's device: NumPy arrays, each kernel replaced by its sequential CPU twin
  (compiled with numba), each copy by a NumPy copy. The time spent inside twins and copies is kept apart
  (`Counters.standin_s`), so the rest of a write's wall time is the host work no GPU can remove.

Every device operation of the GPU backend goes through `Device` (`launch`, `upload`, `download`, `sync`), and
the counters are incremented there and nowhere else, so the cost model cannot miss one. Each launch also leaves a
`cost.LaunchRecord` (geometry as on CUDA, the longest serial loop of one thread, bytes read and written) in
`Counters.records`, from which `cost` models its H200 time.
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import numpy as np

from ...pipeline import buffers
from . import copies
from .copies import PendingDownload, Staging, download_bytes, host_views, trace_log
from .cost import LaunchRecord, array_bytes, max_serial, modeled_device_s

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
    # (without a driver no wheel can mismatch it: the installed wheels' metadata, 0.5 ms, is not read for
    # every write of a machine without a GPU)
    mismatch = package_problem(driver, installed()) if driver is not None else None
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
    `serial(items, *args)`: the longest sequential loop any one thread runs in that launch, from the arguments'
    host-side sizes (never a device read); the cost model's (`Device.launch` refuses a Kernel without it).
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
    staging_s: float = 0.0  # host seconds copying uploads into the staging buffer (host work in every mode)
    staging_cpu_s: float = 0.0  # the same in process CPU time
    by_kernel: dict[str, int] = field(default_factory=dict)
    waits: dict[str, int] = field(default_factory=dict)  # syncs that read no array, by what they wait for
    records: list[LaunchRecord] = field(default_factory=list)  # one per launch, in launch order (cost.py)
    device_peak_bytes: int = 0  # device memory high-water mark: arrays held, codec scratch, CuPy's pool

    def as_dict(self) -> dict[str, Any]:
        """The counters as plain numbers, with the cost model's summary of the launches (cost.py)."""
        steps, where = max_serial(self.records)
        total, by_step = modeled_device_s(self.records)
        return {"launches": self.launches, "syncs": self.syncs, "h2d_bytes": self.h2d_bytes,
                "d2h_bytes": self.d2h_bytes, "h2d_copies": self.h2d_copies, "d2h_copies": self.d2h_copies,
                "d2d_bytes": self.d2d_bytes, "d2d_copies": self.d2d_copies, "event_waits": self.event_waits,
                "standin_s": self.standin_s, "standin_cpu_s": self.standin_cpu_s, "staging_s": self.staging_s,
                "staging_cpu_s": self.staging_cpu_s, "by_kernel": dict(self.by_kernel),
                "waits": dict(self.waits), "max_serial_steps": steps, "serial_step_kernel": where,
                "device_peak_bytes": self.device_peak_bytes, "modeled_device_s": total,
                "modeled_device_s_by_step": by_step}

    def absorb(self, other: Counters) -> None:
        """Add `other`'s counts to these and zero them (work done for this write on another Device object)."""
        for name in ("launches", "syncs", "h2d_bytes", "d2h_bytes", "h2d_copies", "d2h_copies", "d2d_bytes",
                     "d2d_copies", "event_waits", "standin_s", "standin_cpu_s", "staging_s", "staging_cpu_s"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
            setattr(other, name, type(getattr(other, name))())
        for mine, theirs in ((self.by_kernel, other.by_kernel), (self.waits, other.waits)):
            for name, n in theirs.items():
                mine[name] = mine.get(name, 0) + n
            theirs.clear()
        self.records.extend(other.records)
        other.records.clear()
        self.device_peak_bytes = max(self.device_peak_bytes, other.device_peak_bytes)
        other.device_peak_bytes = 0


def _clock() -> tuple[float, float]:
    """(wall, process CPU) seconds now."""
    return time.perf_counter(), time.process_time()


def _add_standin(c: Counters, t: tuple[float, float]) -> None:
    """Add the wall and CPU time since `t` (a _clock()) to the stand-in's."""
    c.standin_s += time.perf_counter() - t[0]
    c.standin_cpu_s += time.process_time() - t[1]


_CUDA_IN_USE = False  # a Device ran on CUDA in this process: CuPy's pools may hold gpuwrite's memory


def release_pools() -> int:
    """Free CuPy's unused pooled memory and the kept pinned staging slabs if gpuwrite ran on CUDA in this process
    (`gpuwrite.release_memory`); the bytes freed. Without that, CuPy is not touched (it fails without a GPU)."""
    if not _CUDA_IN_USE:
        return 0
    import cupy

    return copies.release_pinned() + free_cupy_pools(cupy)


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
        self.stream: Any = None  # the writer's stream: every launch, copy and codec call (CUDA only)
        self.copy_stream: Any = None  # where a row group's bytes are read back while the next one's kernels run
        if mode == "cuda":
            import cupy

            from .rmm_pool import share_rmm_pool

            global _CUDA_IN_USE
            _CUDA_IN_USE = True
            share_rmm_pool(cupy)  # with cudf / RAPIDS in the process: one pool, RMM's
            self.xp: Any = cupy
            self.threads = THREADS
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.copy_stream = cupy.cuda.Stream(non_blocking=True)
        else:
            self.xp = np
            self.threads = SIM_THREADS if mode == "sim" else THREADS
        self._nb_stream: Any = None  # the writer's stream for numba.cuda launches (`_numba_stream`)
        # every upload passes through it (pinned on a GPU); its buffer is kept for the next write once let go
        # (functions of the mode, not of self: the Device is freed by reference counting)
        pinned = mode == "cuda"
        self.staging = Staging(partial(copies.staging_block, pinned=pinned), partial(copies.staging_let_go, pinned))
        self.stage_helpers = copies.stage_helpers()  # threads that help stage computed uploads (`upload_all`)
        self.deferred: list[Callable[[], None]] = []  # host work run before the next host wait (`defer`)
        self.trace = trace_log()  # the order of copies, launches, waits and writes (`copies.trace_events`)

    # -- memory --------------------------------------------------------------------------------------

    def _track(self, arr: Any) -> Any:
        """Count `arr`'s bytes as held until it is freed; keep the high-water mark (`peak_bytes`): the device
        memory the backend holds at once, in every mode, so the bound per row group is measured."""
        n = int(arr.nbytes)
        self.live_bytes += n
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        self._held(0)
        weakref.finalize(arr, self._release, n)
        return arr

    def _held(self, scratch: int) -> None:
        """Raise `counters.device_peak_bytes` to what is held now: the arrays, `scratch` bytes a launch needs
        beside them (nvCOMP's temporary space) and, on CUDA, CuPy's pool (which holds the arrays and more)."""
        c = self.counters
        c.device_peak_bytes = max(c.device_peak_bytes, self.live_bytes + scratch, self.pool_peak_bytes + scratch)

    def _release(self, n: int) -> None:
        self.live_bytes -= n

    def stream_ptr(self) -> int:
        """The writer's CUDA stream (`cudaStream_t` as an int) that every launch, copy and codec call is queued on;
        0 off CUDA."""
        return int(self.stream.ptr) if self.mode == "cuda" else 0

    def on_stream(self) -> contextlib.AbstractContextManager[Any]:
        """Within the block, CuPy's operations are queued on the writer's stream (CUDA only; a no-op elsewhere)."""
        return self.stream if self.mode == "cuda" else contextlib.nullcontext()  # type: ignore[no-any-return]

    def record(self, what: str, which: str = "") -> None:
        """Add (what, which) to the event order when it is traced (`copies.trace_events`)."""
        if self.trace is not None:
            self.trace.append((what, which))

    def _host_block(self, nbytes: int) -> np.ndarray:
        """An uninitialised host uint8 buffer for downloads: pinned (page-locked) on a GPU, so the copy engine
        fills it while the host goes on; plain NumPy elsewhere. A large one (a row group's bytes) is cut from a
        slab kept for the next write, as the staging buffer is (`copies.staging_block`): a warm write neither
        locks (cudaHostAlloc) nor first-touches a file's worth of host memory again; it is free again once the
        arrays read back are dropped. A small one comes from CuPy's pinned pool."""
        if nbytes >= buffers.MIN_BYTES:
            return copies.staging_block(int(nbytes), self.mode == "cuda")
        if self.mode == "cuda":
            import cupyx

            return cupyx.empty_pinned((int(nbytes),), dtype=np.uint8)  # type: ignore[no-any-return]
        return np.empty(int(nbytes), dtype=np.uint8)

    def release_pool(self) -> int:
        """Give the device memory CuPy's pools keep free (after this backend's arrays are dropped) back to the
        driver, so cudf / RMM or Spark in the same process can use it; the bytes returned (0 but on CUDA)."""
        if self.mode != "cuda":
            return 0
        return free_cupy_pools(self.xp)

    def empty(self, n: int, dtype: Any) -> Any:
        """An uninitialised device array."""
        with self.on_stream():  # CuPy's pool is stream-ordered: memory for this stream's work
            return self._track(self.xp.empty(int(n), dtype=dtype))

    def full(self, n: int, value: int, dtype: Any) -> Any:
        """A device array filled with `value` (a fill launch on the device)."""
        self._count_launch("fill")
        t = _clock()
        with self.on_stream():
            out = self._track(self.xp.full(int(n), value, dtype=dtype))
        self._record("fill", int(n), 1, 0, int(out.nbytes))
        if self.mode == "standin":
            _add_standin(self.counters, t)
        return out

    def fill_range(self, dev: Any, start: int, n: int, value: int) -> None:
        """dev[start:start + n] = value (a fill launch on the device)."""
        self._count_launch("fill")
        self._record("fill", int(n), 1, 0, int(n) * int(dev.itemsize))
        t = _clock()
        with self.on_stream():
            dev[start:start + n] = value
        if self.mode == "standin":
            _add_standin(self.counters, t)

    def grown(self, dev: Any, size: int) -> Any:
        """A larger device array holding `dev`'s contents first (zeros after): one device copy."""
        self._count_launch("copy")
        t = _clock()
        with self.on_stream():
            out = self._track(self.xp.zeros((size, *dev.shape[1:]), dtype=dev.dtype))
            out[:len(dev)] = dev
        self._record("copy", int(out.size), 1, int(dev.nbytes), int(out.nbytes))
        if self.mode == "standin":
            _add_standin(self.counters, t)
        return out

    def upload(self, host: Any) -> Any:
        """A device copy of host array `host` (host -> device): staged, then an async copy on the writer's stream."""
        host = np.ascontiguousarray(host)
        with self.on_stream():
            out = self._track(self.xp.empty(host.shape, dtype=host.dtype))
        self._h2d(out, host)
        return out

    def upload_into(self, dst: Any, offset: int, host: Any) -> None:
        """Copy host array `host` into device array `dst` at element `offset` (host -> device, same dtype): one
        copy, counted as `upload` counts."""
        host = np.ascontiguousarray(host).reshape(-1)
        self._h2d(dst[offset:offset + host.size], host)

    def upload_all(self, dst: Any, parts: list[tuple[int, Any]]) -> None:
        """`upload_into(dst, offset, host)` for each (offset, host) of `parts`, staged together
        (`copies.stage_all`: computed uploads shared with helper threads); each copy is queued once staged."""
        jobs, dsts = [], []
        for offset, host in parts:
            if not isinstance(host, copies.Filled):
                host = np.ascontiguousarray(host).reshape(-1)
            if self._count_h2d(host):
                jobs.append((host, self.staging.place(int(host.nbytes))))
                dsts.append(dst[offset:offset + host.size])
        later: list[tuple[int, np.ndarray]] = []

        def queued(i: int, staged: np.ndarray) -> None:
            if self.mode == "cuda":  # the copy engine reads it while the rest is staged
                self._queue_h2d(dsts[i], staged)
            else:  # the stand-in's copy is the device's time: run it after, not beside the helpers' staging
                later.append((i, staged))

        t = _clock()
        copies.stage_all(jobs, self.stage_helpers, queued)
        self.counters.staging_s += time.perf_counter() - t[0]
        self.counters.staging_cpu_s += time.process_time() - t[1]
        for i, staged in later:
            self._queue_h2d(dsts[i], staged)

    def _count_h2d(self, host: np.ndarray | copies.Filled) -> bool:
        """Count an upload of `host`; whether it has bytes to copy."""
        c = self.counters
        c.h2d_bytes += host.nbytes
        c.h2d_copies += 1
        self.record("h2d")
        return host.nbytes > 0

    def _h2d(self, dst: Any, host: np.ndarray) -> None:
        """Stage `host` in the staging buffer and queue its copy into `dst` on the writer's stream; the host goes
        on (the staging buffer is reused once the host next waits for the stream)."""
        if not self._count_h2d(host):
            return
        c = self.counters
        t = _clock()
        staged = self.staging.stage(host)  # host work on a GPU too: a memcpy into the pinned buffer
        c.staging_s += time.perf_counter() - t[0]
        c.staging_cpu_s += time.process_time() - t[1]
        self._queue_h2d(dst, staged)

    def _queue_h2d(self, dst: Any, staged: np.ndarray) -> None:
        """Queue the copy of `staged` (in the staging buffer) into `dst` on the writer's stream."""
        c = self.counters
        t = _clock()
        if self.mode == "cuda":
            dst.set(staged, stream=self.stream)  # from pinned memory: cudaMemcpyAsync, the host goes on
        else:
            dst[...] = staged
        if self.mode == "standin":
            _add_standin(c, t)

    def download(self, dev: Any, name: str = "read") -> np.ndarray:
        """A host copy of device array `dev` (device -> host); the host waits for it: a sync."""
        return self.download_many([dev], name)[0]

    def download_many(self, devs: list[Any], name: str = "read") -> list[np.ndarray]:
        """Host copies of several device arrays: async copies into one host block (pinned on a GPU) on the
        writer's stream, then one wait (one sync, counted under `name`)."""
        hosts = self._d2h(devs, self.stream, name)
        self._host_wait(name)
        return hosts

    def download_later(self, devs: list[Any], name: str) -> PendingDownload:
        """Host copies of `devs` queued on the copy stream after the work queued so far on the writer's stream
        (a device-side wait on an event); the host goes on, and the writer's next kernels run while they copy.
        `result()` is one host wait (a sync counted under `name`)."""
        done = None
        if self.mode == "cuda":
            self.copy_stream.wait_event(self.stream.record())
        hosts = self._d2h(devs, self.copy_stream, name)
        if self.mode == "cuda":
            done = self.copy_stream.record()
        return PendingDownload(lambda: self._host_wait(name, done, writer=False), hosts, list(devs))

    def _d2h(self, devs: list[Any], stream: Any, name: str) -> list[np.ndarray]:
        """Queue a copy of each of `devs` into one new host block (pinned on a GPU) on `stream`; the host
        arrays, complete once the host waited for that stream."""
        c = self.counters
        hosts = host_views(self._host_block(download_bytes(devs)), devs)
        t = _clock()
        for dev, host in zip(devs, hosts, strict=True):
            c.d2h_copies += 1
            c.d2h_bytes += int(dev.nbytes)
            self.record("d2h", name)
            if self.mode == "cuda":
                if dev.nbytes:
                    with stream:
                        src = dev if dev.flags.c_contiguous else self.xp.ascontiguousarray(dev)
                        src.get(stream=stream, out=host, blocking=False)  # into pinned memory: async
            else:
                np.copyto(host, dev)
        if self.mode == "standin":
            _add_standin(c, t)
        return hosts

    def _host_wait(self, name: str, event: Any = None, writer: bool = True) -> None:
        """The host waits for the writer's stream (or, not `writer`, for `event` on the copy stream): one sync,
        counted under `name`. Host work deferred until now (the last row group's write) runs first, while the
        queued kernels run."""
        self.flush()
        c = self.counters
        c.syncs += 1
        c.waits[name] = c.waits.get(name, 0) + 1
        self.record("wait", name)
        if self.mode == "cuda":
            (self.stream if writer else event).synchronize()
        if writer:
            self.staging.reset()  # every copy staged so far is done

    def defer(self, work: Callable[[], None]) -> None:
        """Run `work` (host work that waits for a download queued with `download_later`) just before the host
        next waits for the device, or at `flush`: the device work queued by then overlaps it."""
        self.deferred.append(work)

    def flush(self) -> None:
        """Run the deferred host work now, in the order it was deferred."""
        while self.deferred:
            self.deferred.pop(0)()

    def wait(self, name: str, read: Callable[[], Any] | None = None) -> Any:
        """The host waits for the device's work so far (a sync), then `read()`s what it produced (a library's
        result that lives on the host, such as nvCOMP's compressed sizes). `name` says what is waited for."""
        self._host_wait(name)
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
            self.xp.cuda.runtime.streamWaitEvent(self.stream.ptr, event, 0)

    def wait_stream(self, stream: int) -> None:
        """Make the writer's stream wait for work queued on the producer's stream (`__cuda_array_interface__`
        "stream"): an event recorded there, waited on by ours; the host goes on."""
        self.counters.event_waits += 1
        if self.mode == "cuda" and stream not in (0, None):
            cp = self.xp
            event = cp.cuda.Event(disable_timing=True)
            event.record(cp.cuda.ExternalStream(int(stream)))
            self.stream.wait_event(event)

    def copy_into(self, dst: Any, offset: int, src: Any) -> None:
        """Copy device array `src` (uint8) into device array `dst` at element `offset`: a device-to-device copy,
        no host transfer."""
        n = int(src.size)
        c = self.counters
        c.d2d_bytes += int(src.nbytes)
        c.d2d_copies += 1
        t = _clock()
        self.record("d2d")
        with self.on_stream():
            dst[offset:offset + n] = src
        if self.mode == "standin":
            _add_standin(c, t)

    def valid_counts(self, bitmaps: list[tuple[Any, int, int]]) -> Any:
        """Set bits of each (device bitmap, first bit, bits), as a device int64 array (one launch)."""
        self._count_launch("count_valid")
        longest = max((n for _, _, n in bitmaps), default=1)  # a block reduction over each bitmap's words
        self._record("count_valid", len(bitmaps) * THREADS, _ceil_div(longest, 64 * THREADS) + _log2(THREADS),
                     sum((n + 7) // 8 for _, _, n in bitmaps), 8 * max(1, len(bitmaps)), blocks=len(bitmaps))
        t = _clock()
        xp = self.xp
        with self.on_stream():
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
        self._record("pack_mask", (int(mask.size) + 7) // 8, 8, int(mask.nbytes), (int(mask.size) + 7) // 8)
        t = _clock()
        with self.on_stream():
            out = self.xp.packbits(mask.astype(bool), bitorder="little")
        if self.mode == "standin":
            _add_standin(self.counters, t)
        return out

    # -- launches ------------------------------------------------------------------------------------

    def _count_launch(self, name: str) -> None:
        self.record("launch", name)
        c = self.counters
        c.launches += 1
        c.by_kernel[name] = c.by_kernel.get(name, 0) + 1

    def _record(self, step: str, threads_total: int, serial: int, read: int, written: int, *, blocks: int = -1,
                threads: int = THREADS, scratch: int = 0) -> None:
        """Record a launch (cost.LaunchRecord): `threads_total` threads in blocks of `threads` (as on CUDA) unless
        `blocks` says, its longest serial loop, bytes read and written, and the scratch it needs while it runs."""
        if blocks < 0:
            blocks = max(1, _ceil_div(threads_total, threads))
        self.counters.records.append(LaunchRecord(step, blocks, threads, int(serial), int(read), int(written),
                                                  int(scratch)))
        self._held(scratch)

    def launch(self, kernel: Kernel, items: int, *args: Any) -> None:
        """Run `kernel` over `items` (pages, columns, chunks or values, by its geometry)."""
        if items <= 0:
            return
        if kernel.serial is None:
            raise TypeError(f"Kernel {kernel.name!r} has no `serial`: the cost model cannot see inside its launches")
        self._count_launch(kernel.name)
        moved = array_bytes(args)  # every array counted as read and as written: an upper bound (cost.py)
        self._record(kernel.name, items, kernel.serial(items, *args), moved, moved,
                     blocks=items if kernel.geometry == "block" else -1)
        if self.mode == "standin":
            t = _clock()
            kernel.twin(items, *args)
            _add_standin(self.counters, t)
            return
        compiled = kernel.cuda()
        if self.mode == "cuda":
            compiled, args = self._on_writer_stream(compiled[self._grid(kernel, items), self.threads,
                                                             self._numba_stream()], args)
        else:
            compiled = compiled[self._grid(kernel, items), self.threads]
        if kernel.geometry == "block":
            compiled(*args)
        else:
            compiled(items, *args)
        self._gauge()

    def _numba_stream(self) -> Any:
        """The writer's stream as numba.cuda sees it (made once)."""
        if self._nb_stream is None:
            from numba import cuda

            self._nb_stream = cuda.external_stream(int(self.stream.ptr))
        return self._nb_stream

    def _on_writer_stream(self, configured: Any, args: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
        """A CUDA launch's arguments as numba device arrays taken without a host wait: numba would otherwise
        synchronize the stream each CuPy array names in its CUDA array interface (NUMBA_CUDA_ARRAY_INTERFACE_SYNC)
        once per argument; every launch and copy of the write is on one stream, which orders them already."""
        from numba import cuda

        nd = self.xp.ndarray
        return configured, tuple(cuda.as_cuda_array(a, sync=False) if isinstance(a, nd) else a for a in args)

    def _grid(self, kernel: Kernel, items: int) -> int:
        """Blocks of a launch over `items`: one per item ("block"), or enough threads for them ("thread")."""
        return items if kernel.geometry == "block" else (items + self.threads - 1) // self.threads

    def host_step(self, name: str, fn: Callable[..., Any], *args: Any, work: LaunchRecord) -> Any:
        """A step that is device work on a GPU but runs as host code in the stand-in / simulator modes (the
        page codec): counted as a launch (`work`: its record as the caller models it), timed as stand-in work."""
        self._count_launch(name)
        self._record(name, 0, work.serial, work.bytes_read, work.bytes_written, blocks=work.blocks,
                     threads=work.threads, scratch=work.scratch_bytes)
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
            self._held(0)


def _ceil_div(a: int, b: int) -> int:
    """ceil(a / b) for non-negative a, positive b."""
    return -(-int(a) // int(b))


def _log2(n: int) -> int:
    """ceil(log2(n)) for n >= 1: the steps of a tree reduction or scan over n threads."""
    return max(0, int(n) - 1).bit_length()
