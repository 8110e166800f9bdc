"""One script for a GPU machine: check the GPU backend against the CPU path, then time it.

1. Byte identity on a corpus (types, fallbacks, page and row-group cuts, checksums) with compression off, where
   both backends must write the same bytes; with a codec, nvCOMP's streams differ from the host codec's, so
   the check there is that every reader-visible value and every page boundary agree.
2. Timing of the store_sales-shaped table (`--rows`, default 10M rows, about 2.4 GB in Arrow) through gpuwrite on
   the GPU, gpuwrite on the CPU, cudf's `to_parquet` when cudf is importable in this environment (cudf pins
   numba < 0.65 and an older nvCOMP, so it usually needs its own environment: pass `--cudf-python` pointing at
   that environment's python), gpuwrite's cudf hook (`df.gpuwrite.to_parquet`) on the frame cudf wrote (in
   cudf's environment, gpuwrite imported from this checkout), gpuwrite from input already on the device (the
   Arrow C Device interface over CuPy buffers), and pyarrow. Medians of `--repeats` runs after a warm-up.

Prints a table and writes JSON (`--out`). Under 8 minutes on an H200 at the default size.

    python bench/gpu_check.py --rows 10000000 --out bench/results/gpu_check.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))

CUDF_SNIPPET = """
import sys, time, statistics, json
import cudf, pyarrow.parquet as pq
table = pq.read_table(sys.argv[1])
df = cudf.DataFrame.from_arrow(table)

def median(fn):
    times = []
    for _ in range(int(sys.argv[4]) + 1):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times[1:])

got = {"seconds": median(lambda: df.to_parquet(sys.argv[2], compression=sys.argv[3], header_version="2.0")),
       "version": cudf.__version__}
try:  # gpuwrite's cudf hook on the same frame: the columns are read where they lie (no to_arrow)
    sys.path.insert(0, sys.argv[5])
    import gpuwrite
    got["hook_seconds"] = median(lambda: df.gpuwrite.to_parquet(sys.argv[6], compression=sys.argv[3],
                                                                device="gpu"))
