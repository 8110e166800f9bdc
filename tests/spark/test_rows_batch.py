"""rows_batch: the small batch a Spark task sends back, built without pyarrow's object conversion (which imports
pandas into a worker that has not loaded it)."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.spark.rows_batch import rows_batch
from gpuwrite.spark.task import STATS_SCHEMA

SCHEMA = pa.schema([("s", pa.string()), ("i", pa.int32()), ("l", pa.int64()), ("f", pa.float64())])


@settings(deadline=None)  # the first call's pyarrow conversion imports pandas
@given(st.lists(st.tuples(st.text(), st.integers(-2**31, 2**31 - 1), st.integers(-2**63, 2**63 - 1),
                          st.floats(allow_nan=False)), max_size=20))
def test_rows_batch_equals_pyarrows_conversion(rows):
    columns = {"s": [r[0] for r in rows], "i": [r[1] for r in rows], "l": [r[2] for r in rows],
               "f": [r[3] for r in rows]}
    got = rows_batch(columns, SCHEMA)
    got.validate(full=True)
    assert got.equals(pa.RecordBatch.from_pydict(columns, schema=SCHEMA))


def test_rows_batch_refuses_nulls_and_other_types_naming_the_column():
    with pytest.raises(ValueError, match="column 'i'"):
        rows_batch({"s": ["a"], "i": [None], "l": [1], "f": [1.0]}, SCHEMA)
    with pytest.raises(TypeError, match="column 'b'.*bool"):
        rows_batch({"b": [True]}, pa.schema([("b", pa.bool_())]))


def test_a_task_stats_batch_does_not_import_pandas():
    """pa.RecordBatch.from_pydict would import pandas (about 0.3 s of a PySpark worker's first task)."""
    code = """
import sys
import pyarrow as pa
from gpuwrite.spark.rows_batch import rows_batch
from gpuwrite.spark.task import STATS_SCHEMA
assert "pandas" not in sys.modules
row = {"task": [0], "attempt": [0], "path": ["part-0.parquet"], "rows": [3], "bytes": [10], "partition": [""],
       "receive_s": [0.1], "tail_s": [0.0], "task_s": [0.2]}
assert rows_batch(row, STATS_SCHEMA).num_rows == 1
print("pandas" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    assert set(STATS_SCHEMA.names) >= {"task_s", "receive_s", "tail_s"}
