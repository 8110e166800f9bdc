"""Rows -> partition runs: each spec field's transform (`transforms.apply_transform`), then the rows of each
distinct partition tuple gathered in input order, with pyiceberg's `PartitionKey` (partition tuple and path)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.partitioning import PartitionFieldValue, PartitionKey, PartitionSpec
from pyiceberg.schema import Schema

from .profile import IcebergWriteError
from .transforms import apply_transform


@dataclass(frozen=True)
class PartitionRun:
    """The rows of one partition (all rows when the table is unpartitioned) and its key."""

    key: PartitionKey | None
    rows: pa.Table


def _source_column(table: pa.Table, schema: Schema, source_id: int) -> pa.ChunkedArray:
    """The column (or nested struct field) a partition field reads."""
    name = schema.find_column_name(source_id)
    if name is None:
        raise IcebergWriteError(f"partition source field id {source_id} is not in the table schema")
    if name in table.column_names:
        return table.column(name)
    head, *rest = name.split(".")
    return pc.struct_field(table.column(head), rest)


def _codes(values: pa.Array) -> np.ndarray:
    """Dense int64 code per row (equal values, equal codes; null its own code)."""
    encoded = pc.dictionary_encode(values)
    return pc.fill_null(encoded.indices.cast(pa.int64()), -1).to_numpy(zero_copy_only=False)


def partition_runs(table: pa.Table, spec: PartitionSpec, schema: Schema) -> Iterator[PartitionRun]:
    """Split `table` by the spec's partition tuple; rows keep their order within a partition, partitions come in
    order of their first row."""
    if spec.is_unpartitioned() or table.num_rows == 0:
        yield PartitionRun(None, table)
        return
    values = [apply_transform(f.transform, _source_column(table, schema, f.source_id)) for f in spec.fields]
    codes = np.stack([_codes(v) for v in values], axis=1)
    _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    group = rank[inverse]
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(len(first) + 1))
    taken = table.take(pa.array(order))
    for g in range(len(first)):
        start, stop = int(bounds[g]), int(bounds[g + 1])
        row = int(order[start])
        key = PartitionKey(field_values=[PartitionFieldValue(field=f, value=v[row].as_py())
                                         for f, v in zip(spec.fields, values, strict=True)],
                           partition_spec=spec, schema=schema)
        yield PartitionRun(key, taken.slice(start, stop - start))
