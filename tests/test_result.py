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


def test_the_footer_summary_is_built_when_first_read_and_pickles_built(tmp_path: Path, monkeypatch) -> None:
    """A write does not summarize its footer; reading `footer` does, once, giving what an eager
    summary gives; a pickled result carries the summary itself, and equality ignores whether it was built."""
    import pickle

    import gpuwrite.pipeline.writer as writer_module
    from gpuwrite.result import summarize

    calls: list[int] = []

    def counted(*args):  # type: ignore[no-untyped-def]
        calls.append(1)
        return summarize(*args)

    monkeypatch.setattr(writer_module, "summarize", counted)
    table = pa.table({"a": pa.array([3, 1, None, 2], pa.int64()), "b": pa.array(["x", "y", "z", "x"])})
    result = gpuwrite.write_table(table, tmp_path / "t.parquet")
    assert calls == []
    unread = pickle.loads(pickle.dumps(result))  # pickling builds it (the builder refers to the writer)
    assert calls == [1]
    footer = result.footer
    assert calls == [1] and result.footer is footer  # built once
    leaves = gpuwrite.schema.FileSchema.from_arrow(table.schema, gpuwrite.WriteOptions()).leaves
    eager = summarize(result.metadata, leaves, [[1, 1]], None)
    assert footer.row_groups[0].columns[0].min == 1 == eager.row_groups[0].columns[0].min
    assert footer.row_groups[0].columns[0].max == 3 and footer.row_groups[0].columns[0].null_count == 1
    assert unread.footer == footer and unread == result
