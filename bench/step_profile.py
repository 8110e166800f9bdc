"""Where a gpuwrite write's CPU goes: thread CPU per step (every compiled kernel the CPU path calls, the codec,
the Python steps of encoding, staging and writing), summed over the writer's threads, and the main thread's
share.

Each step is wrapped where the write path looks it up (module attributes and methods, numba dispatchers found
in the path's modules, cramjam's codec calls) and charged its thread CPU (`time.thread_time`) inclusively:
a step's time includes the steps it calls (`ChunkEncoder.encode_page` holds its kernels and the codec). The
bench tables (bench/tables.py) are written `--repeats` times after one warm-up write, each to a fresh path;
the report gives the median process CPU and wall per write, then each step's CPU per write, calls per write
and the main thread's wall time in it. Thread CPU is the steady measure on a shared machine: wall time in
the steps depends on what else runs.

    .venv/bin/python bench/step_profile.py --tables wide,timeseries
    .venv/bin/python bench/step_profile.py --tables store_sales --scale 0.2 --top 25
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib
import importlib.util
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent

# Python steps of the CPU write path: (module, attribute or Class.method).
STEPS = [
    ("gpuwrite.pipeline.writer", "FileWriter.write"),
    ("gpuwrite.pipeline.writer", "FileWriter.close"),
    ("gpuwrite.pipeline.writer", "check_batch"),
    ("gpuwrite.pipeline.window", "RowWindow.extend"),
    ("gpuwrite.pipeline.window", "_convert_columns"),
    ("gpuwrite.backends.host_steps", "HostSteps.plan"),
    ("gpuwrite.backends.host_steps", "HostSteps.replay"),
    ("gpuwrite.backends.host_steps", "HostSteps._stage_upto"),
    ("gpuwrite.backends.cpu", "CpuEncoders._encode_columns"),
    ("gpuwrite.backends.cpu", "stamp_headers"),
    ("gpuwrite.encode.chunk", "ChunkEncoder.encode_page"),
    ("gpuwrite.encode.chunk", "ChunkEncoder.finish"),
    ("gpuwrite.encode.chunk", "ChunkEncoder._int_page"),
    ("gpuwrite.encode.chunk", "ChunkEncoder._float_page"),
    ("gpuwrite.encode.chunk", "ChunkEncoder._values"),
    ("gpuwrite.encode.chunk", "encode_levels"),
    ("gpuwrite.encode.chunk", "page_sections"),
    ("gpuwrite.encode.chunk", "encoded_page"),
    ("gpuwrite.encode.chunk", "page_stats"),
    ("gpuwrite.encode.chunk", "signed_crc32"),
    ("gpuwrite.encode.dictionary", "Dictionary.insert"),
    ("gpuwrite.assemble.file", "FileAssembler._chunk_bytes"),
    ("gpuwrite.assemble.file", "FileAssembler._described"),
    ("gpuwrite.assemble.file", "FileAssembler.finish"),
    ("gpuwrite.assemble.sink", "FileSink.write_parts"),
    ("gpuwrite.assemble.sink", "FileSink.commit"),
]
# Modules whose compiled kernels (numba dispatchers bound at module level) are charged as steps of their own.
KERNEL_MODULES = ["gpuwrite.encode.chunk", "gpuwrite.encode.stats", "gpuwrite.encode.dictionary",
                  "gpuwrite.encode.rules", "gpuwrite.encode.bloom", "gpuwrite.pipeline.columns",
                  "gpuwrite.pipeline.leafdata", "gpuwrite.pipeline.levels", "gpuwrite.pipeline.validate",
                  "gpuwrite.pipeline.plan", "gpuwrite.format.page_header"]
CODEC_CALLS = [("snappy", "compress_raw"), ("snappy", "compress_raw_into"), ("zstd", "compress"),
               ("lz4", "compress_block"), ("lz4", "compress_block_into"), ("gzip", "compress")]


class Steps:
    """Per step: thread CPU (ns), calls, and the main thread's wall time (ns) in it."""

    def __init__(self) -> None:
        self.cpu: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        self.main_wall: collections.Counter[str] = collections.Counter()
        self._main = threading.main_thread()

    def wrap(self, fn: Callable[..., Any], label: str) -> Callable[..., Any]:
        """`fn`, charging each call's thread CPU to `label`."""

        @functools.wraps(fn)
        def charged(*args: Any, **kwargs: Any) -> Any:
            cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu[label] += time.thread_time_ns() - cpu
                self.calls[label] += 1
                if threading.current_thread() is self._main:
                    self.main_wall[label] += time.perf_counter_ns() - wall

        return charged

    def clear(self) -> None:
        """Forget what was charged (after the warm-up write)."""
        self.cpu.clear()
        self.calls.clear()
        self.main_wall.clear()


