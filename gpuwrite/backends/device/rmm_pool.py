"""One device memory pool with RAPIDS: where RMM is in the process (cudf, the RAPIDS Accelerator for Spark),
CuPy allocates through it, so gpuwrite's arrays come from and go back to the pool cudf uses instead of a second
pool that holds memory cudf cannot reach."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def rmm_allocator() -> Callable[..., Any] | None:
    """RMM's CuPy allocator when the user's process already imported rmm (gpuwrite never imports it first:
    a process without RAPIDS keeps CuPy's own pool); None otherwise."""
    rmm = sys.modules.get("rmm")
    if rmm is None:
        return None
    try:
        return importlib.import_module("rmm.allocators.cupy").rmm_cupy_allocator  # type: ignore[no-any-return]
    except (ImportError, AttributeError):
        return getattr(rmm, "rmm_cupy_allocator", None)  # RMM before 23.02 kept it at the top


def share_rmm_pool(cupy: Any) -> bool:
    """Make CuPy allocate through RMM when RMM is in the process (`rmm_allocator`); whether it does now."""
    allocator = rmm_allocator()
    if allocator is None:
        return False
    cupy.cuda.set_allocator(allocator)
    return True
