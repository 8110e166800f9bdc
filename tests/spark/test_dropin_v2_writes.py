"""DataFrameWriterV2 `append`, `overwritePartitions` and `overwrite(condition)` with the drop-in on, against
Spark's own writer in the same session.

Spark's analyzer refuses every V2 write into a V1 table (each Parquet table of the session catalog is one)
before it resolves a column (SPEC: Analyzer.ResolveRelations, writeIntoV1TableNotAllowedError), so the faithful
drop-in writes nothing there and raises Spark's own error: these tests pin that, for by-name reordering, missing,
extra, re-cased and widened columns, empty DataFrames, partitioned and bucketed tables (made by Spark's SQL or
by gpuwrite's V2 create), tables that do not exist and views, under the confs that would steer by-name
resolution; they compare error class, condition and message, table rows, partition listing and the files in
the table's directory, and check each call is counted as a fallback with Spark's verdict as its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dropin_harness import both, layout
from pyspark.sql.functions import col, lit

from gpuwrite.spark import dropin
from gpuwrite.spark.readwriter_v2 import V1_TABLE_REFUSED

pytestmark = pytest.mark.spark

ROWS = [(1, "a", 1), (2, "b", 2), (3, "c", 1)]
CALLS = ["append", "overwritePartitions", "overwrite(true)", "overwrite(p = 1)", "overwrite(a = 1)"]


def _frames(spark: Any) -> dict[str, Any]:
    """The DataFrames written: the table's columns, then each way by-name resolution could differ."""
    df = spark.createDataFrame([(7, "x", 1), (8, "y", 3)], "a int, b string, p int")
    return {
        "same": df,
        "reordered": df.select("p", "b", "a"),
        "missing": df.select("a", "p"),
        "extra": df.withColumn("z", lit(0)),
        "recased": df.selectExpr("a as A", "b as B", "p"),
        "widened": df.selectExpr("cast(a as smallint) as a", "b", "p"),
        "narrowed": df.selectExpr("cast(a as bigint) as a", "b", "p"),
        "empty": df.limit(0),
    }


def _write(df: Any, table: str, call: str) -> None:
    writer = df.writeTo(table)
    if call == "append":
        writer.append()
    elif call == "overwritePartitions":
        writer.overwritePartitions()
    elif call == "overwrite(true)":
        writer.overwrite(lit(True))
    elif call == "overwrite(p = 1)":
        writer.overwrite(col("p") == 1)
    else:
        writer.overwrite(col("a") == 1)


def _outcome(df: Any, table: str, call: str, tag: str) -> tuple[str, str | None, str]:
    """What a user sees of one write: the exception's class, condition and first line (tag masked)."""
    try:
        _write(df, table, call)
    except Exception as err:  # compared with Spark's own, whatever it is
        condition = getattr(err, "getCondition", lambda: None)()
        return type(err).__name__, condition, str(err).splitlines()[0].replace(f"_{tag}", "_TAG")
    return "written", None, ""


def _state(spark: Any, table: str, location: Path | None) -> list[Any]:
    """The table's rows (sorted), partitions and files (job ids masked)."""
    rows = sorted(tuple(r) for r in spark.table(table).collect())
    parts = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect()) \
        if spark.catalog.listColumns(table)[-1].isPartition else []
    return [rows, parts, layout(location) if location else []]


def _location(spark: Any, table: str) -> Path:
    import json
    from urllib.parse import urlparse

    doc = json.loads(spark.sql(f"DESCRIBE TABLE EXTENDED {table} AS JSON").collect()[0][0])
    return Path(urlparse(doc["location"]).path)


