"""`gpuwrite.spark.write_parquet`: a Spark job whose tasks write Parquet with gpuwrite, committed on the driver.

The write is planned as Spark's V1Writes plans it (rows sorted within each task by the partition columns, then
by bucket id, then the bucket sort columns), runs one `mapInArrow` task per partition of the DataFrame
(`task.run_task`), and commits like HadoopMapReduceCommitProtocol (`commit`: under the path's lock, old files
moved aside and deleted only once the new ones are in), with the save modes of InsertIntoHadoopFsRelationCommand
(the path's existence decides; static or dynamic partition overwrite).
Writes gpuwrite cannot do (Parquet v1 pages, types it does not support) go through Spark's own writer, with
the reason logged, or raise with `fallback="error"`; so do writes Spark refuses (an existing path with mode
error), so the user gets Spark's own exception.
"""

from __future__ import annotations

import logging
import posixpath
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

import pyarrow.fs as pafs

from ..dataset import job_commit as commit
from ..dataset.publish import CommitError
from ..dataset.target import DatasetPathError, resolve_target
from ..errors import GpuwriteError, OptionError, UnsupportedTypeError
from ..options.aliases import column_list
from ..options.keywords import suggest_keywords
from ..options.model import WriteOptions
from ..options.sql_keys import TIME_ZONE_KEY
from ..schema import FileSchema
from .conf import (
    OVERWRITE_MODE_KEY,
    OVERWRITE_MODE_OPTION,
    all_conf,
    lower_keys,
    session_conf,
    with_conf_snapshot,
    writer_conf,
)
from .policy.modes import ERROR_MODES, check_mode
from .routing import acks_quickly, freezes_worker_objects, sends_unscaled
from .task import STATS_DDL, TaskPlan, run_task
from .unscaled import Unscaled, send_unscaled, unscaled_columns, worth_sending
from .workers import ensure_workers

log = logging.getLogger("gpuwrite.spark")
FAULTS = ""  # tests set "task:attempt,..." to make those task attempts fail after writing (see TaskPlan)


class TaskSeconds(NamedTuple):
    """Where a task's time went, as its Python worker measured it."""

    receive: float  # receiving its batches (while encoding them)
    tail: float  # encoding after the last batch: what the transfer did not hide
    total: float  # the whole task: the writer's imports (a worker's first task), receive, encode, commit


@dataclass
class SparkWriteResult:
    """What a write produced: the table directory, its files (relative paths), rows, and who wrote them."""

    path: str
    job: str
    files: list[str] = field(default_factory=list)
    rows: int = 0
    bytes: int = 0
    writer: str = "gpuwrite"  # or "spark" when the write fell back to Spark's own writer
    fallback_reason: str | None = None
    attempts: dict[int, int] = field(default_factory=dict)  # task -> the attempt whose files were committed
    partitions: set[str] = field(default_factory=set)  # partition directories written ("k=1/j=a")
    task_seconds: dict[int, TaskSeconds] = field(default_factory=dict)  # of each committed task


@dataclass(frozen=True, kw_only=True)
class WriteRequest:
    """What one `write_parquet` call asks for, as the job, Spark's own writer and the catalog need it."""

    path: str
    mode: str
    partition_by: tuple[str, ...] = ()
    bucket: tuple[int, tuple[str, ...]] | None = None  # (number of buckets, columns)
    sort_by: tuple[str, ...] = ()  # bucketBy's sortBy: each bucket file sorted by these columns
    max_records: int = 0
    options: Mapping[str, Any] | None = None  # the DataFrameWriter options as given
    table: str | None = None  # catalog table to register over the files
    dynamic: bool = False  # dynamic partition overwrite (mode overwrite, partitioned, partitionOverwriteMode)

    @property
    def partitioned(self) -> bool:
        """Whether rows go to partition directories or bucket files."""
        return bool(self.partition_by or self.bucket)


