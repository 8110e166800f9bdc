"""One call on a GPU machine: check the GPU backend against the CPU path, measure its compile, then time it.

1. Compile once: two fresh processes share an empty numba cache directory; each writes a small table on the GPU
   and reports its first write (the first compiles every kernel it launches, the second loads them from the
   cache: `compile_s` is the difference) and the CUDA kernels compiled / loaded from the cache.
2. Identity on a corpus (types, fallbacks, page and row-group cuts, checksums, bloom filters): uncompressed, both
   backends must write the same bytes; with a codec (nvCOMP's streams differ from the host codec's) every
   reader-visible value must agree, and the page boundaries too where the row-group cuts agree (compressed sizes
   can move a cut: the cuts are then reported, both ways).
3. Timing of the store_sales table at each `--rows` size: gpuwrite on the GPU (cold: the first write in this
   process; warm: median of `--repeats`), with page CRCs and without (cudf writes none), gpuwrite on the CPU,
   cudf's `to_parquet(statistics="COLUMN")` and the gpuwrite cudf hook (`df.gpuwrite.to_parquet`) on the same
   cudf DataFrame, and pyarrow: seconds, GB/s of input (Arrow bytes), output size, peak device memory.
   cudf pins its own numba, so it usually lives in another environment: `--cudf-python` names its python.

Prints a table and writes JSON to `--out` (default `$OUT/gpu_check.json` when $OUT is set, so one device call
brings it back). `--expect-cudf` (or GPUWRITE_EXPECT_CUDF=1) makes a missing or failing cudf an error (exit 3).
Under 8 minutes on an H200 with the defaults (`--budget-s` stops optional timings before that). `--rows small`
runs everything at a tiny scale (the simulator or the stand-in device, in tests).

    python bench/gpu_check.py --expect-cudf --cudf-python /opt/cudf/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
DEFAULT_ROWS = [2_880_404, 28_804_040]

# Run in the environment where cudf imports (argv: input parquet, output dir, codec, repeats, repo root).
CUDF_SNIPPET = """
import json, os, statistics, sys, time
import cudf, pyarrow.parquet as pq
source, out_dir, codec, repeats, repo = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
df = cudf.DataFrame.from_arrow(pq.read_table(source))
def median(fn):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return statistics.median(times)
comp = None if codec == "uncompressed" else codec
result = {"version": cudf.__version__}
path = os.path.join(out_dir, "cudf.parquet")
result["cudf_s"] = median(lambda: df.to_parquet(path, compression=comp, statistics="COLUMN",
                                                header_version="2.0"))
result["cudf_bytes"] = os.path.getsize(path)
try:
    sys.path.insert(0, repo)
    import gpuwrite  # cudf is imported already: this registers df.gpuwrite
    hook = os.path.join(out_dir, "hook.parquet")
    result["hook_s"] = median(lambda: df.gpuwrite.to_parquet(hook, device="gpu", compression=codec))
    result["hook_bytes"] = os.path.getsize(hook)
except Exception as exc:
    result["hook_error"] = f"{type(exc).__name__}: {exc}"[:500]
print(json.dumps(result))
"""

# A fresh process's first GPU write (argv: output path, codec, rows, CUDA cache directory, device mode). Only
# numba-cuda's cache goes to the fresh directory: the CPU kernels (the CPU path's, `gpuwrite warmup`) keep theirs.
COMPILE_SNIPPET = """
import contextlib, json, sys, time
t0 = time.perf_counter()
from numba.cuda.core import config
config.CACHE_DIR = sys.argv[4]
import gpuwrite
from gpuwrite.tools.demo_data import store_sales_table
from gpuwrite.backends.kernel_cache import cache_counts, cuda_cache_counts
from gpuwrite.backends.device import standin
table = store_sales_table(int(sys.argv[3]))
t1 = time.perf_counter()
with standin() if sys.argv[5] == "standin" else contextlib.nullcontext():
    gpuwrite.write_table(table, sys.argv[1], device="gpu", compression=sys.argv[2], bloom_filter_enabled=True)
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_write_s": t2 - t1,
                  "cuda_cache": list(cuda_cache_counts()), "cpu_cache": list(cache_counts())}))
