"""The DataFrameWriterV2 a session gets from `df.writeTo(table)` while `gpuwrite.spark.enable` is on.

For a table of the session catalog with the parquet provider (`using("parquet")`, or no `using` with
`spark.sql.sources.default` = parquet), `create`, `replace` and `createOrReplace` are CTAS writes: Spark's own
V2 writer makes the table from zero rows (so its checks, errors and table metadata are Spark's), then gpuwrite
writes the rows into it (`insert.create_table`). `append`, `overwrite` and `overwritePartitions` write nothing
in Spark into such a table: its analyzer refuses every DataFrameWriterV2 write into a V1 table (a Parquet table
of the session catalog is one) before resolving a column, so these run Spark's own writer, which raises that
error (or writes a catalog plugin's V2 table), and each is counted as a fallback with Spark's verdict as its
reason. Other catalogs, partition transforms, `clusterBy` and other providers run Spark's own writer too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from pyspark.sql.readwriter import DataFrameWriterV2 as SparkDataFrameWriterV2

from .conf import all_conf, with_conf_snapshot
from .dropin import record_fallback, spark_writer_v2
from .readwriter import _table_route_problem, to_str
from .routing import WriterState, committer_problem, enabled, layout_problem, source_problem

_PLAIN_COLUMN = re.compile(r"^Column<'(`?)([^'`()]+)\1'>$")
# SPEC: QueryCompilationErrors.writeIntoV1TableNotAllowedError ("Cannot write into v1 table: ...")
V1_TABLE_REFUSED = "_LEGACY_ERROR_TEMP_1012"


def plain_column(col: Any) -> str | None:
    """The name a partitionedBy argument refers to when it is a plain column (not a transform)."""
    if isinstance(col, str):
        return col
    match = _PLAIN_COLUMN.match(str(col))
    return match.group(2) if match else None


class DropinWriterV2Mixin:
    """Records a V2 writer's settings and routes create / replace / createOrReplace."""

    _gw_df: Any
    _gw_table: str
    _gw_v2: dict[str, Any]

    def _gw_init(self, df: Any, table: str) -> None:
        self._gw_df, self._gw_table = df, table
        self._gw_v2 = {"using": None, "options": {}, "properties": {}, "partitions": [], "transforms": False,
                       "cluster": False}

    def using(self, provider: str) -> Any:
        super().using(provider)  # type: ignore[misc]
        self._gw_v2["using"] = provider
        return self

    def option(self, key: str, value: Any) -> Any:
        super().option(key, value)  # type: ignore[misc]
        if value is not None:
            self._gw_v2["options"][key] = to_str(value)
        return self

    def options(self, **options: Any) -> Any:
        super().options(**options)  # type: ignore[misc]
        self._gw_v2["options"].update({k: to_str(v) for k, v in options.items() if v is not None})
        return self

    def tableProperty(self, property: str, value: str) -> Any:
        super().tableProperty(property, value)  # type: ignore[misc]
        self._gw_v2["properties"][property] = value
        return self

    def partitionedBy(self, col: Any, *cols: Any) -> Any:
        super().partitionedBy(col, *cols)  # type: ignore[misc]
        names = [plain_column(c) for c in (col, *cols)]
        self._gw_v2["transforms"] = any(n is None for n in names)
        self._gw_v2["partitions"] = [n for n in names if n is not None]
        return self

    def clusterBy(self, col: str, *cols: str) -> Any:
        super().clusterBy(col, *cols)  # type: ignore[misc]
        self._gw_v2["cluster"] = True
        return self

    def create(self) -> None:
        if not self._gw_ctas("create"):
            super().create()  # type: ignore[misc]

    def replace(self) -> None:
        if not self._gw_ctas("replace"):
            super().replace()  # type: ignore[misc]

    def createOrReplace(self) -> None:
        if not self._gw_ctas("createOrReplace"):
            super().createOrReplace()  # type: ignore[misc]

    def append(self) -> None:
        self._gw_spark_write("append", super().append)  # type: ignore[misc]

    def overwrite(self, condition: Any) -> None:
        self._gw_spark_write("overwrite", partial(super().overwrite, condition))  # type: ignore[misc]

    def overwritePartitions(self) -> None:
        self._gw_spark_write("overwritePartitions", super().overwritePartitions)  # type: ignore[misc]

    def _gw_spark_write(self, call: str, write: Callable[[], None]) -> None:
        """append / overwrite / overwritePartitions: Spark's own writer, counted as a fallback whose reason is
        what Spark did with it (see `spark_verdict`)."""
        conf = all_conf(self._gw_df.sparkSession)
        reason = None if enabled(conf) else "spark.gpuwrite.enabled is false"
        reason = reason or _table_route_problem(self._gw_df.sparkSession, self._gw_table, conf)
        try:
            write()
        except Exception as err:
            record_fallback(f"writeTo.{call}", reason or spark_verdict(self._gw_table, err))
            raise
        record_fallback(f"writeTo.{call}", reason or spark_verdict(self._gw_table, None))

    def _gw_problem(self) -> str | None:
        """Why this V2 CTAS is not gpuwrite's."""
        from .conf import session_conf, writer_conf
        from .job import fallback_reason
        from .routing import DEFAULT_SOURCE_KEY, local_path

        df, v2 = self._gw_df, self._gw_v2
        conf = all_conf(df.sparkSession)
        if not enabled(conf):
            return "spark.gpuwrite.enabled is false"
        if v2["transforms"] or v2["cluster"]:
            return "partition transforms or clusterBy: Spark's"
        state = WriterState(partition_by=v2["partitions"] or None, options=dict(v2["options"]))
        problem = _table_route_problem(df.sparkSession, self._gw_table, conf) \
            or source_problem(v2["using"] or conf.get(DEFAULT_SOURCE_KEY, "parquet"), conf) \
            or committer_problem(conf, v2["options"]) or layout_problem(state, list(df.columns), conf, True)
        if problem:
            return problem
        if local_path(conf.get("spark.sql.warehouse.dir", "spark-warehouse")) is None:
            return "the warehouse is not on the local file system"
        sql, hadoop = session_conf(df.sparkSession)
        return fallback_reason(df, writer_conf(sql, hadoop, v2["options"])[0])

    @with_conf_snapshot
    def _gw_ctas(self, call: str) -> bool:
        """create / replace / createOrReplace through gpuwrite; False (reason recorded) to run Spark's."""
        from .insert import create_table

        reason = self._gw_problem()
        if reason:
            record_fallback(f"writeTo.{call}", reason)
            return False
        create_table(self._gw_df, self._gw_table, lambda empty: getattr(self._gw_replay(empty), call)(),
                     self._gw_v2["options"])
        return True

    def _gw_replay(self, df: Any) -> Any:
        """Spark's own V2 writer for `df`, told what this one was told."""
        v2 = self._gw_v2
        writer = spark_writer_v2(df, self._gw_table)
        if v2["using"] is not None:
            writer = writer.using(v2["using"])
        if v2["options"]:
            writer = writer.options(**v2["options"])
        for key, value in v2["properties"].items():
            writer = writer.tableProperty(key, value)
        if v2["partitions"]:
            writer = writer.partitionedBy(*v2["partitions"])
        return writer


