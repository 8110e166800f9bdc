"""The executor side of `gpuwrite.spark.write_parquet`: one Spark task writes its rows with gpuwrite.

Runs inside `DataFrame.mapInArrow`: the task's Arrow batches are written as Spark's writers would write them
(partition directories, bucket files, maxRecordsPerFile, Spark's file names for this task and job) into the
task's attempt directory, the attempt is committed, and one stats row per file goes back to the driver. The
batches are received on the task's thread and encoded on a worker thread (`pipeline.encode_behind`), so the
encode hides behind the transfer.
"""

from __future__ import annotations

import importlib
import logging
import os
import posixpath
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.fs as pafs

from ..dataset import job_commit as commit
from .rows_batch import rows_batch
from .socket_acks import QuickAcks, acked
from .task_pipeline import encode_behind
from .unscaled import Unscaled, as_decimals
from .worker_gc import settle_worker

if TYPE_CHECKING:
    from ..result import FileResult

log = logging.getLogger("gpuwrite.spark")
WRITER_MODULE = "gpuwrite.dataset.write"  # what a task imports to write (numba and the kernel modules with it)

STATS_SCHEMA = pa.schema([("task", pa.int32()), ("attempt", pa.int32()), ("path", pa.string()),
                          ("rows", pa.int64()), ("bytes", pa.int64()), ("partition", pa.string()),
                          ("receive_s", pa.float64()), ("tail_s", pa.float64()),
                          ("task_s", pa.float64())])
STATS_DDL = ("task int, attempt int, path string, rows long, bytes long, partition string, receive_s double, "
             "tail_s double, task_s double")


@dataclass(frozen=True, kw_only=True)
class TaskPlan:
    """Everything a task needs, shipped to the executors with the function."""

    root: str
    job: str
    filesystem: Any
    conf: dict[str, str]
    partition_by: tuple[str, ...]
    bucket_by: tuple[int, tuple[str, ...]] | None
    max_records_per_file: int
    device: str  # "auto": the task's GPU when Spark assigned one; "cpu" / "gpu" to force
    # The Arrow schema of the task's batches: task 0 of an unpartitioned write with no rows still writes a
    # footer-only file with it (SPEC: FileFormatWriter.executeTask opens a writer in partition 0 always).
    arrow_schema: pa.Schema | None = None
    # Fault injection for tests of the commit protocol (job.FAULTS): "task:attempt" items, attempt "*" for
    # every attempt; such an attempt fails after writing its files, before committing them.
    faults: str = ""
    # freeze the worker's objects after its first task (worker_gc; spark.gpuwrite.python.gcFreeze)
    freeze_worker_objects: bool = True
    # acknowledge the JVM's segments at once while receiving (socket_acks; spark.gpuwrite.python.quickAck)
    quick_acks: bool = True
    # columns sent as unscaled longs, read back as decimal64 (unscaled; spark.gpuwrite.python.unscaledDecimals)
    unscaled: tuple[Unscaled, ...] = ()


def task_device(context: Any, requested: str) -> str:
    """The device for this task: its Spark GPU resource when it has one (and gpuwrite can use it), else CPU."""
    if requested == "cpu":
        return "cpu"
    resources = context.resources() if context is not None else {}
    gpu = resources.get("gpu") if resources else None
    if gpu is None or not list(gpu.addresses):
        if requested == "gpu":
            raise RuntimeError("device='gpu' was requested but this Spark task has no GPU resource "
                               "(spark.task.resource.gpu.amount)")
        return "cpu"
    from ..backends.device.ops import gpu_problem

    problem = gpu_problem()
    if problem is not None:
        if requested == "gpu":
            raise RuntimeError(f"this task was given GPU {list(gpu.addresses)} but gpuwrite cannot use it: {problem}")
        log.warning("task has GPU %s but gpuwrite cannot use it (%s); writing on the CPU", list(gpu.addresses),
                    problem)
        return "cpu"
    _select_gpu(gpu_ordinal(str(list(gpu.addresses)[0]), os.environ.get("CUDA_VISIBLE_DEVICES")))
    return "gpu"


def gpu_ordinal(address: str, visible: str | None) -> int:
    """The CUDA device ordinal, in this process, of the GPU Spark assigned to the task.

    Spark's resource addresses name physical GPUs (as its discovery script lists them). When the process sees
    only some GPUs (`CUDA_VISIBLE_DEVICES`, which the RAPIDS Accelerator's Python GPU scheduling narrows to
    the task's GPU), the ordinal is the address's position in that list; a list of one GPU (or of UUIDs the
    address cannot be matched to, but only one) means ordinal 0.
    """
    entries = [e.strip() for e in (visible or "").split(",") if e.strip()]
    if visible is None or not entries:
        if visible is not None:
            raise RuntimeError(f"this task was given GPU {address} but CUDA_VISIBLE_DEVICES={visible!r} hides "
                               "every GPU from the process")
        try:
            return int(address)
        except ValueError:
            raise RuntimeError(f"GPU address {address!r} is not a device ordinal and CUDA_VISIBLE_DEVICES is "
                               "not set to map it") from None
    if address in entries:
        return entries.index(address)
    if len(entries) == 1:
        return 0
    raise RuntimeError(f"GPU address {address!r} is not among CUDA_VISIBLE_DEVICES={visible!r}; cannot tell "
                       "which visible device the task was given")


def _select_gpu(ordinal: int) -> None:
    """Make GPU `ordinal` current for CuPy and numba.cuda (as RAPIDS resource scheduling assigns it)."""
    import cupy
    from numba import cuda

    cupy.cuda.Device(ordinal).use()
    cuda.select_device(ordinal)


