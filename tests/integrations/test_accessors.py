"""`df.gpuwrite.to_parquet` / `.to_dataset` on pandas DataFrames, whichever of pandas and gpuwrite is imported first."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq

import gpuwrite


def test_to_parquet_and_to_dataset(tmp_path):
    df = pd.DataFrame({"a": [1, 2, 3], "s": ["x", "y", None], "f": [0.5, None, 2.0]})
    result = df.gpuwrite.to_parquet(tmp_path / "one.parquet", compression="zstd")
    assert isinstance(result, gpuwrite.FileResult) and result.num_rows == 3
    assert pq.read_table(tmp_path / "one.parquet").to_pandas().equals(df)
    # issue 12 (pandas 3): the RangeIndex is not written as a column `__index_level_0__`; a named index is,
    # as pyarrow's preserve_index=None keeps it
    assert pq.read_table(tmp_path / "one.parquet").column_names == ["a", "s", "f"]
    named = df.set_index(pd.Index([9, 5, 7], name="k"))  # not a range (pandas 3 would make [7, 8, 9] one)
    named.gpuwrite.to_parquet(tmp_path / "named.parquet")
    assert pq.read_table(tmp_path / "named.parquet").column_names == ["a", "s", "f", "k"]
    ds = df.gpuwrite.to_dataset(tmp_path / "table", partition_by=["s"])
    assert ds.num_rows == 3
    assert sorted(p.name for p in (tmp_path / "table").iterdir()) == [
        "_SUCCESS", "s=__HIVE_DEFAULT_PARTITION__", "s=x", "s=y"]


def test_registered_when_pandas_is_imported_after_gpuwrite(tmp_path):
    code = ("import sys, gpuwrite; assert 'pandas' not in sys.modules; import pandas as pd; "
            f"pd.DataFrame({{'a': [1, 2]}}).gpuwrite.to_parquet({str(tmp_path / 'late.parquet')!r}); print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert pq.read_table(tmp_path / "late.parquet").column("a").to_pylist() == [1, 2]


def test_options_are_checked(tmp_path):
    import pytest

    with pytest.raises(gpuwrite.OptionError, match="compression"):
        pd.DataFrame({"a": [1]}).gpuwrite.to_parquet(tmp_path / "x.parquet", compression="brotli")
    assert not list(tmp_path.iterdir())
