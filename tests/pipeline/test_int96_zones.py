"""The notice that a zoned timestamp column is written as INT96 (issue 34 item 3): once per process, naming the
column and the option that keeps the zone; never from the Spark integration, whose users chose Spark's default."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.pipeline import int96_zones
from gpuwrite.pipeline.int96_zones import Int96ZoneWarning

ZONED = pa.table({"id": [1, 2], "t": pa.array([0, 86_400_000_000], pa.timestamp("us", tz="Europe/Oslo"))})

_TWICE = """
import sys, warnings
import pyarrow as pa
import gpuwrite
warnings.simplefilter("default")
zoned = pa.table({"t": pa.array([0, 1], pa.timestamp("us", tz="Europe/Oslo")),
                  "u": pa.array([0, 1], pa.timestamp("us", tz="UTC"))})
gpuwrite.write_table(zoned, sys.argv[1] + "/micros.parquet", timestamp_type="TIMESTAMP_MICROS")
print("micros written", flush=True)
gpuwrite.write_table(zoned, sys.argv[1] + "/a.parquet")
gpuwrite.write_table(zoned.select(["u"]), sys.argv[1] + "/b.parquet")
gpuwrite.write_dataset(zoned, sys.argv[1] + "/ds")
"""


def test_warned_once_per_process_naming_column_and_option(tmp_path):
    """In a fresh process: nothing for TIMESTAMP_MICROS, then one warning for three INT96 writes (other
    columns, a dataset), naming the first zoned column, its type and both spellings of the option."""
    done = subprocess.run([sys.executable, "-c", _TWICE, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if "Int96ZoneWarning" in line]
    assert len(lines) == 1, done.stderr
    message = lines[0]
    assert "column 't' (timestamp[us, tz=Europe/Oslo]) (and 1 more)" in message
    assert 'timestamp_type="TIMESTAMP_MICROS"' in message and "spark.sql.parquet.outputTimestampType" in message
    assert "<string>:10" in message  # points at the user's call, not inside gpuwrite


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process has not warned yet (another test may have written a zoned column)."""
    monkeypatch.setattr(int96_zones, "_warned", False)


def test_pandas_frames_are_told_pandas_gets_the_zone_back(tmp_path, fresh):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"when": pd.to_datetime(["2024-01-01 12:00"]).tz_localize("Europe/Oslo")})
    with pytest.warns(Int96ZoneWarning, match=r"column 'when' .*pandas reads the zone back") as record:
        gpuwrite.write_table(df, tmp_path / "f.parquet")
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpuwrite.write_table(df, tmp_path / "g.parquet")  # once per process


def test_zone_less_and_utc_adjusted_timestamps_are_not_warned(tmp_path, fresh):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpuwrite.write_table(pa.table({"t": pa.array([0], pa.timestamp("us"))}), tmp_path / "ntz.parquet")
        gpuwrite.write_table(ZONED, tmp_path / "m.parquet", options={"spark.sql.parquet.outputTimestampType":
                                                                     "TIMESTAMP_MILLIS"})
    assert int96_zones._warned is False
    with pytest.warns(Int96ZoneWarning, match="column 't'"):  # the zoned column as INT96 is
        gpuwrite.write_table(ZONED, tmp_path / "int96.parquet")


def test_spark_tasks_do_not_warn(tmp_path, fresh):
    """A Spark task (`spark.task.run_task`, here outside Spark with a stand-in TaskContext) writes the zoned column
    as INT96 without a notice; the same batch through write_dataset is warned of."""
    from gpuwrite.spark.task import TaskPlan, run_task

    class Context:
        def partitionId(self) -> int:  # noqa: N802 (TaskContext's names)
            return 0

        def attemptNumber(self) -> int:  # noqa: N802
            return 0

        def resources(self) -> dict:
            return {}

    plan = TaskPlan(root=str(tmp_path / "spark"), job="job", filesystem=None, conf={}, partition_by=(),
                    bucket_by=None, max_records_per_file=0, device="cpu", quick_acks=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stats = list(run_task(plan, iter(ZONED.to_batches()), Context()))
    assert [s.to_pylist()[0]["rows"] for s in stats] == [2]
    with pytest.warns(Int96ZoneWarning, match="column 't'"):
        gpuwrite.write_dataset(ZONED, tmp_path / "ds")


def test_held_back_writes_leave_the_notice_for_the_users_first(tmp_path, fresh):
    """`gpuwrite warmup` writes a zoned INT96 sample inside `held_back`: silent, and the user's write after it
    is still warned of."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with int96_zones.held_back():
            gpuwrite.write_table(ZONED, tmp_path / "sample.parquet")
    with pytest.warns(Int96ZoneWarning, match="column 't'"):
        gpuwrite.write_table(ZONED, tmp_path / "user.parquet")
