"""Backend selection: which device encodes the pages (numba kernels on the CPU, or the GPU backend)."""

from __future__ import annotations

from ..errors import GpuwriteError


def resolve_device(device: str) -> str:
    """'cpu' or 'gpu' for the requested device.

    'gpu' needs a CUDA device reachable by CuPy and numba.cuda (or numba's CUDA simulator, for tests) and is an
    error naming what is missing otherwise; 'auto' takes a real GPU when there is one, else the CPU.
    """
    from .device.arrays import gpu_problem, simulated

    if device == "cpu":
        return "cpu"
    problem = gpu_problem()
    if device == "gpu":
        if problem is not None:
            raise GpuwriteError(f"device='gpu' was requested, but the GPU backend cannot run here: {problem}; "
                                f"use device='cpu' or 'auto'")
        return "gpu"
    return "gpu" if problem is None and not simulated() else "cpu"
