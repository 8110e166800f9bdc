"""A fresh process's first write against its warm writes: store_sales (as `gpuwrite demo` writes it) written
several times in one new Python process, each write's wall and CPU seconds (all threads), system CPU and page
faults (minor: memory touched for the first time), the bytes of new slabs it took (`buffers.Slabs`), the kernel
signatures it loaded or compiled, and the first write's ratios to the warm median. The writer's modules are
imported before the first write, as `gpuwrite demo` imports them before its "first write (cold)" (their CPU
seconds are printed apart).

Each run is its own process (the first write is a new process's); page faults are the steadiest figure on a
loaded machine. `--no-hugepage` turns off NumPy's transparent huge pages for large arrays (its default on
Linux), so faults count 4 KiB pages: bytes touched afresh.

    .venv/bin/python bench/first_write.py                    # 2 fresh processes, 5 writes each, 2,880,404 rows
    .venv/bin/python bench/first_write.py --runs 3 --writes 6 --no-hugepage
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

_CHILD = """
import gc, json, os, resource, sys, tempfile, time
from gpuwrite.tools.demo_data import store_sales_table
table = store_sales_table(int(sys.argv[1]))
c0 = time.process_time()
from gpuwrite.api import write_table  # the writer's modules (numba too), imported before the timed writes
from gpuwrite.backends import kernel_cache
from gpuwrite.pipeline import buffers
imported = time.process_time() - c0
out = tempfile.mkdtemp()
writes = []
for i in range(int(sys.argv[2])):
    path = os.path.join(out, f"{i}.parquet")
    gc.collect()
    k0, b0 = kernel_cache.cache_counts(), getattr(buffers._SLABS, "created_bytes", 0)  # (older code: no count)
    r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    write_table(table, path, compression="snappy")
    w1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    k1 = kernel_cache.cache_counts()
    os.remove(path)
    writes.append({"wall": w1 - w0, "cpu": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime,
                   "sys": r1.ru_stime - r0.ru_stime, "faults": r1.ru_minflt - r0.ru_minflt,
                   "fresh": getattr(buffers._SLABS, "created_bytes", 0) - b0, "loaded": k1[0] - k0[0],
                   "compiled": k1[1] - k0[1]})
os.rmdir(out)
print(json.dumps({"import_cpu": imported, "writes": writes}))
"""


def run_once(rows: int, writes: int, hugepage: bool) -> dict[str, Any]:
    """One fresh process's import CPU seconds and writes (the first is its first)."""
    env = dict(os.environ)
    if not hugepage:
        env["NUMPY_MADVISE_HUGEPAGE"] = "0"
    # from the temp directory: `python -c` imports from its working directory first, and a checkout has gpuwrite/
    done = subprocess.run([sys.executable, "-c", _CHILD, str(rows), str(writes)], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), env=env)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    """Run fresh processes; print each write and each process's first / warm-median ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="fresh processes")
    parser.add_argument("--writes", type=int, default=5, help="writes per process (the first and warm ones)")
    parser.add_argument("--rows", type=int, default=2_880_404)
    parser.add_argument("--no-hugepage", action="store_true", help="NUMPY_MADVISE_HUGEPAGE=0 in the children")
    args = parser.parse_args(argv)
    for run in range(args.runs):
        child = run_once(args.rows, max(2, args.writes), not args.no_hugepage)
        writes = child["writes"]
        print(f"run {run}: importing the writer (before the writes, as `gpuwrite demo` does): "
              f"CPU {child['import_cpu']:.3f} s")
        for i, w in enumerate(writes):
            print(f"run {run} write {i}: wall {w['wall']:.3f} s  CPU {w['cpu']:.3f} s  (system {w['sys']:.3f})  "
                  f"faults {w['faults']:,}  new slabs {w['fresh'] / 1e6:.1f} MB  kernel signatures "
                  f"{w['loaded']} loaded, {w['compiled']} compiled")
        first, warm = writes[0], writes[1:]
        ratio = {k: first[k] / max(1e-9, statistics.median(w[k] for w in warm)) for k in ("wall", "cpu")}
        print(f"run {run}: first / warm median: wall {ratio['wall']:.2f}x, CPU {ratio['cpu']:.2f}x; faults "
              f"{first['faults']:,} first, {statistics.median(w['faults'] for w in warm):,.0f} warm median")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
