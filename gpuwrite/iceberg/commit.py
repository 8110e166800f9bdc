"""append / overwrite on a pyiceberg Table: gpuwrite writes the data files, then one snapshot commits them.

The flow: resolve the Iceberg profile from the table's properties; conform the input to the table's current
schema (its Arrow form carries the field ids); check that every Parquet node gets the table's field id and
physical type; split rows into partition runs; write each run into data files; build each `DataFile` from the
writer's results (`metrics.file_metrics`); check the written footers again; commit with a fast append (after a
delete by `overwrite_filter` for overwrite) in one transaction. Any failure commits nothing and removes the files
written so far.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyiceberg.expressions import AlwaysFalse, AlwaysTrue, BooleanExpression
from pyiceberg.io.pyarrow import _primitive_to_physical, parquet_path_to_id_mapping, schema_to_pyarrow
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.typedef import Record
from pyiceberg.types import PrimitiveType

from ..errors import GpuwriteError
from ..integrations.arrow import open_input
from ..schema import PHYSICAL_NAMES, FileSchema
from .files import DataFileWriter, WrittenFile
from .metrics import file_metrics
from .partitions import partition_runs
from .profile import IcebergProfile, IcebergWriteError, resolve_profile

ALWAYS_TRUE = AlwaysTrue()
SCHEMA_KEY = "iceberg.schema"  # SPEC: Iceberg's ParquetWriter puts the table schema JSON under this footer key


def conform(data: Any, schema: Schema) -> pa.Table:
    """`data` as an Arrow table of the table's schema with field ids: columns by name, optional ones it lacks as
    nulls, values cast (a lossy cast, a missing required column or an unknown column is an error)."""
    arrow_schema, pieces = open_input(data)
    table = pa.Table.from_batches(list(_batches(pieces)), schema=arrow_schema)
    target = schema_to_pyarrow(schema, include_field_ids=True)
    unknown = [n for n in table.column_names if n not in target.names]
    if unknown:
        raise IcebergWriteError(f"column {unknown[0]!r} is not in the table schema ({', '.join(target.names)})")
    columns = []
    for f in target:
        if f.name in table.column_names:
            columns.append(table.column(f.name))
        elif f.nullable:
            columns.append(pa.nulls(table.num_rows, f.type))
        else:
            raise IcebergWriteError(f"required column {f.name!r} is missing from the data")
    try:
        return pa.Table.from_arrays(columns, names=target.names).cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as err:
        raise IcebergWriteError(f"the data does not fit the table schema: {err}") from err


def _batches(pieces: Any) -> Any:
    for piece in pieces:
        yield from (piece.to_batches() if isinstance(piece, pa.Table) else [piece])


def check_file_schema(file_schema: FileSchema, schema: Schema) -> None:
    """Every leaf carries the table's field id for its path and the physical type Iceberg expects."""
    ids = parquet_path_to_id_mapping(schema)
    for leaf in file_schema.leaves:
        expected = ids.get(leaf.dotted)
        if expected is None or leaf.field_id != expected:
            raise IcebergWriteError(f"column {leaf.dotted!r}: field id {leaf.field_id} where the table schema has "
                                    f"{expected} (the standard layout with field ids is required)")
        iceberg_type = schema.find_field(expected).field_type
        physical = _primitive_to_physical(iceberg_type) if isinstance(iceberg_type, PrimitiveType) else None
        if PHYSICAL_NAMES[leaf.physical] != physical:
            raise IcebergWriteError(f"column {leaf.dotted!r}: Parquet type {PHYSICAL_NAMES[leaf.physical]}, "
                                    f"Iceberg expects {physical}")


def _check_written(written: WrittenFile, file_schema: FileSchema) -> None:
    """The footer as written: the same ids, node by node, as the schema that was checked."""
    ids = [e.field_id for e in written.result.metadata.schema if e.num_children is None]
    if ids != [leaf.field_id for leaf in file_schema.leaves]:
        raise IcebergWriteError(f"{written.location}: the footer's field ids {ids} differ from the schema's")


def _data_file(table: Table, written: WrittenFile, file_schema: FileSchema) -> DataFile:
    """The manifest entry for a written file, metrics from the writer's results."""
    metrics = file_metrics(written.result, file_schema.leaves, table.schema(), table.properties)
    return DataFile.from_args(
        content=DataFileContent.DATA, file_path=written.location, file_format=FileFormat.PARQUET,
        partition=written.key.partition if written.key is not None else Record(),
        file_size_in_bytes=written.result.size, sort_order_id=None, spec_id=table.metadata.default_spec_id,
        equality_ids=None, key_metadata=None, **metrics)


def _prepare(table: Table, data: Any, options: Mapping[str, Any] | None,
             keywords: dict[str, Any]) -> tuple[pa.Table, FileSchema, IcebergProfile]:
    """Profile, conformed rows and the checked file schema."""
    profile = resolve_profile(table.properties, options, **keywords)
    schema = table.schema()
    rows = conform(data, schema)
    try:
        file_schema = FileSchema.from_arrow(rows.schema, profile.options)
    except GpuwriteError as err:
        raise IcebergWriteError(f"cannot write this table with gpuwrite: {err}") from err
    check_file_schema(file_schema, schema)
    return rows, file_schema, profile


def write_data_files(table: Table, data: Any, options: Mapping[str, Any] | None = None,
                     **keywords: Any) -> tuple[list[DataFile], DataFileWriter]:
    """Write `data` as data files of `table` (nothing committed); returns their DataFiles and the writer that
    can remove them."""
    rows, file_schema, profile = _prepare(table, data, options, keywords)
    writer = DataFileWriter(file_schema, profile, table.location_provider(), table.io,
                            [(SCHEMA_KEY, table.schema().model_dump_json())])
    try:
        for run in partition_runs(rows, table.spec(), table.schema()):
            writer.write_run(run.rows, run.key)
        for written in writer.written:
            _check_written(written, file_schema)
        return [_data_file(table, w, file_schema) for w in writer.written], writer
    except BaseException:
        writer.remove_all()
        raise


def _commit(table: Table, data: Any, delete_filter: BooleanExpression | str | None,
            options: Mapping[str, Any] | None, keywords: dict[str, Any]) -> list[DataFile]:
    """Write, then one transaction: optional delete by filter, fast append of the new files."""
    snapshot_properties = keywords.pop("snapshot_properties", None) or {}
    files, writer = write_data_files(table, data, options, **keywords)
    try:
        with table.transaction() as tx:
            if delete_filter is not None and delete_filter != AlwaysFalse():
                tx.delete(delete_filter=delete_filter, snapshot_properties=snapshot_properties)
            with tx.update_snapshot(snapshot_properties=snapshot_properties).fast_append() as append_files:
                for data_file in files:
                    append_files.append_data_file(data_file)
    except BaseException:
        writer.remove_all()
        raise
    return files


def append(table: Table, data: Any, *, options: Mapping[str, Any] | None = None, **keywords: Any) -> list[DataFile]:
    """Append `data` to `table` in one snapshot; returns the committed DataFiles."""
    return _commit(table, data, None, options, keywords)


def overwrite(table: Table, data: Any, overwrite_filter: BooleanExpression | str = ALWAYS_TRUE, *,
              options: Mapping[str, Any] | None = None, **keywords: Any) -> list[DataFile]:
    """Replace the rows matching `overwrite_filter` (all by default) with `data`, in one transaction."""
    return _commit(table, data, overwrite_filter, options, keywords)