def test_v2_writes_into_session_catalog_parquet_tables_raise_as_spark(spark):
    frames = _frames(spark)
    source = spark.createDataFrame(ROWS, "a int, b string, p int")

    def scenario(tag: str) -> list[Any]:
        plain, parts, bucketed, made = (f"v2w_plain_{tag}", f"v2w_parts_{tag}", f"v2w_bucketed_{tag}",
                                        f"v2w_made_{tag}")
        for t in (plain, parts, bucketed, made):
            spark.sql(f"DROP TABLE IF EXISTS {t}")
        spark.sql(f"CREATE TABLE {plain} (a INT, b STRING, p INT) USING parquet")
        spark.sql(f"CREATE TABLE {parts} (a INT, b STRING, p INT) USING parquet PARTITIONED BY (p)")
        spark.sql(f"CREATE TABLE {bucketed} (a INT, b STRING, p INT) USING parquet PARTITIONED BY (p) "
                  "CLUSTERED BY (a) INTO 2 BUCKETS")
        for t in (plain, parts, bucketed):
            spark.sql(f"INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 1)")
        source.writeTo(made).using("parquet").partitionedBy("p").create()  # gpuwrite's, when enabled
        seen: list[Any] = []
        for t in (plain, parts, bucketed, made):
            where = _location(spark, t)
            before = _state(spark, t, where)
            seen.append(before)
            seen.extend((t.replace(tag, "TAG"), call, name, _outcome(df, t, call, tag))
                        for call in CALLS for name, df in frames.items())
            seen.append(_state(spark, t, where) == before)
        for t in (plain, parts, bucketed, made):
            spark.sql(f"DROP TABLE IF EXISTS {t}")
        return seen

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs
    outcomes = [s for s in ours if isinstance(s, tuple)]
    assert len(outcomes) == 4 * len(CALLS) * len(_frames(spark))
    # Spark writes nothing: every call raises its V1-table refusal and leaves rows, partitions and files as
    # they were (the rows first written are there, so the comparison of states can fail)
    assert all(o[3][:2] == ("AnalysisException", V1_TABLE_REFUSED) and "Cannot write into v1 table" in o[3][2]
               for o in outcomes)
    states = [s for s in ours if isinstance(s, list)]
    assert [s[0] for s in states] == [sorted(ROWS)] * 4 and states[1][1] == ["p=1", "p=2"] and states[3][2]
    assert [s for s in ours if isinstance(s, bool)] == [True] * 4
    assert footers.all_gpuwrite()  # the V2 create was gpuwrite's, and no V2 write committed a file
    calls = dropin.fallbacks()
    assert len(calls) == len(outcomes)
    assert {f.call for f in calls} == {"writeTo.append", "writeTo.overwritePartitions", "writeTo.overwrite"}
    assert all("is a V1 table" in f.reason and V1_TABLE_REFUSED in f.reason for f in calls), calls[:3]


def test_v2_writes_into_missing_tables_and_views_raise_as_spark(spark):
    frames = _frames(spark)

    def scenario(tag: str) -> list[Any]:
        view = f"v2w_view_{tag}"
        frames["same"].createOrReplaceTempView(view)
        seen = []
        for table in (f"v2w_missing_{tag}", view, f"spark_catalog.default.v2w_missing_{tag}"):
            for call in CALLS:
                for name in ("same", "missing", "empty"):
                    seen.append((call, name, _outcome(frames[name], table, call, tag)))
        spark.catalog.dropTempView(view)
        return seen

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and footers.created_by == []
    conditions = {o[2][1] for o in ours}
    assert conditions == {"TABLE_OR_VIEW_NOT_FOUND", "VIEW_WRITE_NOT_ALLOWED"}, conditions
    assert len(dropin.fallbacks()) == len(ours)
    assert all(f.reason.startswith("Spark's writer raises AnalysisException [") for f in dropin.fallbacks())


@pytest.mark.parametrize("confs", [{"spark.sql.caseSensitive": "true"},
                                   {"spark.sql.storeAssignmentPolicy": "LEGACY"},
                                   {"spark.sql.sources.partitionOverwriteMode": "dynamic"},
                                   {"spark.sql.sources.useV1SourceList": "avro,csv,json,kafka,orc,text"}])
def test_v2_writes_raise_as_spark_under_the_confs_of_by_name_resolution(spark, confs):
    frames = _frames(spark)

    def scenario(tag: str) -> list[Any]:
        table = f"v2w_conf_{tag}"
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        spark.sql(f"CREATE TABLE {table} (a INT, b STRING, p INT) USING parquet PARTITIONED BY (p)")
        spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 1)")
        for key, value in confs.items():
            spark.conf.set(key, value)
        try:
            seen = [(call, name, _outcome(frames[name], table, call, tag))
                    for call in CALLS for name in ("reordered", "recased", "widened", "narrowed")]
        finally:
            for key in confs:
                spark.conf.unset(key)
        seen.append(_state(spark, table, None))
        spark.sql(f"DROP TABLE {table}")
        return seen

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and ours[-1] == [[(1, "a", 1)], ["p=1"], []] and footers.created_by == []
    assert all(o[2][1] == V1_TABLE_REFUSED for o in ours[:-1])
    assert len(dropin.fallbacks()) == len(ours) - 1


def test_v2_writes_paused_by_the_switch_say_so(spark):
    df = _frames(spark)["same"]

    def scenario(tag: str) -> list[Any]:
        table = f"v2w_paused_{tag}"
        spark.sql(f"DROP TABLE IF EXISTS {table}")
        spark.sql(f"CREATE TABLE {table} (a INT, b STRING, p INT) USING parquet")
        spark.conf.set("spark.gpuwrite.enabled", "false")
        try:
            out = [_outcome(df, table, call, tag) for call in CALLS]
        finally:
            spark.conf.unset("spark.gpuwrite.enabled")
        spark.sql(f"DROP TABLE {table}")
        return out

    theirs, ours, _ = both(spark, scenario)
    assert ours == theirs and {o[1] for o in ours} == {V1_TABLE_REFUSED}
    assert [f.reason for f in dropin.fallbacks()] == ["spark.gpuwrite.enabled is false"] * len(CALLS)
