"""Where a gpuwrite write's CPU goes: thread CPU time by kernel and by Python step, one of bench/tables.py's tables.

Every function of gpuwrite's modules (kernels/ excepted) and every kernel they call is wrapped while the
writes run, each call charged its own thread's CPU time (`time.thread_time`) less that of the wrapped calls
inside it (self time): the page encoders run on worker threads, so a wall-clock profile of the calling
thread would miss them. A kernel called from another kernel is part of its caller. The wrapping costs about a
microsecond a call; the table's totals are per write, averaged over --repeats writes after one untimed.

    .venv/bin/python bench/step_profile.py strings                    # 1,000,000 rows, 5 writes
    .venv/bin/python bench/step_profile.py nested --scale 0.2 --repeats 9 --top 20
    .venv/bin/python bench/step_profile.py timeseries --threads 8         # and per thread: the serial parts
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import inspect
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent


def _tables() -> ModuleType:
    """bench/tables.py as a module (bench/ is not a package)."""
    if "tables" in sys.modules:
        return sys.modules["tables"]
    spec = importlib.util.spec_from_file_location("tables", BENCH_DIR / "tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tables"] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Profile:
    """Self thread-CPU seconds and calls by label ("K module.kernel" for kernels, "module.function" else)."""

    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # with `threads`: every call as (thread name, label, wall start, wall end, self thread-CPU), and each
    # write's wall start and end, for the per-thread phases (`thread_report`)
    threads: bool = False
    events: list[tuple[str, str, float, float, float]] = field(default_factory=list)
    writes: list[tuple[float, float]] = field(default_factory=list)

    def clear(self) -> None:
        """Forget what was recorded (the untimed first write's)."""
        self.seconds.clear()
        self.calls.clear()
        self.events.clear()
        self.writes.clear()


def _wrapped(fn: Callable[..., Any], label: str, profile: Profile, local: threading.local) -> Callable[..., Any]:
    """`fn`, charging each call its thread CPU time less its wrapped callees' to `label`."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        stack = getattr(local, "stack", None)
        if stack is None:
            stack = local.stack = []
        stack.append(0.0)  # the wrapped callees' time
        began = time.perf_counter() if profile.threads else 0.0
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            total = time.thread_time() - start
            inner = stack.pop()
            profile.seconds[label] += total - inner
            profile.calls[label] += 1
            if profile.threads:
                profile.events.append((threading.current_thread().name, label, began, time.perf_counter(),
                                       total - inner))
            if stack:
                stack[-1] += total
    return call


@contextmanager
def profiled(threads: bool = False) -> Iterator[Profile]:
    """While inside, gpuwrite's functions and the kernels they call record into the Profile yielded (with
    `threads`, every call's thread and wall times too); every name is put back on the way out. Modules imported
    later are not covered: write once before entering."""
    from numba.core.registry import CPUDispatcher

    profile, local = Profile(threads=threads), threading.local()
    modules = [m for n, m in list(sys.modules.items()) if n.startswith("gpuwrite") and m is not None]
    wrapper: dict[int, Callable[..., Any]] = {}
    undo: list[tuple[Any, str, Any]] = []
    for module in modules:
        in_kernels = module.__name__.startswith("gpuwrite.kernels")
        short = module.__name__.removeprefix("gpuwrite.")
        for name, value in list(vars(module).items()):
            if isinstance(value, CPUDispatcher):
                if id(value) not in wrapper:
                    where = value.py_func.__module__.removeprefix("gpuwrite.kernels.")
                    wrapper[id(value)] = _wrapped(value, f"K {where}.{name}", profile, local)
            elif in_kernels:
                continue
            elif inspect.isfunction(value) and value.__module__ == module.__name__:
                wrapper.setdefault(id(value), _wrapped(value, f"{short}.{name}", profile, local))
            elif inspect.isclass(value) and value.__module__ == module.__name__:
                for attr, method in list(vars(value).items()):
                    if inspect.isfunction(method) and attr not in ("__repr__", "__eq__", "__hash__"):
                        try:
                            setattr(value, attr, _wrapped(method, f"{short}.{value.__name__}.{attr}", profile, local))
                        except (AttributeError, TypeError):
                            continue
                        undo.append((value, attr, method))
    for module in modules:
        if module.__name__.startswith("gpuwrite.kernels"):
            continue  # compiled callers keep their kernels
        for name, value in list(vars(module).items()):
            if id(value) in wrapper:
                setattr(module, name, wrapper[id(value)])
                undo.append((module, name, value))
    try:
        yield profile
    finally:
        for owner, name, value in reversed(undo):
            setattr(owner, name, value)


def run(table_name: str, rows: int, repeats: int, codec: str = "snappy",
        threads: bool = False) -> tuple[Profile, list[float], list[float]]:
    """Write the table repeats + 1 times under `profiled` (the first untimed): the profile of the timed writes,
    and each one's process CPU and wall seconds."""
    import gpuwrite

    table = _tables().BUILDERS[table_name](rows, 1)
    cpu, wall = [], []
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/out.parquet"
        gpuwrite.write_table(table, path, compression=codec)  # every module and kernel loaded before wrapping
        with profiled(threads) as profile:
            for r in range(repeats + 1):
                if r == 1:
                    profile.clear()
                gc.collect()
                start, start_cpu = time.perf_counter(), time.process_time()
                gpuwrite.write_table(table, path, compression=codec)
                if r:
                    wall.append(time.perf_counter() - start)
                    cpu.append(time.process_time() - start_cpu)
                    profile.writes.append((start, start + wall[-1]))
    return profile, cpu, wall


def report(profile: Profile, repeats: int, top: int) -> str:
    """The `top` labels by self thread-CPU per write: ms, calls per write, label."""
    lines = [f"{'ms/write':>9} {'calls':>7}  step (K: kernel), self thread-CPU",
             f"{sum(profile.seconds.values()) / repeats * 1000:9.1f} {'':>7}  (all steps)"]
    for label, seconds in sorted(profile.seconds.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{seconds / repeats * 1000:9.2f} {profile.calls[label] // repeats:7d}  {label}")
    return "\n".join(lines)


def thread_cpu(table_name: str, rows: int, repeats: int, codec: str = "snappy") -> dict[str, list[float]]:
    """Each thread's CPU seconds in each of `repeats` writes (after one untimed) to a fresh path, unprofiled: read
    from the threads' own CPU clocks around each write (the pool's threads stay parked between writes)."""
    import gpuwrite

    table = _tables().BUILDERS[table_name](rows, 1)
    out: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/out.parquet"
        gpuwrite.write_table(table, path, compression=codec)
        for _ in range(repeats):
            Path(path).unlink()  # a fresh path, as write_bench's: replacing the last file frees its pages in the write
            gc.collect()
            before = {t.name: _cpu_clock(t) for t in threading.enumerate()}
            gpuwrite.write_table(table, path, compression=codec)
            for name, (clock, start) in before.items():
                if clock is not None and (now := _clock_now(clock)) is not None:
                    out[name].append(now - start)
    return out


def _cpu_clock(thread: threading.Thread) -> tuple[int | None, float]:
    """A live thread's CPU clock and its reading now; (None, 0) for a thread gone (or going) since it was listed
    (another library's helper thread ending: its clock can no longer be read).

    The clock is made from the thread's kernel id as glibc makes it (MAKE_THREAD_CPUCLOCK: the complemented id
    shifted by 3, or the per-thread and scheduler-clock bits), not with `time.pthread_getcpuclockid`: that reads
    the thread's pthread descriptor, and for a thread that ended after `threading.enumerate` listed it, the
    descriptor may be freed (CI: a segmentation fault). A clock of an ended thread fails in the kernel instead
    (EINVAL: `_clock_now` gives None)."""
    tid = thread.native_id
    if tid is None:
        return None, 0.0
    clock = (~tid << 3) | 6
    start = _clock_now(clock)
    return (clock, start) if start is not None else (None, 0.0)


def _clock_now(clock: int) -> float | None:
    """`clock`'s seconds now; None when its thread has ended."""
    try:
        return time.clock_gettime(clock)
    except OSError:
        return None


def thread_cpu_report(cpu: dict[str, list[float]]) -> str:
    """Median CPU ms per write of each thread that ran, busiest first."""
    medians = {name: sorted(v)[len(v) // 2] for name, v in cpu.items() if max(v) > 1e-4}
    return "unprofiled, median thread CPU ms/write: " + ", ".join(
        f"{name} {sec * 1000:.1f}" for name, sec in sorted(medians.items(), key=lambda kv: -kv[1]))


MAIN = "MainThread"
POOL_WORK = ("backends.workpool.WorkPool.submit", "backends.workpool.WorkPool.submit_later")


def thread_phases(profile: Profile) -> tuple[dict[str, dict[str, dict[str, float]]], list[float]]:
    """Self thread-CPU seconds summed over the writes, by thread, phase and label; and each write's busiest
    worker's CPU. The main thread's phases: "before" (calls ending before the write's first job reaches the
    pool: serial, nothing else runs), "after" (calls ending after the other threads' last call: serial too)
    and "during"; other threads' all "during". A call's self time is charged to the phase it ends in."""
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(float)))
    busiest = []
    for start, end in profile.writes:
        events = [e for e in profile.events if start <= e[2] and e[3] <= end]
        first = min((e[2] for e in events if e[0] == MAIN and e[1] in POOL_WORK), default=end)
        last = max((e[3] for e in events if e[0] != MAIN), default=start)
        workers: dict[str, float] = defaultdict(float)
        for thread, label, began, ended, seconds in events:
            if thread != MAIN:
                phase = "during"
                workers[thread] += seconds
            else:
                phase = "before" if ended <= first else "after" if began >= last else "during"
            out[thread][phase][label] += seconds
        busiest.append(max(workers.values(), default=0.0))
    return out, busiest


def thread_report(profile: Profile, repeats: int, top: int) -> str:
    """Per thread and phase (`thread_phases`): ms per write and its costliest labels; and the critical path
    estimate: the main thread's serial phases plus each write's busiest worker's CPU (averaged)."""
    phases, busiest = thread_phases(profile)
    lines = [f"{'ms/write':>9}  thread / phase, self thread-CPU (top {top} labels each)"]
    for thread in sorted(phases, key=lambda t: (t != MAIN, t)):
        for phase in ("before", "during", "after"):
            labels = phases[thread].get(phase)
            if not labels:
                continue
            lines.append(f"{sum(labels.values()) / repeats * 1000:9.1f}  {thread} {phase}")
            for label, seconds in sorted(labels.items(), key=lambda kv: -kv[1])[:top]:
                lines.append(f"{seconds / repeats * 1000:13.2f}    {label}")
    serial = sum(sum(phases[MAIN].get(p, {}).values()) for p in ("before", "after")) / repeats
    worker = sum(busiest) / max(1, len(busiest))
    lines.append(f"critical path ~ {(serial + worker) * 1000:.1f} ms/write: main serial {serial * 1000:.1f} "
                 f"+ busiest worker {worker * 1000:.1f} (each write's, averaged; with the profiler's cost)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Profile a table's writes and print the steps' thread CPU."""
    tables = _tables()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", choices=sorted(tables.BUILDERS))
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the table's rows at scale 1")
    parser.add_argument("--repeats", type=int, default=5, help="profiled writes after one untimed")
    parser.add_argument("--top", type=int, default=30, help="steps listed")
    parser.add_argument("--codec", default="snappy")
    parser.add_argument("--threads", type=int, default=0, metavar="TOP",
                        help="also each thread's CPU by phase (main: before the first job reaches the pool, "
                             "during, after the last job), with its TOP labels")
    args = parser.parse_args(argv)
    rows = max(1, int(tables.ROWS[args.table] * args.scale))
    profile, cpu, wall = run(args.table, rows, args.repeats, args.codec, threads=args.threads > 0)
    cpu.sort()
    wall.sort()
    print(f"{args.table}: {rows:,} rows, {args.repeats} profiled writes: process CPU median "
          f"{cpu[len(cpu) // 2]:.3f} s, wall median {wall[len(wall) // 2]:.3f} s (with the profiler's cost)")
    print(report(profile, args.repeats, args.top))
    if args.threads:
        print(thread_report(profile, args.repeats, args.threads))
        print(thread_cpu_report(thread_cpu(args.table, rows, args.repeats, args.codec)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