"""


def default_out() -> Path:
    """$OUT/gpu_check.json when $OUT is set (a device call brings $OUT back), else bench/results/."""
    out = os.environ.get("OUT")
    return Path(out) / "gpu_check.json" if out else REPO_ROOT / "bench" / "results" / "gpu_check.json"


# -- 1. compile once ---------------------------------------------------------------------------------------------

def measure_compile(tmp: Path, codec: str, rows: int) -> dict[str, Any]:
    """First GPU writes of two fresh processes on one empty CUDA cache directory: cold (compiles) then warm
    (loads)."""
    cache = tmp / "cuda-cache"
    env = dict(os.environ, GPUWRITE_COMPILE_NOTICE="0")
    runs = []
    for name in ("cold", "warm"):
        done = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET, str(tmp / f"compile_{name}.parquet"), codec,
                               str(rows), str(cache), report_mode()], capture_output=True, text=True, env=env, timeout=600,
                              cwd=REPO_ROOT)
        if done.returncode != 0:
            return {"error": done.stderr[-1500:]}
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    report = {"cold": cold, "warm": warm, "compile_s": cold["first_write_s"] - warm["first_write_s"],
              "cuda_kernels_compiled_cold": cold["cuda_cache"][1], "cuda_kernels_loaded_warm": warm["cuda_cache"][0],
              "cuda_kernels_compiled_warm": warm["cuda_cache"][1]}
    print(f"compile   first write cold {cold['first_write_s']:7.2f} s ({cold['cuda_cache'][1]} CUDA kernels "
          f"compiled), warm cache {warm['first_write_s']:7.2f} s ({warm['cuda_cache'][0]} loaded, "
          f"{warm['cuda_cache'][1]} compiled): compile {report['compile_s']:.2f} s", flush=True)
    return report


# -- 2. identity -------------------------------------------------------------------------------------------------

def identity_corpus(scale: float) -> list[tuple[str, pa.Table, dict[str, Any]]]:
    """Tables and options the backends must agree on (the simulator test corpus, at GPU-sized scale)."""
    from readback_tables import _big, _extremes

    def n(rows: int) -> int:
        return max(50, int(rows * scale))

    return [
        ("extremes", _extremes(), {"bloom_filter_enabled": True}),
        ("pages+row groups", _big(n(200_000), seed=3), {"page_size": n(64 * 1024), "block_size": n(4 << 20)}),
        ("dictionary overflow", _big(n(300_000), seed=5), {"dictionary_page_size": n(64 * 1024)}),
        ("no dictionary", _big(n(100_000), seed=7), {"enable_dictionary": False, "bloom_filter_enabled": True,
                                                     "bloom_filter_adaptive": True}),
        ("row limits", _big(n(100_000), seed=9), {"page_row_count_limit": 1000, "block_row_count_limit": n(30_000)}),
    ]


def _same_values(a: pa.Table, b: pa.Table) -> bool:
    """Equal tables, NaN equal to NaN (Table.equals treats NaN as different from itself)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for x, y in zip(a.columns, b.columns, strict=True):
        if pa.types.is_floating(x.type):
            if x.is_null().to_pylist() != y.is_null().to_pylist():
                return False
            x, y = x.to_numpy(zero_copy_only=False), y.to_numpy(zero_copy_only=False)
            if not ((x == y) | ((x != x) & (y != y))).all():
                return False
        elif not x.equals(y):
            return False
    return True


_CODEC_DEPENDENT = ("offset", "compressed_page_size", "crc", "header_size")


def layout(path: Path) -> tuple[list[int], list[list[list[dict[str, Any]]]]]:
    """(rows per row group, per row group and column its pages' headers less what the codec changes)."""
    from gpuwrite.inspection.file import inspect

    info = inspect(path)
    cuts = [rg["num_rows"] for rg in info["row_groups"]]
    pages = [[[{k: v for k, v in p.items() if k not in _CODEC_DEPENDENT} for p in col.get("pages", [])]
              for col in rg["columns"]] for rg in info["row_groups"]]
    return cuts, pages


