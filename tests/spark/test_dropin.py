"""The drop-in writer against Spark's own, in one session: the parquet, mode, partitionBy, bucketBy / sortBy /
saveAsTable, insertInto and DataFrameWriterV2 cases of PySpark's test_readwriter.py (re-enacted: the wheel does
not ship its tests), Spark's save modes on an existing empty directory, dynamic and static partition overwrite,
maxRecordsPerFile, catalog partitions and statistics, fallbacks, and the switch's scope. Each case runs with
gpuwrite disabled and enabled and compares what a user sees; the files of the enabled run must be gpuwrite's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from dropin_harness import _JOB, Footers, both, data_files, gpuwrite_on, layout
from pyspark.errors import AnalysisException, PySparkTypeError, PySparkValueError
from pyspark.sql import Row
from pyspark.sql.functions import lit

from gpuwrite.spark import dropin

pytestmark = pytest.mark.spark

ROWS = [(1, "foo", 3.0), (2, "foo", 5.0), (3, "bar", -1.0), (4, "bar", 6.0)]


def _drop(spark: Any, *tables: str) -> None:
    for t in tables:
        spark.sql(f"DROP TABLE IF EXISTS {t}")


def _bucket_columns(spark: Any, table: str) -> list[str]:
    return [c.name for c in spark.catalog.listColumns(table) if c.isBucket]


def test_bucketed_write_as_test_readwriter(spark):
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])

    def scenario(tag: str) -> list[Any]:
        seen = []
        table = f"pyspark_bucket_{tag.replace('.', '_')}"
        _drop(spark, table)
        for bucket, sort in [((3, "x"), None), ((3, "x", "y"), None), ((2, "x"), ("z",)), ((3, ["x", "y"]), None),
                             ((2, "x"), (["y", "z"],)), ((2, "x"), ("y", "z"))]:
            writer = df.write.bucketBy(*bucket)
            if sort:
                writer = writer.sortBy(*sort)
            writer.mode("overwrite").saveAsTable(table)
            seen.append((_bucket_columns(spark, table), set(spark.table(table).collect())))
        for bad, error in [(("x", "y"), PySparkTypeError), ((2, ["x", "y"], "z"), PySparkValueError)]:
            with pytest.raises(error):
                df.write.bucketBy(*bad)
        _drop(spark, table)
        return seen

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and ours[0] == (["x"], set(ROWS)) and ours[1][0] == ["x", "y"]
    assert footers.all_gpuwrite() and dropin.fallbacks() == []


def test_insert_into_as_test_readwriter(spark):
    df = spark.createDataFrame([("a", 1), ("b", 2)], ["C1", "C2"])

    def scenario(tag: str) -> list[int]:
        table = f"test_table_{tag}"
        _drop(spark, table)
        counts = []
        df.write.saveAsTable(table)
        counts.append(spark.sql(f"select * from {table}").count())
        for mode, overwrite in [(None, None), ("overwrite", None), (None, True), (None, False), ("overwrite", False)]:
            writer = df.write.mode(mode) if mode else df.write
            writer.insertInto(table, overwrite)
            counts.append(spark.sql(f"select * from {table}").count())
        _drop(spark, table)
        return counts

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs == [2, 4, 2, 2, 4, 6]
    assert footers.all_gpuwrite() and dropin.fallbacks() == []


def test_cached_table_join_as_test_readwriter(spark):
    def scenario(tag: str) -> list[str]:
        one, two = f"cached_1_{tag}", f"cached_2_{tag}"
        _drop(spark, one, two)
        spark.range(10).withColumn("value_1", lit(1)).write.saveAsTable(one)
        spark.range(10).withColumnRenamed("id", "index").withColumn("value_2", lit(2)).write.saveAsTable(two)
        df1, df2, df3 = spark.read.table(one), spark.read.table(two), spark.read.table(one)
        join1 = df1.join(df2, on=df1.id == df2.index).select(df2.index, df2.value_2)
        join2 = df3.join(join1, how="left", on=join1.index == df3.id)
        out = [*join2.columns, str(sorted(join2.collect()))]
        _drop(spark, one, two)
        return out

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and ours[:4] == ["id", "value_1", "index", "value_2"]
    assert footers.all_gpuwrite() and dropin.fallbacks() == [], dropin.fallbacks()


def test_binary_type_parquet_as_test_readwriter(spark, tmp_path):
    from pyspark.sql.types import ArrayType, BinaryType, MapType, StringType, StructField, StructType

    schema = StructType([StructField("id", StringType()), StructField("bin", BinaryType()),
                         StructField("arr_bin", ArrayType(BinaryType())),
                         StructField("map_bin", MapType(StringType(), BinaryType()))])
    df = spark.createDataFrame([Row(id="1", bin=b"hello", arr_bin=[b"a"], map_bin={"key": b"value"})], schema)

    def scenario(tag: str) -> list[Any]:
        path = tmp_path / tag
        path.mkdir()  # an existing (empty) directory, overwritten
        df.write.mode("overwrite").parquet(str(path))
        seen = []
        for as_bytes in ("true", "false"):
            spark.conf.set("spark.sql.execution.pyspark.binaryAsBytes", as_bytes)
            row = spark.read.parquet(str(path)).collect()[0]
            seen.append((type(row.bin), row.bin, type(row.arr_bin[0]), row.arr_bin[0], row.map_bin["key"]))
        spark.conf.unset("spark.sql.execution.pyspark.binaryAsBytes")
        return seen

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and ours[0][:2] == (bytes, b"hello") and ours[1][0] is bytearray
    assert footers.all_gpuwrite() and dropin.fallbacks() == [], dropin.fallbacks()


def test_save_without_path_and_json_fall_back_as_test_readwriter(spark, tmp_path):
    df = spark.createDataFrame([("a",), ("b",)], ["value"])

    def scenario(tag: str) -> list[Any]:
        with pytest.raises(Exception, match="'path' is not specified") as info:
            df.write.save()
        path = str(tmp_path / tag)
        df.write.json(path)
        df.write.save(format="json", mode="overwrite", path=path, noUse="this option is not used")
        return [type(info.value).__name__, sorted(spark.read.json(path).collect())]

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and footers.created_by == []
    assert {f.call for f in dropin.fallbacks()} == {"save", "json"}


def test_writer_v2_create_as_test_readwriter(spark):
    df = spark.range(100).selectExpr("id", "cast(id % 7 as string) as value")

    def scenario(tag: str) -> list[Any]:
        table = f"test_v2_{tag}"
        _drop(spark, table)
        df.writeTo(table).using("parquet").create()
        seen: list[Any] = [spark.sql(f"select * from {table}").count()]
        with pytest.raises(AnalysisException):
            df.writeTo(table).create()  # the table exists
        _drop(spark, table)
        df.writeTo(table).partitionedBy("value").create()  # no provider: spark.sql.sources.default
        seen.append(sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect()))
        with pytest.raises(AnalysisException, match="REPLACE TABLE AS SELECT"):
            df.limit(10).writeTo(table).using("parquet").createOrReplace()  # Spark's V1 tables refuse it
        seen.append(spark.table(table).count())
        with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
            df.writeTo(f"missing_{tag}").overwrite(lit(True))
        _drop(spark, table)
        return seen

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and ours[0] == 100 and ours[2] == 100
    assert footers.all_gpuwrite()
    assert [f.call for f in dropin.fallbacks()] == ["writeTo.overwrite"]


def test_cluster_by_falls_back_as_test_readwriter(spark):
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])

    def scenario(tag: str) -> list[Any]:
        table = f"pyspark_cluster_by_{tag}"
        _drop(spark, table)
        df.write.clusterBy("x").mode("overwrite").saveAsTable(table)
        out = [[c.name for c in spark.catalog.listColumns(table) if c.isCluster], set(spark.table(table).collect())]
        _drop(spark, table)
        assert df.write.option("foo", None).option("bar", "baz") is not None
        return out

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs == [["x"], set(ROWS)] and footers.created_by == []
    assert [f.call for f in dropin.fallbacks()] == ["saveAsTable"] and "clusterBy" in dropin.fallbacks()[0].reason


def test_modes_on_an_existing_empty_directory(spark, tmp_path):
    """Spark's modes look at whether the path exists, not whether it holds data."""
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])

    def scenario(tag: str) -> list[Any]:
        seen = []
        for mode in ("error", "errorifexists", "default", "ignore", "append", "overwrite"):
            path = tmp_path / f"{tag}-{mode}"
            path.mkdir()
            try:
                df.write.mode(mode).parquet(str(path))
                seen.append((mode, layout(path), spark.read.parquet(str(path)).count() if layout(path) else 0))
            except AnalysisException as err:
                seen.append((mode, "raised", err.getCondition(), layout(path)))
        return seen

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs
    assert [s[1] for s in ours[:3]] == ["raised"] * 3 and ours[3] == ("ignore", [], 0)
    assert footers.all_gpuwrite() and {f.call for f in dropin.fallbacks()} == {"parquet"}


