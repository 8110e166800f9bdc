"""Backends: which device encodes the pages (numba kernels on the CPU, or the GPU backend), behind one
protocol (`base.Backend`, `base.RowGroupBuilder`), each row group driven by `rowgroup.PlannedRowGroup` over the
backend's `base.RowGroupSteps`."""

from __future__ import annotations

from collections.abc import Sequence

from ..encode.compress import compressor
from ..errors import GpuwriteError
from ..options.model import WriteOptions
from ..schema import Leaf
from .base import Backend, RowGroupBuilder
from .cpu import CpuBackend

__all__ = ["Backend", "RowGroupBuilder", "open_backend", "resolve_device"]


def resolve_device(device: str) -> str:
    """'cpu' or 'gpu' for the requested device.

    'gpu' needs a CUDA device reachable by CuPy and numba.cuda (or numba's CUDA simulator, for tests) and is an
    error naming what is missing otherwise; 'auto' takes a real GPU when there is one, else the CPU.
    """
    from .device.ops import NO_DEVICE, gpu_check, gpu_problem, simulated, standin_active

    if device == "cpu":
        return "cpu"
    problem = gpu_problem()
    if device == "gpu":
        if problem is None:
            return "gpu"
        if problem.startswith(NO_DEVICE):  # CuPy's own error (cudaErrorInsufficientDriver...) is the cause
            found = gpu_check()
            cause = found[1] if found is not None else None
            raise GpuwriteError(f"{NO_DEVICE}: device='gpu' needs an NVIDIA GPU with a CUDA driver; use "
                                f"device='cpu' or 'auto'{problem[len(NO_DEVICE):]}") from cause
        raise GpuwriteError(f"device='gpu' was requested, but the GPU backend cannot run here: {problem}; "
                            f"use device='cpu' or 'auto'")
    return "gpu" if problem is None and not simulated() and not standin_active() else "cpu"


def open_backend(leaves: Sequence[Leaf], opts: WriteOptions, device: str) -> Backend:
    """The backend for a resolved `device` ('cpu' or 'gpu'), ready for the file's row groups."""
    if device == "gpu":
        from .device import DeviceBackend

        return DeviceBackend(leaves, opts)
    return CpuBackend(leaves, opts, compressor(opts.compression, opts.compression_level))
