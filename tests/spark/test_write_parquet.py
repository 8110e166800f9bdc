"""gpuwrite.spark.write_parquet in PySpark local mode: the same rows and schema as df.write.parquet (flat,
nested, partitioned, bucketed, maxRecordsPerFile), catalog tables, the commit protocol under task failures and
retries, fallback to Spark's writer, options from the session and the writer, and remote filesystems."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite.spark import job as spark_job
from gpuwrite.spark import write_parquet
from gpuwrite.spark.task import task_device

pytestmark = pytest.mark.spark


def _frame(spark: Any, n: int = 2000, parts: int = 3) -> Any:
    return spark.range(0, n, 1, parts).selectExpr(
        "id", "cast(id % 5 as int) as k", "IF(id % 7 = 0, NULL, concat('s', id % 50)) as s",
        "cast(id * 1.5 as double) as d", "cast(id as decimal(12, 2)) as dec",
        "date_add(date'2020-01-01', cast(id % 400 as int)) as day",
        "timestamp_seconds(id * 3600) as ts",
        "IF(id % 11 = 0, NULL, array(id, IF(id % 3 = 0, NULL, id + 1))) as arr",
        "named_struct('a', id % 9, 'b', IF(id % 4 = 0, NULL, 'x')) as st",
        "IF(id % 13 = 0, NULL, map('k', id, 'j', id * 2)) as m")


def _rows(df: Any) -> list[Any]:
    return sorted(df.collect(), key=lambda r: r["id"])


def _spark_v2(df: Any, path: Path, **kw: Any) -> None:
    writer = df.write.mode("overwrite").option("parquet.writer.version", "v2")
    if kw.get("partition_by"):
        writer = writer.partitionBy(*kw["partition_by"])
    if kw.get("max_records"):
        writer = writer.option("maxRecordsPerFile", kw["max_records"])
    writer.parquet(str(path))


def _data_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*.parquet") if not p.name.startswith("."))


def test_same_rows_and_schema_as_spark(tmp_path, spark):
    df = _frame(spark)
    result = write_parquet(df, str(tmp_path / "ours"))
    _spark_v2(df, tmp_path / "theirs")
    ours, theirs = spark.read.parquet(str(tmp_path / "ours")), spark.read.parquet(str(tmp_path / "theirs"))
    assert ours.schema == theirs.schema
    assert _rows(ours) == _rows(theirs) and ours.count() == 2000
    assert result.writer == "gpuwrite" and result.rows == 2000
    names = sorted(p.name for p in _data_files(tmp_path / "ours"))
    assert len(names) == 3 and all(n.startswith(f"part-0000{i}-{result.job}-c000") for i, n in enumerate(names))
    assert (tmp_path / "ours" / "_SUCCESS").exists() and not (tmp_path / "ours" / "_temporary").exists()
    # every file is gpuwrite's, with v2 pages and Spark's row metadata
    meta = pq.ParquetFile(_data_files(tmp_path / "ours")[0]).metadata
    assert meta.created_by.startswith("gpuwrite")
    theirs_meta = pq.ParquetFile(_data_files(tmp_path / "theirs")[0]).metadata
    key = b"org.apache.spark.sql.parquet.row.metadata"
    assert meta.metadata[key] == theirs_meta.metadata[key]


def test_partitioned_and_max_records_per_file_as_spark(tmp_path, spark):
    df = _frame(spark, 3000, 2)
    write_parquet(df, str(tmp_path / "ours"), partition_by=["k"], max_records_per_file=170)
    _spark_v2(df, tmp_path / "theirs", partition_by=["k"], max_records=170)

    def layout(root: Path) -> Counter:
        # (partition directory, task, file counter, rows) for each file
        out: Counter = Counter()
        for f in _data_files(root):
            task = f.name.split("-")[1]
            counter = f.name.split(".")[-3]
            out[(f.parent.name, task, counter, pq.ParquetFile(f).metadata.num_rows)] += 1
        return out

    assert layout(tmp_path / "ours") == layout(tmp_path / "theirs")
    ours, theirs = spark.read.parquet(str(tmp_path / "ours")), spark.read.parquet(str(tmp_path / "theirs"))
    assert ours.schema == theirs.schema and _rows(ours) == _rows(theirs)


def test_bucketed_table_same_buckets_and_join_without_shuffle(tmp_path, spark):
    df = _frame(spark, 3000, 3).select("id", "k", "s", "d")
    spark.sql("DROP TABLE IF EXISTS gw_b1")
    spark.sql("DROP TABLE IF EXISTS gw_b2")
    spark.sql("DROP TABLE IF EXISTS sp_b")
    write_parquet(df, str(tmp_path / "b1"), bucket_by=(8, ["id"]), table="gw_b1")
    write_parquet(df.selectExpr("id", "d * 2 as d2"), str(tmp_path / "b2"), bucket_by=(8, ["id"]), table="gw_b2")
    df.write.option("parquet.writer.version", "v2").option("path", str(tmp_path / "sp")) \
        .bucketBy(8, "id").saveAsTable("sp_b")

    def buckets(root: Path) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for f in _data_files(root):
            bucket = int(f.name.split("_")[1].split(".")[0])
            out.setdefault(bucket, []).extend(pq.read_table(f).column("id").to_pylist())
        return {b: sorted(v) for b, v in out.items()}

    assert buckets(tmp_path / "b1") == buckets(tmp_path / "sp")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        joined = spark.sql("SELECT a.id, a.d, b.d2 FROM gw_b1 a JOIN gw_b2 b ON a.id = b.id")
        plan = joined._jdf.queryExecution().executedPlan().toString()
        assert "SortMergeJoin" in plan and "Exchange" not in plan, plan
        assert joined.count() == 3000
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def test_table_registration_read_by_name_with_partition_pruning(tmp_path, spark):
    df = _frame(spark, 1000, 2)
    spark.sql("DROP TABLE IF EXISTS gw_parts")
    write_parquet(df, str(tmp_path / "t"), partition_by=["k"], table="gw_parts")
    table = spark.table("gw_parts")
    assert table.count() == 1000
    assert sorted(r[0] for r in spark.sql("SHOW PARTITIONS gw_parts").collect()) == [f"k={i}" for i in range(5)]
    pruned = spark.sql("SELECT count(*) FROM gw_parts WHERE k = 3")
    plan = pruned._jdf.queryExecution().executedPlan().toString()
    assert "PartitionFilters: [isnotnull(k" in plan and "(k#" in plan, plan
    assert pruned.collect()[0][0] == 200
    # mode overwrite replaces files and table; mode error refuses an existing table with Spark's own error
    write_parquet(df.limit(10), str(tmp_path / "t"), mode="overwrite", partition_by=["k"], table="gw_parts")
    assert spark.table("gw_parts").count() == 10
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="ALREADY_EXISTS"):
        write_parquet(df, str(tmp_path / "t"), partition_by=["k"], table="gw_parts")


def test_failed_task_attempt_then_retry_commits_one_copy(tmp_path):
    """local[2,3] retries failed tasks: task 1's first attempt writes its files then fails; the retry commits."""
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[2,3]").config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
        spark.sparkContext.setLogLevel("OFF")
        from gpuwrite.spark import job
        job.FAULTS = "1:0"
        df = spark.range(0, 900, 1, 3).selectExpr("id", "concat('v', id) as v")
        result = job.write_parquet(df, {str(tmp_path / 'out')!r})
        print("ROWS", result.rows, len(result.files))
        print("ATTEMPTS", sorted(result.attempts.items()))
        print("COUNT", spark.read.parquet({str(tmp_path / 'out')!r}).count())
        print("DISTINCT", spark.read.parquet({str(tmp_path / 'out')!r}).distinct().count())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.split(" ")[0] in
                 ("ROWS", "COUNT", "DISTINCT", "ATTEMPTS"))
    assert lines == {"ROWS": "900 3", "COUNT": "900", "DISTINCT": "900", "ATTEMPTS": "[(0, 0), (1, 1), (2, 0)]"}
    files = sorted(p.name for p in _data_files(tmp_path / "out"))
    assert len(files) == 3 and len({f.split("-")[1] for f in files}) == 3
    assert not (tmp_path / "out" / "_temporary").exists()