def test_unknown_options_are_ignored_as_spark_ignores_them(spark, tmp_path):
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])

    def scenario(tag: str) -> list[Any]:
        path = str(tmp_path / tag)
        df.write.option("noUse", "x").option("mergeSchema", "true").options(header=True) \
            .option("COMPRESSION", "zstd").save(path, format="parquet")
        return [layout(Path(path)), sorted(spark.read.parquet(path).collect())]

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and all(n.endswith(".zstd.parquet") for n in ours[0] if n != "_SUCCESS")
    assert footers.all_gpuwrite() and dropin.fallbacks() == []


def test_save_without_a_format_follows_the_default_source(spark, tmp_path):
    """`save(path)` with no format() writes spark.sql.sources.default: parquet (the default) through gpuwrite;
    with the default set to json, Spark's writer and a counted fallback (test_readwriter's SET ... default)."""
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])

    def scenario(tag: str) -> list[Any]:
        df.write.mode("overwrite").save(str(tmp_path / f"{tag}-default"))
        spark.conf.set("spark.sql.sources.default", "json")
        try:
            df.write.mode("overwrite").save(str(tmp_path / f"{tag}-json"))
        finally:
            spark.conf.unset("spark.sql.sources.default")
        return [layout(tmp_path / f"{tag}-default"), sorted(spark.read.parquet(str(tmp_path / f"{tag}-default")).collect()),
                sorted(spark.read.json(str(tmp_path / f"{tag}-json")).collect())]

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and len(ours[1]) == 4 and len(ours[2]) == 4
    assert footers.all_gpuwrite() and data_files(tmp_path / "gpuwrite-default")
    assert all(pq.ParquetFile(f).metadata.created_by.startswith("gpuwrite")
               for f in data_files(tmp_path / "gpuwrite-default"))
    assert [f.call for f in dropin.fallbacks()] == ["save"] and "json" in dropin.fallbacks()[0].reason


