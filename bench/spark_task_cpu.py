"""CPU of one gpuwrite.spark task outside Spark, beside a receive-only task in the same run.

Runs `gpuwrite.spark.task.run_task` (the executor side of a write: a receiving thread, an encoding thread,
the commit) on store_sales rows sent as Spark sends them to `mapInArrow` (an Arrow IPC stream of 10,000-row
batches read from a Python file object, so every batch lands in fresh buffers), with a stand-in task context
of one core (spark.task.cpus=1). The receive-only task reads the same stream and keeps nothing. On a 2-core
machine the JVM keeps busy, a Spark task's Python CPU adds to the write's wall time, so this is the figure to cut;
bench/spark_bench.py measures the whole write inside Spark.

    python bench/spark_task_cpu.py --rows 50000 --repeats 20
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

REPO_ROOT = Path(__file__).resolve().parent.parent
BATCH_ROWS = 10_000  # spark.sql.execution.arrow.maxRecordsPerBatch's default


class _Context:
    """What run_task reads of PySpark's TaskContext."""

    def partitionId(self) -> int:  # noqa: N802 - PySpark's name
        return 0

    def attemptNumber(self) -> int:  # noqa: N802 - PySpark's name
        return 0

    def resources(self) -> dict[str, object]:
        return {}

    def cpus(self) -> int:
        return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000, help="rows of the task")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)

    from gpuwrite.spark.task import TaskPlan, run_task
    from gpuwrite.tools.demo_data import store_sales_table

    table = store_sales_table(args.rows)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=BATCH_ROWS):
            writer.write_batch(batch)
    stream = sink.getvalue()

    def batches() -> Iterator[pa.RecordBatch]:
        yield from pa.ipc.open_stream(io.BufferedReader(io.BytesIO(stream), 65536))

    def receive_only(_: Path) -> None:
        for _batch in batches():
            pass

    def gpuwrite_task(root: Path) -> None:
        plan = TaskPlan(root=str(root), job="00000000-0000-0000-0000-000000000000", filesystem=None,
                        conf={"spark.sql.session.timeZone": "UTC"}, partition_by=(), bucket_by=None,
                        max_records_per_file=0, device="cpu", arrow_schema=table.schema)
        list(run_task(plan, batches(), _Context()))

    runs: dict[str, list[float]] = {"receive-only": [], "gpuwrite.spark task": []}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.repeats + 1):  # round 0 warms up (kernels loaded, imports done)
            for name, task in (("receive-only", receive_only), ("gpuwrite.spark task", gpuwrite_task)):
                root = Path(tmp) / f"{name.split()[0]}-{round_}"
                start = time.process_time()
                task(root)
                if round_:
                    runs[name].append(time.process_time() - start)
    med = {name: statistics.median(v) for name, v in runs.items()}
    extra = med["gpuwrite.spark task"] - med["receive-only"]
    print(f"store_sales {args.rows:,} rows in {BATCH_ROWS:,}-row batches, one task, median of {args.repeats} "
          "(process CPU-seconds)")
    for name, seconds in med.items():
        print(f"  {name:20s} {seconds * 1000:8.1f} ms")
    print(f"  gpuwrite over receive-only: {extra * 1000:.1f} ms, {extra / args.rows * 1e6:.2f} us a row")
    return 0


if __name__ == "__main__":
    sys.exit(main())
