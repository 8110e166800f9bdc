"""A write's decimals of up to 18 digits travel to its tasks as their unscaled longs (cheaper for the JVM to put in
Arrow than BigDecimals) and are read back there as decimal64 over the same buffers: the files are the bytes they
are with the switch off, Spark reads back the rows it was given, and columns the task reads as values, wider
decimals and sessions that cannot build the projection send decimals as Spark does."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite.spark
from gpuwrite.spark import job as spark_job
from gpuwrite.spark import unscaled
from gpuwrite.spark.routing import UNSCALED_KEY, sends_unscaled
from gpuwrite.spark.unscaled import (
    as_decimals,
    estimated_rows,
    send_unscaled,
    unscaled_columns,
    worth_sending,
)

pytestmark = pytest.mark.spark


def _batch() -> pa.RecordBatch:
    return pa.record_batch({"k": pa.array([1, 2, 3, 4]), "d": pa.array([150, None, -99999, 0], pa.int64()),
                            "s": pa.array(["a", "b", None, "d"])})


def test_as_decimals_gives_the_type_back_over_the_same_buffers():
    batch = _batch()
    (got,) = list(as_decimals(iter([batch]), ((1, 7, 2),)))
    assert got.schema.field("d").type == pa.decimal64(7, 2)
    assert got.schema.names == batch.schema.names and got.schema.field("d").nullable
    assert got.column(1).to_pylist() == [Decimal("1.50"), None, Decimal("-999.99"), Decimal("0.00")]
    assert got.column(1).buffers()[1].address == batch.column(1).buffers()[1].address  # not copied
    assert got.column(0) is not None and got.column(2).equals(batch.column(2))


def test_as_decimals_keeps_a_sliced_batch_s_offset():
    batch = _batch().slice(1, 3)
    (got,) = list(as_decimals(iter([batch]), ((1, 7, 2),)))
    assert got.column(1).to_pylist() == [None, Decimal("-999.99"), Decimal("0.00")]
    assert got.column(1).null_count == 1


def test_as_decimals_without_columns_hands_the_batches_on():
    batch = _batch()
    assert list(as_decimals(iter([batch]), ())) == [batch]


def test_as_decimals_refuses_a_column_that_is_not_int64():
    with pytest.raises(TypeError, match=r"column 's' was sent as string, not as the int64 unscaled values of "
                                        r"decimal\(7,2\)"):
        list(as_decimals(iter([_batch()]), ((2, 7, 2),)))


def test_unscaled_columns_are_top_level_decimals_of_at_most_18_digits():
    from pyspark.sql.types import DecimalType, LongType, StructField, StructType

    schema = StructType([StructField("a", DecimalType(7, 2)), StructField("Wide", DecimalType(19, 2)),
                         StructField("b", DecimalType(18, 0)), StructField("n", LongType()),
                         StructField("st", StructType([StructField("x", DecimalType(5, 1))])),
                         StructField("Part", DecimalType(9, 3)), StructField("req", DecimalType(7, 2), False)])
    assert unscaled_columns(schema, ()) == ((0, 7, 2), (2, 18, 0), (5, 9, 3), (6, 7, 2))  # top-level only
    assert unscaled_columns(schema, ["part", "A"]) == ((2, 18, 0), (6, 7, 2))  # kept columns, in any case


def test_a_session_without_the_jvm_sends_decimals_as_they_are():
    connect_like = SimpleNamespace(schema=None)  # a Connect DataFrame has no _jdf
    assert send_unscaled(connect_like, ((0, 7, 2),)) is None


def test_small_writes_send_decimals_as_they_are(spark):
    """The projection's fixed cost on the driver is only paid where Spark estimates enough decimal values."""
    small = spark.range(0, 2000, 1, 2).selectExpr("cast(id as decimal(7, 2)) as d")
    assert 0 < estimated_rows(small) <= 4000  # Spark's estimate (Range counts 8 bytes a row, no row overhead)
    assert not worth_sending(small, ((0, 7, 2),))
    rows = unscaled.MIN_VALUES  # estimated as half as many, in two columns
    large = spark.range(0, rows, 1, 2).selectExpr("cast(id as decimal(7, 2)) as d", "cast(id as decimal(9, 2)) e")
    assert worth_sending(large, ((0, 7, 2), (1, 9, 2)))  # estimated, not counted: nothing runs
    assert estimated_rows(SimpleNamespace()) is None  # no plan to ask (Connect): sent when it can be
    assert spark_job._sent(small, spark_job.WriteRequest(path="x", mode="error"), {}) == (small, ())


def test_the_switch_reads_like_the_others():
    assert sends_unscaled({}) and sends_unscaled({UNSCALED_KEY: "TRUE"})
    assert not sends_unscaled({UNSCALED_KEY: " False "})


def _frame(spark: Any) -> Any:
    return spark.range(0, 3000, 1, 3).selectExpr(
        "id", "IF(id % 7 = 0, NULL, cast((id - 1500) * 1.37 as decimal(7, 2))) as price",
        "cast(concat(IF(id % 2 = 0, '', '-'), '9999999999999', id % 10, '.9999') as decimal(18, 4)) as edge",
        "cast(id * 3.5 as decimal(20, 1)) as wide", "cast(id % 3 as decimal(5, 1)) as part",
        "cast(id % 4 as decimal(9, 2)) as `with space`").withMetadata("price", {"comment": "kept"})


def _digests(path: Path) -> list[tuple[str, str]]:
    """(partition directory, md5) of each data file, the job's ids left out of the names."""
    return sorted((str(f.parent.relative_to(path)), hashlib.md5(f.read_bytes()).hexdigest())
                  for f in path.rglob("*.parquet"))


