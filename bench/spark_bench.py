"""End-to-end Spark writes of the store_sales-shaped table in local mode: gpuwrite.spark (through the drop-in,
`df.write.parquet` with `gpuwrite.spark.enable`), Spark's own writer with its default v1 pages and with
parquet.writer.version=v2, and the receive-only floor: a `mapInArrow` whose tasks take every Arrow batch and
yield nothing (the transfer alone, which any Python writer pays).

For each it reports the median and the best wall time (the best is the least disturbed run when other work
shares the machine) and the median CPU-seconds spent in the JVM and in the Python worker
processes (from /proc: the JVM's own time; the workers' and their reaped children's), and the driver's.
The DataFrame is built once and cached, so every writer reads the same cached rows; runs are interleaved in
a rotating order after a warm-up round (machines here are noisy). The warm-up round is the first write of each
writer in this fresh session (gpuwrite.spark's goes first: its Python workers load or compile kernels then); it
is reported on its own ("first write in the session", and its gpuwrite tasks) beside the later rounds' median.

    python bench/spark_bench.py --rows 1000000 --repeats 3

The floor is also timed over what gpuwrite's tasks are sent (decimals of up to 18 digits as their unscaled
longs, `gpuwrite.spark.unscaled`): gpuwrite.spark over that floor is the encode the transfer did not hide.

`--conf KEY=VALUE` sets a SparkConf for the whole session: `--conf spark.python.daemon.module=gpuwrite.spark.daemon`
times workers forked from a daemon that imported the writer (`gpuwrite/spark/daemon.py`).

`--also KEY=VALUE` adds a gpuwrite.spark run with that session conf set, timed in the same rounds (an A/B of a
gpuwrite switch), e.g. `--rows 2000 --repeats 21 --also spark.gpuwrite.python.quickAck=false`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*.parquet"))


def _proc_cpu(pid: int, children: bool) -> float:
    """CPU-seconds of a process (user + system), with its reaped children's when `children`."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    return ticks / TICK


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc's parent links)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cpu_snapshot(jvm_pid: int) -> dict[str, float]:
    """CPU-seconds so far: the JVM's own, the Python workers' (every process below the JVM), the driver's."""
    workers = sum(_proc_cpu(p, children=True) for p in _descendants(jvm_pid))
    return {"jvm": _proc_cpu(jvm_pid, children=False), "python_workers": workers,
            "driver": _proc_cpu(os.getpid(), children=False)}


UNSCALED_FLOOR = "floor, unscaled decimals"


def receive_only(df: Any) -> Callable[[Path], None]:
    """The floor: every task takes all its Arrow batches from the JVM and writes nothing."""

    def take(batches: Any) -> Any:
        for _ in batches:
            pass
        return iter(())

    def run(path: Path) -> None:
        df.mapInArrow(take, "n long").collect()

    return run


