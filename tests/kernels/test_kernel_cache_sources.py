"""The CPU kernel cache notices a change to a helper inlined from another kernel module (numba alone keys a
cached kernel by its own file, so the caller kept the helper's old code)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import gpuwrite.kernels as kernels

_RUN = """
import numpy as np
from kernels.encode.delta import delta_encode
out = np.zeros(256, dtype=np.uint8)
end = delta_encode(np.array([5, -3, 8, 1, -20], dtype=np.int64), 0, 5, False, out, 0)
print(out[:end].tobytes().hex())
"""


def _encode(root: Path) -> str:
    """The bytes `kernels.delta` imported from the copy at `root` encodes (in a fresh process, cached at `root`)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    # run in `root` too: `python -c` looks in its working directory first, and the repository has a kernels/ too
    done = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True, env=env, cwd=root,
                          timeout=600, check=True)
    return done.stdout.strip()


def test_editing_an_inlined_helper_recompiles_its_callers(tmp_path: Path) -> None:
    root = tmp_path / "copy"
    shutil.copytree(Path(kernels.__file__).parent, root / "kernels",
                    ignore=shutil.ignore_patterns("__pycache__", "_cache", "*_cuda.py"))
    first = _encode(root)
    assert any((root / "kernels" / "encode" / "__pycache__").glob("delta.delta_encode*.nbi"))  # cached beside the copy
    assert _encode(root) == first  # loaded from the cache: same bytes
    bits = root / "kernels" / "encode" / "bits.py"
    source = bits.read_text()
    old = "return np.uint64((np.uint64(v) << np.uint64(1)) ^ np.uint64(v >> np.int64(63)))"
    assert old in source
    bits.write_text(source.replace(old, "return np.uint64(v) + np.uint64(1)"))  # another mapping of the deltas
    assert _encode(root) != first  # delta.py is unchanged, yet its kernel uses the edited helper
