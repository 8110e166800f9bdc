"""The GPU backend's kernels compile for a real GPU: numba.cuda + NVVM turn each into sm_90 PTX here, with no
device, so code that only a GPU runs (the simulator runs it as Python) is still checked by the compiler."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ptx import DICTIONARY_SIGNATURES, LEVEL_SIGNATURES, PAGE_SIGNATURES, ROW_SIGNATURES


def test_every_device_kernel_compiles_to_ptx():
    # A fresh interpreter: the simulator must be off, and the compile patch must not leak into other tests.
    script = Path(__file__).with_name("ptx.py")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.returncode == 0, done.stderr[-4000:]
    compiled = {line.split()[0]: int(line.split()[1]) for line in done.stdout.splitlines() if "PTX" in line}
    expected = {name for name, _ in PAGE_SIGNATURES + LEVEL_SIGNATURES + ROW_SIGNATURES} | set(DICTIONARY_SIGNATURES)
    assert set(compiled) == expected
    assert all(size > 1000 for size in compiled.values())