def test_failed_job_leaves_no_output(tmp_path, spark, monkeypatch):
    df = _frame(spark, 600, 3)
    monkeypatch.setattr(spark_job, "FAULTS", "2:*")
    with pytest.raises(Exception, match="injected fault"):
        write_parquet(df, str(tmp_path / "new"))
    assert not (tmp_path / "new").exists()
    # an overwrite that fails leaves the old table as it was
    monkeypatch.setattr(spark_job, "FAULTS", "")
    write_parquet(df, str(tmp_path / "old"))
    before = sorted(p.name for p in (tmp_path / "old").iterdir())
    monkeypatch.setattr(spark_job, "FAULTS", "0:*")
    with pytest.raises(Exception, match="injected fault"):
        write_parquet(df.limit(5), str(tmp_path / "old"), mode="overwrite", partition_by=["k"])
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == before
    assert spark.read.parquet(str(tmp_path / "old")).count() == 600


def test_modes(tmp_path, spark):
    from pyspark.errors import AnalysisException

    df = _frame(spark, 100, 1)
    path = str(tmp_path / "m")
    write_parquet(df, path)
    with pytest.raises(AnalysisException, match="PATH_ALREADY_EXISTS"):  # Spark's own error
        write_parquet(df, path)
    assert write_parquet(df, path, mode="ignore").writer == "none"
    # Spark's modes look at the path's existence: an empty directory counts
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnalysisException, match="PATH_ALREADY_EXISTS"):
        write_parquet(df, str(tmp_path / "empty"))
    assert write_parquet(df, str(tmp_path / "empty"), mode="ignore").writer == "none"
    assert list((tmp_path / "empty").iterdir()) == []
    write_parquet(df, path, mode="append")
    assert spark.read.parquet(path).count() == 200
    write_parquet(df.limit(7), path, mode="overwrite")
    assert spark.read.parquet(path).count() == 7