def _parts_frame(spark: Any, keys: list[int]) -> Any:
    return spark.createDataFrame([(i, k, f"v{i}") for i, k in enumerate(keys)], ["id", "k", "v"])


@pytest.mark.parametrize("how", ["conf", "option"])
def test_dynamic_partition_overwrite_of_a_path(spark, tmp_path, how):
    first, second = _parts_frame(spark, [0, 1, 2, 3, 4] * 3), _parts_frame(spark, [1, 2, 9])

    def scenario(tag: str) -> list[Any]:
        path = tmp_path / tag
        first.write.partitionBy("k").parquet(str(path))
        (path / "_SUCCESS").unlink()  # so the overwrite's own _SUCCESS (or its absence) shows
        writer = second.write.mode("overwrite").partitionBy("k")
        if how == "option":
            writer = writer.option("partitionOverwriteMode", "dynamic")
        else:
            spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        try:
            writer.parquet(str(path))
        finally:
            spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
        rows = sorted((r.k, r.v) for r in spark.read.parquet(str(path)).collect())
        return [layout(path), rows]

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and "_SUCCESS" not in ours[0]
    assert sorted({k for k, _ in ours[1]}) == [0, 1, 2, 3, 4, 9]  # 0, 3, 4 kept; 1, 2 replaced; 9 added
    # the overwrite itself is gpuwrite's: no fallback, and every file of the final table (kept partitions and
    # replaced ones) was written by gpuwrite, not only some file of the first write
    assert footers.all_gpuwrite() and dropin.fallbacks() == [], dropin.fallbacks()
    assert all(pq.ParquetFile(f).metadata.created_by.startswith("gpuwrite") for f in data_files(tmp_path / "gpuwrite"))


