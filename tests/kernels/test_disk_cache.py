"""The kernel cache shipped in the package: compiled where the package is built, copied by an installer (new file
times), read from a read-only folder, and loaded by a fresh process without compiling or writing anything.

The build's step is played by a small write run with GPUWRITE_BUILD_KERNEL_CACHE set (setup.py runs the whole
warm-up the same way); each process gets its own empty user cache, so only the shipped folder can serve it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import gpuwrite.kernels as kernels

import gpuwrite

_WRITE = """
import sys, pyarrow as pa, gpuwrite
from gpuwrite.backends import kernel_cache
assert gpuwrite.__file__.startswith(sys.argv[1]), gpuwrite.__file__
table = pa.table({"a": pa.array(range(10), pa.int64()), "s": pa.array([str(i) for i in range(10)])})
gpuwrite.write_table(table, sys.argv[2] + "/first.parquet")
print(*kernel_cache.cache_counts())
if len(sys.argv) > 3:  # a signature the shipped folder lacks compiles, into the user cache
    gpuwrite.write_table(pa.table({"f": pa.array([0.5, None], pa.float32())}), sys.argv[2] + "/more.parquet")
    print(*kernel_cache.cache_counts())
"""


def _run(tree: Path, out: Path, env_extra: dict[str, str], *more: str) -> list[list[int]]:
    """Run `_WRITE` in a fresh process importing gpuwrite from `tree`; its (loaded, compiled) counts per write."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and not k.startswith("GPUWRITE_")}
    env.update({"PYTHONPATH": str(tree), "XDG_CACHE_HOME": str(out / "user-cache"), **env_extra})
    done = subprocess.run([sys.executable, "-c", _WRITE, str(tree), str(out), *more], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return [[int(n) for n in line.split()] for line in done.stdout.splitlines()]


def _files(tree: Path) -> dict[str, int]:
    """Every file under `tree` with its size."""
    return {str(p.relative_to(tree)): p.stat().st_size for p in tree.rglob("*") if p.is_file()}


def test_a_copied_read_only_install_loads_the_shipped_cache(tmp_path: Path) -> None:
    built = tmp_path / "build"  # the package laid out as installed: kernels/ is gpuwrite/kernels
    ignore = shutil.ignore_patterns("__pycache__", "_cache", "*.nbi", "*.nbc")
    shutil.copytree(Path(gpuwrite.__file__).parent, built / "gpuwrite", ignore=ignore)
    shutil.copytree(Path(kernels.__file__).parent, built / "gpuwrite" / "kernels", ignore=ignore, dirs_exist_ok=True)
    shipped = built / "gpuwrite" / "kernels" / "_cache"
    (tmp_path / "out0").mkdir()
    [(_, compiled)] = _run(built, tmp_path / "out0", {"GPUWRITE_BUILD_KERNEL_CACHE": str(shipped)})
    assert compiled > 0 and any(shipped.rglob("*.nbi")) and not any((built / "gpuwrite").rglob("__pycache__/*.nb?"))

    installed = tmp_path / "site"  # an installer's copy: new file times, then every folder read-only
    shutil.copytree(built, installed, copy_function=shutil.copy)
    later = time.time() + 3600
    for path in installed.rglob("*"):
        os.utime(path, (later, later))
    for path in [installed, *installed.rglob("*")]:
        path.chmod(stat.S_IREAD | stat.S_IEXEC if path.is_dir() else stat.S_IREAD)
    before = _files(installed)
    try:
        (tmp_path / "out1").mkdir()
        [first] = _run(installed, tmp_path / "out1", {})
        after = _files(installed)
        (tmp_path / "out3").mkdir()
        [again, more] = _run(installed, tmp_path / "out3", {}, "more")
        after_more = _files(installed)
    finally:
        for path in [installed, *installed.rglob("*")]:
            path.chmod(stat.S_IRWXU)
    assert first[1] == 0 and first[0] > 0 and again == first  # every kernel of the write loaded from the shipped folder
    assert after == before  # nothing written inside the install, not even numba's cache folders
    assert more[1] > 0  # the float column's kernels were not shipped: compiled (after loads, without a refresh)
    if os.geteuid() != 0:  # root writes through read-only modes: numba then caches in the install's __pycache__
        assert after_more == before and any((tmp_path / "out3" / "user-cache").rglob("*.nbi"))
    assert (tmp_path / "out1" / "first.parquet").read_bytes() == (tmp_path / "out0" / "first.parquet").read_bytes()
    (tmp_path / "out2").mkdir()  # GPUWRITE_SHIPPED_KERNEL_CACHE=0 ignores the shipped folder (the user-cache tests)
    [(loaded, compiled)] = _run(installed, tmp_path / "out2", {"GPUWRITE_SHIPPED_KERNEL_CACHE": "0"})
    assert loaded == 0 and compiled > 0
