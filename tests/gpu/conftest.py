"""The GPU backend's tests run under numba's CUDA simulator, in their own pytest run (see the Makefile):
NUMBA_ENABLE_CUDASIM=1 must be set before numba is imported, so outside that run they are not collected."""

import os
import sys

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    collect_ignore_glob = ["test_*.py"]


def pytest_configure(config):
    # Simulated kernels do NumPy scalar arithmetic that wraps on purpose (hashes, zigzag, deltas).
    config.addinivalue_line("filterwarnings", "ignore:overflow encountered:RuntimeWarning")
    # The simulator's block scheduler polls its threads in a loop that holds the GIL for a whole switch interval
    # (5 ms by default) each time a simulated thread wants to run: at 10 us, kernels with many syncthreads run
    # 4-6x faster. Semantics are unchanged (the scheduler and the barrier are the simulator's own).
    sys.setswitchinterval(1e-5)
    _shared_arrays_allocated_once()


def _shared_arrays_allocated_once() -> None:
    """The simulator finds a block's shared array by the line that declares it, but looks it up and stores a
    new one in two steps: a thread switched out between them gets a private copy, so its block no longer
    shares it (a garbage index read from uninitialised memory). With the short switch interval above that
    happens; here the lookup and the store are one atomic step (`dict.setdefault`), keyed as the simulator keys
    it (file and line of the caller)."""
    import numpy as np
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    static = FakeCUDAShared.array

    def array(self, shape, dtype, alignment=None):  # noqa: ANN001, ANN202 - the simulator's signature
        if shape == 0 or alignment is not None:  # dynamic shared memory / the simulator's own refusal
            return static(self, shape, dtype, alignment)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        existing = self._allocations.get(key)
        if existing is not None:
            return existing
        from numba.core import types
        from numba.np import numpy_support

        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        return self._allocations.setdefault(key, np.empty(shape, dtype))

    FakeCUDAShared.array = array