@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_insert_overwrite_of_a_partitioned_table(spark, mode):
    first, second = _parts_frame(spark, [0, 1, 2, 3] * 2), _parts_frame(spark, [1, 7])

    def scenario(tag: str) -> list[Any]:
        table = f"parts_{mode}_{tag}"
        _drop(spark, table)
        first.write.partitionBy("k").saveAsTable(table)
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", mode)
        try:
            second.select("id", "v", "k").write.insertInto(table, overwrite=True)
        finally:
            spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
        out = [sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect()),
               sorted(tuple(r) for r in spark.table(table).collect())]
        _drop(spark, table)
        return out

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs
    assert ours[0] == (["k=1", "k=7"] if mode == "static" else ["k=0", "k=1", "k=2", "k=3", "k=7"])
    assert footers.all_gpuwrite() and dropin.fallbacks() == []


def test_max_records_per_file_option_and_conf(spark, tmp_path):
    df = spark.range(0, 1000, 1, 2).selectExpr("id", "id % 3 as k")

    def scenario(tag: str) -> list[Any]:
        df.write.option("maxRecordsPerFile", 70).partitionBy("k").parquet(str(tmp_path / f"{tag}-option"))
        spark.conf.set("spark.sql.files.maxRecordsPerFile", "150")
        try:
            df.write.parquet(str(tmp_path / f"{tag}-conf"))
        finally:
            spark.conf.unset("spark.sql.files.maxRecordsPerFile")
        return [sorted((_JOB.sub("JOB", str(f.relative_to(tmp_path / f"{tag}-{kind}"))), pq.ParquetFile(f).metadata.num_rows)
                       for f in data_files(tmp_path / f"{tag}-{kind}")) for kind in ("option", "conf")]

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and max(n for _, n in ours[0]) == 70 and max(n for _, n in ours[1]) == 150
    assert footers.all_gpuwrite() and dropin.fallbacks() == [], dropin.fallbacks()


def test_table_statistics_updated_as_spark_does(spark):
    df = spark.range(0, 300, 1, 2).selectExpr("id", "cast(id as string) as s")

    def stats(table: str) -> Any:
        meta = spark._jsparkSession.sessionState().catalog().getTableMetadata(
            spark._jsparkSession.sessionState().sqlParser().parseTableIdentifier(table))
        return int(meta.stats().get().sizeInBytes()) if meta.stats().isDefined() else None

    def scenario(tag: str) -> list[Any]:
        table = f"stats_{tag}"
        _drop(spark, table)
        df.write.saveAsTable(table)
        spark.sql(f"ANALYZE TABLE {table} COMPUTE STATISTICS")
        analyzed = stats(table) is not None
        df.write.insertInto(table)  # autoUpdate off: the stale statistics are removed
        removed = stats(table) is None
        spark.conf.set("spark.sql.statistics.size.autoUpdate.enabled", "true")
        try:
            df.write.insertInto(table)  # autoUpdate on: the size is the files' size
            location = Path(spark.sql(f"DESCRIBE TABLE EXTENDED {table} AS JSON").collect()[0][0]
                            .split('"location":"file:')[1].split('"')[0])
            matches = stats(table) == sum(f.stat().st_size for f in location.iterdir() if not f.name.startswith((".", "_")))
        finally:
            spark.conf.unset("spark.sql.statistics.size.autoUpdate.enabled")
        _drop(spark, table)
        return [analyzed, removed, matches]

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs == [True, True, True]
    assert footers.all_gpuwrite() and dropin.fallbacks() == [], dropin.fallbacks()


def test_sort_by_sorts_each_bucket_file(spark):
    df = spark.range(0, 400, 1, 3).selectExpr("id % 23 as b", "(id * 7919) % 1000 as s", "id")

    def scenario(tag: str) -> dict[str, list[int]]:
        table = f"sorted_buckets_{tag}"
        _drop(spark, table)
        df.write.bucketBy(4, "b").sortBy("s").saveAsTable(table)
        location = spark.sql(f"DESCRIBE TABLE EXTENDED {table} AS JSON").collect()[0][0] \
            .split('"location":"file:')[1].split('"')[0]
        files = {f.name.split("-", 2)[1] + f.name.split("_")[-1].split(".")[0]: pq.read_table(f).column("s").to_pylist()
                 for f in data_files(Path(location))}
        _drop(spark, table)
        return files

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and len(ours) > 4  # same rows in the same order in every task's bucket file
    assert all(values == sorted(values) for values in ours.values())
    assert footers.all_gpuwrite() and dropin.fallbacks() == [], dropin.fallbacks()


