"""A fresh process's `import gpuwrite` and 10-row write, split: importing numba, loading kernels, the rest.

Each run is a new Python process (the figures are a first write's); the kernels load from the cache shipped in
the package (or wherever numba's cache serves them). Prints one line per run and the medians.

    python bench/kernel_load.py              # 5 fresh processes of the Python running it
    python bench/kernel_load.py --runs 9
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

_CHILD = """
import json, sys, time
import pyarrow as pa
table = pa.table({"a": pa.array(range(10), pa.int64()), "s": pa.array([str(i) for i in range(10)])})
t0 = time.perf_counter()
import numba
t1 = time.perf_counter()
import gpuwrite
from gpuwrite.kernels import _disk_cache
spent = [0.0]
load = _disk_cache.KernelCache.load_overload
def timed(self, sig, ctx):
    start = time.perf_counter()
    try:
        return load(self, sig, ctx)
    finally:
        spent[0] += time.perf_counter() - start
_disk_cache.KernelCache.load_overload = timed
gpuwrite.write_table(table, sys.argv[1])
t2 = time.perf_counter()
from gpuwrite.backends import kernel_cache
loaded, compiled = kernel_cache.cache_counts()
print(json.dumps({"total": t2 - t0, "numba": t1 - t0, "loading": spent[0], "loaded": loaded, "compiled": compiled}))
"""


def run_once(out: str) -> dict[str, float]:
    """One fresh process's figures (seconds, and signatures loaded and compiled)."""
    # from the temp directory: `python -c` imports from its working directory first, and a checkout has gpuwrite/
    done = subprocess.run([sys.executable, "-c", _CHILD, out], capture_output=True, text=True,
                          cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    """Run fresh processes and print each one's split and the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default="/tmp/gpuwrite-kernel-load.parquet", help="the 10-row file written")
    args = parser.parse_args(argv)
    rows = [run_once(args.out) for _ in range(args.runs)]
    for r in rows:
        print(f"import gpuwrite + 10-row write {r['total']:.3f} s: import numba {r['numba']:.3f} s, loading kernels "
              f"{r['loading']:.3f} s ({r['loaded']:.0f} loaded, {r['compiled']:.0f} compiled)")
    med = {k: statistics.median(r[k] for r in rows) for k in ("total", "numba", "loading")}
    print(f"median of {args.runs}: {med['total']:.3f} s, import numba {med['numba']:.3f} s, "
          f"loading kernels {med['loading']:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
