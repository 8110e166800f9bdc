"""The drop-in's pieces without a JVM: routing policy, options as Spark reads them, table names and partition
fragments, the task's GPU ordinal, the encode-behind pipeline, the streaming window, and the Connect refusal."""

from __future__ import annotations

import threading
import time
from typing import Any

import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.api import ParquetWriter, write_table
from gpuwrite.spark import dropin
from gpuwrite.spark.conf import session_conf, writer_conf
from gpuwrite.spark.routing import (
    WriterState,
    committer_problem,
    is_parquet,
    layout_problem,
    local_path,
    partition_type_problem,
    source_problem,
)
from gpuwrite.spark.tables import in_session_catalog, name_parts, parse_fragment
from gpuwrite.spark.task import gpu_ordinal, task_cores
from gpuwrite.spark.task_pipeline import InputAborted, encode_behind


def test_gpu_ordinal_maps_the_spark_address_through_cuda_visible_devices():
    assert gpu_ordinal("3", None) == 3  # nothing narrowed: the address is the ordinal
    assert gpu_ordinal("3", "3") == 0  # RAPIDS narrowed the process to the task's GPU
    assert gpu_ordinal("3", "1,3") == 1
    assert gpu_ordinal("2", "GPU-8a1c7e2b-0000") == 0  # one visible device (by UUID): it is the task's
    with pytest.raises(RuntimeError, match="not among"):
        gpu_ordinal("5", "1,3")
    with pytest.raises(RuntimeError, match="hides every GPU"):
        gpu_ordinal("0", "")


def test_task_cores_are_the_task_contexts_cpus():
    class Context:
        def __init__(self, cpus: Any) -> None:
            self._cpus = cpus

        def cpus(self) -> Any:
            return self._cpus

    assert task_cores(Context(1)) == 1
    assert task_cores(Context(4)) == 4
    assert task_cores(Context(0)) is None  # not a core count: no limit
    assert task_cores(object()) is None  # a context without cpus() (PySpark before 3.3)
    assert task_cores(None) is None


def test_encode_behind_runs_the_consumer_on_another_thread_while_batches_arrive():
    first_seen = threading.Event()
    threads = set()

    def batches() -> Any:
        yield 1
        # the next batch "arrives" only once the worker has taken the first: a serial loop would hang here
        assert first_seen.wait(10), "the consumer did not run while the input was still arriving"
        yield from (2, 3)

    def consume(items: Any) -> int:
        total = 0
        for item in items:
            threads.add(threading.get_ident())
            first_seen.set()
            total += item
        return total

    assert encode_behind(batches(), consume) == 6
    assert threading.get_ident() not in threads


def test_encode_behind_times_the_encode_left_after_the_input():
    def consume(items: Any) -> int:
        total = sum(items)
        time.sleep(0.2)  # encoding left when the last batch has come
        return total

    timings: dict[str, float] = {}
    assert encode_behind(iter([1, 2]), consume, timings=timings) == 3
    assert timings["tail_s"] >= 0.2 and 0 <= timings["receive_s"] < timings["tail_s"]


def test_encode_behind_consumer_error_stops_the_input():
    pulled = []

    def batches() -> Any:
        for i in range(1000):
            pulled.append(i)
            yield i

    def consume(items: Any) -> None:
        for item in items:
            if item == 3:
                raise ValueError("cannot encode batch 3")

    with pytest.raises(ValueError, match="batch 3"):
        encode_behind(batches(), consume, depth=2)
    time.sleep(0.1)
    assert len(pulled) < 20  # the receiving side stopped soon after the failure


def test_encode_behind_input_error_aborts_the_consumer():
    aborted = []

    def batches() -> Any:
        yield 1
        raise ConnectionError("the JVM went away")

    def consume(items: Any) -> None:
        try:
            for _ in items:
                pass
        except InputAborted:
            aborted.append(True)
            raise

    with pytest.raises(ConnectionError, match="went away"):
        encode_behind(batches(), consume)
    assert aborted == [True]