def compare_files(cpu: Path, gpu: Path, codec: str) -> dict[str, Any]:
    """Bytes, values, row-group cuts and page boundaries of two files of the same table."""
    same_bytes = cpu.read_bytes() == gpu.read_bytes()
    same_values = _same_values(pq.read_table(gpu), pq.read_table(cpu))
    cpu_cuts, cpu_pages = layout(cpu)
    gpu_cuts, gpu_pages = layout(gpu)
    row: dict[str, Any] = {"codec": codec, "identical_bytes": same_bytes, "same_values": same_values,
                           "same_cuts": cpu_cuts == gpu_cuts,
                           "same_pages": cpu_cuts == gpu_cuts and cpu_pages == gpu_pages}
    if cpu_cuts != gpu_cuts:
        row["cuts"] = {"cpu": cpu_cuts, "gpu": gpu_cuts}
    if codec == "uncompressed":
        row["ok"] = same_bytes
    else:  # the page boundaries must agree wherever the cuts do
        row["ok"] = same_values and (row["same_pages"] or not row["same_cuts"])
    return row


def check_identity(tmp: Path, scale: float, codec: str) -> list[dict[str, Any]]:
    """Write each corpus table with both backends, uncompressed and with `codec`; compare."""
    import gpuwrite

    rows = []
    for name, table, options in identity_corpus(scale):
        for c in dict.fromkeys(("uncompressed", codec)):
            cpu, gpu = tmp / "cpu.parquet", tmp / "gpu.parquet"
            gpuwrite.write_table(table, cpu, device="cpu", compression=c, **options)
            gpuwrite.write_table(table, gpu, device="gpu", compression=c, **options)
            row = {"case": name, **compare_files(cpu, gpu, c)}
            rows.append(row)
            cuts = f"  cuts cpu {row['cuts']['cpu']} gpu {row['cuts']['gpu']}" if "cuts" in row else ""
            print(f"identity  {name:22s} {c:12s} bytes={same(row['identical_bytes'])} "
                  f"values={same(row['same_values'])} pages={same(row['same_pages'])} "
                  f"{'OK' if row['ok'] else 'FAIL'}{cuts}", flush=True)
    return rows


def same(flag: bool) -> str:
    """A flag as a fixed-width word."""
    return f"{flag!s:5s}"


# -- 3. timing ---------------------------------------------------------------------------------------------------

def _timed(fn: Callable[[], Any], repeats: int, warmup: bool = True) -> float:
    """Median wall time of fn() over `repeats` runs (after one unmeasured run when `warmup`)."""
    if warmup:
        fn()
    times = []
    for _ in range(max(1, repeats)):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


class Timings:
    """The timing rows of one table size, printed as they come."""

    def __init__(self, rows: int, gb: float) -> None:
        self.rows, self.gb = rows, gb
        self.results: list[dict[str, Any]] = []

    def record(self, name: str, seconds: float | None, size: int | None, peak: int | None = None,
               note: str = "") -> None:
        row = {"rows": self.rows, "writer": name, "seconds": seconds, "output_bytes": size,
               "input_gb_per_s": None if not seconds else self.gb / seconds, "peak_device_bytes": peak, "note": note}
        self.results.append(row)
        if seconds is None:
            print(f"time      {self.rows:>10d} {name:28s} {'-':>8s}    {note}", flush=True)
            return
        print(f"time      {self.rows:>10d} {name:28s} {seconds:8.3f} s {self.gb / seconds:7.2f} GB/s "
              f"{(size or 0) / 1e6:9.1f} MB  peak device {'-' if peak is None else f'{peak / 1e9:.2f} GB'}  {note}",
              flush=True)


