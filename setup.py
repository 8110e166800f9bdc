"""The package build compiles every CPU kernel and ships numba's cache files in the package.

`build_py` (also run by `pip install -e .`) copies the sources, then runs `gpuwrite.tools.warmup.warmup()` in a
subprocess against the built tree with GPUWRITE_BUILD_KERNEL_CACHE naming `gpuwrite/kernels/_cache`; the kernels
compile into that folder, which the wheel carries (an editable install fills the source tree's `kernels/_cache`).
The cached code is for this machine's CPU, Python and numba: the wheel is tagged for this interpreter and platform,
and elsewhere a kernel whose entry does not match compiles on first use as before (docs/architecture.md,
"Kernels compiled at build time"). GPUWRITE_SKIP_KERNEL_BUILD=1 skips the step.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

BUILD_ENV = "GPUWRITE_BUILD_KERNEL_CACHE"  # kernels/_disk_cache.py reads it
SKIP_ENV = "GPUWRITE_SKIP_KERNEL_BUILD"
ROOT = os.path.dirname(os.path.abspath(__file__))
_WARMUP = """
import sys, gpuwrite
assert gpuwrite.__file__.startswith(sys.argv[1]), gpuwrite.__file__  # the tree being built, not an installed one
from gpuwrite.tools.warmup import warmup
r = warmup()
print(f"gpuwrite build: {r.compiled} kernel signatures compiled into the package in {r.seconds:.0f} s")
"""


def compile_kernels(tree: str, cache: str) -> None:
    """Compile every CPU kernel of the package importable from `tree` into the folder `cache` (emptied first)."""
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}  # numba's defaults, no simulator
    env.update({BUILD_ENV: cache, "GPUWRITE_COMPILE_NOTICE": "0",
                "PYTHONPATH": os.pathsep.join(p for p in (tree, os.environ.get("PYTHONPATH", "")) if p)})
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _WARMUP, tree], cwd=tree, env=env, capture_output=True, text=True)
    sys.stderr.write(done.stdout + done.stderr)
    if done.returncode != 0:
        raise RuntimeError(f"compiling gpuwrite's kernels failed ({SKIP_ENV}=1 skips it); output above")
    sys.stderr.write(f"gpuwrite build: kernel cache written to {cache} in {time.perf_counter() - start:.0f} s\n")


class BuildPyWithKernels(build_py):
    """`build_py`, then the kernels compiled into the package (see the module docstring)."""

    def run(self) -> None:
        super().run()
        if os.environ.get(SKIP_ENV) == "1":
            return
        if not getattr(self, "editable_mode", False):
            tree = os.path.abspath(self.build_lib)
            compile_kernels(tree, os.path.join(tree, "gpuwrite", "kernels", "_cache"))
            return
        # An editable install imports kernels/ from the source tree as gpuwrite.kernels: warm up a copy laid out
        # as installed, and keep its cache beside the sources (numba keys entries by content, not by path).
        with tempfile.TemporaryDirectory(prefix="gpuwrite-build-") as tree:
            ignore = shutil.ignore_patterns("__pycache__", "_cache", "*.nbi", "*.nbc")
            shutil.copytree(os.path.join(ROOT, "gpuwrite"), os.path.join(tree, "gpuwrite"), ignore=ignore)
            shutil.copytree(os.path.join(ROOT, "kernels"), os.path.join(tree, "gpuwrite", "kernels"),
                            dirs_exist_ok=True, ignore=ignore)
            staged = os.path.join(tree, "gpuwrite", "kernels", "_cache")
            compile_kernels(tree, staged)
            target = os.path.join(ROOT, "kernels", "_cache")
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(staged, target)


class PlatformDistribution(Distribution):
    """The wheel carries machine code (numba's cache): tag it for this interpreter and platform, not py3-none-any.
    Built without compiling the kernels (SKIP_ENV=1: for another Python, `bench/gpu_wheels.py`), it carries none
    for its interpreter, and is pure: it installs on any Python 3 and compiles on first use."""

    def has_ext_modules(self) -> bool:
        return os.environ.get(SKIP_ENV) != "1"


setup(cmdclass={"build_py": BuildPyWithKernels}, distclass=PlatformDistribution)
