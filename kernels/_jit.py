"""One decorator for every kernel: numba's CPU target today, the same source for CUDA later."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from numba import njit

F = TypeVar("F", bound=Callable[..., Any])


def jit(fn: F) -> F:
    """Compile `fn` for the CPU with numba (cached on disk); `.py_func` keeps the source for device builds."""
    return njit(cache=True, nogil=True)(fn)  # type: ignore[return-value]