except Exception as exc:
    got["hook_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(got))
"""


def identity_corpus(scale: float) -> list[tuple[str, pa.Table, dict[str, Any]]]:
    """Tables and options the backends must agree on (the simulator test corpus, at GPU-sized scale)."""
    from test_readback import _big, _extremes

    def n(rows: int) -> int:
        return max(50, int(rows * scale))

    return [
        ("extremes", _extremes(), {}),
        ("pages+row groups", _big(n(200_000), seed=3), {"page_size": n(64 * 1024), "block_size": n(4 << 20)}),
        ("dictionary overflow", _big(n(300_000), seed=5), {"dictionary_page_size": n(64 * 1024)}),
        ("no dictionary", _big(n(100_000), seed=7), {"enable_dictionary": False}),
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


def check_identity(tmp: Path, scale: float) -> list[dict[str, Any]]:
    """Write each corpus table with both backends; compare bytes (uncompressed) or contents (snappy)."""
    import gpuwrite

    rows = []
    for name, table, options in identity_corpus(scale):
        for codec in ("uncompressed", "snappy"):
            cpu, gpu = tmp / "cpu.parquet", tmp / "gpu.parquet"
            gpuwrite.write_table(table, cpu, device="cpu", compression=codec, **options)
            gpuwrite.write_table(table, gpu, device="gpu", compression=codec, **options)
            same_bytes = cpu.read_bytes() == gpu.read_bytes()
            same_rows = _same_values(pq.read_table(gpu), pq.read_table(cpu))
            ok = same_bytes if codec == "uncompressed" else same_rows
            rows.append({"case": name, "codec": codec, "identical_bytes": same_bytes, "same_values": same_rows,
                         "ok": ok})
            print(f"identity  {name:22s} {codec:12s} bytes={same_bytes!s:5s} values={same_rows!s:5s}"
                  f" {'OK' if ok else 'FAIL'}", flush=True)
    return rows


def _median_time(fn: Any, repeats: int) -> float:
    """Median wall time of fn() over `repeats` runs after one warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def time_writers(tmp: Path, rows: int, codec: str, repeats: int, cudf_python: str | None) -> list[dict[str, Any]]:
    """Seconds, input GB/s, output size and peak device memory per writer."""
    import gpuwrite
    from gpuwrite.backends.device import Device
    from gpuwrite.demo_data import store_sales_table

    table = store_sales_table(rows)
    gb = table.nbytes / 1e9
    results = []

    def record(name: str, seconds: float, path: Path, peak: int | None, note: str = "") -> None:
        size = path.stat().st_size
        results.append({"writer": name, "seconds": seconds, "input_gb_per_s": gb / seconds, "output_bytes": size,
                        "peak_device_bytes": peak, "note": note})
        print(f"time      {name:22s} {seconds:8.3f} s  {gb / seconds:7.2f} GB/s  {size / 1e6:9.1f} MB"
              f"  peak device {'-' if peak is None else f'{peak / 1e9:.2f} GB'}  {note}", flush=True)

    out = tmp / "gw_gpu.parquet"
    arrays_peak: list[int] = []

    def gpu_write() -> None:
        writer = gpuwrite.ParquetWriter(out, table.schema, device="gpu", compression=codec)
        writer.write(table)
        writer.close()
        device = getattr(writer._backend, "device", None)
        if isinstance(device, Device):
            arrays_peak.append(device.peak_bytes)

    record("gpuwrite gpu", _median_time(gpu_write, repeats), out, max(arrays_peak, default=None),
           f"codec via {'nvCOMP' if _uses_nvcomp(codec) else 'host'}")
    out = tmp / "gw_device_input.parquet"
    exported = _on_device(table)  # placed on the GPU once, untimed, exported as pylibcudf exports

    def device_input_write() -> None:
        writer = gpuwrite.ParquetWriter(out, table.schema, device="gpu", compression=codec)
        writer.write(exported)
        writer.close()

    record("gpuwrite device-input", _median_time(device_input_write, repeats), out, None,
           "input already on the device (Arrow C Device interface)")
    out = tmp / "gw_cpu.parquet"
    record("gpuwrite cpu", _median_time(lambda: gpuwrite.write_table(table, out, device="cpu", compression=codec),
                                        repeats), out, None)
    out = tmp / "pyarrow.parquet"
    record("pyarrow", _median_time(lambda: pq.write_table(table, out, compression=codec, data_page_version="2.0"),
                                   repeats), out, None)
    results.extend(_time_cudf(tmp, table, codec, repeats, cudf_python, gb))
    return results


def _on_device(table: pa.Table) -> Any:
    """The table's buffers on the device (CuPy arrays on a GPU, simulated memory otherwise), exported through
    the Arrow C Device interface."""
    from gpuwrite.backends.device import Device
    from gpuwrite.integrations.device_export import DeviceExport, StandinBuffer

    if Device().mode != "cuda":
        return DeviceExport(table, place=StandinBuffer)
    import cupy
    import numpy as np

    return DeviceExport(table, place=lambda buf: cupy.asarray(np.frombuffer(buf, dtype=np.uint8)))


def _uses_nvcomp(codec: str) -> bool:
    """Whether the GPU backend compresses `codec` with nvCOMP here."""
    from gpuwrite.backends.device import Device
    from gpuwrite.backends.device.codecs import page_codec

    found = page_codec(codec, None, Device())
    return found is not None and found.name == "nvcomp"


def _time_cudf(tmp: Path, table: pa.Table, codec: str, repeats: int, cudf_python: str | None,
               gb: float) -> list[dict[str, Any]]:
    """cudf's to_parquet on the same table, in this environment or in the one given by --cudf-python."""
    python = cudf_python or sys.executable
    probe = subprocess.run([python, "-c", "import cudf; print(cudf.__version__)"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"time      cudf                   not importable with {python} (cudf needs numba < 0.65: give its "
              f"environment with --cudf-python)", flush=True)
        return [{"writer": "cudf", "seconds": None, "note": f"cudf not importable with {python}"}]
    source = tmp / "input.parquet"
    pq.write_table(table, source, compression="none")
    out = tmp / "cudf.parquet"
    hook_out = tmp / "cudf_hook.parquet"
    done = subprocess.run([python, "-c", CUDF_SNIPPET, str(source), str(out), codec, str(repeats), str(REPO_ROOT),
                           str(hook_out)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        print(f"time      cudf                   failed: {done.stderr[-500:]}", flush=True)
        return [{"writer": "cudf", "seconds": None, "note": done.stderr[-500:]}]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    size = out.stat().st_size
    print(f"time      cudf {got['version']:17s} {got['seconds']:8.3f} s  {gb / got['seconds']:7.2f} GB/s  "
          f"{size / 1e6:9.1f} MB  (found with {python})", flush=True)
    rows = [{"writer": f"cudf {got['version']}", "seconds": got["seconds"], "input_gb_per_s": gb / got["seconds"],
             "output_bytes": size, "peak_device_bytes": None, "note": f"python {python}"}]
    if "hook_seconds" in got:
        hook_size = hook_out.stat().st_size
        print(f"time      gpuwrite cudf hook     {got['hook_seconds']:8.3f} s  {gb / got['hook_seconds']:7.2f} GB/s  "
              f"{hook_size / 1e6:9.1f} MB  (df.gpuwrite.to_parquet, same frame)", flush=True)
        rows.append({"writer": "gpuwrite cudf-hook", "seconds": got["hook_seconds"],
                     "input_gb_per_s": gb / got["hook_seconds"], "output_bytes": hook_size, "peak_device_bytes": None,
                     "note": "df.gpuwrite.to_parquet on the frame cudf wrote"})
    else:
        print(f"time      gpuwrite cudf hook     failed: {got.get('hook_error')}", flush=True)
        rows.append({"writer": "gpuwrite cudf-hook", "seconds": None, "note": got.get("hook_error")})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000, help="store_sales rows to time (scale)")
    parser.add_argument("--codec", default="snappy", choices=["snappy", "zstd", "lz4_raw", "uncompressed"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cudf-python", default=None, help="python of an environment where cudf imports")
    parser.add_argument("--skip-identity", action="store_true")
    parser.add_argument("--corpus-scale", type=float, default=1.0, help="scale of the identity corpus' row counts")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results" / "gpu_check.json")
    args = parser.parse_args(argv)

    from gpuwrite.backends.device import gpu_problem

    problem = gpu_problem()
    if problem is not None:
        print(f"no GPU backend here: {problem}")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        identity = [] if args.skip_identity else check_identity(Path(tmp), args.corpus_scale)
        timings = time_writers(Path(tmp), args.rows, args.codec, args.repeats, args.cudf_python)
    report = {"rows": args.rows, "codec": args.codec, "identity": identity, "timings": timings}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")
    return 0 if all(r["ok"] for r in identity) else 1


if __name__ == "__main__":
    sys.exit(main())
