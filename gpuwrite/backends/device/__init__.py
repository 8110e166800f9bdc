"""The GPU backend: one pipeline per row group on the device (numba.cuda kernels, CuPy arrays, nvCOMP), or on
numba's simulator / the cost model's stand-in device (`ops.Device`)."""

from .builder import DeviceBackend, DeviceSteps
from .ops import Device, gpu_problem, simulated, standin

__all__ = ["Device", "DeviceBackend", "DeviceSteps", "gpu_problem", "simulated", "standin"]