def test_save_as_table_modes_on_an_existing_table(spark):
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])

    def scenario(tag: str) -> list[Any]:
        table = f"modes_{tag}"
        _drop(spark, table)
        df.write.saveAsTable(table)
        with pytest.raises(AnalysisException) as info:
            df.write.saveAsTable(table)
        df.limit(1).write.mode("ignore").saveAsTable(table)
        df.select("z", "y", "x").write.mode("append").saveAsTable(table)  # by name
        seen = [info.value.getCondition(), sorted(spark.table(table).collect())]
        df.limit(2).write.mode("overwrite").partitionBy("y").saveAsTable(table)
        seen += [spark.table(table).columns, spark.table(table).count()]
        _drop(spark, table)
        return seen

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and len(ours[1]) == 8 and ours[2] == ["x", "z", "y"]
    # only the refused write (error mode, table exists) is Spark's, so that Spark raises its own error
    assert footers.all_gpuwrite()
    assert [(f.call, "mode is error" in f.reason) for f in dropin.fallbacks()] == [("saveAsTable", True)]


def test_enable_is_per_session_and_the_conf_pauses_it(spark, tmp_path):
    other = spark.newSession()
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])
    footers = Footers()
    with gpuwrite_on(spark, footers):
        assert type(df.write).__module__ == "gpuwrite.spark.readwriter"
        assert type(other.createDataFrame(ROWS, ["x", "y", "z"]).write).__module__ == "pyspark.sql.readwriter"
        spark.conf.set("spark.gpuwrite.enabled", "false")
        try:
            df.write.parquet(str(tmp_path / "paused"))
        finally:
            spark.conf.unset("spark.gpuwrite.enabled")
        assert footers.created_by == [] and dropin.fallbacks()[0].reason == "spark.gpuwrite.enabled is false"
        df.write.parquet(str(tmp_path / "on"))
        assert footers.all_gpuwrite()
    assert type(df.write).__module__ == "pyspark.sql.readwriter"


def test_empty_dataframe_writes_one_schema_file_like_spark(spark, tmp_path):
    df = spark.range(0, 100, 1, 3).selectExpr("id", "cast(id as string) as s").filter("id < 0")

    def scenario(tag: str) -> list[Any]:
        path = tmp_path / tag
        df.write.parquet(str(path))
        files = data_files(path)
        return [layout(path), [pq.read_schema(f).field("s").type for f in files], spark.read.parquet(str(path)).schema]

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and len(ours[1]) == 1 and str(ours[1][0]) == "string"
    assert footers.all_gpuwrite() and dropin.fallbacks() == [], dropin.fallbacks()
    assert os.path.exists(tmp_path / "gpuwrite" / "_SUCCESS")


def test_insert_into_a_sql_table_by_position_and_a_cast_falls_back(spark):
    df = spark.range(0, 60, 1, 2).selectExpr("cast(id as int) as a", "concat('s', id % 4) as part", "id as b")

    def scenario(tag: str) -> list[Any]:
        table = f"sql_made_{tag}"
        _drop(spark, table)
        spark.sql(f"CREATE TABLE {table} (n INT, m BIGINT, p STRING) USING parquet PARTITIONED BY (p) "
                  "CLUSTERED BY (n) INTO 3 BUCKETS")
        df.select("a", "b", "part").write.insertInto(table)  # by position: a -> n, b -> m, part -> p
        df.selectExpr("b", "b", "part").write.insertInto(table)  # bigint into INT: Spark's cast
        with pytest.raises(AnalysisException):  # overwriting the table it reads: Spark refuses
            spark.table(table).write.insertInto(table, overwrite=True)
        out = [sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect()),
               sorted(tuple(r) for r in spark.table(table).collect())]
        _drop(spark, table)
        return out

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and len(ours[1]) == 120 and ours[0] == ["p=s0", "p=s1", "p=s2", "p=s3"]
    assert footers.all_gpuwrite()
    assert [(f.call, "cast" in f.reason, "reads" in f.reason) for f in dropin.fallbacks()] == \
        [("insertInto", True, False), ("insertInto", False, True)]