def test_streaming_window_encodes_as_batches_come_and_writes_the_same_bytes(tmp_path):
    table = pa.table({"a": pa.array(range(200_000), pa.int64()),
                      "s": pa.array([f"v{i % 977}" for i in range(200_000)])})
    write_table(table, tmp_path / "whole.parquet")
    progress = {}
    for streaming in (False, True):
        writer = ParquetWriter(tmp_path / f"stream-{streaming}.parquet", table.schema, streaming=streaming)
        for batch in table.to_batches(max_chunksize=10_000):
            writer.write(batch)
        builder = writer._builder
        progress[streaming] = builder.steps.planned_upto if builder is not None else 0
        writer.close()
        assert (tmp_path / f"stream-{streaming}.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    assert progress[False] == 0  # the default window waits for eight row groups' worth (or the end)
    assert progress[True] > 100_000  # the streaming one has planned and encoded most rows before close


def test_writer_options_as_spark_reads_them():
    conf, records = writer_conf({"spark.sql.parquet.compression.codec": "gzip", "spark.sql.files.maxRecordsPerFile":
                                 "10"}, {"parquet.page.size": "4096", "parquet.compression": "zstd"},
                                {"mergeSchema": "true", "noUse": "x", "COMPRESSION": "lz4",
                                 "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
                                 "MaxRecordsPerFile": "7", "parquet.block.size": "1024"})
    # unknown and spark.sql.* options are ignored; the Hadoop parquet.compression never reaches the writer
    assert conf == {"spark.sql.parquet.compression.codec": "gzip", "parquet.page.size": "4096",
                    "compression": "lz4", "parquet.block.size": "1024"}
    assert records == 7


def test_routing_policy():
    assert is_parquet("Parquet") and is_parquet("org.apache.spark.sql.parquet") and not is_parquet("json")
    assert source_problem("parquet", {"spark.sql.sources.useV1SourceList": "csv,json"}) is not None
    assert source_problem("parquet", {}) is None
    assert committer_problem({"spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version": "2"}, {})
    assert committer_problem({}, {"parquet.summary.metadata.level": "ALL"})
    assert committer_problem({}, {}) is None
    cols = ["x", "Y", "z"]
    assert layout_problem(WriterState(partition_by=["y"]), cols, {}, False) is None  # case-insensitive
    assert layout_problem(WriterState(partition_by=["y"]), cols, {"spark.sql.caseSensitive": "true"}, False)
    assert layout_problem(WriterState(partition_by=cols), cols, {}, False)  # every column
    assert layout_problem(WriterState(bucket_by=(2, ["x"])), cols, {}, False)  # bucketBy needs a table
    assert layout_problem(WriterState(bucket_by=(2, ["x"]), sort_by=["z"]), cols, {}, True) is None
    assert layout_problem(WriterState(sort_by=["z"]), cols, {}, True)  # sortBy without bucketBy
    assert layout_problem(WriterState(), ["a", "A"], {}, False)  # duplicate names
    from pyspark.sql.types import ArrayType, LongType, StructField, StructType

    schema = StructType([StructField("a", LongType()), StructField("arr", ArrayType(LongType()))])
    assert partition_type_problem(WriterState(partition_by=["ARR"]), schema, {})  # Spark allows atomic types only
    assert partition_type_problem(WriterState(partition_by=["a"]), schema, {}) is None
    assert local_path("file:/tmp/x") == "/tmp/x" and local_path("file:///tmp/x") == "/tmp/x"
    assert local_path("s3a://bucket/x") is None and local_path("hdfs://nn/x") is None
    assert local_path("rel/x").endswith("/rel/x")


def test_table_names_and_partition_fragments():
    assert name_parts("db.`a.b`") == ["db", "a.b"] and name_parts("spark_catalog.db.t") == ["spark_catalog", "db", "t"]
    assert in_session_catalog("db.t", {}) and in_session_catalog("spark_catalog.db.t", {})
    assert not in_session_catalog("testcat.t", {"spark.sql.catalog.testcat": "x.Y"})
    assert not in_session_catalog("testcat.db.t", {})
    assert parse_fragment("k=a%2Fb/j=__HIVE_DEFAULT_PARTITION__") == {"k": "a/b", "j": "__HIVE_DEFAULT_PARTITION__"}


class _Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    @property
    def getAll(self) -> dict[str, str]:
        return dict(self.values)


class ConnectStandIn:
    """Stands in for pyspark.sql.connect.session.SparkSession (no Connect server can run here: the client's
    grpc packages are not installed): it has `conf` and a session id, and no sparkContext or JVM."""

    session_id = "stand-in"

    def __init__(self) -> None:
        self.conf = _Conf({"spark.hadoop.parquet.page.size": "2048", "spark.sql.parquet.compression.codec": "zstd",
                           "parquet.block.size": "4096"})


ConnectStandIn.__module__ = "pyspark.sql.connect.session"


def test_connect_session_conf_needs_no_spark_context_and_enable_refuses_clearly():
    spark = ConnectStandIn()
    sql, hadoop = session_conf(spark)
    assert sql == {"spark.sql.parquet.compression.codec": "zstd"}
    assert hadoop == {"parquet.page.size": "2048", "parquet.block.size": "4096"}
    with pytest.raises(gpuwrite.GpuwriteError, match="Spark Connect.*client.*JVM"):
        dropin.enable(spark)
    assert not dropin.is_enabled(spark)


def test_v2_write_fallback_reason_is_sparks_verdict():
    from gpuwrite.spark.readwriter_v2 import V1_TABLE_REFUSED, spark_verdict

    class Refused(Exception):
        def __init__(self, condition: str, message: str) -> None:
            super().__init__(message)
            self.condition = condition

        def getCondition(self) -> str:
            return self.condition

    v1 = spark_verdict("t", Refused(V1_TABLE_REFUSED, "Cannot write into v1 table: `t`.\nJVM stacktrace: ..."))
    assert v1.startswith("t is a V1 table: Spark refuses") and "[_LEGACY_ERROR_TEMP_1012]" in v1
    assert "JVM" not in v1
    other = spark_verdict("t", Refused("TABLE_OR_VIEW_NOT_FOUND", "The table or view `t` cannot be found."))
    assert other == "Spark's writer raises Refused [TABLE_OR_VIEW_NOT_FOUND]: The table or view `t` cannot be found."
    assert spark_verdict("t", ValueError()) == "Spark's writer raises ValueError [None]: ValueError"
    assert "DataSource V2 table" in spark_verdict("t", None)
