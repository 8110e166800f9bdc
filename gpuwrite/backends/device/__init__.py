"""The GPU backend: one pipeline per row group on the device (numba.cuda kernels, CuPy arrays, nvCOMP), or on
numba's simulator / the cost model's stand-in device (`ops.Device`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .ops import Device, gpu_problem, simulated, standin

if TYPE_CHECKING:
    from .builder import DeviceBackend, DeviceSteps

__all__ = ["Device", "DeviceBackend", "DeviceSteps", "gpu_problem", "simulated", "standin"]


def __getattr__(name: str) -> Any:
    """The backend's pipeline (`builder`), imported on first use: every write asks `ops` whether a GPU is usable
    (device='auto'), and importing the whole pipeline for it cost a CPU write ~0.08 s in each new process."""
    if name in ("DeviceBackend", "DeviceSteps"):
        from . import builder

        return getattr(builder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
