"""polars frames with strings nested anywhere (issue 33, item 2): polars exports its strings as string_view /
binary_view, which Arrow cannot `take`; they are written by value, as the same rows as string / binary are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from readers import assert_readers_agree
from view_tables import plain

import gpuwrite

pl = pytest.importorskip("polars", reason="polars is not installed: its frames cannot be built")


def _frames() -> dict[str, Any]:
    """The frames of the issue: list of strings (the reproducer), list of binary, arrays of strings, a struct
    holding a list of strings."""
    return {
        "list_of_strings": pl.DataFrame({"s": [["a"], ["b", None], None, ["c" * 30, "d"]]}),
        "list_of_binary": pl.DataFrame({"b": [[b"a"], [b"b", None], None, [b"x" * 40]]}),
        "array_of_strings": pl.DataFrame({"a": [["a", "b" * 20], ["c", None], None]},
                                         schema={"a": pl.Array(pl.String, 2)}),
        "struct_with_list": pl.DataFrame({"st": [{"l": ["x"], "n": 1}, {"l": ["y" * 25, None], "n": None}, None]}),
    }


@pytest.mark.parametrize("name", sorted(_frames()))
def test_polars_nested_strings(tmp_path: Path, name: str) -> None:
    """Reproducer: ArrowNotImplementedError array_take (string_view, int64). The file is the one the frame's
    rows with plain string / binary types give; pyarrow, DuckDB and polars read it back."""
    frame = _frames()[name]
    exported = pa.table(frame)  # what the writer receives through the Arrow C stream
    assert "view" in str(exported.schema)
    expected = plain(exported)
    gpuwrite.write_table(frame, tmp_path / "polars.parquet")
    gpuwrite.write_table(expected, tmp_path / "plain.parquet")
    assert (tmp_path / "polars.parquet").read_bytes() == (tmp_path / "plain.parquet").read_bytes()
    assert_readers_agree(tmp_path / "polars.parquet", expected, readers=("pyarrow", "duckdb", "polars"))


def test_polars_concatenated_slices(tmp_path: Path) -> None:
    """pl.concat of slices of a large frame: the export lists the large frame's buffers for every slice; the
    rows are written as their values, through the C stream and through to_arrow() alike."""
    big = pl.DataFrame({"s": ["x" * 40 + str(i) for i in range(200_000)],
                        "l": [[str(i) * 5, None] for i in range(200_000)]})
    frame = pl.concat([big[i * 2000:i * 2000 + 7] for i in range(100)])
    expected = plain(pa.table(frame))
    gpuwrite.write_table(expected, tmp_path / "plain.parquet")
    for source in (frame, frame.to_arrow(compat_level=pl.CompatLevel.newest())):
        gpuwrite.write_table(source, tmp_path / "polars.parquet")
        assert (tmp_path / "polars.parquet").read_bytes() == (tmp_path / "plain.parquet").read_bytes()
    assert_readers_agree(tmp_path / "polars.parquet", expected, readers=("pyarrow", "duckdb", "polars"))
