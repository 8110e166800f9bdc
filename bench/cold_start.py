"""Cold start: the first write in a fresh process, with numba's kernel cache loaded and with an empty one.

Two programs, each run as a new Python process (as a user's first command would be):
- `write10`: import gpuwrite and write a 10-row table of common types (int, double, string, decimal, date,
  timestamp, a nullable column); the child reports its import and write seconds and how many kernel
  signatures numba compiled and loaded (`gpuwrite.backends.kernel_cache.cache_counts`);
- `demo`: `gpuwrite demo --rows N`; reported are the whole command's seconds and its "first write (cold)"
  line (seconds, signatures compiled / loaded).
- `kinds`: one fresh process per input kind a user brings (`gpuwrite.tools.input_kinds.COLD_START`: pyarrow
  tables of every flat type, pandas tz-aware / nullable / categorical frames, polars Categorical and Datetime,
  DuckDB decimals, nested tables, Spark's INT96 and micros layouts with gzip and zstd); the library a kind
  needs is imported first, then the seconds from `import gpuwrite` to the end of its 10-row write and the
  signatures compiled (numba's `numba:compile` events, named) are reported.
Three cache states (NUMBA_CACHE_DIR):
- `warm`: a fresh directory filled once by `gpuwrite warmup` (timed: the one-off cost at install; the cache
  shipped in the package switched off, GPUWRITE_SHIPPED_KERNEL_CACHE=0, in warm and cold), then
  reused by every run: a shipped or warmed cache;
- `cold`: a new empty directory per run: a fresh install whose cache was never warmed;
- `default`: the environment as it is (the installed package's own cache), nothing set.
`--python PATH` runs the children with another interpreter (another venv's install, its own shipped cache);
`--fresh-install` clones HEAD into a temp folder, makes a venv, times `pip install .` and runs the children
with that venv's python (no warm-up command: what a new user gets).

    .venv/bin/python bench/cold_start.py                                      # warm and cold, 3 runs each
    .venv/bin/python bench/cold_start.py --cases default --programs write10 --repeats 1
    .venv/bin/python bench/cold_start.py --cases warm --programs kinds --repeats 1
    .venv/bin/python bench/cold_start.py --fresh-install --cases default --programs kinds --repeats 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
CASES = ("warm", "cold", "default")
PROGRAMS = ("write10", "demo", "kinds")
DEMO_FIRST = re.compile(r"first write \(cold\)\s+([0-9.]+) s\s+(.*)")


def write10_child() -> dict[str, Any]:
    """In a fresh process: import gpuwrite, write 10 rows, report the seconds and the kernel cache counts."""
    start, start_cpu = time.perf_counter(), time.process_time()
    import datetime as dt
    import decimal

    import pyarrow as pa

    import gpuwrite
    from gpuwrite.backends import kernel_cache

    imported, imported_cpu = time.perf_counter(), time.process_time()
    table = pa.table({
        "id": pa.array(range(10), pa.int64()),
        "price": pa.array([i * 1.25 for i in range(10)]),
        "name": pa.array([f"name {i}" for i in range(10)]),
        "amount": pa.array([decimal.Decimal(i).scaleb(-2) for i in range(10)], pa.decimal128(9, 2)),
        "day": pa.array([dt.date(2024, 1, 1 + i) for i in range(10)]),
        "at": pa.array([dt.datetime(2024, 1, 1, i) for i in range(10)], pa.timestamp("us", tz="UTC")),
        "maybe": pa.array([i if i % 3 else None for i in range(10)], pa.int32()),
    })
    with tempfile.TemporaryDirectory() as tmp:
        gpuwrite.write_table(table, os.path.join(tmp, "ten.parquet"))
    done, done_cpu = time.perf_counter(), time.process_time()
    loaded, compiled = kernel_cache.cache_counts()
    return {"import_s": imported - start, "write_s": done - imported, "total_in_process_s": done - start,
            "import_cpu_s": imported_cpu - start_cpu, "write_cpu_s": done_cpu - imported_cpu,
            "compiled": compiled, "loaded": loaded, "cache_dir": kernel_cache.cache_dir()}


def kind_child(kind: str, needs: str | None) -> dict[str, Any]:
    """In a fresh process: import the kind's library, then time `import gpuwrite` to the end of its write and
    name every kernel signature numba compiled on the way."""
    import importlib

    if needs:
        importlib.import_module(needs)  # the user's own library is loaded before gpuwrite: not ours to time
    start, start_cpu = time.perf_counter(), time.process_time()
    import gpuwrite  # noqa: F401
    from gpuwrite.backends import kernel_cache
    from gpuwrite.tools import input_kinds

    imported = time.perf_counter()
    from numba.core import event

    names: list[str] = []

    class CompileNames(event.Listener):  # type: ignore[misc]
        """Names each gpuwrite kernel signature compiled (numba:compile's end events; loads send none)."""

        def on_start(self, ev: Any) -> None:
            """Nothing at a compile's start."""

        def on_end(self, ev: Any) -> None:
            """Keep 'module.kernel(arg types)'."""
            data = ev.data if isinstance(ev.data, dict) else {}
            fn = getattr(data.get("dispatcher"), "py_func", None)
            if fn is not None and (fn.__module__ or "").startswith("gpuwrite.kernels"):
                names.append(f"{fn.__module__}.{fn.__qualname__}({', '.join(str(a) for a in data.get('args', ()))})")

    event.register("numba:compile", CompileNames())
    with tempfile.TemporaryDirectory() as tmp:
        input_kinds.COLD_START[kind][0](tmp)
    done, done_cpu = time.perf_counter(), time.process_time()
    loaded, compiled = kernel_cache.cache_counts()
    return {"kind": kind, "import_s": imported - start, "write_s": done - imported, "total_in_process_s": done - start,
            "write_cpu_s": done_cpu - start_cpu, "compiled": compiled, "loaded": loaded,
            "signatures": names, "cache_dir": kernel_cache.cache_dir()}


def _env(cache: str | None) -> dict[str, str]:
    """This process's environment with NUMBA_CACHE_DIR set to `cache` (None: left as it is)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    if cache is not None:  # warm / cold: that folder alone, not the cache shipped in the package
        env["NUMBA_CACHE_DIR"] = cache
        env["GPUWRITE_SHIPPED_KERNEL_CACHE"] = "0"
    env["GPUWRITE_COMPILE_NOTICE"] = "1"
    return env


PYTHON = [sys.executable]  # the children's interpreter: `--python` / `--fresh-install` name another venv's


def _gpuwrite_cli() -> list[str]:
    """The command that runs gpuwrite's CLI with the children's interpreter."""
    return [*PYTHON, "-c", "import sys; from gpuwrite.tools.cli import main; sys.exit(main())"]


def _run(command: list[str], cache: str | None, timeout: float) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run a command in a fresh process, outside the checkout (another interpreter must import its own install);
    (wall seconds, the finished process with .cpu_s, its CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    cwd = REPO_ROOT if PYTHON == [sys.executable] else tempfile.gettempdir()
    proc = subprocess.run(command, env=_env(cache), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc.cpu_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)  # type: ignore[attr-defined]
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(command[:3])} failed ({proc.returncode}): {' / '.join(tail)}")
    return seconds, proc


def run_program(program: str, cache: str | None, args: argparse.Namespace) -> dict[str, Any]:
    """One fresh-process run of `program` with the given cache directory."""
    if program == "write10":
        wall, proc = _run([*PYTHON, __file__, "--child"], cache, args.timeout)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
    else:
        wall, proc = _run(_gpuwrite_cli() + ["demo", "--rows", str(args.demo_rows)], cache, args.timeout)
        found = DEMO_FIRST.search(proc.stdout)
        if found is None:
            raise RuntimeError("gpuwrite demo printed no 'first write (cold)' line")
        note = found.group(2)
        compiled = re.search(r"compiled (\d+)", note)
        loaded = re.search(r"loaded (\d+)", note)
        row = {"first_write_s": float(found.group(1)), "compiled": int(compiled.group(1)) if compiled else 0,
               "loaded": int(loaded.group(1)) if loaded else 0, "note": note.strip()}
    row["process_s"] = wall
    row["process_cpu_s"] = proc.cpu_s  # type: ignore[attr-defined]
    row["compile_notice"] = "compiling kernels, first run only" in proc.stderr
    return row


def run_kind(kind: str, needs: str | None, cache: str | None, args: argparse.Namespace) -> dict[str, Any]:
    """One fresh-process 10-row write of an input kind (`kind_child`)."""
    command = [*PYTHON, __file__, "--kind", kind] + (["--needs", needs] if needs else [])
    wall, proc = _run(command, cache, args.timeout)
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["process_s"] = wall
    row["process_cpu_s"] = proc.cpu_s  # type: ignore[attr-defined]
    row["compile_notice"] = "compiling kernels, first run only" in proc.stderr
    return row


ONLY_KINDS: list[str] = []  # `--kinds`: only these


def cold_start_kinds() -> dict[str, str | None]:
    """The input kinds to time, each with the library it needs (None: pyarrow only), those whose library the
    children's interpreter has (asked once, in a process of its own when it is another venv's)."""
    from gpuwrite.tools.input_kinds import COLD_START

    wanted = {kind: needs for kind, (_write, needs) in COLD_START.items() if not ONLY_KINDS or kind in ONLY_KINDS}
    libraries = sorted({needs for needs in wanted.values() if needs})
    probe = "import importlib.util, sys; print(' '.join(n for n in sys.argv[1:] if importlib.util.find_spec(n)))"
    found = subprocess.run([*PYTHON, "-c", probe, *libraries], capture_output=True, text=True, check=True,
                           cwd=tempfile.gettempdir()).stdout.split()
    for kind, needs in wanted.items():
        if needs and needs not in found:
            print(f"{kind}: skipped ({needs} is not installed for {PYTHON[0]})", flush=True)
    return {kind: needs for kind, needs in wanted.items() if not needs or needs in found}


def run_kinds(case: str, cache_for: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Every input kind `args.repeats` times in one cache state; per kind the runs and their medians."""
    out: dict[str, Any] = {}
    for kind, needs in cold_start_kinds().items():
        runs = []
        for i in range(args.repeats):
            cache = cache_for(f"kind-{len(out)}-{i}")
            try:
                row = run_kind(kind, needs, cache, args)
            except Exception as exc:  # reported, not raised: the other kinds still run
                row = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            runs.append(row)
            print(f"{case:7} {kind:28} run {i + 1}: {_describe(row)}", flush=True)
        out[kind] = {"runs": runs, **_medians(runs)}
    return out


