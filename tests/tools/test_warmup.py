"""Kernel compilation: `gpuwrite warmup` fills numba's cache so later processes compile nothing; a cold first
write says it is compiling, once; an unwritable cache location falls back instead of breaking the import.

Each case runs in a fresh Python process with its own NUMBA_CACHE_DIR, as a new install would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuwrite.tools import input_kinds

REPO = Path(__file__).resolve().parents[2]
GPUWRITE = REPO / ".venv" / "bin" / "gpuwrite"
NOTICE = "gpuwrite: compiling kernels, first run only"

# Writes that a warmed cache must serve without compiling: every type of warmup's sample (other rows and
# options), the demo's table, a CSV through the command line, and a partitioned dataset.
AFTER_WARMUP = """
import sys, pyarrow as pa, pyarrow.csv as csv, gpuwrite
from gpuwrite.backends import kernel_cache
from gpuwrite.tools.demo_data import store_sales_table
from gpuwrite.tools.warmup import sample_table
from gpuwrite.tools.cli import main
out = sys.argv[1]
gpuwrite.write_table(sample_table(777), out + "/a.parquet", compression="zstd", page_size=4096)
gpuwrite.write_table(store_sales_table(5_000), out + "/b.parquet")
csv.write_csv(pa.table({"x": [1, 2], "y": ["a", None]}), out + "/c.csv")
assert main(["write", out + "/c.csv", out + "/c.parquet", "--quiet"]) == 0
gpuwrite.write_dataset(store_sales_table(2_000), out + "/ds", partition_by=["ss_store_sk"])
print("compiled", kernel_cache.cache_counts()[1], "loaded", kernel_cache.cache_counts()[0])
"""


# Every input kind users bring (gpuwrite.tools.input_kinds), each in its own fresh process: the kernel
# signatures compiled, by name (numba:compile events; a load from the cache sends none).
EVERY_KIND = """
import json, sys, tempfile
from numba.core import event
from gpuwrite.tools import input_kinds
names = []
class Compiles(event.Listener):
    def on_start(self, ev): pass
    def on_end(self, ev):
        fn = getattr(ev.data.get("dispatcher"), "py_func", None)
        if fn is not None and fn.__module__.startswith("gpuwrite.kernels"):
            names.append(f"{fn.__qualname__}{tuple(str(a) for a in ev.data.get('args', ()))}")
event.register("numba:compile", Compiles())
kind = sys.argv[1]
with tempfile.TemporaryDirectory() as folder:
    {**input_kinds.KINDS, **input_kinds.COLD_START}[kind][0](folder)
print(json.dumps(names))
"""


def _run(args: list[str], cache: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a command with NUMBA_CACHE_DIR=cache (and not the shipped kernel cache); fail with its output if it
    fails."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "GPUWRITE_SHIPPED_KERNEL_CACHE": "0"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def warmed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A cache filled by `gpuwrite warmup` from empty, once for the module: (the cache, warmup's process)."""
    if not GPUWRITE.exists():
        pytest.skip(f"{GPUWRITE} is not installed")
    work = tmp_path_factory.mktemp("warmed")
    cache = work / "cache"
    return cache, _run([str(GPUWRITE), "warmup"], cache, work)


