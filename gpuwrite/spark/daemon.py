"""PySpark's Python daemon with gpuwrite's writer imported before it forks the workers:

    spark.python.daemon.module=gpuwrite.spark.daemon

PySpark starts one daemon per executor at its first Python task and forks a worker from it for each task it
runs at once (pyspark/daemon.py). Each worker's first gpuwrite task would import numba and gpuwrite's kernel
modules itself, about half a second per worker, every worker of a new executor at the same moment. With this
daemon the import happens once, in the daemon, and the forked workers share it. A daemon that cannot import the
writer says so on stderr and serves as PySpark's own: other Python tasks run, and a gpuwrite task raises the
import's error itself. The setting is a SparkConf read when the SparkContext starts (spark-defaults.conf,
`--conf`, or the session builder), and every executor's Python must then have gpuwrite installed.
SPEC: PythonWorkerFactory runs `python -m <spark.python.daemon.module>` (default pyspark.daemon), which must
print its port on stdout first: nothing here writes to stdout.
"""

from __future__ import annotations

import gc
import sys

from pyspark import daemon

from .task import import_writer
from .worker_gc import GPUWRITE_DAEMON


def main() -> None:
    """Import the writer, then run PySpark's daemon (its loop forks the workers)."""
    problem = import_writer()
    if problem is not None:
        print(f"{GPUWRITE_DAEMON}: gpuwrite's writer was not imported ahead ({problem}); each task imports it itself",
              file=sys.stderr, flush=True)
    gc.collect()
    gc.freeze()  # what the workers inherit: their collections skip it, and their pages stay shared (copy-on-write)
    daemon.manager()


if __name__ == "__main__":
    main()