Wrapped = list[tuple[Any, str, Any]]  # (owner, attribute, what it held before)


def install(steps: Steps) -> Wrapped:
    """Wrap every step, kernel and codec call found; what was replaced (for `uninstall`)."""
    import cramjam
    from numba.core.registry import CPUDispatcher

    done: Wrapped = []

    def replace(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)
        done.append((owner, name, original))
        setattr(owner, name, steps.wrap(original, label))

    for module_name, attr in STEPS:
        owner: Any = importlib.import_module(module_name)
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is None or not hasattr(owner, name):
            continue  # a step this version of the write path does not have
        replace(owner, name, f"{module_name.rsplit('.', 1)[-1]}.{attr}")
    for module_name in KERNEL_MODULES:
        module = importlib.import_module(module_name)
        for name, value in list(vars(module).items()):
            if isinstance(value, CPUDispatcher):
                replace(module, name, f"kernel {value.py_func.__module__.rsplit('.', 1)[-1]}.{name}")
    for codec, name in CODEC_CALLS:
        module = getattr(cramjam, codec, None)
        if module is not None and hasattr(module, name):
            replace(module, name, f"codec {codec}.{name}")
    return done


def uninstall(done: Wrapped) -> None:
    """Put back what `install` replaced."""
    for owner, name, original in reversed(done):
        setattr(owner, name, original)


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


def profile(table: Any, repeats: int, codec: str, folder: str, steps: Steps) -> dict[str, Any]:
    """Write `table` once, then `repeats` times with the steps charged; medians per write and each step's
    CPU, calls and main-thread wall per write."""
    import gpuwrite

    path = os.path.join(folder, "step_profile.parquet")
    gpuwrite.write_table(table, path, compression=codec)
    os.remove(path)
    steps.clear()
    cpu, wall, main = [], [], []
    for _ in range(repeats):
        start, start_cpu, start_main = time.perf_counter(), time.process_time(), time.thread_time()
        gpuwrite.write_table(table, path, compression=codec)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        main.append(time.thread_time() - start_main)
        os.remove(path)
    per = [{"step": label, "cpu_ms": steps.cpu[label] / 1e6 / repeats, "calls": steps.calls[label] / repeats,
            "main_wall_ms": steps.main_wall[label] / 1e6 / repeats} for label in steps.cpu]
    per.sort(key=lambda s: -s["cpu_ms"])
    return {"process_cpu_ms": statistics.median(cpu) * 1e3, "wall_ms": statistics.median(wall) * 1e3,
            "main_thread_cpu_ms": statistics.median(main) * 1e3, "steps": per}


def render(name: str, rows: int, result: dict[str, Any], top: int) -> str:
    """The profile as text: totals, then the `top` costliest steps."""
    lines = [f"{name}: {rows:,} rows; per write (medians): process CPU {result['process_cpu_ms']:.1f} ms, "
             f"wall {result['wall_ms']:.1f} ms, main thread CPU {result['main_thread_cpu_ms']:.1f} ms",
             f"  {'step (inclusive)':52s} {'CPU ms':>8s} {'calls':>8s} {'main wall ms':>13s}"]
    for s in result["steps"][:top]:
        lines.append(f"  {s['step']:52s} {s['cpu_ms']:8.1f} {s['calls']:8.0f} {s['main_wall_ms']:13.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Thread CPU per step of gpuwrite writes of the bench tables.")
    parser.add_argument("--tables", default="wide,timeseries", help="comma-separated tables of bench/tables.py")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of each table's rows at scale 1")
    parser.add_argument("--rows", type=int, default=None, help="rows of every table (overrides --scale)")
    parser.add_argument("--repeats", type=int, default=5, help="profiled writes after one warm-up write")
    parser.add_argument("--codec", default="snappy")
    parser.add_argument("--top", type=int, default=40, help="steps shown, costliest first")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    tables = _tables()
    steps = Steps()
    wrapped = install(steps)
    try:
        with tempfile.TemporaryDirectory(prefix="step_profile_") as folder:
            for name in args.tables.split(","):
                rows = args.rows or max(1, round(tables.ROWS[name] * args.scale))
                table = tables.BUILDERS[name](rows, args.seed)
                print(render(name, rows, profile(table, args.repeats, args.codec, folder, steps), args.top))
    finally:
        uninstall(wrapped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