def _copy(cache: Path, tmp_path: Path) -> Path:
    """A copy of the warmed cache for one test (a test that compiles must not fill the others' cache)."""
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy)
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("kind", [*input_kinds.KINDS, *input_kinds.COLD_START])
def test_every_input_kind_compiles_nothing_after_warmup(
        kind: str, warmed: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """After the warm-up, a fresh process writing one kind of input (pyarrow of every flat type, dictionary,
    sliced and chunked; nested; pandas, polars and DuckDB frames; Spark's layouts with every codec; the options
    that select kernels; bucketed datasets) compiles no kernel signature."""
    if not input_kinds.available(kind):
        pytest.skip(f"{kind}: its library is not installed")
    done = _run([sys.executable, "-c", EVERY_KIND, kind], _copy(warmed[0], tmp_path), tmp_path)
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert compiled == [], f"{kind}: {len(compiled)} signature(s) compiled after the warm-up: {compiled}"


# A write on the stand-in device (the GPU backend's steps run by their CPU twins), as `bench/gpu_model.py` makes
# one: the signatures compiled, by name.
ON_STANDIN = EVERY_KIND.split("kind = sys.argv[1]")[0] + """
import gpuwrite
from gpuwrite.backends.device.ops import standin
from gpuwrite.tools.demo_data import store_sales_table
with standin():
    gpuwrite.write_table(store_sales_table(1000), sys.argv[1] + "/s.parquet", device="gpu")
print(json.dumps(names))
"""


@pytest.mark.slow
def test_a_stand_in_device_write_compiles_nothing_after_warmup(
        warmed: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """The warm-up (so the package build) compiles the CPU twins of the GPU steps too: a fresh process writing
    on the stand-in device (`bench/gpu_model.py --rows 1000`) compiled 92 signatures before (planner.open_spans
    among them), none of them in the shipped cache."""
    done = _run([sys.executable, "-c", ON_STANDIN, str(tmp_path)], _copy(warmed[0], tmp_path), tmp_path)
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert compiled == [], f"{len(compiled)} signature(s) compiled on the stand-in device: {compiled}"


@pytest.mark.slow
def test_warmup_then_nothing_compiles(warmed: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """warmup compiles into NUMBA_CACHE_DIR with a notice; afterwards a new process writing all kinds of data
    compiles no kernel and prints no compile notice; running warmup again only loads."""
    built, first = warmed
    cache = _copy(built, tmp_path)
    assert f"compiling CPU kernels into numba's cache at {built}" in first.stderr
    assert "steps done" in first.stderr and NOTICE not in first.stderr
    compiled = int(first.stdout.split("gpuwrite warmup: ")[1].split()[0])
    assert compiled > 50 and any(p.suffix == ".nbi" for p in cache.rglob("*"))
    after = _run([sys.executable, "-c", AFTER_WARMUP, str(tmp_path)], cache, tmp_path)
    assert after.stdout.split()[:2] == ["compiled", "0"] and int(after.stdout.split()[3]) > 0
    assert NOTICE not in after.stderr
    again = _run([str(GPUWRITE), "warmup", "--quiet"], cache, tmp_path)
    assert again.stdout == "" and again.stderr == ""


@pytest.mark.slow
def test_cold_first_write_says_it_is_compiling_once(tmp_path: Path) -> None:
    """A first write on an empty cache prints the notice once, naming the cache; a second process does not."""
    code = ("import pyarrow as pa, gpuwrite, sys; "
            "gpuwrite.write_table(pa.table({'a': list(range(10)), 'b': ['x'] * 10}), sys.argv[1])")
    cache = tmp_path / "cache"
    first = _run([sys.executable, "-c", code, str(tmp_path / "x.parquet")], cache, tmp_path)
    assert first.stderr.count(NOTICE) == 1 and f"cached in {cache}" in first.stderr
    second = _run([sys.executable, "-c", code, str(tmp_path / "y.parquet")], cache, tmp_path)
    assert NOTICE not in second.stderr


def test_unwritable_cache_locations_fall_back(tmp_path: Path) -> None:
    """When numba finds no writable cache location it refuses to cache; the kernels then cache in a temp
    directory instead of failing to import."""
    code = """
from gpuwrite.kernels import _jit
from gpuwrite.kernels.encode import bits
print(bits.bit_width_u64.stats.cache_path)
print(_jit.fallback_cache_dir())
"""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_ENABLE_CUDASIM")}
    # numba may look only where NUMBA_CACHE_DIR points, and it is unset: no location, as on a read-only host.
    env["NUMBA_CACHE_LOCATOR_CLASSES"] = "UserProvidedCacheLocator"
    env["GPUWRITE_SHIPPED_KERNEL_CACHE"] = "0"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    cache_path, fallback = done.stdout.split()
    assert cache_path.startswith(fallback + os.sep) and "gpuwrite-numba-cache" in fallback


def test_gpu_warmup_says_it_needs_a_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpuwrite warmup --device gpu` where the GPU backend cannot run fails at once, saying it needs a GPU and
    what is missing, before compiling anything."""
    from gpuwrite.backends import resolve_device
    from gpuwrite.errors import GpuwriteError
    from gpuwrite.tools.cli import EXIT_FAILED, main

    try:
        resolve_device("gpu")
    except GpuwriteError as exc:
        missing = str(exc)
    else:
        pytest.skip("a GPU (or its simulator) is usable here")
    assert main(["warmup", "--device", "gpu"]) == EXIT_FAILED
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("gpuwrite warmup --device gpu needs a GPU") and missing in err


def test_warmup_encodes_a_row_group_in_several_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up's writes include a row group whose pages are encoded over several steps, a dictionary re-read
    before the second (`Dictionary.warm`: its kernel compiles on no other path, and every write of more than a
    step's rows, the demo's first among them, takes it)."""
    import warnings

    from gpuwrite.encode.dictionary import Dictionary
    from gpuwrite.pipeline.int96_zones import held_back
    from gpuwrite.tools.warmup import sample_table, steps

    warmed: list[int] = []
    warm = Dictionary.warm
    monkeypatch.setattr(Dictionary, "warm", lambda self: (warmed.append(self.size), warm(self))[1])
    with held_back(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _label, run in steps(sample_table(300), str(tmp_path)):
            run()
    assert warmed and min(warmed) > 0
