"""A Spark task's writer in a fresh worker: the writer's imports overlap the first batches, nothing a flat task
does not use is imported, and the task's whole time is reported."""

from __future__ import annotations

import json
import subprocess
import sys

from gpuwrite.spark.task import WRITER_MODULE, import_writer_behind


def test_the_writer_is_imported_behind_only_in_a_workers_first_task():
    import gpuwrite.dataset.write  # noqa: F401  (this process has it: nothing to start)

    assert WRITER_MODULE == gpuwrite.dataset.write.__name__
    assert import_writer_behind() is None


def test_a_fresh_workers_first_task_imports_only_what_it_uses(tmp_path):
    """A fresh process (as a PySpark worker: pyarrow loaded, not pandas) runs one unpartitioned task: the
    writer is imported on a helper thread, neither pandas nor pyarrow.compute is loaded, and the stats row
    reports the whole task (at least its receive plus its tail)."""
    code = f"""
import json, sys, time
import numpy as np, pyarrow as pa
from gpuwrite.spark.task import TaskPlan, run_task, WRITER_MODULE
class Context:
    def partitionId(self): return 0
    def attemptNumber(self): return 0
    def resources(self): return {{}}
    def cpus(self): return 1
n = 1000
table = pa.table({{"i": pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(np.arange(n, dtype=np.int64))])}})
assert WRITER_MODULE not in sys.modules
def batches():
    for b in table.to_batches(max_chunksize=250):
        time.sleep(0.01)  # the JVM's pace
        yield b
plan = TaskPlan(root={str(tmp_path / "t")!r}, job="job", filesystem=None, conf={{}}, partition_by=(),
                bucket_by=None, max_records_per_file=0, device="cpu", quick_acks=False)
import threading
started = []
orig = threading.Thread.start
def start(self):
    started.append(self.name)
    orig(self)
threading.Thread.start = start
stats = pa.Table.from_batches(list(run_task(plan, batches(), Context()))).to_pylist()
print(json.dumps({{"stats": stats, "threads": started,
                  "loaded": [m for m in ("pandas", "pyarrow.compute") if m in sys.modules]}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["loaded"] == []
    assert got["threads"][0] == "gpuwrite-import"
    (row,) = got["stats"]
    assert row["rows"] == 1000 and row["attempt"] == 0
    assert row["task_s"] >= row["receive_s"] + row["tail_s"] >= 0.04  # four batches, 10 ms apart