def time_size(tmp: Path, rows: int, codec: str, repeats: int, cudf: tuple[str | None, bool], *,
              deadline: float, first_size: int) -> list[dict[str, Any]]:
    """Every writer on store_sales at `rows` rows (`first_size`: the size timed first in this process)."""
    import gpuwrite
    from gpuwrite.backends.device import Device
    from gpuwrite.tools.demo_data import store_sales_table

    table = store_sales_table(rows)
    t = Timings(rows, table.nbytes / 1e9)
    big = rows > 5_000_000  # CPU writers: one run, no warm-up, at the large size
    out = tmp / "gw_gpu.parquet"
    peaks: list[int] = []

    def gpu_write(checksum: bool = True) -> None:
        writer = gpuwrite.ParquetWriter(out, table.schema, device="gpu", compression=codec, page_checksum=checksum)
        writer.write(table)
        writer.close()
        device = getattr(writer._backend, "device", None)
        if isinstance(device, Device):
            peaks.append(device.peak_bytes)

    via = "nvCOMP" if _uses_nvcomp(codec) else "host codec"
    start = time.perf_counter()
    gpu_write()
    first = "first write in this process" if rows == first_size else "first write of this size"
    t.record("gpuwrite gpu cold", time.perf_counter() - start, out.stat().st_size, max(peaks, default=None),
             f"{first}; {via}")
    peaks.clear()
    t.record("gpuwrite gpu warm", _timed(gpu_write, repeats, warmup=False), out.stat().st_size,
             max(peaks, default=None), f"page CRCs; {via}")
    peaks.clear()
    t.record("gpuwrite gpu warm, no CRC", _timed(lambda: gpu_write(False), repeats, warmup=False),
             out.stat().st_size, max(peaks, default=None), "as cudf: no page CRCs")
    for name, fn, path in (
            ("gpuwrite cpu", lambda p: gpuwrite.write_table(table, p, device="cpu", compression=codec), "gw_cpu"),
            ("pyarrow", lambda p: pq.write_table(table, p, compression=codec, data_page_version="2.0"), "pa")):
        target = tmp / f"{path}.parquet"
        if time.perf_counter() > deadline:
            t.record(name, None, None, note="skipped: time budget spent")
            continue
        seconds = _timed(lambda f=fn, p=target: f(p), 1 if big else repeats, warmup=not big)
        t.record(name, seconds, target.stat().st_size)
    _time_cudf(tmp, table, codec, repeats, cudf, t=t, deadline=deadline)
    return t.results


def _uses_nvcomp(codec: str) -> bool:
    """Whether the GPU backend compresses `codec` with nvCOMP here."""
    from gpuwrite.backends.device import Device
    from gpuwrite.backends.device.codecs import page_codec

    found = page_codec(codec, None, Device())
    return found is not None and found.name == "nvcomp"


def _cudf_env() -> dict[str, str]:
    """The environment of cudf's processes: never numba's simulator (a test of this script runs under it)."""
    return {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}


def cudf_python(given: str | None) -> tuple[str, str | None]:
    """(python to run cudf with, cudf's version or None when it does not import there)."""
    python = given or sys.executable
    probe = subprocess.run([python, "-c", "import cudf; print(cudf.__version__)"], capture_output=True, text=True,
                           timeout=300, env=_cudf_env())
    return python, probe.stdout.strip() if probe.returncode == 0 else None


def _time_cudf(tmp: Path, table: pa.Table, codec: str, repeats: int, cudf: tuple[str | None, bool], *, t: Timings,
               deadline: float) -> None:
    """cudf's to_parquet and the gpuwrite cudf hook on one cudf DataFrame, in cudf's environment."""
    given, _ = cudf
    python, version = cudf_python(given)
    if version is None:
        t.record("cudf", None, None, note=f"MISSING: cudf not importable with {python} (give --cudf-python)")
        return
    if time.perf_counter() > deadline:
        t.record(f"cudf {version}", None, None, note="skipped: time budget spent")
        return
    source = tmp / "input.parquet"
    pq.write_table(table, source, compression="none")
    done = subprocess.run([python, "-c", CUDF_SNIPPET, str(source), str(tmp), codec, str(repeats),
                           str(REPO_ROOT)], capture_output=True, text=True, timeout=600, env=_cudf_env())
    if done.returncode != 0:
        t.record(f"cudf {version}", None, None, note=f"FAILED: {done.stderr[-500:]}")
        return
    got = json.loads(done.stdout.strip().splitlines()[-1])
    t.record(f"cudf {version}", got["cudf_s"], got["cudf_bytes"], note='to_parquet(statistics="COLUMN")')
    if "hook_s" in got:
        t.record("gpuwrite cudf hook", got["hook_s"], got["hook_bytes"], note="df.gpuwrite.to_parquet, same frame")
    else:
        t.record("gpuwrite cudf hook", None, None, note=f"FAILED: {got.get('hook_error')}")


