"""The window conversion kernels compile for a real GPU (sm_90 PTX through numba.cuda + NVVM, no device
needed); the simulator tests run them as Python, so this is what checks the code a GPU would run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ptx_convert import CONVERT_SIGNATURES

SHARED = {"count_chunks", "write_chunks"}  # block reductions / scans in shared memory


def test_every_convert_kernel_compiles_to_ptx():
    # A fresh interpreter: the simulator must be off, and the compile patch must not leak into other tests.
    script = Path(__file__).with_name("ptx_convert.py")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [line.split() for line in done.stdout.splitlines() if "PTX" in line]
    assert [words[0] for words in lines] == [name for name, _ in CONVERT_SIGNATURES]
    for words in lines:
        assert int(words[1]) > 1000
        assert (words[-1] == "shared=1") == (words[0] in SHARED), words
