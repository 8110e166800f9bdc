"""Inputs that are almost data (issue 34): the error says the call that gives something gpuwrite writes, for
write_table, write_dataset and ParquetWriter.write alike, and nothing is left behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.errors import UnsupportedTypeError
from gpuwrite.integrations.hints import input_hint

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")


def _styler() -> Any:
    """A stand-in for a pandas Styler (pandas' own needs jinja2): the class pandas defines, by module and name."""
    cls = type("Styler", (), {"__module__": "pandas.io.formats.style"})
    styler = cls()
    styler.data = pd.DataFrame({"a": [1]})
    return styler


def _inputs() -> list[tuple[str, Callable[[], Any], str]]:
    """(id, the input, what the error says to do)."""
    con = duckdb.connect()
    return [
        ("polars_lazyframe", lambda: pl.LazyFrame({"a": [1]}), "call .collect() first"),
        ("duckdb_connection", lambda: con.execute("select 1 as a"),
         "call .arrow() or .fetch_arrow_table() on it, or pass con.sql(...)"),
        ("pandas_styler", _styler, "pass its .data"),
        ("pandas_series", lambda: pd.Series([1], name="a"), "pass series.to_frame()"),
        ("polars_series", lambda: pl.Series("a", [1]), "pass series.to_frame()"),
        ("pyarrow_array", lambda: pa.chunked_array([[1]]), "pa.table({'name': array})"),
        ("list_of_batches", lambda: [pa.record_batch({"a": [1]})], "pa.Table.from_batches(batches)"),
    ]


@pytest.mark.parametrize(("make", "says"), [(m, s) for _, m, s in _inputs()], ids=[i for i, _, _ in _inputs()])
def test_almost_data_is_refused_with_the_way_out(tmp_path: Path, make: Callable[[], Any], says: str) -> None:
    """Each writer refuses it with an UnsupportedTypeError naming the class and the call to make."""
    data = make()
    name = type(data).__name__
    with pytest.raises(UnsupportedTypeError) as err:
        gpuwrite.write_table(data, tmp_path / "t.parquet")
    assert str(err.value).startswith(f"cannot write {name}: ") and says in str(err.value)
    assert "expected a pyarrow Table" not in str(err.value)
    with pytest.raises(UnsupportedTypeError) as err:
        gpuwrite.write_dataset(data, tmp_path / "ds")
    assert str(err.value).startswith(f"cannot write {name}: ") and says in str(err.value)
    with gpuwrite.ParquetWriter(tmp_path / "w.parquet", pa.schema([("a", pa.int64())])) as writer:
        with pytest.raises(UnsupportedTypeError, match=f"cannot write {name}: "):
            writer.write(data)
        writer.write(pa.table({"a": [1]}))  # still usable
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.parquet"]


def test_nothing_is_imported_to_tell(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hints look at the class's module and name only: a look-alike class is recognised without its
    library, and unknown objects get no hint."""
    import builtins

    real_import = builtins.__import__

    def no_imports(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] in ("polars", "duckdb", "pandas"):
            raise AssertionError(f"imported {name}")
        return real_import(name, *args, **kwargs)

    lazy = type("LazyFrame", (), {"__module__": "polars.lazyframe.frame"})()
    monkeypatch.setattr(builtins, "__import__", no_imports)
    assert "collect()" in (input_hint(lazy) or "")
    assert input_hint(object()) is None and input_hint({"a": [1]}) is None
