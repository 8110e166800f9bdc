"""The first gpuwrite task in a PySpark daemon worker freezes the worker's objects, so the full collection the
daemon runs after every task (pyspark/daemon.py) stops visiting the ~170,000 objects gpuwrite, numba's kernels
and pyarrow leave tracked; elsewhere, or with spark.gpuwrite.python.gcFreeze=false, nothing is frozen."""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import textwrap
import types
import weakref

import pytest

from gpuwrite.spark import worker_gc


@pytest.fixture
def unfrozen():
    """Each test starts and ends with nothing frozen and no freeze recorded for this process."""
    gc.unfreeze()
    worker_gc._frozen_in = None
    yield
    gc.unfreeze()
    worker_gc._frozen_in = None


def _as_daemon_worker(monkeypatch) -> None:
    """Make this process look like a worker forked by `python -m pyspark.daemon`."""
    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name="pyspark.daemon")  # type: ignore[assignment]
    monkeypatch.setitem(sys.modules, "__main__", main)


def test_outside_a_daemon_worker_nothing_is_frozen(unfrozen):
    assert not worker_gc.in_pyspark_daemon_worker()  # pytest's __main__ is not PySpark's daemon
    assert worker_gc.settle_worker() is False
    assert gc.get_freeze_count() == 0


def test_first_task_in_a_daemon_worker_freezes_once(unfrozen, monkeypatch):
    _as_daemon_worker(monkeypatch)
    assert worker_gc.in_pyspark_daemon_worker()
    class Node:
        pass

    node = Node()
    node.self = node  # type: ignore[attr-defined]  # a cycle: garbage once dropped, collected by the settle
    gone = weakref.ref(node)
    del node
    assert worker_gc.settle_worker() is True
    assert gone() is None  # collected, not frozen
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # the modules and what they hold
    assert len(gc.get_objects()) < frozen // 10  # what the daemon's next full pass still visits
    later = [[] for _ in range(3)]  # what a later task makes and keeps
    assert worker_gc.settle_worker() is False  # later tasks leave it as it is: their objects stay tracked
    assert gc.get_freeze_count() <= frozen  # (frozen objects are still freed when unreferenced)
    assert any(o is later for o in gc.get_objects())


def test_freeze_turned_off(unfrozen, monkeypatch):
    _as_daemon_worker(monkeypatch)
    assert worker_gc.settle_worker(enabled=False) is False
    assert gc.get_freeze_count() == 0


@pytest.mark.spark
def test_pyspark_workers_freeze_after_their_first_gpuwrite_task(tmp_path):
    """In a real PySpark daemon worker (local[1]: one worker, reused): nothing frozen before gpuwrite runs or with
    spark.gpuwrite.python.gcFreeze=false; after a gpuwrite task, the worker's objects are frozen and the
    daemon's collection after a task visits a small fraction of them."""
    if shutil.which("java") is None:
        pytest.skip("no `java` on PATH: PySpark needs a JVM")
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
        spark.sparkContext.setLogLevel("OFF")
        import gpuwrite.spark

        def probe(batches):
            import gc, os
            import pyarrow as pa
            for _ in batches:
                pass
            yield pa.RecordBatch.from_pydict({{"frozen": [gc.get_freeze_count()], "tracked": [len(gc.get_objects())],
                                               "pid": [os.getpid()]}})

        def state(label):
            row = spark.range(1).mapInArrow(probe, "frozen long, tracked long, pid long").collect()[0]
            print(label, row.frozen, row.tracked, row.pid)

        df = spark.range(0, 3000, 1, 1).selectExpr("id", "cast(id % 7 as decimal(7, 2)) as d", "concat('v', id) as s")
        state("BEFORE")
        spark.conf.set("spark.gpuwrite.python.gcFreeze", "false")
        gpuwrite.spark.write_parquet(df, {str(tmp_path / "off")!r})
        state("OFF")
        spark.conf.unset("spark.gpuwrite.python.gcFreeze")
        gpuwrite.spark.write_parquet(df, {str(tmp_path / "on")!r})
        state("ON")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = {line.split()[0]: [int(x) for x in line.split()[1:]] for line in done.stdout.splitlines()
           if line.split() and line.split()[0] in ("BEFORE", "OFF", "ON")}
    assert set(got) == {"BEFORE", "OFF", "ON"} and len({v[2] for v in got.values()}) == 1  # one worker, reused
    assert got["BEFORE"][0] == 0 and got["OFF"][0] == 0
    assert got["OFF"][1] > 50_000  # gpuwrite, numba and pyarrow loaded: what a full collection visits
    assert got["ON"][0] > 50_000 and got["ON"][1] < got["ON"][0] // 10


def test_freeze_switch_reads_like_the_other_gpuwrite_switches():
    from gpuwrite.spark.routing import GC_FREEZE_KEY, freezes_worker_objects

    assert GC_FREEZE_KEY == "spark.gpuwrite.python.gcFreeze"
    assert freezes_worker_objects({}) and freezes_worker_objects({GC_FREEZE_KEY: "true"})
    assert not freezes_worker_objects({GC_FREEZE_KEY: " FALSE "})