def _arrow_schema(df: Any) -> Any:
    """The Arrow schema mapInArrow gives the tasks for this DataFrame."""
    from pyspark.sql.pandas.types import to_arrow_schema

    spark = df.sparkSession
    zone = spark.conf.get(TIME_ZONE_KEY, "UTC")
    # SPEC: SQLConf.ARROW_EXECUTION_USE_LARGE_VAR_TYPES defaults to false
    large = str(spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")).lower() == "true"
    return to_arrow_schema(df.schema, timezone=zone, prefers_large_types=large)


def fallback_reason(df: Any, conf: dict[str, str]) -> str | None:
    """Why gpuwrite cannot write this DataFrame with these options, or None."""
    if str(conf.get("parquet.writer.version", "")).lower() in ("v1", "parquet_1_0", "1.0"):
        return "parquet.writer.version=v1 asks for v1 data pages; gpuwrite writes v2 pages only"
    try:
        opts = WriteOptions.from_conf(conf)
    except OptionError as err:
        return f"option not supported by gpuwrite: {err}"
    try:
        schema = _arrow_schema(df)
    except Exception as err:  # a Spark type with no Arrow mapping (intervals, variant, ...)
        return f"a column type has no Arrow form for mapInArrow: {type(err).__name__}: {err}"
    try:
        FileSchema.from_arrow(schema, opts)
    except UnsupportedTypeError as err:
        return str(err)
    return None


@suggest_keywords
@with_conf_snapshot
def write_parquet(df: Any, path: str, *, mode: str = "error", partition_by: str | Sequence[str] | None = None,
                  bucket_by: tuple[int, str | Sequence[str]] | None = None, max_records_per_file: int | None = None,
                  options: Mapping[str, Any] | None = None, table: str | None = None, fallback: str = "spark",
                  device: str = "auto", filesystem: Any = None, sort_by: str | Sequence[str] | None = None,
                  partition_cols: str | Sequence[str] | None = None) -> SparkWriteResult:
    """Write `df` as a Parquet table directory at `path` with gpuwrite in Spark's tasks.

    df: a pyspark.sql.DataFrame. path: the table directory (a local path or a URI such as s3://...).
    mode: "error" (default) / "overwrite" / "append" / "ignore", as DataFrameWriter.mode (the path's existence
    decides, as in Spark). partition_by (or pyarrow's name partition_cols): a column name or a list of them, as
    partitionBy. bucket_by: (number of buckets, column or columns) as bucketBy (needs table=); sort_by: a column
    or columns as sortBy. max_records_per_file: rows per file at most, as maxRecordsPerFile (default: the
    options' or session's value, else 0: no limit). options: DataFrameWriter options (compression, parquet.*
    keys, maxRecordsPerFile, partitionOverwriteMode; others are ignored as Spark ignores them); the session conf
    supplies the rest. table: register (create or replace) a catalog table over the files. fallback: "spark"
    (default) writes with Spark's own writer when gpuwrite cannot, "error" raises instead. device: "auto"
    (default) uses each task's GPU resource when it has one, "cpu" or "gpu". filesystem: a pyarrow or fsspec
    filesystem for `path` (default: from the path's URI). Returns a SparkWriteResult (files, rows, bytes, and
    who wrote them).
    """
    if partition_by is not None and partition_cols is not None:
        raise GpuwriteError("partition_by and partition_cols are the same option (pyarrow's name); give one of them")
    chosen = partition_by if partition_cols is None else partition_cols
    partition_by = None if chosen is None else column_list("partition_by", chosen)
    sort_by = None if sort_by is None else column_list("sort_by", sort_by)
    check_mode(mode)
    if fallback not in ("spark", "error"):
        raise GpuwriteError(f"fallback={fallback!r} must be 'spark' or 'error'")
    spark = df.sparkSession
    sql, hadoop = session_conf(spark)
    conf, max_records = writer_conf(sql, hadoop, options)
    if max_records_per_file is not None:
        max_records = max_records_per_file
    bucket = (int(bucket_by[0]), (bucket_by[1],) if isinstance(bucket_by[1], str) else tuple(bucket_by[1])) \
        if bucket_by else None
    request = WriteRequest(path=path, mode=mode, partition_by=tuple(partition_by or ()), bucket=bucket,
                           sort_by=tuple(sort_by or ()), max_records=max_records, options=options, table=table,
                           dynamic=dynamic_overwrite(mode, partition_by or (), sql, options))
    if bucket and not table:
        raise GpuwriteError("bucket_by needs table=: Spark records buckets in the catalog (bucketBy needs "
                            "saveAsTable)")
    reason = fallback_reason(df, conf)
    if reason is not None:
        if fallback == "error":
            raise UnsupportedTypeError(f"gpuwrite cannot write this DataFrame: {reason}")
        log.warning("gpuwrite.spark.write_parquet falls back to Spark's writer: %s", reason)
        return _spark_write(df, request, reason)
    fs, root = commit.resolve(path, filesystem)
    info = fs.get_file_info(root)
    exists = info.type != pafs.FileType.NotFound
    if exists and mode in ERROR_MODES:  # SPEC: InsertIntoHadoopFsRelationCommand: the path's existence decides
        return _spark_write(df, request, "the path exists and mode is error: Spark's writer raises its error")
    if exists and mode == "ignore":
        return SparkWriteResult(path, "", writer="none")
    if info.type == pafs.FileType.File and mode == "append":
        return _spark_write(df, request, "the path is a file: Spark's writer decides what happens")
    ensure_workers(spark, all_conf(spark))  # a worker without gpuwrite fails here, before anything is made
    check_path(fs, path, root, mode)
    result = run_job(df, request, conf, fs, root, filesystem=filesystem, device=device)
    if table and result.writer != "none":
        register_table(spark, request, df.schema)
    return result


def check_path(fs: pafs.FileSystem, path: str, root: str, mode: str) -> None:
    """Refuse, before anything is written, what write_dataset refuses (`target.resolve_target`): a file (Spark
    would delete it before the job: gone if the job fails), an overwrite of the working directory or of a
    directory containing it, a path inside a gpuwrite staging area or named as gpuwrite's own files, a
    directory the user cannot write; a missing parent is created, as Spark's writer creates it."""
    if commit.is_local(fs):
        resolve_target(root if "://" in path else path, mode, parents=True)
    elif fs.get_file_info(root).type == pafs.FileType.File:
        raise DatasetPathError(f"cannot write a dataset at {path!r}: it is a file")


def dynamic_overwrite(mode: str, partition_by: Any, session: Mapping[str, str],
                      options: Mapping[str, Any] | None) -> bool:
    """Whether an overwrite replaces only the partitions it writes.

    SPEC: InsertIntoHadoopFsRelationCommand.dynamicPartitionOverwrite: the `partitionOverwriteMode` option,
    else spark.sql.sources.partitionOverwriteMode, is DYNAMIC, the mode is overwrite and some partition column
    is dynamic (all are, for DataFrameWriter writes).
    """
    chosen = lower_keys(options).get(OVERWRITE_MODE_OPTION) or session.get(OVERWRITE_MODE_KEY) or "STATIC"
    return mode == "overwrite" and bool(partition_by) and str(chosen).upper() == "DYNAMIC"


def run_job(df: Any, request: WriteRequest, conf: dict[str, str], fs: pafs.FileSystem, root: str, *,
            filesystem: Any = None, device: str = "auto") -> SparkWriteResult:
    """The Spark job proper: the driver makes the job's directory (holding its owner file), tasks write and
    commit their files, the driver commits the job (files into place, `_SUCCESS`), then Spark's cached data
    over the path is refreshed. Any failure removes the job's staging area (and the directory when the job
    created it and nothing else is in it), but for the old files of a commit that could not be undone."""
    existed = fs.get_file_info(root).type != pafs.FileType.NotFound
    job = str(uuid.uuid4())
    session = all_conf(df.sparkSession)
    ensure_workers(df.sparkSession, session)  # before the job's Python function is made (workers.py)
    paths = commit.JobPaths(root, job)
    planned, unscaled = _sent(_plan(df, request), request, session)
    plan = TaskPlan(root=request.path, job=job, filesystem=filesystem, conf=conf,
                    partition_by=request.partition_by, bucket_by=request.bucket,
                    max_records_per_file=request.max_records, device=device, faults=FAULTS,
                    arrow_schema=_arrow_schema(df), unscaled=unscaled,
                    freeze_worker_objects=freezes_worker_objects(session), quick_acks=acks_quickly(session))
    stage = commit.JobStage.open(fs, paths)
    try:
        stats = planned.mapInArrow(partial(run_task, plan), STATS_DDL).toArrow()
        result = _commit(fs, paths, stats, request, df, conf)
    finally:
        try:
            commit.cleanup(fs, paths)  # nothing left after a commit; an interrupted commit's old files are kept
            if not existed:
                commit.remove_if_empty(fs, root)
        finally:
            stage.close()
    _refresh_path(df.sparkSession, request.path)
    return result


def _refresh_path(spark: Any, path: str) -> None:
    """SPEC: InsertIntoHadoopFsRelationCommand ends with cacheManager.recacheByPath(outputPath)."""
    try:
        spark.catalog.refreshByPath(path)
    except Exception as err:  # a path Spark cannot qualify (another filesystem): nothing of it is cached
        log.debug("refreshByPath(%s) failed: %s", path, err)


def _plan(df: Any, request: WriteRequest) -> Any:
    """V1Writes' required ordering: sort within each task by partition columns, then bucket id."""
    if not request.partitioned:
        return df
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    types = {f.name: f.dataType for f in df.schema.fields}
    keys = []
    for c in request.partition_by:  # SPEC: V1Writes sorts string partition columns by empty2null(col)
        col = F.col(c)
        keys.append(F.when(col == "", F.lit(None)).otherwise(col) if isinstance(types[c], StringType) else col)
    if request.bucket:
        num, columns = request.bucket
        keys.append(F.pmod(F.hash(*[F.col(c) for c in columns]), F.lit(num)))
        keys.extend(F.col(c) for c in request.sort_by)  # SPEC: V1WritesUtils.getSortOrder: then bucket sort columns
    return df.sortWithinPartitions(*keys)


def _sent(planned: Any, request: WriteRequest, session: Mapping[str, str]) -> tuple[Any, tuple[Unscaled, ...]]:
    """What the tasks receive: the planned DataFrame with its small decimals as unscaled longs where the session
    can send them so (`unscaled`), and those columns; else the planned DataFrame as it is."""
    if not sends_unscaled(session):
        return planned, ()
    kept = [*request.partition_by, *(request.bucket[1] if request.bucket else ()), *request.sort_by]
    columns = unscaled_columns(planned.schema, kept)
    if not columns or not worth_sending(planned, columns):
        return planned, ()
    sent = send_unscaled(planned, columns)
    return (planned, ()) if sent is None else (sent, columns)


def _commit(fs: pafs.FileSystem, paths: commit.JobPaths, stats: Any, request: WriteRequest, df: Any,
            conf: dict[str, str]) -> SparkWriteResult:
    """Driver-side job commit: committed tasks' files into place, `_SUCCESS`, staging removed; under the path's
    lock, where the save mode is checked again (another job may have written the path meanwhile)."""
    committed = commit.committed_tasks(fs, paths)
    rows = stats.to_pylist()
    lost = sorted({r["task"] for r in rows} - set(committed))
    if lost:  # never report success with files missing
        raise CommitError(f"the committed files of task(s) {lost} are gone from {paths.job_dir!r}; nothing was "
                          f"committed to {request.path!r}")
    files: list[tuple[int, str]] = []
    total_rows = total_bytes = 0
    for task, attempt in sorted(committed.items()):
        mine = [r for r in rows if r["task"] == task and r["attempt"] == attempt]
        if not mine:  # the attempt Spark reported is not the one that committed: trust the directory
            mine = _listed(fs, paths, task)
        for r in sorted(mine, key=lambda r: r["path"]):
            files.append((task, r["path"]))
            total_rows += r["rows"]
            total_bytes += r["bytes"]
    if not committed and not request.partitioned:  # no task ran at all (a DataFrame of no partitions)
        files.append(_empty_file(fs, paths, df, conf))
    moved = commit.publish_job(fs, paths, files, request.mode, request.dynamic)
    if moved is None:  # mode ignore, and another job wrote the path meanwhile
        return SparkWriteResult(request.path, "", writer="none")
    rel = [posixpath.relpath(m, paths.root) for m in moved]
    parts = {posixpath.dirname(r) for r in rel} - {""}
    seconds = {r["task"]: TaskSeconds(r["receive_s"], r["tail_s"], r["task_s"]) for r in rows if r["task"] in committed
               and r["attempt"] == committed[r["task"]]}
    return SparkWriteResult(request.path, paths.job, rel, total_rows, total_bytes, attempts=committed,
                            partitions=parts, task_seconds=seconds)


def _listed(fs: pafs.FileSystem, paths: commit.JobPaths, task: int) -> list[dict[str, Any]]:
    """Stats of a committed task read from its directory (rows from each file's footer)."""
    import pyarrow.parquet as pq

    base = paths.task_dir(task)
    out = []
    for info in fs.get_file_info(pafs.FileSelector(base, recursive=True)):
        if info.type != pafs.FileType.File or posixpath.basename(info.path) == commit.ATTEMPT_MARKER:
            continue
        with fs.open_input_file(info.path) as f:
            rows = pq.ParquetFile(f).metadata.num_rows
        out.append({"path": posixpath.relpath(info.path, base), "rows": rows, "bytes": info.size})
    return out


def _empty_file(fs: pafs.FileSystem, paths: commit.JobPaths, df: Any, conf: dict[str, str]) -> tuple[int, str]:
    """An empty job still leaves one schema-only file (as Spark writes for an empty DataFrame)."""
    import os
    import tempfile

    from ..api import write_table
    from .policy.naming import data_file_name

    schema = _arrow_schema(df)
    opts = WriteOptions.from_conf(conf, device="cpu")
    name = data_file_name(0, paths.job, 0, opts.compression)
    with tempfile.TemporaryDirectory() as tmp:
        local = os.path.join(tmp, name)
        write_table(schema.empty_table(), local, options=opts)
        target = posixpath.join(paths.task_dir(0), name)
        fs.create_dir(paths.task_dir(0), recursive=True)
        pafs.copy_files(local, target, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)
    return 0, name


def _spark_write(df: Any, request: WriteRequest, reason: str) -> SparkWriteResult:
    """The same write through Spark's own Parquet writer."""
    from .dropin import spark_writer

    mode = request.mode
    writer = spark_writer(df).mode("error" if mode == "errorifexists" else mode).format("parquet")
    for key, value in (request.options or {}).items():
        writer = writer.option(key, str(value))
    if request.max_records:
        writer = writer.option("maxRecordsPerFile", str(request.max_records))
    if request.partition_by:
        writer = writer.partitionBy(*request.partition_by)
    if request.bucket:
        writer = writer.bucketBy(request.bucket[0], *request.bucket[1])
        if request.sort_by:
            writer = writer.sortBy(*request.sort_by)
    before = _data_files(request.path)
    if request.table:
        writer.option("path", request.path).saveAsTable(request.table)
    else:
        writer.save(request.path)
    result = SparkWriteResult(request.path, "", writer="spark", fallback_reason=reason)
    _count_spark_files(result, before)
    return result


def _data_files(path: str) -> dict[str, tuple[int, int | None]]:
    """The table's data files under `path` (relative path -> (size, mtime in ns)); empty when there is none
    or the filesystem cannot be listed. Readers skip names starting with `_` or `.` in any directory."""
    import pyarrow.fs as pafs

    from ..filesystems import resolve

    try:
        fs, base = resolve(path)
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
    except (OSError, ValueError):
        return {}
    out = {}
    for info in infos:
        rel = info.path[len(base):].lstrip("/")
        if info.type == pafs.FileType.File and not any(part[:1] in "_." for part in rel.split("/")):
            out[rel] = (int(info.size or 0), info.mtime_ns)
    return out


def _count_spark_files(result: SparkWriteResult, before: dict[str, tuple[int, int | None]]) -> None:
    """Fill a fallback result with the files Spark's writer wrote (new or rewritten since `before`), their rows
    (from their footers) and bytes, as a gpuwrite result reports its own."""
    import pyarrow.parquet as pq

    from ..filesystems import resolve

    after = _data_files(result.path)
    fs, base = resolve(result.path)
    for rel, (size, mtime) in sorted(after.items()):
        if before.get(rel) == (size, mtime):
            continue
        try:
            with fs.open_input_file(f"{base}/{rel}") as f:
                result.rows += pq.ParquetFile(f).metadata.num_rows
        except (OSError, ValueError):
            continue  # not a Parquet file Spark wrote (a stray file in the table directory)
        result.files.append(rel)
        result.bytes += size


def _ddl(schema: Any) -> str:
    """Column list for CREATE TABLE from a Spark StructType."""
    return ", ".join(f"`{f.name.replace('`', '``')}` {f.dataType.simpleString()}"
                     + ("" if f.nullable else " NOT NULL") for f in schema.fields)


def register_table(spark: Any, request: WriteRequest, schema: Any) -> None:
    """Create (or, with mode overwrite / append, replace) the catalog table `request.table` over the written
    files, with its partitions and bucket spec, so Spark reads it by name, prunes partitions and uses the
    buckets."""
    name, path, partition_by, bucket = request.table, request.path, request.partition_by, request.bucket
    exists = spark.catalog.tableExists(name)
    if exists and request.mode in ERROR_MODES:
        raise GpuwriteError(f"table {name!r} already exists (mode='error')")
    if exists:
        spark.sql(f"DROP TABLE {name}")
    location = path.replace("'", "\\'")
    sql = f"CREATE TABLE {name} ({_ddl(schema)}) USING parquet"
    if partition_by:
        sql += " PARTITIONED BY (" + ", ".join(f"`{c}`" for c in partition_by) + ")"
    if bucket:
        sql += " CLUSTERED BY (" + ", ".join(f"`{c}`" for c in bucket[1]) + f") INTO {bucket[0]} BUCKETS"
    sql += f" LOCATION '{location}'"
    spark.sql(sql)
    if partition_by:
        spark.sql(f"ALTER TABLE {name} RECOVER PARTITIONS")