def task_cores(context: Any) -> int | None:
    """The cores Spark gave this task (spark.task.cpus, from `TaskContext.cpus`); None when it does not say.

    SPEC: TaskSchedulerImpl runs a task per spark.task.cpus free cores, so a task's Python worker shares the
    executor's cores with the other tasks and the JVM's: its page encoding gets that many threads.
    """
    cpus = getattr(context, "cpus", None)
    cores = cpus() if callable(cpus) else None
    return cores if isinstance(cores, int) and cores >= 1 else None


def _should_fail(spec: str, task: int, attempt: int) -> bool:
    """Whether the fault-injection spec asks this attempt to fail."""
    for item in filter(None, spec.split(",")):
        t, _, a = item.partition(":")
        if int(t) == task and (a == "*" or int(a) == attempt):
            return True
    return False


def run_task(plan: TaskPlan, batches: Iterator[pa.RecordBatch], context: Any = None) -> Iterator[pa.RecordBatch]:
    """Write one task's batches and commit them; yield the stats of the committed files."""
    entered = time.perf_counter()
    import_writer_behind()
    if context is None:
        from pyspark import TaskContext

        context = TaskContext.get()
    task, attempt = context.partitionId(), context.attemptNumber()
    acks = QuickAcks.of_worker(plan.quick_acks)
    try:
        yield from _run_task(plan, as_decimals(acked(batches, acks), plan.unscaled), context, task, attempt,
                             entered)
    finally:
        acks.close()


def import_writer() -> str | None:
    """Import the writer (numba and the kernel modules with it); the error, worded, when it cannot be."""
    try:
        importlib.import_module(WRITER_MODULE)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return None


def _import_writer() -> None:
    """import_writer on a helper thread: a failure is left for the encode thread's own import to raise."""
    problem = import_writer()
    if problem is not None:
        log.debug("importing the writer ahead failed: %s", problem)


def import_writer_behind() -> threading.Thread | None:
    """A worker's first task imports the writer (about half a second: numba, the kernel modules) on a thread
    while this thread receives its first batches; None when it is imported already (a later task, or a worker
    forked by `gpuwrite.spark.daemon`)."""
    if WRITER_MODULE in sys.modules:
        return None
    thread = threading.Thread(target=_import_writer, name="gpuwrite-import", daemon=True)
    thread.start()
    return thread


def _run_task(plan: TaskPlan, batches: Iterator[pa.RecordBatch], context: Any, task: int, attempt: int,
              entered: float) -> Iterator[pa.RecordBatch]:
    """run_task's work, its batches received through `socket_acks.acked`. This thread needs none of the writer's
    modules: the encode thread imports them (waiting on `import_writer_behind`'s import), so receiving starts
    while they load."""
    from ..options.model import WriteOptions

    first = next(batches, None)
    unpartitioned = not (plan.partition_by or plan.bucket_by)
    if first is None and not (task == 0 and unpartitioned and plan.arrow_schema is not None):
        return  # an empty task writes nothing (but task 0 of an unpartitioned write, as Spark's)
    schema = first.schema if first is not None else plan.arrow_schema
    assert schema is not None
    fs, root = commit.resolve(plan.root, plan.filesystem)
    paths = commit.JobPaths(root, plan.job)
    local = isinstance(fs, pafs.LocalFileSystem)
    attempt_dir = paths.attempt_dir(task, attempt)
    work = attempt_dir if local else tempfile.mkdtemp(prefix="gpuwrite-task-")
    try:
        opts = WriteOptions.from_conf(plan.conf, device=task_device(context, plan.device))
        cores = task_cores(context)

        def rows() -> Iterator[pa.RecordBatch]:
            if first is not None:
                yield first
                yield from batches

        def write(pieces: Iterator[pa.RecordBatch]) -> list[FileResult]:
            from ..backends.cpu import limit_threads
            from ..dataset.write import write_task
            from ..dataset.writers import FileLayout
            from .policy.buckets import parse_bucket_by

            limit_threads(cores)
            layout = FileLayout(job=plan.job, task=task, partition_by=plan.partition_by,
                                buckets=parse_bucket_by(plan.bucket_by, plan.partition_by),
                                max_records_per_file=plan.max_records_per_file, options=opts, streaming=True,
                                zone_warning=False)  # Spark's own default, chosen by a Spark user: no notice
            return write_task(schema, pieces, work, layout, empty_file=task == 0 and unpartitioned,
                              presorted=True)

        timings: dict[str, float] = {}
        files = encode_behind(rows(), write, timings=timings)
        if not local:
            pafs.copy_files(work, attempt_dir, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)
        if _should_fail(plan.faults, task, attempt):
            raise RuntimeError(f"injected fault: task {task} attempt {attempt} fails after writing its files")
        kept = commit.commit_task(fs, paths, task, attempt)
    except BaseException:
        commit.abort_task(fs, paths, task, attempt)
        raise
    finally:
        if not local:
            shutil.rmtree(work, ignore_errors=True)
    task_s = time.perf_counter() - entered  # the whole task in this worker: imports, receive, encode, commit
    out = {name: [] for name in STATS_SCHEMA.names}  # type: dict[str, list[Any]]
    for f in files:
        rel = os.path.relpath(f.path, work).replace(os.sep, "/")
        out["task"].append(task)
        out["attempt"].append(attempt if kept == attempt else -1)
        out["path"].append(rel)
        out["rows"].append(f.num_rows)
        out["bytes"].append(f.size)
        out["partition"].append(posixpath.dirname(rel))
        out["receive_s"].append(timings["receive_s"])  # the task's, on each of its files' rows
        out["tail_s"].append(timings["tail_s"])
        out["task_s"].append(task_s)
    settle_worker(plan.freeze_worker_objects)
    yield rows_batch(out, STATS_SCHEMA)
