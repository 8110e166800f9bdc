"""Spark's Python workers find gpuwrite: in local mode they run the driver's interpreter unless the user chose one;
elsewhere one probe job per session checks them and fails with WorkerPythonError naming the interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import gpuwrite
from gpuwrite.spark import workers
from gpuwrite.spark.job import write_parquet

SYSTEM_PYTHON = "/usr/bin/python3"


def _context(master: str, python_exec: str = "python3") -> types.SimpleNamespace:
    """A stand-in for a classic session: `_sc` with the two attributes the policy reads."""
    return types.SimpleNamespace(_sc=types.SimpleNamespace(master=master, pythonExec=python_exec))


@pytest.mark.parametrize("master, local", [
    ("local", True), ("local[2]", True), ("local[*]", True), ("local[2,3]", True), ("local[*, 4]", True),
    ("local-cluster[2,1,1024]", False), ("yarn", False), ("spark://host:7077", False),
    ("k8s://https://host:443", False), (None, False),
])
def test_local_masters(master, local):
    assert workers.is_local_master(master) is local


def test_local_mode_with_no_choice_runs_the_driver_interpreter():
    spark = _context("local[2]")
    assert workers.use_driver_python(spark, {}, environ={}) is True
    assert spark._sc.pythonExec == sys.executable


@pytest.mark.parametrize("master, conf, environ, python_exec", [
    ("local[2]", {}, {"PYSPARK_PYTHON": "/opt/py/bin/python"}, "python3"),  # the user's environment
    ("local[2]", {"spark.pyspark.python": "/opt/py/bin/python"}, {}, "python3"),  # the user's conf
    ("local[2]", {}, {}, "/opt/py/bin/python"),  # set on the context by hand (or by the environment at its start)
    ("local-cluster[2,1,1024]", {}, {}, "python3"),  # executors are other processes: the probe checks them
    ("yarn", {}, {}, "python3"),
])
def test_what_the_user_chose_or_a_cluster_is_left_alone(master, conf, environ, python_exec):
    spark = _context(master, python_exec)
    assert workers.use_driver_python(spark, conf, environ=environ) is False
    assert spark._sc.pythonExec == python_exec


def test_driver_python_does_not_follow_links(tmp_path):
    link = tmp_path / "python3"
    link.symlink_to(sys.executable)
    assert workers.runs_driver_python(sys.executable)
    assert not workers.runs_driver_python(str(link))  # a venv's python links to an interpreter without its packages


@pytest.fixture
def worker_python(spark, monkeypatch):
    """Set the session's worker interpreter for the test (restored after), with no session checked yet."""
    workers.forget_sessions()

    def use(python: str) -> None:
        monkeypatch.setattr(spark.sparkContext, "pythonExec", python)

    yield use
    workers.forget_sessions()


def _without_gpuwrite(tmp_path: Path) -> str:
    """An interpreter that cannot import gpuwrite: the system Python, started outside the worktree."""
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON}")
    found = subprocess.run([SYSTEM_PYTHON, "-c", "import gpuwrite, pyarrow"], cwd=tmp_path, capture_output=True)
    if found.returncode == 0:
        pytest.skip(f"{SYSTEM_PYTHON} imports gpuwrite and pyarrow")
    return SYSTEM_PYTHON


def test_probe_names_the_interpreter_that_lacks_gpuwrite(spark, worker_python, tmp_path):
    worker_python(_without_gpuwrite(tmp_path))
    with pytest.raises(workers.WorkerPythonError) as info:
        workers.probe_workers(spark)
    message = str(info.value)
    assert repr(SYSTEM_PYTHON) in message and "No module named" in message
    assert "spark.pyspark.python" in message and "PYSPARK_PYTHON" in message
    assert isinstance(info.value, gpuwrite.GpuwriteError)


def test_probe_names_a_program_that_is_not_there(spark, worker_python, tmp_path):
    missing = str(tmp_path / "no-such-python")
    worker_python(missing)
    with pytest.raises(workers.WorkerPythonError) as info:
        workers.probe_workers(spark)
    assert f"started as {missing!r} failed with java.io.IOException: Cannot run program" in str(info.value)


