"""What a write returns (issue 34): the FileResult and its footer summary count the schema's columns."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import gpuwrite


def test_empty_table_result_counts_its_columns(tmp_path: Path) -> None:
    """An empty 8-column table writes a file with the 8-column schema and no row group; the result says 8
    columns (it said 0, counting the columns of the first row group)."""
    table = pa.table({name: pa.array([], pa.int64()) for name in "abcdefgh"})
    result = gpuwrite.write_table(table, tmp_path / "empty.parquet")
    assert pq.read_schema(tmp_path / "empty.parquet").names == list("abcdefgh")
    assert result.footer.row_groups == () and result.footer.num_columns == 8
    assert repr(result).endswith("row_groups=0, columns=8)")
    assert "columns=8," in repr(result.footer)
    nested = gpuwrite.write_table(pa.table({"s": pa.array([{"x": 1, "y": "a"}])}), tmp_path / "nested.parquet")
    assert nested.footer.num_columns == 2 == len(nested.footer.row_groups[0].columns)  # leaf columns
