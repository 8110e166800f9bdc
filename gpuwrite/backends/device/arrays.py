"""Device memory and library primitives behind one interface: CuPy on a GPU, NumPy under numba's simulator.

Everything the GPU backend does besides numba.cuda kernels (allocation, scans, gathers, copies to and from
the host) goes through `DeviceArrays`, so under NUMBA_ENABLE_CUDASIM=1 the same backend code runs with
NumPy arrays and simulated kernels.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

THREADS = 128
SIM_THREADS = 32


def simulated() -> bool:
    """Whether numba.cuda is numba's CUDA simulator (set NUMBA_ENABLE_CUDASIM=1 before importing numba)."""
    from numba.core import config

    return bool(getattr(config, "ENABLE_CUDASIM", False)) or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def gpu_problem() -> str | None:
    """Why the GPU backend cannot run here, or None when it can (a CUDA device, or the simulator)."""
    if simulated():
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


class DeviceArrays:
    """Array module (`xp`), host <-> device copies, kernel launches and a peak-memory gauge."""

    def __init__(self) -> None:
        self.simulator = simulated()
        if self.simulator:
            self.xp: Any = np
            self.threads = SIM_THREADS
        else:
            import cupy

            self.xp = cupy
            self.threads = THREADS
        self.peak_bytes = 0

    def to_device(self, a: np.ndarray) -> Any:
        """A device copy of host array `a` (under the simulator, a writable host copy)."""
        if self.simulator:
            return np.array(a, copy=True)
        return self.xp.asarray(a)

    def to_host(self, a: Any) -> np.ndarray:
        """A host NumPy array with the contents of device array `a`."""
        if self.simulator:
            return np.asarray(a)
        return a.get()  # type: ignore[no-any-return]

    def empty(self, n: int, dtype: Any) -> Any:
        """An uninitialised device array."""
        return self.xp.empty(int(n), dtype=dtype)

    def full(self, n: int, value: int, dtype: Any) -> Any:
        """A device array filled with `value`."""
        return self.xp.full(int(n), value, dtype=dtype)

    def pages(self, kernel: Any, n: int, *args: Any) -> None:
        """Launch a one-thread-per-page kernel (`_jit.page_kernel`) over n pages."""
        if n > 0:
            kernel[(n + self.threads - 1) // self.threads, self.threads](n, *args)
            self._gauge()

    def values(self, kernel: Any, n: int, *args: Any) -> None:
        """Launch a one-thread-per-value kernel over n values (the kernel checks its own bound)."""
        if n > 0:
            kernel[(n + self.threads - 1) // self.threads, self.threads](*args)
            self._gauge()

    def _gauge(self) -> None:
        """Track the device memory pool's high-water mark (CuPy only)."""
        if not self.simulator:
            used = int(self.xp.get_default_memory_pool().total_bytes())
            self.peak_bytes = max(self.peak_bytes, used)
