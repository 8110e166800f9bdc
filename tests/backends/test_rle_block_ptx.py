"""The block-per-page RLE kernels compile for a real GPU: numba.cuda + NVVM turn them into sm_90 PTX here, with
no device, so the shared-memory scans and syncthreads the simulator runs as Python are checked by the compiler."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rle_block_ptx import VALUE_TYPES, signatures


def test_rle_block_kernels_compile_to_ptx():
    # A fresh interpreter: the simulator must be off, and the compile patch must not leak into other tests.
    script = Path(__file__).with_name("rle_block_ptx.py")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.returncode == 0, done.stderr[-4000:]
    compiled = {line.split()[0]: int(line.split()[1]) for line in done.stdout.splitlines() if "PTX" in line}
    assert set(compiled) == {f"{name}[{tag}]" for tag, v in VALUE_TYPES.items() for name in signatures(v)}
    assert all(size > 1000 for size in compiled.values())