def _key_values(parser: argparse.ArgumentParser, flag: str, items: list[str]) -> list[tuple[str, str]]:
    """The KEY=VALUE items given to `flag`, stripped; a usage error for one without a key or an '='."""
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            parser.error(f"{flag} {item!r}: expected KEY=VALUE")
        pairs.append((key.strip(), value.strip()))
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results" / "spark_bench.json")
    parser.add_argument("--also", action="append", default=[], metavar="KEY=VALUE",
                        help="add a gpuwrite.spark run with this session conf set (repeatable: one run each), "
                             "e.g. spark.gpuwrite.python.quickAck=false, timed in the same rounds")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a SparkConf for the whole session (repeatable), e.g. "
                             "spark.python.daemon.module=gpuwrite.spark.daemon")
    args = parser.parse_args(argv)
    session_conf = dict(_key_values(parser, "--conf", args.conf))
    also = _key_values(parser, "--also", args.also)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import gpuwrite.spark
    import gpuwrite.spark.job
    from gpuwrite.spark.unscaled import send_unscaled, unscaled_columns
    from gpuwrite.tools.demo_data import store_sales_table

    builder = (SparkSession.builder.master(args.master).config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "6g")
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in session_conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm_pid = int(spark._jvm.java.lang.ProcessHandle.current().pid())
    table = store_sales_table(args.rows)
    df = spark.createDataFrame(table).repartition(args.partitions).cache()
    df.count()

    tails: list[Any] = []  # job.TaskSeconds of each gpuwrite.spark task (no --also conf)
    traced = [False]  # whether the write running now is gpuwrite.spark's own
    run_job = gpuwrite.spark.job.run_job

    def traced_run_job(*args: Any, **kwargs: Any) -> Any:
        result = run_job(*args, **kwargs)
        if traced[0]:
            tails.extend(result.task_seconds.values())
        return result

    gpuwrite.spark.job.run_job = traced_run_job

    def gpuwrite_with(conf: dict[str, str]) -> Callable[[Path], None]:
        def write(path: Path) -> None:
            for key, value in conf.items():
                spark.conf.set(key, value)
            gpuwrite.spark.enable(spark)
            traced[0] = not conf
            try:
                df.write.mode("overwrite").parquet(str(path))
            finally:
                traced[0] = False
                gpuwrite.spark.disable(spark)
                for key in conf:
                    spark.conf.unset(key)
        return write

    gpuwrite_write = gpuwrite_with({})
    variants: dict[str, Callable[[Path], None]] = {}
    for key, value in also:
        variants[f"gpuwrite {key.rsplit('.', 1)[-1]}={value}"] = gpuwrite_with({key: value})

    def spark_v1(path: Path) -> None:
        df.write.mode("overwrite").parquet(str(path))

    def spark_v2(path: Path) -> None:
        df.write.mode("overwrite").option("parquet.writer.version", "v2").parquet(str(path))

    writers: dict[str, Callable[[Path], None]] = {
        "gpuwrite.spark": gpuwrite_write, **variants, "spark v1 (default)": spark_v1, "spark v2": spark_v2,
        "receive-only floor": receive_only(df)}
    # the floor of what gpuwrite's tasks are sent: decimals as their unscaled longs (gpuwrite.spark.unscaled)
    sent = send_unscaled(df, unscaled_columns(df.schema, ()))
    if sent is not None:
        writers[UNSCALED_FLOOR] = receive_only(sent)
    times: dict[str, list[float]] = {name: [] for name in writers}
    first: dict[str, float] = {}  # round 0: each writer's first write in this session
    cpu: dict[str, list[dict[str, float]]] = {name: [] for name in writers}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        names = list(writers)
        for round_ in range(args.repeats + 1):
            order = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in order:
                out = Path(tmp) / name.replace(" ", "_").replace("(", "").replace(")", "")
                before = cpu_snapshot(jvm_pid)
                start = time.perf_counter()
                writers[name](out)
                elapsed = time.perf_counter() - start
                after = cpu_snapshot(jvm_pid)
                if round_ == 0:
                    first[name] = elapsed
                else:
                    times[name].append(elapsed)
                    cpu[name].append({k: after[k] - before[k] for k in after})
                sizes[name] = _size(out) if out.exists() else 0
                shutil.rmtree(out, ignore_errors=True)
    med = {name: statistics.median(t) for name, t in times.items()}
    best = {name: min(t) for name, t in times.items()}  # the least disturbed run, on a shared machine
    first_tasks = tails[:len(tails) // (args.repeats + 1)]  # the warm-up round's gpuwrite tasks: a fresh session's
    timed_tails = tails[len(tails) // (args.repeats + 1):]  # the warm-up round's tasks left out
    tail = statistics.median(t.tail for t in timed_tails) if timed_tails else 0.0
    receive = statistics.median(t.receive for t in timed_tails) if timed_tails else 0.0
    med_cpu = {name: {k: statistics.median(c[k] for c in runs) for k in runs[0]} for name, runs in cpu.items()}
    floor, best_floor = med["receive-only floor"], best["receive-only floor"]
    print(f"store_sales {args.rows:,} rows x {table.num_columns} columns, {args.partitions} tasks, {args.master}, "
          f"median of {args.repeats}" + "".join(f", {k}={v}" for k, v in session_conf.items()))
    total_cpu = {name: sum(c.values()) for name, c in med_cpu.items()}
    print(f"  {'writer':24s} {'wall s':>8s} {'/floor':>7s} {'best s':>7s} {'/floor':>7s} {'JVM cpu-s':>10s} "
          f"{'Python cpu-s':>13s} {'driver cpu-s':>13s} {'cpu /floor':>11s} {'MB':>8s}")
    for name in writers:
        c = med_cpu[name]
        print(f"  {name:24s} {med[name]:8.3f} {med[name] / floor:7.2f} {best[name]:7.2f} {best[name] / best_floor:7.2f} "
              f"{c['jvm']:10.2f} {c['python_workers']:13.2f} {c['driver']:13.2f} "
              f"{total_cpu[name] / total_cpu['receive-only floor']:11.2f} {sizes[name] / 1e6:8.1f}")
    print(f"  (cpu /floor: all CPU-seconds of the run over the floor's; where the cores are busy, as when other work "
          f"shares them, wall time follows it: the encode hides behind the transfer only on idle cores; "
          f"{os.cpu_count()} cores here, load average {os.getloadavg()[0]:.1f})")
    if UNSCALED_FLOOR in med:
        print(f"  gpuwrite.spark over the floor of what its tasks are sent ({UNSCALED_FLOOR}): "
              f"{med['gpuwrite.spark'] / med[UNSCALED_FLOOR]:.2f}x (the encode the transfer did not hide)")
    print(f"  gpuwrite tasks (median): {receive:.2f} s receiving batches while encoding, then {tail:.2f} s "
          "encoding after the last batch")
    # whole tasks as the worker timed them: a worker's first imports the writer and loads its kernels
    first_task = max((t.total for t in first_tasks), default=0.0)
    later_task = statistics.median(t.total for t in timed_tails) if timed_tails else 0.0
    print("  first write in the fresh session (the warm-up round) against the later rounds' median:")
    for name in writers:
        print(f"    {name:24s} first {first[name]:8.3f} s, later {med[name]:8.3f} s, "
              f"first costs {first[name] - med[name]:+.3f} s")
    print(f"  gpuwrite's slowest task of its first write {first_task:.2f} s against a later task's median "
          f"{later_task:.2f} s: a worker's first task adds {first_task - later_task:+.2f} s (it imports the writer "
          "and loads its kernels; tasks timed whole in the worker, from the call of its function to its stats)")
    report = {"best_seconds": best, "rows": args.rows, "task_receive_seconds": receive, "task_tail_seconds": tail, "partitions": args.partitions, "master": args.master, "median_seconds": med,
              "median_cpu_seconds": med_cpu, "bytes": sizes, "vs_floor": {n: med[n] / floor for n in writers},
              "runs": times, "cpu_runs": cpu,
              "cpu_vs_floor": {n: total_cpu[n] / total_cpu["receive-only floor"] for n in writers},
              "load_average": os.getloadavg()[0],
              "first_write_seconds": first, "first_write_extra_seconds": {n: first[n] - med[n] for n in writers},
              "first_task_seconds": first_task, "later_task_median_seconds": later_task,
              "first_tasks": [t._asdict() for t in first_tasks], "session_conf": session_conf}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
