"""Backend selection: which device encodes the pages. Only the CPU backend (numba kernels) exists so far."""

from __future__ import annotations

from ..errors import GpuwriteError


def resolve_device(device: str) -> str:
    """The backend for `device`: 'cpu' and 'auto' give the CPU; 'gpu' is an error naming what is missing."""
    if device == "gpu":
        raise GpuwriteError("device='gpu' was requested, but gpuwrite's GPU backend is not available "
                            "(not implemented yet); use device='cpu' or 'auto'")
    return "cpu"