@pytest.fixture
def sent(monkeypatch) -> list[tuple[Any, tuple]]:
    """What each gpuwrite job sent its tasks (the DataFrame and the unscaled columns); small writes send
    decimals unscaled too."""
    monkeypatch.setattr(unscaled, "MIN_VALUES", 0)
    calls: list[tuple[Any, tuple]] = []
    real = spark_job._sent

    def recording(*args: Any) -> Any:
        calls.append(real(*args))
        return calls[-1]

    monkeypatch.setattr(spark_job, "_sent", recording)
    return calls


@pytest.mark.parametrize("partitioned", [False, True])
def test_files_are_the_bytes_written_without_it(spark, tmp_path, sent, partitioned):
    df = _frame(spark)
    gpuwrite.spark.enable(spark)
    try:
        for value in ("true", "false"):
            spark.conf.set(UNSCALED_KEY, value)
            writer = df.write.mode("overwrite")
            if partitioned:
                writer = writer.partitionBy("part")
            writer.parquet(str(tmp_path / value))
    finally:
        spark.conf.unset(UNSCALED_KEY)
        gpuwrite.spark.disable(spark)
    (on_df, on_columns), (_, off_columns) = sent
    # price, edge and `with space` travel as longs; wide (19+ digits) and the partition column do not
    names = [df.schema.fields[i].name for i, _, _ in on_columns]
    assert names == (["price", "edge", "with space"] if partitioned else ["price", "edge", "part", "with space"])
    assert {f.name: f.dataType.simpleString() for f in on_df.schema.fields if f.name in names} == \
        dict.fromkeys(names, "bigint")
    assert off_columns == ()
    assert _digests(tmp_path / "true") == _digests(tmp_path / "false") and _digests(tmp_path / "true")
    one = next((tmp_path / "true").rglob("*.parquet"))
    assert pq.ParquetFile(one).metadata.created_by.startswith("gpuwrite")
    assert pq.read_schema(one).field("price").type == pa.decimal128(7, 2)
    back = spark.read.schema(df.schema).parquet(str(tmp_path / "true")).select(*df.columns)
    assert back.exceptAll(df).count() == 0 and df.exceptAll(back).count() == 0


def _write_all(spark: Any, df: Any, path: Path, write: Any) -> None:
    """`write(df.write.mode("overwrite"), path)` by Spark, then by gpuwrite with decimals sent unscaled and
    not (under path / spark, on, off)."""
    write(df.write.mode("overwrite"), path / "spark")
    gpuwrite.spark.enable(spark)
    try:
        for value in ("on", "off"):
            spark.conf.set(UNSCALED_KEY, str(value == "on"))
            write(df.write.mode("overwrite"), path / value)
    finally:
        spark.conf.unset(UNSCALED_KEY)
        gpuwrite.spark.disable(spark)


def test_a_value_wider_than_its_precision_is_refused_naming_its_column_and_row(spark, tmp_path, sent):
    """A source file may hold a decimal wider than its type (Spark's vectorized reader does not check it, and
    Spark's own writer writes it as it is). Sent as a decimal, Arrow's DecimalVector refuses it in the JVM; sent
    unscaled, the task refuses it naming the column and the row, and no file is left."""
    unscaled_values = np.array([12345, 10**8, -(10**7), 9999999], dtype=np.int64)
    words = np.stack([unscaled_values, unscaled_values >> 63], axis=1)
    wide = pa.Array.from_buffers(pa.decimal128(7, 2), 4, [None, pa.py_buffer(words)])
    pq.write_table(pa.table({"id": [0, 1, 2, 3], "d": wide}), tmp_path / "source.parquet")
    df = spark.read.parquet(str(tmp_path / "source.parquet")).coalesce(1)
    gpuwrite.spark.enable(spark)
    try:
        for value in ("true", "false"):
            spark.conf.set(UNSCALED_KEY, value)
            with pytest.raises(Exception) as failed:
                df.write.mode("overwrite").parquet(str(tmp_path / value))
            if value == "true":
                assert "column 'd', row 1 of the batch" in str(failed.value)
                assert "has more digits than decimal64(7, 2) allows" in str(failed.value)
            assert not list((tmp_path / value).rglob("*.parquet"))
    finally:
        spark.conf.unset(UNSCALED_KEY)
        gpuwrite.spark.disable(spark)
    assert [c for _, c in sent] == [((1, 7, 2),), ()]  # the first write sent d unscaled


def test_bucket_and_sort_columns_travel_as_they_are(spark, tmp_path, sent):
    """bucketBy / sortBy on decimals (the task hashes and orders by their values): those stay decimals, the
    others are sent unscaled, and the table's files are the bytes written without it."""
    df = _frame(spark)
    tables: dict[str, str] = {}

    def save(writer: Any, path: Path) -> None:
        name = f"unscaled_{path.name}"
        writer.option("path", str(path)).bucketBy(3, "part").sortBy("edge").saveAsTable(name)
        tables[path.name] = name

    try:
        _write_all(spark, df, tmp_path, save)
        columns = [c for _, c in sent if c]
        assert [[df.schema.fields[i].name for i, _, _ in c] for c in columns] == [["price", "with space"]]
        assert _digests(tmp_path / "on") == _digests(tmp_path / "off") and _digests(tmp_path / "on")
        back = spark.table(tables["on"]).select(*df.columns)
        assert back.exceptAll(df).count() == 0 and df.exceptAll(back).count() == 0
    finally:
        for name in tables.values():
            spark.sql(f"DROP TABLE IF EXISTS {name}")
