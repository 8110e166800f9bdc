"""The block-per-page DELTA encoders compile for a real GPU: numba.cuda + NVVM turn them into sm_90 PTX here,
with no device, so the code only a GPU runs (the simulator runs it as Python) is checked by the compiler."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ptx_delta_block import BLOCK_SIGNATURES


def test_block_delta_kernels_compile_to_ptx():
    # A fresh interpreter: the simulator must be off, and the compile patch must not leak into other tests.
    script = Path(__file__).with_name("ptx_delta_block.py")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.returncode == 0, done.stderr[-4000:]
    compiled = {}
    for line in done.stdout.splitlines():
        if "PTX" in line:
            words = line.split()
            compiled[words[0]] = (int(words[1]), int(words[5]), int(words[7]))
    assert set(compiled) == {f"{name}/{variant}" for name, variant, _ in BLOCK_SIGNATURES}
    for size, syncs, atomics in compiled.values():
        assert size > 1000
        assert syncs >= 4  # block-cooperative: the DELTA phases synchronise the thread block
        assert atomics >= 2  # the block minimum and the miniblock ORs are shared-memory reductions