def run_case(case: str, args: argparse.Namespace, work: str) -> dict[str, Any]:
    """Every program `args.repeats` times in one cache state; the warm state is filled by `gpuwrite warmup`."""
    out: dict[str, Any] = {"case": case, "programs": {}}
    shared: str | None = None
    if case == "warm":
        shared = os.path.join(work, "warm-cache")
        seconds, proc = _run(_gpuwrite_cli() + ["warmup"], shared, args.timeout)
        out["warmup_s"] = seconds
        out["warmup_cpu_s"] = proc.cpu_s  # type: ignore[attr-defined]
        out["warmup_output"] = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
        print(f"warm: `gpuwrite warmup` into an empty cache took {seconds:.1f} s (CPU {proc.cpu_s:.1f} s)",  # type: ignore[attr-defined]
              flush=True)
    def cache_for(name: str) -> str | None:
        """The cache directory of one run: the shared one, or a new empty one when cold."""
        if case != "cold":
            return shared
        fresh = os.path.join(work, f"cold-{name}")
        os.makedirs(fresh, exist_ok=True)
        return fresh

    for program in args.programs:
        if program == "kinds":
            out["programs"]["kinds"] = run_kinds(case, cache_for, args)
            continue
        runs = []
        for i in range(args.repeats):
            cache = shared
            if case == "cold":
                cache = os.path.join(work, f"cold-{program}-{i}")
                os.makedirs(cache)
            try:
                row = run_program(program, cache, args)
            except Exception as exc:  # reported, not raised: the other cases still run
                row = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            finally:
                if case == "cold" and cache is not None:
                    shutil.rmtree(cache, ignore_errors=True)
            runs.append(row)
            print(f"{case:7} {program:7} run {i + 1}: {_describe(row)}", flush=True)
        out["programs"][program] = {"runs": runs, **_medians(runs)}
    return out


