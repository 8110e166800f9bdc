"""`df.gpuwrite.to_parquet` / `.to_dataset` on pandas DataFrames: registered at `import gpuwrite` when pandas came
first, else by `gpuwrite.register_accessors()` or the next writer call; no import hook either way."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq
import pytest

import gpuwrite


@pytest.fixture(autouse=True)
def _accessors() -> None:
    """This pytest process may have imported gpuwrite before pandas (another test module did): register."""
    assert "pandas" in gpuwrite.register_accessors()


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


def _run(code: str, *args: str) -> list[str]:
    """Run `code` in a fresh interpreter (so the import order is the one written); its stdout lines."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_registered_at_import_when_pandas_came_first(tmp_path):
    code = ("import sys, pandas as pd; import gpuwrite; "
            "pd.DataFrame({'a': [1, 2]}).gpuwrite.to_parquet(sys.argv[1]); print('ok')")
    assert _run(code, str(tmp_path / "first.parquet")) == ["ok"]
    assert pq.read_table(tmp_path / "first.parquet").column("a").to_pylist() == [1, 2]


def test_pandas_imported_after_gpuwrite_registers_by_call_not_by_hook(tmp_path):
    """gpuwrite patches no import machinery: pandas imported later has no `df.gpuwrite` until
    `gpuwrite.register_accessors()` (which returns the libraries it covers and may be called again)."""
    code = ("import sys; hooks = list(sys.meta_path); import gpuwrite; assert 'pandas' not in sys.modules; "
            "import pandas as pd; df = pd.DataFrame({'a': [1, 2]}); "
            "print(sys.meta_path == hooks, hasattr(df, 'gpuwrite')); "
            "print(gpuwrite.register_accessors(), gpuwrite.register_accessors()); "
            "df.gpuwrite.to_parquet(sys.argv[1]); print('ok')")
    out = _run(code, str(tmp_path / "late.parquet"))
    assert out == ["True False", "['pandas'] ['pandas']", "ok"]
    assert pq.read_table(tmp_path / "late.parquet").column("a").to_pylist() == [1, 2]


def test_a_writer_call_registers_a_library_imported_later(tmp_path):
    """The usual order needs no call: the first `write_table` (or `ParquetWriter`, `write_dataset`) after
    pandas is imported registers the accessor."""
    code = ("import sys, gpuwrite, pyarrow as pa; import pandas as pd; df = pd.DataFrame({'a': [3]}); "
            "before = hasattr(df, 'gpuwrite'); gpuwrite.write_table(pa.table({'a': [1]}), sys.argv[1]); "
            "print(before, hasattr(df, 'gpuwrite'))")
    assert _run(code, str(tmp_path / "w.parquet")) == ["False True"]


def test_options_are_checked(tmp_path):
    with pytest.raises(gpuwrite.OptionError, match="compression"):
        pd.DataFrame({"a": [1]}).gpuwrite.to_parquet(tmp_path / "x.parquet", compression="brotli")
    assert not list(tmp_path.iterdir())
