"""The cyclic garbage collector in a PySpark worker that has run a gpuwrite task.

PySpark's daemon forks the Python workers and, when it reuses them (spark.python.worker.reuse, the default),
runs a full `gc.collect()` after every task. A full collection visits every object the collector tracks: in
a worker that has loaded gpuwrite, numba's compiled kernels and pyarrow, about 170,000 of them, ~90 ms of CPU
after each task, more than encoding a 50,000-row store_sales task costs, paid while the executor's cores are
busy building the next tasks' Arrow batches. So the first gpuwrite task in such a worker collects once, then
freezes what the process holds (`gc.freeze`: modules, loaded kernels, caches), and the daemon's later
collections visit only what later tasks made. `spark.gpuwrite.python.gcFreeze=false` (read on the driver:
`routing.freezes_worker_objects`) leaves the collector alone. Frozen objects are still freed by reference
counting; only a reference cycle among them would now outlive its use, and what a worker holds at the end of
its first task is, but for the task's own acyclic results, what it keeps for its life.

SPEC: pyspark/daemon.py (the reused worker's loop calls `gc.collect()` after each task).
"""

from __future__ import annotations

import gc
import os
import sys

GPUWRITE_DAEMON = "gpuwrite.spark.daemon"  # spark/daemon.py, run as `python -m` by PySpark
DAEMONS = ("pyspark.daemon", GPUWRITE_DAEMON)  # the modules whose workers the daemon forks
_frozen_in: int | None = None  # the process (pid) that froze its objects; a forked child freezes its own


def _main_module() -> str | None:
    """The name this process's main module was run as (`python -m NAME`), if any."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", None)


def in_pyspark_daemon_worker() -> bool:
    """Whether this process is a Python worker forked by PySpark's daemon, or by gpuwrite's, which runs it (the
    daemon collects after each task)."""
    return _main_module() in DAEMONS


def in_pyspark_worker() -> bool:
    """Whether this process is a PySpark Python worker: forked by the daemon, or started on its own
    (spark.python.use.daemon=false runs `python -m pyspark.worker`)."""
    return _main_module() in (*DAEMONS, "pyspark.worker")


def settle_worker(enabled: bool = True) -> bool:
    """After a task: in a daemon-forked worker, the first time, collect and freeze the process's objects; whether
    this call froze them."""
    global _frozen_in
    if not enabled or _frozen_in == os.getpid() or not in_pyspark_daemon_worker():
        return False
    gc.collect()  # what is garbage now is collected, not frozen
    gc.freeze()
    _frozen_in = os.getpid()
    return True