def _describe(row: dict[str, Any]) -> str:
    """One run as text."""
    if "error" in row:
        return f"ERROR {row['error']}"
    if "kind" in row:
        return (f"import gpuwrite + write {row['total_in_process_s']:.2f} s (CPU {row['write_cpu_s']:.2f} s),"
                f" process {row['process_s']:.2f} s, {row['compiled']} signatures compiled, {row['loaded']} loaded"
                + (f": {', '.join(row['signatures'][:4])}" if row["signatures"] else ""))
    first = row.get("write_s", row.get("first_write_s"))
    cpu = f" (CPU {row['write_cpu_s']:.2f} s)" if "write_cpu_s" in row else ""
    return (f"first write {first:.2f} s{cpu}, process {row['process_s']:.2f} s (CPU {row['process_cpu_s']:.2f} s)"
            + (f", import {row['import_s']:.2f} s" if "import_s" in row else "")
            + f", {row['compiled']} signatures compiled, {row['loaded']} loaded")


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the runs that worked."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {}
    first = [float(r.get("write_s", r.get("first_write_s", 0.0))) for r in ok]
    out = {"median_first_write_s": statistics.median(first),
           **({"median_import_and_write_s": statistics.median(r["total_in_process_s"] for r in ok)}
              if all("kind" in r for r in ok) else {}),
           "median_process_s": statistics.median(r["process_s"] for r in ok),
           "median_process_cpu_s": statistics.median(r["process_cpu_s"] for r in ok),
           "median_compiled": statistics.median(r["compiled"] for r in ok)}
    if all("write_cpu_s" in r for r in ok):
        out["median_first_write_cpu_s"] = statistics.median(r["write_cpu_s"] for r in ok)
    return out