def test_empty_dataframe_writes_a_schema_file(tmp_path, spark):
    df = _frame(spark, 100, 2).filter("id < 0")
    write_parquet(df, str(tmp_path / "e"))
    files = _data_files(tmp_path / "e")
    assert len(files) == 1 and pq.ParquetFile(files[0]).metadata.num_rows == 0
    assert spark.read.parquet(str(tmp_path / "e")).schema == spark.read.parquet(str(tmp_path / "e")).schema
    assert spark.read.parquet(str(tmp_path / "e")).count() == 0


def test_options_from_session_and_writer(tmp_path, spark):
    df = _frame(spark, 300, 1)
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        write_parquet(df, str(tmp_path / "o"), options={"compression": "zstd", "parquet.page.size": "4096"})
    finally:
        spark.conf.unset("spark.sql.parquet.outputTimestampType")
    f = _data_files(tmp_path / "o")[0]
    assert f.name.endswith(".zstd.parquet")
    meta = pq.ParquetFile(f).metadata
    ts = [meta.row_group(0).column(i) for i in range(meta.num_columns) if meta.row_group(0).column(i).path_in_schema
          == "ts"][0]
    assert ts.physical_type == "INT64" and ts.compression == "ZSTD"
    # options Spark's Parquet writer does not read are ignored, as Spark ignores them
    result = write_parquet(df, str(tmp_path / "other"), options={"mergeSchema": "true", "noUse": "x",
                                                                 "spark.sql.parquet.outputTimestampType": "INT96"})
    assert result.writer == "gpuwrite" and spark.read.parquet(str(tmp_path / "other")).count() == 300


def test_fallback_to_sparks_writer(tmp_path, spark, caplog):
    df = _frame(spark, 200, 1)
    result = write_parquet(df, str(tmp_path / "v1"), options={"parquet.writer.version": "v1"})
    assert result.writer == "spark" and "v1" in result.fallback_reason
    assert not pq.ParquetFile(_data_files(tmp_path / "v1")[0]).metadata.created_by.startswith("gpuwrite")
    assert spark.read.parquet(str(tmp_path / "v1")).count() == 200
    files = _data_files(tmp_path / "v1")  # the result reports Spark's files, rows and bytes as its own
    assert result.rows == 200 and len(result.files) == len(files) > 0
    assert result.bytes == sum(os.path.getsize(f) for f in files)
    again = write_parquet(df.limit(50), str(tmp_path / "v1"), mode="append", options={"parquet.writer.version": "v1"})
    assert again.writer == "spark" and again.rows == 50 and not set(again.files) & set(result.files)
    with pytest.raises(gpuwrite.UnsupportedTypeError, match="v1"):
        write_parquet(df, str(tmp_path / "v1e"), options={"parquet.writer.version": "v1"}, fallback="error")
    odd = spark.range(5).selectExpr("id", "make_interval(0, 0, 0, 0, 0, 0, id) as iv")
    with pytest.raises(gpuwrite.UnsupportedTypeError, match="cannot write"):
        write_parquet(odd, str(tmp_path / "iv"), fallback="error")
    assert not (tmp_path / "iv").exists()


def test_fsspec_filesystem(tmp_path, spark):
    """A non-native filesystem: tasks write locally, then copy into their attempt directories."""
    import fsspec

    df = _frame(spark, 500, 2)
    result = write_parquet(df, str(tmp_path / "fs"), filesystem=fsspec.filesystem("file"),
                           partition_by=["k"])
    assert result.rows == 500
    assert spark.read.parquet(str(tmp_path / "fs")).count() == 500
    assert not (tmp_path / "fs" / "_temporary").exists()


class _Resource:
    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses


class _Context:
    def __init__(self, resources: dict[str, Any]) -> None:
        self._resources = resources

    def resources(self) -> dict[str, Any]:
        return self._resources


def test_task_device_follows_spark_gpu_resources(monkeypatch):
    assert task_device(_Context({}), "auto") == "cpu"
    assert task_device(_Context({"gpu": _Resource(["0"])}), "cpu") == "cpu"
    # a GPU resource this machine cannot use: CPU under "auto", an error when the GPU is demanded
    assert task_device(_Context({"gpu": _Resource(["0"])}), "auto") == "cpu"
    with pytest.raises(RuntimeError, match="cannot use it"):
        task_device(_Context({"gpu": _Resource(["0"])}), "gpu")
    with pytest.raises(RuntimeError, match="no GPU resource"):
        task_device(_Context({}), "gpu")
    chosen = []
    from gpuwrite.backends.device import ops
    from gpuwrite.spark import task as task_module

    monkeypatch.setattr(ops, "gpu_problem", lambda: None)
    monkeypatch.setattr(task_module, "_select_gpu", chosen.append)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert task_device(_Context({"gpu": _Resource(["3"])}), "auto") == "gpu"
    # narrowed by the RAPIDS Accelerator to the task's GPU: that GPU is ordinal 0 in this process
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert task_device(_Context({"gpu": _Resource(["3"])}), "auto") == "gpu"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,3")
    assert task_device(_Context({"gpu": _Resource(["3"])}), "auto") == "gpu"
    assert chosen == [3, 0, 1]
