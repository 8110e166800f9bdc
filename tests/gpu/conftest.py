"""The GPU backend's tests run under numba's CUDA simulator, in their own pytest run (see the Makefile):
NUMBA_ENABLE_CUDASIM=1 must be set before numba is imported, so outside that run they are not collected."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the shared helpers in tests/

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    collect_ignore_glob = ["test_*.py"]


def pytest_configure(config):
    # Simulated kernels do NumPy scalar arithmetic that wraps on purpose (hashes, zigzag, deltas).
    config.addinivalue_line("filterwarnings", "ignore:overflow encountered:RuntimeWarning")
