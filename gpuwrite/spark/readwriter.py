"""The DataFrameWriter a session gets from `df.write` while `gpuwrite.spark.enable` is on.

It is Spark's own writer class (a subclass, so isinstance checks and every method still work) that also
records what it is told, and routes its Parquet writes through gpuwrite: `parquet(path)`, `save(path)` with a
Parquet format, `saveAsTable` with the parquet provider, `insertInto` a Parquet table. Every other call, and
every write gpuwrite does not take, runs Spark's own code unchanged; each such fallback is logged and counted
(`dropin.fallbacks()`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql.readwriter import DataFrameWriter as SparkDataFrameWriter

from .conf import all_conf, with_conf_snapshot
from .dropin import record_fallback, spark_writer
from .routing import (
    MODE_NAMES,
    WriterState,
    committer_problem,
    enabled,
    layout_problem,
    local_path,
    partition_type_problem,
    resolved,
    source_of,
    source_problem,
)
from .tables import describe_or_reason, in_session_catalog


def to_str(value: Any) -> str:
    """An option value as Spark's writer passes it on (SPEC: pyspark.sql.utils.to_str)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


class DropinWriterMixin:
    """Records the writer's settings and routes its terminal calls; combined with Spark's writer class."""

    _gw_df: Any
    _gw: WriterState

    def _gw_init(self, df: Any) -> None:
        self._gw_df = df
        self._gw = WriterState()

    # -- settings: Spark's method first (it validates), then the record --------------------------------

    def mode(self, saveMode: str | None) -> Any:
        super().mode(saveMode)  # type: ignore[misc]
        if saveMode is not None:
            self._gw.mode = MODE_NAMES[saveMode.lower()]
        return self

    def format(self, source: str) -> Any:
        super().format(source)  # type: ignore[misc]
        self._gw.source = source
        return self

    def option(self, key: str, value: Any) -> Any:
        super().option(key, value)  # type: ignore[misc]
        if value is not None:
            self._gw.option(key, to_str(value))
        return self

    def options(self, **options: Any) -> Any:
        for key, value in options.items():
            self.option(key, value)
        return self

    def partitionBy(self, *cols: Any) -> Any:
        super().partitionBy(*cols)  # type: ignore[misc]
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        self._gw.partition_by = [str(c) for c in cols]
        return self

    def bucketBy(self, numBuckets: int, col: Any, *cols: Any) -> Any:
        super().bucketBy(numBuckets, col, *cols)  # type: ignore[misc]
        names = list(col) if isinstance(col, (list, tuple)) else [col, *cols]
        self._gw.bucket_by = (numBuckets, [str(c) for c in names])
        return self

    def sortBy(self, col: Any, *cols: Any) -> Any:
        super().sortBy(col, *cols)  # type: ignore[misc]
        names = list(col) if isinstance(col, (list, tuple)) else [col, *cols]
        self._gw.sort_by = [str(c) for c in names]
        return self

    def clusterBy(self, *cols: Any) -> Any:
        super().clusterBy(*cols)  # type: ignore[misc]
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        self._gw.cluster_by = [str(c) for c in cols]
        return self

    def _apply(self, mode: str | None, partition_by: Any, source: str | None, options: dict[str, Any]) -> None:
        """The keyword arguments of save / saveAsTable / parquet, applied as Spark's methods apply them."""
        self.mode(mode).options(**options)
        if partition_by is not None:
            self.partitionBy(partition_by)
        if source is not None:
            self.format(source)

    # -- terminal calls --------------------------------------------------------------------------------

    @with_conf_snapshot
    def parquet(self, path: str, mode: str | None = None, partitionBy: Any = None,
                compression: str | None = None) -> None:
        self._apply(mode, partitionBy, None, {"compression": compression})
        if not self._gw_path_write(path, "parquet", "parquet"):
            super().parquet(path)  # type: ignore[misc]

    @with_conf_snapshot
    def save(self, path: str | None = None, format: str | None = None, mode: str | None = None,
             partitionBy: Any = None, **options: Any) -> None:
        self._apply(mode, partitionBy, format, options)
        conf = all_conf(self._gw_df.sparkSession)
        target = path if path is not None else self._gw.get_option("path")
        if path is not None and self._gw.get_option("path") is not None:
            target = None  # SPEC: DataFrameWriter.save: a path and a 'path' option: Spark raises
        if target is None:
            record_fallback("save", "no path, or both a path and a 'path' option: Spark's writer raises")
        if target is None or not self._gw_path_write(target, source_of(self._gw, conf), "save"):
            super().save(path)  # type: ignore[misc]

    @with_conf_snapshot
    def saveAsTable(self, name: str, format: str | None = None, mode: str | None = None,
                    partitionBy: Any = None, **options: Any) -> None:
        self._apply(mode, partitionBy, format, options)
        if not self._gw_save_as_table(name):
            super().saveAsTable(name)  # type: ignore[misc]

    @with_conf_snapshot
    def insertInto(self, tableName: str, overwrite: bool | None = None) -> None:
        if overwrite is not None:
            self.mode("overwrite" if overwrite else "append")
        if not self._gw_insert_into(tableName):
            super().insertInto(tableName)  # type: ignore[misc]

    def _gw_other(self, call: str, method: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        record_fallback(call, f"{call}() is not a Parquet write")
        method(*args, **kwargs)

    def json(self, *args: Any, **kwargs: Any) -> None:
        self._gw_other("json", super().json, *args, **kwargs)  # type: ignore[misc]

    def csv(self, *args: Any, **kwargs: Any) -> None:
        self._gw_other("csv", super().csv, *args, **kwargs)  # type: ignore[misc]

    def orc(self, *args: Any, **kwargs: Any) -> None:
        self._gw_other("orc", super().orc, *args, **kwargs)  # type: ignore[misc]

    def text(self, *args: Any, **kwargs: Any) -> None:
        self._gw_other("text", super().text, *args, **kwargs)  # type: ignore[misc]

    def xml(self, *args: Any, **kwargs: Any) -> None:
        self._gw_other("xml", super().xml, *args, **kwargs)  # type: ignore[misc]

    def jdbc(self, *args: Any, **kwargs: Any) -> None:
        self._gw_other("jdbc", super().jdbc, *args, **kwargs)  # type: ignore[misc]

    # -- routing ---------------------------------------------------------------------------------------

    def _gw_common(self, source: str, table: bool, df: Any = None) -> str | None:
        """Checks every route shares: the switch, the source, the committer, the layout, gpuwrite's limits
        (of `df`, the DataFrame as it will be written: the writer's own by default)."""
        from .conf import session_conf, writer_conf
        from .job import fallback_reason

        df = self._gw_df if df is None else df
        conf = all_conf(df.sparkSession)
        if not enabled(conf):
            return "spark.gpuwrite.enabled is false"
        problem = source_problem(source, conf) or committer_problem(conf, self._gw.options) \
            or layout_problem(self._gw, list(df.columns), conf, table) \
            or partition_type_problem(self._gw, df.schema, conf)
        if problem:
            return problem
        sql, hadoop = session_conf(df.sparkSession)
        try:
            options, _ = writer_conf(sql, hadoop, self._gw.options)
        except Exception as err:
            return f"an option gpuwrite cannot read: {err}"
        return fallback_reason(df, options)

    def _gw_path_write(self, path: str, source: str, call: str) -> bool:
        """parquet(path) / save(path) through gpuwrite; False (reason recorded) when Spark's writer must run."""
        reason = self._gw_common(source, table=False) or _path_problem(self._gw_df, path, self._gw.mode)
        if reason == "ignore":
            return True  # SPEC: SaveMode.Ignore and the path exists: nothing is written
        if reason:
            record_fallback(call, reason)
            return False
        from .job import write_parquet

        state = resolved(self._gw, list(self._gw_df.columns), all_conf(self._gw_df.sparkSession))
        write_parquet(self._gw_df, str(local_path(path)), mode=state.mode, partition_by=state.partition_by,
                      options=state.options, fallback="error")
        return True

    def _gw_save_as_table(self, name: str) -> bool:
        """saveAsTable through gpuwrite; False (reason recorded) when Spark's writer must run."""
        from .insert import by_name, create_table, insert_into_table, table_problem

        df, state = self._gw_df, self._gw
        spark = df.sparkSession
        conf = all_conf(spark)
        reason = _table_route_problem(spark, name, conf) or self._gw_common(source_of(state, conf), table=True)
        if reason is None and not spark.catalog.tableExists(name):
            location = state.get_option("path") or conf.get("spark.sql.warehouse.dir", "spark-warehouse")
            if local_path(location) is None:
                reason = f"the new table's location {location} is not on the local file system"
        if reason is None and spark.catalog.tableExists(name) and state.mode != "overwrite":
            if state.mode == "ignore":
                return True  # SPEC: DataFrameWriter.saveAsTable: (true, SaveMode.Ignore) => do nothing
            if state.mode == "error":
                reason = "the table exists and mode is error: Spark's writer raises"
            else:
                info = describe_or_reason(spark, name)
                if isinstance(info, str):
                    record_fallback("saveAsTable", info)
                    return False
                aligned = by_name(df, info, conf.get("spark.sql.caseSensitive", "false").lower() == "true")
                reason = table_problem(spark, info) or (aligned if isinstance(aligned, str) else None) \
                    or _same_layout(resolved(state, list(df.columns), conf), info)
                if reason is None:
                    insert_into_table(aligned, info, False, info.storage_properties)
                    return True
        if reason:
            record_fallback("saveAsTable", reason)
            return False
        options = {k: v for k, v in state.options.items() if k.lower() != "path"}
        create_table(df, name, lambda empty: _replay(spark_writer(empty), state).saveAsTable(name), options)
        return True

    def _gw_insert_into(self, name: str) -> bool:
        """insertInto through gpuwrite; False (reason recorded) when Spark's writer must run."""
        from .insert import by_position, insert_into_table, table_problem

        df, state = self._gw_df, self._gw
        spark = df.sparkSession
        conf = all_conf(spark)
        reason = _table_route_problem(spark, name, conf)
        if reason is None and (state.partition_by is not None or state.bucket_by or state.sort_by):
            reason = "insertInto with partitionBy / bucketBy / sortBy: Spark's writer raises"
        if reason is None and not spark.catalog.tableExists(name):
            reason = "the table does not exist: Spark's writer raises"
        info = describe_or_reason(spark, name) if reason is None else None
        if isinstance(info, str):
            reason, info = info, None
        if info is not None:
            reason = table_problem(spark, info)
            aligned = by_position(df, info) if reason is None else None
            if isinstance(aligned, str):
                reason = aligned
            if reason is None:  # by position: the DataFrame's own names do not matter
                reason = self._gw_common(info.provider, table=True, df=aligned)
            if reason is None and state.mode == "overwrite" and _reads_path(df, str(local_path(info.location))):
                reason = "the DataFrame reads the table it overwrites: Spark's writer decides (it raises)"
            if reason is None:
                insert_into_table(aligned, info, state.mode == "overwrite", info.storage_properties)
                return True
        record_fallback("insertInto", reason or "")
        return False


def _table_route_problem(spark: Any, name: str, conf: dict[str, str]) -> str | None:
    """Table writes gpuwrite leaves to Spark: other catalogs, and sessions without a JVM (Spark Connect)."""
    if not hasattr(spark, "_jsparkSession"):
        return "Spark Connect: the catalog updates after a table write need the session's JVM"
    if not in_session_catalog(name, conf):
        return f"{name} is not in the session catalog"
    return None


def _same_layout(state: WriterState, info: Any) -> str | None:
    """saveAsTable append: partitionBy / bucketBy given must be the table's (SPEC: PreprocessTableCreation)."""
    if state.partition_by and [c.lower() for c in state.partition_by] != [c.lower() for c in info.partition_columns]:
        return "partitionBy differs from the existing table's: Spark's writer raises"
    if state.bucket_by and (state.bucket_by[0], [c.lower() for c in state.bucket_by[1]]) != \
            (info.bucket[0] if info.bucket else 0, [c.lower() for c in (info.bucket[1] if info.bucket else [])]):
        return "bucketBy differs from the existing table's: Spark's writer raises"
    return None


def _path_problem(df: Any, path: str, mode: str) -> str | None:
    """Path writes Spark's writer must do (it raises, or gpuwrite cannot reach the path); "ignore" when
    nothing is to be written."""
    import os

    local = local_path(path)
    if local is None:
        return f"{path} is not on the local file system"
    exists = os.path.lexists(local)
    if exists and mode == "error":
        return "the path exists and mode is error: Spark's writer raises"
    if exists and mode == "ignore":
        return "ignore"
    if os.path.isfile(local) and mode in ("append", "overwrite"):  # gpuwrite's own API refuses to replace a file
        return "the path is a file: Spark's writer decides what happens"
    if exists and mode == "overwrite" and _reads_path(df, local):
        return "the DataFrame reads the path it overwrites: Spark's writer raises"
    return None


def _reads_path(df: Any, local: str) -> bool:
    """Whether any file the DataFrame reads is under `local`."""
    prefix = local.rstrip("/") + "/"
    for name in df.inputFiles():
        own = local_path(name)
        if own is not None and (own == local or own.startswith(prefix)):
            return True
    return False


def _replay(writer: Any, state: WriterState) -> Any:
    """Spark's own writer told what the drop-in writer was told."""
    writer = writer.mode(state.mode)
    if state.source is not None:
        writer = writer.format(state.source)
    for key, value in state.options.items():
        writer = writer.option(key, value)
    if state.partition_by is not None:
        writer = writer.partitionBy(*state.partition_by)
    if state.bucket_by:
        writer = writer.bucketBy(state.bucket_by[0], state.bucket_by[1])
    if state.sort_by:
        writer = writer.sortBy(state.sort_by)
    return writer


class DataFrameWriter(DropinWriterMixin, SparkDataFrameWriter):
    """Spark's DataFrameWriter whose Parquet writes go through gpuwrite (see gpuwrite.spark.enable)."""

    def __init__(self, df: Any) -> None:
        SparkDataFrameWriter.__init__(self, df)
        self._gw_init(df)
