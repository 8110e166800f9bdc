"""Writes gpuwrite.iceberg refuses or that fail half-way: a clear error, no new snapshot, no files left."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from iceberg_helpers import data_files, local
from partitioned_table import PARTITIONED, SPEC, partitioned_rows
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import FixedType, ListType, LongType, NestedField, StringType, TimestamptzType

import gpuwrite.iceberg as gi
from gpuwrite.iceberg import files as iceberg_files
from gpuwrite.iceberg.commit import check_file_schema
from gpuwrite.iceberg.profile import IcebergWriteError
from gpuwrite.options.model import WriteOptions
from gpuwrite.schema import FileSchema


def _files_on_disk(table: Table) -> set[str]:
    root = Path(local(table.location())) / "data"
    return {str(p) for p in root.rglob("*.parquet")} if root.exists() else set()


def _table_with_rows(catalog: SqlCatalog) -> tuple[Table, int | None, set[str]]:
    table = catalog.create_table("db.t", PARTITIONED, partition_spec=SPEC)
    gi.append(table, partitioned_rows(60))
    return table, table.current_snapshot().snapshot_id, _files_on_disk(table)


def _unchanged(catalog: SqlCatalog, snapshot: int | None, on_disk: set[str]) -> None:
    table = catalog.load_table("db.t")
    assert table.current_snapshot().snapshot_id == snapshot
    assert _files_on_disk(table) == on_disk
    assert table.scan().to_arrow().num_rows == 60


@pytest.mark.parametrize(("options", "keywords", "message"), [
    ({"spark.sql.parquet.outputTimestampType": "INT96"}, {}, "timestamp_type='INT96'.*INT64 TIMESTAMP"),
    ({}, {"timestamp_type": "TIMESTAMP_MILLIS"}, "timestamp_type='TIMESTAMP_MILLIS'"),
    ({"spark.sql.parquet.writeLegacyFormat": "true"}, {}, "legacy_format=True.*3-level"),
    ({}, {"datetime_rebase": "LEGACY"}, "datetime_rebase='LEGACY'.*rebased"),
    ({"parquet.page.size": "-1"}, {}, "parquet.page.size"),
    ({}, {"fallback_encoding": "rle"}, "fallback_encoding='rle' is not one of delta, plain"),
])
def test_refused_options_leave_the_table_unchanged(catalog: SqlCatalog, options: dict, keywords: dict,
                                                   message: str) -> None:
    table, snapshot, on_disk = _table_with_rows(catalog)
    with pytest.raises(IcebergWriteError, match=message):
        gi.append(table, partitioned_rows(10), options=options, **keywords)
    _unchanged(catalog, snapshot, on_disk)


def test_legacy_layout_file_schema_is_refused_before_writing(catalog: SqlCatalog) -> None:
    """A file schema in the legacy layout (or without ids) fails the check that runs before any commit."""
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "tags", ListType(3, StringType())))
    table = catalog.create_table("db.lists", schema)
    arrow = table.schema().as_arrow()
    legacy = FileSchema.from_arrow(arrow, WriteOptions(legacy_format=True))
    with pytest.raises(IcebergWriteError, match="'tags.array'.*standard layout"):
        check_file_schema(legacy, table.schema())
    plain = FileSchema.from_arrow(pa.schema([pa.field("id", pa.int64(), False), pa.field("tags", pa.list_(pa.string()))]),
                                  WriteOptions())
    with pytest.raises(IcebergWriteError, match="'id': field id None"):
        check_file_schema(plain, table.schema())


def test_data_that_does_not_fit_the_schema(catalog: SqlCatalog) -> None:
    table, snapshot, on_disk = _table_with_rows(catalog)
    with pytest.raises(IcebergWriteError, match="column 'extra' is not in the table schema"):
        gi.append(table, pa.table({"id": [1], "extra": [2]}))
    with pytest.raises(IcebergWriteError, match="required column 'id' is missing"):
        gi.append(table, pa.table({"region": ["eu"]}))
    with pytest.raises(IcebergWriteError, match="does not fit the table schema"):
        gi.append(table, pa.table({"id": ["not a number"]}))
    _unchanged(catalog, snapshot, on_disk)


def test_unsupported_iceberg_type_names_the_column(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.fixed", Schema(NestedField(1, "h", FixedType(4)),
                                                    NestedField(2, "at", TimestamptzType())))
    with pytest.raises(IcebergWriteError, match="'h'"):
        gi.append(table, pa.table({"h": pa.array([b"abcd"], pa.binary(4))}))
    assert table.current_snapshot() is None


def test_failure_half_way_removes_the_files_written(catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """The third file's write fails: the two already written are removed and nothing is committed."""
    table, snapshot, on_disk = _table_with_rows(catalog)
    real = iceberg_files.FileWriter.close
    calls = {"n": 0}

    def failing_close(self):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full (injected)")
        return real(self)

    monkeypatch.setattr(iceberg_files.FileWriter, "close", failing_close)
    with pytest.raises(OSError, match="injected"):
        gi.append(table, partitioned_rows(100))
    assert calls["n"] == 3
    _unchanged(catalog, snapshot, on_disk)
    assert not any(n.endswith(".tmp") or "gpuwrite" in n for n in os.listdir(local(table.location())))


def test_failed_commit_removes_the_files_written(catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    table, snapshot, on_disk = _table_with_rows(catalog)

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise CommitFailedException("concurrent commit (injected)")

    monkeypatch.setattr(type(catalog), "commit_table", refuse)
    with pytest.raises(CommitFailedException):
        gi.append(table, partitioned_rows(30))
    monkeypatch.undo()
    _unchanged(catalog, snapshot, on_disk)
    assert len(data_files(catalog.load_table("db.t"))) == len(on_disk)


def test_bad_fallback_property_names_it(catalog: SqlCatalog) -> None:
    table, snapshot, on_disk = _table_with_rows(catalog)
    with table.transaction() as tx:
        tx.set_properties({"gpuwrite.fallback-encoding": "delta_byte_array"})
    snapshot = catalog.load_table("db.t").current_snapshot().snapshot_id
    with pytest.raises(IcebergWriteError, match="'gpuwrite.fallback-encoding'='delta_byte_array' is not one of"):
        gi.append(table, partitioned_rows(10))
    _unchanged(catalog, snapshot, on_disk)