def test_save_as_table_with_a_path_makes_an_external_table(spark, tmp_path):
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])

    def scenario(tag: str) -> list[Any]:
        table = f"external_{tag}"
        _drop(spark, table)
        df.write.option("path", str(tmp_path / tag)).partitionBy("y").saveAsTable(table)
        kind = spark.sql(f"DESCRIBE TABLE EXTENDED {table} AS JSON").collect()[0][0].split('"type":"')[1][:8]
        rows = sorted(spark.table(table).collect())
        _drop(spark, table)  # an external table's files stay
        return [kind, rows, layout(tmp_path / tag)]

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and ours[0] == "EXTERNAL" and any(n.startswith("y=foo/part-") for n in ours[2])
    assert footers.all_gpuwrite() and dropin.fallbacks() == [], dropin.fallbacks()


def test_writes_into_a_temporary_view_go_to_spark(spark):
    df = spark.createDataFrame(ROWS, ["x", "y", "z"])

    def scenario(tag: str) -> list[Any]:
        view = f"view_{tag}"
        df.createOrReplaceTempView(view)
        with pytest.raises(Exception) as info:  # Spark refuses (with an internal error)
            df.write.insertInto(view)
        # saveAsTable looks for a persistent table of that name: Spark creates one beside the view
        df.write.mode("append").saveAsTable(view)
        out = [type(info.value).__name__, sorted(spark.sql(f"SELECT * FROM default.{view}").collect())]
        spark.catalog.dropTempView(view)
        _drop(spark, view)
        return out

    theirs, ours, _ = both(spark, scenario)
    assert ours == theirs and len(ours[1]) == 4
    assert [f.call for f in dropin.fallbacks()] == ["insertInto", "saveAsTable"]


def test_writes_spark_refuses_raise_sparks_own_errors(spark, tmp_path):
    df = spark.createDataFrame([(1, [1, 2], "a")], ["x", "arr", "s"])

    def scenario(tag: str) -> list[str]:
        raised = []
        for write in (lambda p: df.write.partitionBy("arr").parquet(p),  # a complex partition column
                      lambda p: df.write.bucketBy(2, "x").parquet(p),  # bucketBy outside saveAsTable
                      lambda p: df.write.sortBy("x").parquet(p),  # sortBy without bucketBy
                      lambda p: df.write.partitionBy("x", "arr", "s").parquet(p),  # every column
                      lambda p: df.write.partitionBy("nope").parquet(p)):  # a missing column
            with pytest.raises(AnalysisException) as info:
                write(str(tmp_path / tag))
            raised.append(str(info.value.getCondition()))
        return raised

    theirs, ours, footers = both(spark, scenario)
    assert ours == theirs and footers.created_by == [] and len(dropin.fallbacks()) == 5


def test_session_conf_read_in_one_jvm_call_matches_pyspark_getall(spark, monkeypatch):
    from py4j.clientserver import ClientServerConnection

    from gpuwrite.spark import conf as gw_conf

    spark.conf.set("spark.gpuwrite.test.key", "a \"quoted\" value, with: json = chars")
    try:
        gw_conf._read_all(spark)  # Py4J resolves the JVM package path once per process: not what is measured
        calls: list[str] = []
        send = ClientServerConnection.send_command

        def counted(self: Any, command: str) -> Any:
            calls.append(command)
            return send(self, command)

        monkeypatch.setattr(ClientServerConnection, "send_command", counted)
        ours = gw_conf._read_all(spark)
        ours_calls = len(calls)
        theirs = {k: v for k, v in spark.conf.getAll.items() if v is not None}
        theirs_calls = len(calls) - ours_calls
        monkeypatch.setattr(ClientServerConnection, "send_command", send)
        assert ours == theirs and ours["spark.gpuwrite.test.key"] == "a \"quoted\" value, with: json = chars"
        # PySpark's getAll iterates the Java map: a round trip per entry; one JSON string here
        assert theirs_calls >= len(theirs) and 2 * ours_calls < theirs_calls, (ours_calls, theirs_calls)
    finally:
        spark.conf.unset("spark.gpuwrite.test.key")