def fresh_install(work: str, pip_args: list[str], timeout: float) -> dict[str, Any]:
    """Clone HEAD of this checkout into `work`, make a venv there and `pip install .` into it, timed; the venv's
    python runs the children afterwards (no warm-up command: what a new user gets)."""
    clone, venv = os.path.join(work, "clone"), os.path.join(work, "venv")
    subprocess.run(["git", "clone", "--quiet", "--no-local", str(REPO_ROOT), clone], check=True, timeout=timeout)
    commit = subprocess.run(["git", "-C", clone, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=timeout)
    python = os.path.join(venv, "bin", "python")
    start = time.perf_counter()
    done = subprocess.run([python, "-m", "pip", "install", "--quiet", *pip_args, "."], cwd=clone,
                          capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"pip install . failed: {(done.stderr or done.stdout).strip()[-600:]}")
    print(f"fresh install of {commit}: `pip install .` took {seconds:.1f} s", flush=True)
    return {"commit": commit, "install_s": seconds, "python": python}


def print_kinds_table(results: list[dict[str, Any]]) -> None:
    """Per cache state and input kind: seconds from `import gpuwrite` to the end of the write, and signatures
    compiled (medians)."""
    for case in results:
        kinds = case["programs"].get("kinds")
        if not kinds:
            continue
        print(f"\n{case['case']}: input kind                 import+write s   compiled")
        for kind, summary in kinds.items():
            if "median_import_and_write_s" in summary:
                print(f"  {kind:38} {summary['median_import_and_write_s']:8.2f}   {summary['median_compiled']:8g}")
            else:
                print(f"  {kind:38} ERROR {summary['runs'][0].get('error', '')[:80]}")


def main(argv: list[str] | None = None) -> int:
    """Run the cases, print a summary, save JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="warm,cold", help="comma-separated: warm, cold, default")
    parser.add_argument("--programs", default="write10,demo", help="comma-separated: write10, demo, kinds")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per program and case")
    parser.add_argument("--demo-rows", type=int, default=2_880_404, help="rows `gpuwrite demo` writes")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one process may take")
    parser.add_argument("--out", type=Path, default=None, help="save the results as JSON here")
    parser.add_argument("--kinds", default="", help="comma-separated: only these input kinds (`kinds` program)")
    parser.add_argument("--python", default=None, help="run the children with this interpreter (another venv)")
    parser.add_argument("--fresh-install", action="store_true",
                        help="clone HEAD into a temp folder, `pip install .` it into a new venv (timed), run with it")
    parser.add_argument("--pip-args", default="", help="extra `pip install` arguments for --fresh-install")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--kind", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--needs", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(write10_child()))
        return 0
    if args.kind:
        print(json.dumps(kind_child(args.kind, args.needs)))
        return 0
    if args.python and args.fresh_install:
        parser.error("--python and --fresh-install exclude each other")
    args.cases = [c for c in args.cases.split(",") if c]
    args.programs = [p for p in args.programs.split(",") if p]
    for case in args.cases:
        if case not in CASES:
            parser.error(f"unknown case {case!r} (known: {', '.join(CASES)})")
    for program in args.programs:
        if program not in PROGRAMS:
            parser.error(f"unknown program {program!r} (known: {', '.join(PROGRAMS)})")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    results = []
    install: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="cold_start_") as work:
        if args.fresh_install:
            install = fresh_install(work, args.pip_args.split(), args.timeout)
            args.python = install["python"]
        if args.python:
            PYTHON[:] = [args.python]
        ONLY_KINDS[:] = [k for k in args.kinds.split(",") if k]
        for case in args.cases:
            results.append(run_case(case, args, work))
    print()
    for case in results:
        for program, summary in case["programs"].items():
            if "median_first_write_s" in summary:
                cpu = summary.get("median_first_write_cpu_s")
                print(f"{case['case']:7} {program:7} median first write {summary['median_first_write_s']:6.2f} s"
                      + (f" (CPU {cpu:.2f} s)" if cpu is not None else "")
                      + f", process {summary['median_process_s']:6.2f} s (CPU {summary['median_process_cpu_s']:.2f} s),"
                      f" compiled {summary['median_compiled']:g}", flush=True)
    print_kinds_table(results)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"args": {k: v for k, v in vars(args).items() if k not in ("out", "child", "kind", "needs")},
                                        "load_average_1m": os.getloadavg()[0], "python": PYTHON[0],
                                        "fresh_install": install, "results": results}, indent=2) + "\n")
        print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
