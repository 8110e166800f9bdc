"""Writes into catalog tables with gpuwrite, as Spark's commands make them.

`insert_into_table` is InsertIntoHadoopFsRelationCommand over a catalog table: the table's location, partition
columns, buckets and sort columns, its storage properties as options, static or dynamic partition overwrite,
then the catalog updates (`tables.refresh_after_insert`). `create_table` is a CTAS: Spark's own writer creates
the table from the DataFrame's first zero rows (so the table's kind, location, schema, partitioning, buckets,
properties and every check and error are Spark's), then gpuwrite overwrites it with the rows, as
CreateDataSourceTableAsSelectCommand writes a new table with SaveMode.Overwrite.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..dataset import job_commit as commit
from .conf import session_conf, writer_conf
from .job import SparkWriteResult, WriteRequest, dynamic_overwrite, run_job
from .routing import local_path, same_type
from .tables import TableInfo, catalog_partitions, describe, refresh_after_insert


def table_problem(spark: Any, info: TableInfo) -> str | None:
    """Why gpuwrite does not write into this existing table (Spark then does, or raises)."""
    if info.kind not in ("MANAGED", "EXTERNAL"):
        return f"{info.name} is a {info.kind or 'non-table'}, not a data source table"
    if info.provider.lower() != "parquet":
        return f"table {info.name} has provider {info.provider!r}, not parquet"
    if info.has_char_columns:
        return "the table has CHAR / VARCHAR columns (Spark pads and checks them on write)"
    if local_path(info.location) is None:
        return f"the table's location {info.location} is not on the local file system"
    if info.partition_columns and info.partitions_in_catalog:
        from .tables import JvmCatalog

        if JvmCatalog(spark, info.name).custom_locations(info.location, info.partition_columns):
            return "some partition of the table has a custom location"
    return None


def by_position(df: Any, info: TableInfo) -> Any | str:
    """insertInto's resolution: the DataFrame's columns by position, named as the table's; or why not.

    SPEC: DataFrameWriter.insertInto resolves by position; a type that differs needs Spark's store-assignment
    cast, so such inserts stay Spark's.
    """
    fields = df.schema.fields
    table = spark_schema(df.sparkSession, info)
    if len(fields) != len(table.fields):
        return f"the DataFrame has {len(fields)} columns and the table {len(table.fields)}: Spark's writer raises"
    for mine, theirs in zip(fields, table.fields, strict=True):
        if not same_type(mine.dataType, theirs.dataType):
            return (f"column {theirs.name!r}: the DataFrame's {mine.dataType.simpleString()} needs Spark's cast to "
                    f"{theirs.dataType.simpleString()}")
        if not theirs.nullable and mine.nullable:
            return f"column {theirs.name!r} is NOT NULL in the table: Spark checks nulls on write"
    return df.toDF(*table.fieldNames())


def by_name(df: Any, info: TableInfo, case_sensitive: bool) -> Any | str:
    """saveAsTable's append: the DataFrame's columns matched to the table's by name (Spark's resolver)."""
    names = list(df.columns)
    if len(names) != len(info.column_names):
        return "the DataFrame and the table have different numbers of columns: Spark's writer raises"
    order = []
    for wanted in info.column_names:
        hits = [n for n in names if (n == wanted if case_sensitive else n.lower() == wanted.lower())]
        if len(hits) != 1:
            return f"column {wanted!r} of the table is not one column of the DataFrame: Spark's writer raises"
        order.append(hits[0])
    return by_position(df.select(*order), info)


def spark_schema(spark: Any, info: TableInfo) -> Any:
    """The table's columns as a Spark StructType (data columns, then partition columns)."""
    return spark.table(info.name).schema


def insert_into_table(df: Any, info: TableInfo, overwrite: bool, options: Mapping[str, str]) -> SparkWriteResult:
    """Write `df` (already in the table's column order and names) into the table, as Spark's insert does."""
    spark = df.sparkSession
    path = local_path(info.location)
    assert path is not None
    sql, hadoop = session_conf(spark)
    conf, max_records = writer_conf(sql, hadoop, options)
    mode = "overwrite" if overwrite else "append"
    request = WriteRequest(path=path, mode=mode, partition_by=tuple(info.partition_columns),
                           bucket=(info.bucket[0], tuple(info.bucket[1])) if info.bucket else None,
                           sort_by=tuple(info.sort_columns), max_records=max_records, options=dict(options),
                           dynamic=dynamic_overwrite(mode, info.partition_columns, sql, options))
    before = catalog_partitions(spark, info.name) if info.partition_columns and info.partitions_in_catalog else []
    fs, root = commit.resolve(path)
    result = run_job(df, request, conf, fs, root)
    refresh_after_insert(spark, info, before, result.partitions, static_overwrite=overwrite and not request.dynamic)
    return result


def create_table(df: Any, name: str, create: Callable[[Any], None], options: Mapping[str, str]) -> SparkWriteResult:
    """CTAS with gpuwrite: `create(empty_df)` makes the table with Spark's own writer (raising what Spark
    raises), then the rows overwrite it. If writing the rows fails the new table is dropped again, as a failed
    CTAS leaves no table."""
    spark = df.sparkSession
    create(df.limit(0))
    try:
        info = describe(spark, name)
        aligned = by_name(df, info, case_sensitive=True)
        if isinstance(aligned, str):  # Spark created the table from this DataFrame, so this cannot happen
            raise RuntimeError(f"gpuwrite cannot line up the new table {name} with its DataFrame: {aligned}")
        return insert_into_table(aligned, info, True, options)
    except BaseException:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        raise