def cudf_problem(timings: list[dict[str, Any]]) -> str | None:
    """Why the cudf comparison is missing from `timings` (None when every size has a cudf time)."""
    sizes = {r["rows"] for r in timings}
    for rows in sorted(sizes):
        mine = [r for r in timings if r["rows"] == rows and r["writer"].startswith("cudf")]
        if not mine:
            return f"no cudf record at {rows} rows"
        if mine[0]["seconds"] is None:
            return f"cudf at {rows} rows: {mine[0]['note']}"
    return None


# -- main --------------------------------------------------------------------------------------------------------

def report_mode() -> str:
    """The GPU backend's device mode here: cuda, sim or standin."""
    from gpuwrite.backends.device import Device

    return Device().mode


def _device_info() -> dict[str, Any]:
    """The device the GPU backend runs on (mode, and the GPU's name on a real one)."""
    from gpuwrite.backends.device import Device

    mode = Device().mode
    info: dict[str, Any] = {"mode": mode}
    if mode == "cuda":
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
        info["name"] = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        info["memory_bytes"] = int(props["totalGlobalMem"])
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default=",".join(map(str, DEFAULT_ROWS)),
                        help="store_sales sizes, comma-separated; 'small': a tiny run of every step (tests)")
    parser.add_argument("--codec", default="snappy", choices=["snappy", "zstd", "lz4_raw", "uncompressed"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cudf-python", default=None, help="python of an environment where cudf imports")
    parser.add_argument("--expect-cudf", action="store_true", default=os.environ.get("GPUWRITE_EXPECT_CUDF") == "1",
                        help="fail (exit 3) when cudf cannot be timed")
    parser.add_argument("--skip-identity", action="store_true")
    parser.add_argument("--skip-compile", action="store_true")
    parser.add_argument("--corpus-scale", type=float, default=1.0, help="scale of the identity corpus' row counts")
    parser.add_argument("--budget-s", type=float, default=420.0, help="optional timings stop after this many s")
    parser.add_argument("--out", type=Path, default=None, help="JSON report (default: $OUT/gpu_check.json or "
                                                                "bench/results/gpu_check.json)")
    parser.add_argument("--standin", action="store_true", help="run on the stand-in device (a rehearsal of the "
                                                                    "session on a machine without a GPU)")
    args = parser.parse_args(argv)
    if args.standin:
        from gpuwrite.backends.device import standin

        with standin():
            return _run(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The check as `main`'s arguments ask."""
    small = args.rows == "small"
    sizes = [400] if small else [int(r) for r in args.rows.split(",")]
    scale = 0.002 if small else args.corpus_scale
    repeats = 1 if small else args.repeats
    out = args.out or default_out()

    from gpuwrite.backends.device import gpu_problem

    problem = gpu_problem()
    if problem is not None:
        print(f"no GPU backend here: {problem}")
        return 2
    if report_mode() == "sim":  # simulated kernels do NumPy scalar arithmetic that wraps on purpose
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
    began = time.perf_counter()
    deadline = began + (float("inf") if small else args.budget_s)
    report: dict[str, Any] = {"rows": sizes, "codec": args.codec, "device": _device_info()}
    with tempfile.TemporaryDirectory() as tmp:
        report["compile"] = None if args.skip_compile else measure_compile(Path(tmp), args.codec, 10 if small else 50_000)
        report["identity"] = [] if args.skip_identity else check_identity(Path(tmp), scale, args.codec)
        report["timings"] = []
        for rows in sizes:
            report["timings"] += time_size(Path(tmp), rows, args.codec, repeats, (args.cudf_python, args.expect_cudf),
                                           deadline=deadline, first_size=sizes[0])
    report["cudf_problem"] = cudf_problem(report["timings"])
    report["seconds"] = time.perf_counter() - began
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"wrote {out} ({report['seconds']:.0f} s)")
    if not all(r["ok"] for r in report["identity"]) or (report["compile"] or {}).get("error"):
        return 1
    if args.expect_cudf and report["cudf_problem"] is not None:
        print(f"cudf was expected: {report['cudf_problem']}")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