@pytest.mark.parametrize("text, cause", [
    ("An exception was thrown from the Python worker.\nTraceback (most recent call last):\n  File \"x.py\"\n"
     "ModuleNotFoundError: No module named 'pyarrow'", "ModuleNotFoundError: No module named 'pyarrow'"),
    ("An error occurred while calling o43.collectToPython.\n: org.apache.spark.SparkException: Job aborted due to "
     "stage failure: Task 0 in stage 0.0 failed 4 times, most recent failure: Lost task 0.3 in stage 0.0 (TID 3) "
     "(10.0.0.5 executor 2): java.io.IOException: Cannot run program \"python3\": error=2\n\tat x\n"
     "Caused by: java.io.IOException: error=2", 'java.io.IOException: Cannot run program "python3": error=2'),
    ("Something else\nCaused by: java.lang.IllegalStateException: odd", "java.lang.IllegalStateException: odd"),
])
def test_the_message_names_the_workers_own_error(text, cause):
    message = workers._explain("/opt/py/bin/python", RuntimeError(text))
    assert f"the worker started as '/opt/py/bin/python' failed with {cause}. Install gpuwrite" in message


def test_probe_passes_where_workers_import_gpuwrite(spark, worker_python):
    worker_python(sys.executable)
    assert workers.probe_workers(spark) == gpuwrite.__version__


def test_cluster_checks_once_per_session_and_refuses_before_writing(spark, worker_python, monkeypatch, tmp_path):
    """On a cluster (the master read as yarn here), a write whose workers lack gpuwrite fails with the clear error
    and leaves nothing at the path; once a probe passed, the session is not probed again."""
    monkeypatch.setattr(workers, "_master", lambda session: "yarn")
    worker_python(_without_gpuwrite(tmp_path))
    target = tmp_path / "out" / "table"
    with pytest.raises(workers.WorkerPythonError, match="No module named"):
        write_parquet(spark.range(3), str(target))
    assert not (tmp_path / "out").exists()
    worker_python(sys.executable)
    probes: list[str] = []
    real = workers.probe_workers
    monkeypatch.setattr(workers, "probe_workers", lambda session: probes.append("probe") or real(session))
    write_parquet(spark.range(3), str(target))
    write_parquet(spark.range(3), str(target), mode="overwrite")
    assert probes == ["probe"]
    assert spark.read.parquet(str(target)).count() == 3


@pytest.mark.spark
def test_local_job_works_when_path_python3_lacks_gpuwrite(tmp_path):
    """`.venv/bin/python job.py`, the venv not activated: `python3` on PATH cannot import gpuwrite, no
    PYSPARK_PYTHON; the session is made before gpuwrite is imported. write_parquet and the drop-in both write."""
    if shutil.which("java") is None:
        pytest.skip("no `java` on PATH: PySpark needs a JVM")
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python3").write_text(f'#!/bin/sh\nexec {_without_gpuwrite(tmp_path)} "$@"\n')
    (shim / "python3").chmod(0o755)
    out = tmp_path / "out"
    (tmp_path / "job.py").write_text(textwrap.dedent(f"""
        import sys
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
        spark.sparkContext.setLogLevel("OFF")
        import gpuwrite.spark
        df = spark.range(0, 10, 1, 2).selectExpr("id", "concat('v', id) as s")
        result = gpuwrite.spark.write_parquet(df, {str(out / "a")!r})
        spark.sparkContext.pythonExec = "python3"  # as PySpark set it: enable alone must set it again
        gpuwrite.spark.enable(spark)
        print("EXEC", spark.sparkContext.pythonExec == sys.executable)
        df.write.parquet({str(out / "b")!r})
        print("WROTE", result.writer, spark.read.parquet({str(out / "a")!r}).count(),
              spark.read.parquet({str(out / "b")!r}).count(), len(gpuwrite.spark.fallbacks()))
    """))
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{shim}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run([sys.executable, "job.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-2:] == ["EXEC True", "WROTE gpuwrite 10 10 0"]
