"""gpuwrite.spark.daemon: PySpark's daemon with the writer imported before it forks workers.

The Spark test runs its own driver in a subprocess: the daemon module is a SparkConf read when a SparkContext
starts, and the tests' shared session runs PySpark's own daemon."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DRIVER = r"""
import json, os, sys
os.environ["PYSPARK_PYTHON"] = sys.executable
import pyarrow as pa
from pyspark.sql import SparkSession
import gpuwrite.spark
from gpuwrite.spark.rows_batch import rows_batch
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.python.daemon.module", "gpuwrite.spark.daemon").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")

def probe(batches):
    from gpuwrite.spark import worker_gc
    from gpuwrite.spark.task import WRITER_MODULE
    seen = (WRITER_MODULE in sys.modules, worker_gc.in_pyspark_daemon_worker(), sys.modules["__main__"].__spec__.name)
    for _ in batches:
        pass
    yield rows_batch({"loaded": [str(seen[0])], "forked": [str(seen[1])], "main": [seen[2]]},
                     pa.schema([("loaded", pa.string()), ("forked", pa.string()), ("main", pa.string())]))

probes = [r.asDict() for r in spark.range(0, 4, 1, 2).mapInArrow(probe, "loaded string, forked string, main string").collect()]
out = sys.argv[1]
result = gpuwrite.spark.write_parquet(spark.range(0, 1000, 1, 2).selectExpr("id", "cast(id as string) as s"), out)
back = spark.read.parquet(out).count()
spark.stop()
print(json.dumps({"probes": probes, "writer": result.writer, "rows": back}))
"""


def test_a_preloading_daemon_forks_workers_that_have_the_writer(tmp_path: Path):
    """With spark.python.daemon.module=gpuwrite.spark.daemon, every worker of a task starts with the writer
    imported, runs as a daemon-forked worker (worker_gc settles it), and gpuwrite.spark writes through it."""
    if shutil.which("java") is None:
        pytest.skip("no `java` on PATH: PySpark needs a JVM")
    run = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path / "t")], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["probes"] and all(p == {"loaded": "True", "forked": "True", "main": "gpuwrite.spark.daemon"}
                                 for p in got["probes"]), got["probes"]
    assert got["writer"] == "gpuwrite" and got["rows"] == 1000


def test_a_daemon_that_cannot_import_the_writer_still_serves_and_says_so_on_stderr():
    """stdout is PySpark's channel for the daemon's port: the notice goes to stderr, and the daemon runs."""
    code = """
import sys
sys.modules["gpuwrite.dataset.write"] = None  # the writer cannot be imported
import gpuwrite.spark.daemon as d
d.daemon.manager = lambda: print("manager ran")
d.main()
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "manager ran\n"
    assert "gpuwrite.spark.daemon: gpuwrite's writer was not imported ahead (ModuleNotFoundError" in run.stderr