def spark_verdict(table: str, err: BaseException | None) -> str:
    """Why a V2 append / overwrite / overwritePartitions into a session-catalog table is Spark's.

    SPEC: Analyzer.ResolveRelations resolves a V2WriteCommand's table first, before ResolveOutputRelation
    matches a column: a V1 table (UnresolvedCatalogRelation: every Parquet table of the session catalog) is
    refused with writeIntoV1TableNotAllowedError, so Spark writes no row there whatever the columns, options or
    condition; gpuwrite, to behave the same, lets Spark's writer raise it. Without an error Spark wrote a
    DataSource V2 table (a catalog plugin's), which gpuwrite does not write.
    """
    if err is None:
        return f"{table} is a DataSource V2 table of the session catalog: Spark's own V2 write"
    condition = getattr(err, "getCondition", lambda: None)()
    first = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
    if condition == V1_TABLE_REFUSED:
        return (f"{table} is a V1 table: Spark refuses DataFrameWriterV2 writes into V1 tables and raises "
                f"{type(err).__name__} [{condition}] {first}")
    return f"Spark's writer raises {type(err).__name__} [{condition}]: {first}"


class DataFrameWriterV2(DropinWriterV2Mixin, SparkDataFrameWriterV2):
    """Spark's DataFrameWriterV2 whose session-catalog Parquet CTAS go through gpuwrite."""

    def __init__(self, df: Any, table: str) -> None:
        SparkDataFrameWriterV2.__init__(self, df, table)
        self._gw_init(df, table)
