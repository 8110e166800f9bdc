"""Spark's Python workers must import gpuwrite: which interpreter they run, and a check that it can.

SPEC: PySpark's SparkContext reads `pythonExec` once, from the driver's PYSPARK_PYTHON environment variable
(default `python3` from PATH), and each Python function (`_wrap_function`: mapInArrow, UDFs, RDD maps) carries
the value it had when the function was made; the JVM (BasePythonRunner) runs that program on every executor.
`spark.pyspark.python` only counts where spark-submit or `pyspark` start the driver (they hand it on as
PYSPARK_PYTHON). So a driver run as `.venv/bin/python job.py` would start `python3` from PATH, which need not
have gpuwrite. In local mode, where the workers run on the driver's machine, gpuwrite points them at the
driver's own interpreter unless the user chose one; elsewhere it runs one tiny job per session first, which
fails with `WorkerPythonError` (naming the interpreter and what to set) instead of a Java stack trace.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import GpuwriteError

log = logging.getLogger("gpuwrite.spark")

PYTHON_CONF = "spark.pyspark.python"
PYTHON_ENV = "PYSPARK_PYTHON"
SPARK_DEFAULT_PYTHON = "python3"  # SPEC: SparkContext._do_init: os.environ.get("PYSPARK_PYTHON", "python3")
# SPEC: SparkContext.createTaskScheduler (Scala): "local", local[N] / local[*], local[N, F] / local[*, F];
# local-cluster[...] starts separate executor processes, so it counts as a cluster here.
_LOCAL_MASTER = re.compile(r"local(\[\s*(\d+|\*)\s*(,\s*\d+\s*)?\])?")
_LOST_TASK = re.compile(r"Lost task [^()]*\(TID \d+\) \([^()]*\): (.+)")
_LOCK = threading.Lock()
_READY: dict[str, str] = {}  # session key -> the gpuwrite version its executors' Python imported


class WorkerPythonError(GpuwriteError):
    """Spark's Python workers cannot run gpuwrite (not installed in their interpreter, or no such program):
    the message names the interpreter and the setting that chooses it."""


def is_local_master(master: str | None) -> bool:
    """Whether a Spark master URL runs the tasks inside the driver's JVM, on the driver's machine."""
    return master is not None and _LOCAL_MASTER.fullmatch(master.strip()) is not None


def user_python(conf: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    """The workers' interpreter the user chose (PYSPARK_PYTHON, else spark.pyspark.python), or None."""
    return environ.get(PYTHON_ENV) or conf.get(PYTHON_CONF) or None


def runs_driver_python(python_exec: str, executable: str = sys.executable) -> bool:
    """Whether a worker started as `python_exec` runs this very interpreter (same path: a venv's python links
    to its base interpreter, which lacks the venv's packages, so links are not followed)."""
    found = shutil.which(python_exec) or python_exec
    return os.path.abspath(found) == os.path.abspath(executable)


def _master(spark: Any) -> str | None:
    """The session's master URL (a Connect client asks the server)."""
    context = getattr(spark, "_sc", None)
    if context is not None:
        return str(context.master)
    return spark.conf.get("spark.master", None)  # type: ignore[no-any-return]


def use_driver_python(spark: Any, conf: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> bool:
    """In local mode, with no interpreter chosen by the user, make the Python functions the session creates from
    now on run this interpreter (`sys.executable`) rather than `python3` from PATH; whether it did so."""
    context = getattr(spark, "_sc", None)  # a Connect client: the server starts its workers, not ours to set
    if context is None or not is_local_master(str(context.master)):
        return False
    if user_python(conf, environ) is not None or context.pythonExec != SPARK_DEFAULT_PYTHON:
        return False  # chosen by the user (or set on the context by hand): theirs to keep
    context.pythonExec = sys.executable
    log.debug("gpuwrite.spark: local-mode Python workers run the driver's interpreter %s", sys.executable)
    return True


def _probe(batches: Iterator[Any]) -> Iterator[Any]:
    """The probe task: import gpuwrite in the worker and report its version and the worker's interpreter.
    Pickled by reference, so unpickling it in the worker already imports gpuwrite."""
    import pyarrow as pa

    import gpuwrite

    from .rows_batch import rows_batch

    for _ in batches:
        pass
    yield rows_batch({"version": [gpuwrite.__version__], "python": [sys.executable]},
                     pa.schema([("version", pa.string()), ("python", pa.string())]))


def worker_python(spark: Any) -> str:
    """The program the session's Python workers start (a Connect client cannot know: named as such)."""
    context = getattr(spark, "_sc", None)
    return str(context.pythonExec) if context is not None else "the Spark Connect server's PYSPARK_PYTHON"


def probe_workers(spark: Any) -> str:
    """Run one one-row task that imports gpuwrite in a Python worker; its gpuwrite version, or WorkerPythonError
    naming the interpreter, the worker's own error and what to set."""
    python = worker_python(spark)
    try:
        rows = spark.range(0, 1, 1, 1).mapInArrow(_probe, "version string, python string").collect()
    except Exception as err:  # a Py4JJavaError, PythonException or SparkException from the probe's task
        raise WorkerPythonError(_explain(python, err)) from None
    log.debug("gpuwrite.spark: executors' Python %s imports gpuwrite %s", rows[0].python, rows[0].version)
    return str(rows[0].version)


def _explain(python: str, err: BaseException) -> str:
    """The message of a failed probe: the interpreter, the worker's error (its last Python error line, else the
    failed task's error, else the JVM's first `Caused by:`, else Spark's first line), and what to set."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    python_errors = [line for line in lines if re.match(r"^[A-Za-z_]\w*(Error|Exception): ", line)]
    # SPEC: TaskSetManager.handleFailedTask: "Lost task 0.0 in stage 0.0 (TID 0) (host executor id): <the error>"
    lost = [m.group(1) for m in map(_LOST_TASK.search, lines) if m]
    java_causes = [line[len("Caused by: "):] for line in lines if line.startswith("Caused by: ")]
    cause = (python_errors[-1:] or lost[:1] or java_causes[:1] or lines[:1] or [type(err).__name__])[0]
    return (f"Spark's Python workers cannot run gpuwrite: the worker started as {python!r} failed with {cause}. "
            f"Install gpuwrite (and pyarrow) in that interpreter on every executor, or point the workers at one "
            f"that has it: set {PYTHON_ENV} in the driver's environment before the SparkContext starts, or "
            f"--conf {PYTHON_CONF}=/path/to/python when spark-submit or pyspark start the driver (a driver run as "
            f"`python job.py` reads only {PYTHON_ENV}); on YARN, spark.yarn.appMasterEnv.{PYTHON_ENV} in cluster "
            f"mode. The path must exist on every executor host")


def ensure_workers(spark: Any, conf: Mapping[str, str]) -> None:
    """Before a gpuwrite job: local mode with no user choice runs the driver's interpreter; otherwise (a cluster,
    or an interpreter other than the driver's) one probe per session checks that the workers import gpuwrite."""
    if use_driver_python(spark, conf):
        return
    python = worker_python(spark)
    if is_local_master(_master(spark)) and runs_driver_python(python):
        return
    from .dropin import _session_key

    key = _session_key(spark)
    with _LOCK:
        if key in _READY:
            return
    version = probe_workers(spark)
    with _LOCK:
        _READY[key] = version


def forget_sessions() -> None:
    """Forget which sessions' workers were checked (tests; a session whose executors changed)."""
    with _LOCK:
        _READY.clear()
