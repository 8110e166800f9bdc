"""gpuwrite.iceberg with device='gpu' (the simulator here): the same files and manifest metrics as the CPU path."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("pyiceberg")

from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import DoubleType, LongType, NestedField, StringType  # noqa: E402

import gpuwrite.iceberg as gi  # noqa: E402


def test_gpu_append_equals_cpu_append(tmp_path: Path) -> None:
    cat = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "s", StringType()),
                    NestedField(3, "d", DoubleType()))
    rows = pa.table({"id": list(range(300)), "s": [f"v{k % 37}" if k % 5 else None for k in range(300)],
                     "d": [math.nan if k % 4 == 0 else k / 7 for k in range(300)]}, schema=schema.as_arrow())
    got = {}
    for device in ("cpu", "gpu"):
        table = cat.create_table(f"db.{device}", schema)
        (f,) = gi.append(table, rows, device=device)
        got[device] = (f.nan_value_counts, f.lower_bounds, f.upper_bounds, f.value_counts, f.null_value_counts,
                       f.column_sizes, f.file_size_in_bytes, Path(f.file_path.removeprefix("file://")).read_bytes())
        assert table.scan().to_arrow().num_rows == 300
    assert got["gpu"] == got["cpu"]
    assert got["cpu"][0] == {3: 75}
