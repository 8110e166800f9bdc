"""The public front door in pyarrow's words (issue 34): ParquetWriter.write_table / write_batch with pyarrow's
row_group_size, and `~` in paths."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gpuwrite
from gpuwrite import OptionError

TABLE = pa.table({"a": pa.array(range(10), pa.int64()), "b": pa.array([f"v{i % 3}" for i in range(10)])})


def _groups(path: Path) -> list[int]:
    """Rows of each row group of the file."""
    meta = pq.read_metadata(path)
    return [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]


def test_write_table_and_write_batch_as_pyarrow(tmp_path: Path) -> None:
    """write_table / write_batch take pyarrow's row_group_size: the open row group ends first, the rows go in
    groups of at most that many, the last ending with them; without it rows join the open group (across calls,
    as parquet-java's writer does)."""
    batch = TABLE.to_batches()[0]
    path = tmp_path / "w.parquet"
    with gpuwrite.ParquetWriter(path, TABLE.schema) as writer:
        writer.write_table(TABLE.slice(0, 3))
        writer.write_batch(batch.slice(3, 2))
        writer.write_table(TABLE, row_group_size=4)
        writer.write_batch(batch.slice(0, 5), 2)
        writer.write(TABLE.slice(0, 1), 7)  # pyarrow's write(table_or_batch, row_group_size) too
        writer.write_table(TABLE.slice(1, 2))
    assert _groups(path) == [5, 4, 4, 2, 2, 2, 1, 1, 2]
    expected = [*range(5), *range(10), *range(5), 0, 1, 2]
    assert pq.read_table(path).column("a").to_pylist() == expected
    plain = tmp_path / "plain.parquet"
    with gpuwrite.ParquetWriter(plain, TABLE.schema) as writer:
        writer.write_table(TABLE)
        writer.write_batch(batch)
    assert _groups(plain) == [20]


def test_row_group_size_of_a_call_is_checked_first(tmp_path: Path) -> None:
    """A bad row_group_size is an OptionError before anything is written; the writer stays usable."""
    path = tmp_path / "w.parquet"
    with gpuwrite.ParquetWriter(path, TABLE.schema) as writer:
        writer.write_table(TABLE.slice(0, 2))
        for bad in (0, -1, 2.5, True):
            with pytest.raises(OptionError, match="row_group_size must be a positive integer"):
                writer.write_table(TABLE, row_group_size=bad)  # type: ignore[arg-type]
        writer.write_table(TABLE.slice(2, 2), row_group_size=1)
        writer.write_table(TABLE.slice(0, 0), row_group_size=5)  # no rows: no row group
    assert _groups(path) == [2, 1, 1]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory for `~`, with the working directory elsewhere."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return home


def test_tilde_is_the_home_directory(home: Path) -> None:
    """write_table, ParquetWriter and write_dataset expand `~` as pyarrow's writers do (it named a `~`
    directory below the working directory, which did not exist); gpuwrite.inspect reads it back."""
    result = gpuwrite.write_table(TABLE, "~/t.parquet")
    assert result.path == str(home / "t.parquet")
    assert pq.read_table(home / "t.parquet").equals(TABLE)
    with gpuwrite.ParquetWriter("~/w.parquet", TABLE.schema) as writer:
        writer.write(TABLE)
    assert pq.read_table(home / "w.parquet").num_rows == 10
    gpuwrite.write_dataset(TABLE, "~/ds", partition_by="b")
    assert sorted(p.name for p in (home / "ds").iterdir()) == ["_SUCCESS", "b=v0", "b=v1", "b=v2"]
    assert gpuwrite.inspect("~/t.parquet")["footer"]["num_rows"] == 10
    assert not Path("~").exists()

