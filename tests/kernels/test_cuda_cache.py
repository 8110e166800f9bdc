"""CUDA kernels are cached across processes (numba-cuda's on-disk cache): every kernel the GPU backend launches is
built with caching on, in the directory the CPU kernels use, with the same temp-directory fallback; page kernels
(wrappers generated around a @jit per-page function) get a source file of their own that changes with their
body's file. Checked with numba.cuda compiled for real (no simulator), without a GPU: the cache files themselves
need a device to be written, which `bench/gpu_check.py` measures (cold and warm first writes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kernel_inventory import global_kernels

_LIST = """
import importlib, json, sys
from numba.cuda.dispatcher import CUDACache, CUDADispatcher
from gpuwrite.kernels import _jit
from gpuwrite.kernels.convert import value_checks
modules = ["hashing.bloom_cuda", "convert.arenas_cuda", "encode.delta_cuda", "dictionary.row_group_cuda",
           "plan.page_layout_cuda", "encode.pages_cuda", "plan.planner_cuda", "encode.rle_cuda"]
out = {}
for name in modules:
    mod = importlib.import_module("gpuwrite.kernels." + name)
    for attr, value in vars(mod).items():
        if isinstance(value, CUDADispatcher) and not value.targetoptions.get("device"):
            out[name + "." + attr] = (isinstance(value._cache, CUDACache), value._cache.cache_path)
for label, k in (("page_kernel.check_chunk", _jit.page_kernel(value_checks.check_chunk)),):
    out[label] = (isinstance(k._cache, CUDACache), k._cache.cache_path, k.py_func.__code__.co_filename)
print(json.dumps({"kernels": out, "fallback": _jit.fallback_cache_dir()}))
"""


def _run(code: str, env_extra: dict[str, str], cwd: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_ENABLE_CUDASIM")}
    env.update(env_extra)
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_cuda_kernel_is_built_with_the_disk_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    got = _run(_LIST, {"NUMBA_CACHE_DIR": str(cache)}, tmp_path)["kernels"]
    assert set(global_kernels()) <= set(got), set(global_kernels()) - set(got)
    assert len(got) >= 35
    for label, row in got.items():
        assert row[0], f"{label} is not cached"
        assert row[1].startswith(str(cache) + os.sep), (label, row[1])
    wrapper = Path(got["page_kernel.check_chunk"][2])
    assert wrapper.is_file() and wrapper.is_relative_to(cache)
    text = wrapper.read_text()
    assert "def run_pages(n," in text and "source digest" in text


def test_page_kernel_wrapper_changes_with_its_body_file(tmp_path: Path) -> None:
    """The wrapper file carries the body file's digest: an edit of the body retires the cached kernel (numba
    stamps a cache entry with its source file's time and size, and the wrapper is that file)."""
    pkg = tmp_path / "pk"
    pkg.mkdir()
    body = pkg / "body_mod.py"
    body.write_text("from gpuwrite.kernels._jit import jit\n@jit\ndef f(p, out):\n    out[p] = 1\n")
    code = ("import body_mod; from gpuwrite.kernels import _jit; "
            "import json; k = _jit.page_kernel(body_mod.f); "
            "print(json.dumps([k.py_func.__code__.co_filename, open(k.py_func.__code__.co_filename).read()]))")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(pkg), env.get("PYTHONPATH", "")) if p)  # where body_mod is

    def wrapper() -> tuple[str, str, int]:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        path, text = json.loads(done.stdout.strip().splitlines()[-1])
        return path, text, os.stat(path).st_mtime_ns

    first = wrapper()
    assert wrapper() == first  # unchanged body: the file is left alone (its stamp keeps the cache valid)
    body.write_text(body.read_text().replace("= 1", "= 2"))
    changed = wrapper()
    assert changed[0] == first[0] and changed[1] != first[1]


def test_no_writable_location_falls_back_for_cuda_kernels_too(tmp_path: Path) -> None:
    """numba-cuda keeps its own cache settings and locators: with none usable it refuses to cache, and the
    kernels then cache in the same temp directory as the CPU kernels' fallback instead of failing to import."""
    code = ("from numba.cuda.core import caching\n"
            "caching.CacheImpl._locator_classes = [caching._UserProvidedCacheLocator]  # as a read-only host\n"
            + _LIST)
    got = _run(code, {}, tmp_path)
    fallback = got["fallback"]
    assert "gpuwrite-numba-cache" in fallback
    for label, row in got["kernels"].items():
        assert row[0] and row[1].startswith(fallback + os.sep), (label, row[1])
