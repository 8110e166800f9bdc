"""Helpers of the Iceberg tests: a table's data files, and the table as polars and DuckDB read it."""

from __future__ import annotations

import glob
import importlib
import math
import os
from typing import Any

import pyarrow as pa
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table

os.environ.setdefault("POLARS_ICEBERG_PLANNER", "pyiceberg")


def data_files(table: Table) -> list[DataFile]:
    """The table's live data files, in path order."""
    return sorted((task.file for task in table.scan().plan_files()), key=lambda f: f.file_path)


def local(location: str) -> str:
    return location.removeprefix("file://")


def duckdb_read(table: Table) -> pa.Table:
    """The table as DuckDB's iceberg extension reads it (extensions loaded from their pip packages)."""
    import duckdb

    con = duckdb.connect()
    for pkg in ("duckdb_extension_avro", "duckdb_extension_iceberg"):
        module = importlib.import_module(pkg)
        found = glob.glob(os.path.join(os.path.dirname(module.__file__), "extensions", "*", "*.duckdb_extension"))
        con.execute(f"LOAD '{found[0]}'")
    return con.execute(f"SELECT * FROM iceberg_scan('{table.metadata_location}')").to_arrow_table()


def polars_read(table: Table) -> pa.Table:
    import polars as pl

    return pl.scan_iceberg(table).collect().to_arrow()


def canonical_rows(table: pa.Table, key: str) -> list[Any]:
    """Rows sorted by `key`, NaN made comparable, maps as sorted pairs, so readers' results compare equal."""
    def fix(v: Any) -> Any:
        if isinstance(v, float) and math.isnan(v):
            return "NaN"
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list) and v and isinstance(v[0], dict) and set(v[0]) == {"key", "value"}:
            v = [(d["key"], d["value"]) for d in v]  # polars reads maps as lists of key/value structs
        if isinstance(v, list):
            return sorted((fix(x) for x in v), key=repr) if v and isinstance(v[0], tuple) else [fix(x) for x in v]
        if isinstance(v, tuple):
            return tuple(fix(x) for x in v)
        return v
    rows = [{k: fix(v) for k, v in row.items()} for row in table.to_pylist()]
    return sorted(rows, key=lambda r: r[key])
