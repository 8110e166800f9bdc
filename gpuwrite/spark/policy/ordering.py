"""Which (partition directory, bucket) each row belongs to, in the order Spark's V1Writes writes them: sorted by
the partition columns (nulls first, empty strings taken as null by Empty2Null), then by bucket id."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from .buckets import BucketSpec
from .partitions import partition_directory

Key = tuple[str, int | None]  # (partition directory, bucket id)
_BUCKET_KEY = "__gpuwrite_bucket_id__"


def empty_to_null(col: Any) -> Any:
    """SPEC: V1Writes' Empty2Null: an empty string partition value sorts and groups as null (an Array or
    ChunkedArray comes back as the same kind)."""
    import pyarrow.compute as pc  # on first use: an unpartitioned write need not load it

    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return pc.if_else(pc.equal(col, ""), pa.scalar(None, col.type), col)
    return col


def partition_runs(table: pa.Table, columns: Sequence[str], buckets: BucketSpec | None,
                   time_zone: str) -> Iterator[tuple[str, int | None, pa.Table]]:
    """(directory, bucket id, rows) per run of `table` sorted in V1Writes order; the rows leave out the
    partition columns."""
    import pyarrow.compute as pc  # on first use: an unpartitioned write need not load it

    keys = [empty_to_null(table.column(name)) for name in columns]
    names = [f"k{i}" for i in range(len(columns))]  # positional: pyarrow reads a name like ".x" as a field path
    if buckets is not None:
        keys.append(pa.array(buckets.ids(table)))
        names.append(_BUCKET_KEY)
    key_table = pa.table(keys, names=names)
    order = pc.sort_indices(key_table, sort_keys=[(c, "ascending", "at_start") for c in names])
    key_sorted = key_table.take(order)
    data_sorted = table.drop_columns(list(columns)).take(order)
    n = table.num_rows
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
    for name in names:
        col = key_sorted.column(name).combine_chunks()
        if n > 1:
            a, b = col.slice(0, n - 1), col.slice(1)
            differs = pc.fill_null(pc.not_equal(a, b), True).to_numpy(zero_copy_only=False)
            both_null = pc.and_(a.is_null(), b.is_null()).to_numpy(zero_copy_only=False)
            change[1:] |= differs & ~both_null
    starts = list(np.flatnonzero(change)) + [n]
    types = [key_sorted.column(k).type for k in names[:len(columns)]]
    for start, end in zip(starts, starts[1:], strict=False):
        values = [key_sorted.column(k)[start].as_py() for k in names[:len(columns)]]
        directory = partition_directory(columns, values, types, time_zone)
        bucket = key_sorted.column(_BUCKET_KEY)[start].as_py() if buckets is not None else None
        yield directory, bucket, data_sorted.slice(start, end - start)


def row_keys(table: pa.Table, columns: Sequence[str], buckets: BucketSpec | None,
             time_zone: str) -> tuple[np.ndarray, list[Key]]:
    """Per row, the index of its (directory, bucket) key; keys in order of first appearance."""
    import pyarrow.compute as pc  # on first use: an unpartitioned write need not load it

    n = table.num_rows
    composite = np.zeros(n, dtype=np.int64)
    types: list[pa.DataType] = []
    for name in columns:
        col = empty_to_null(table.column(name).combine_chunks())
        encoded = pc.dictionary_encode(col, null_encoding="encode")
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        composite = composite * (len(encoded.dictionary) + 1) + codes
        types.append(col.type)
    if buckets is not None:
        composite = composite * buckets.num_buckets + buckets.ids(table)
    uniques, first, inverse = np.unique(composite, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    keys = []
    for u in order:
        row = int(first[u])
        values = [table.column(name)[row].as_py() for name in columns]
        directory = partition_directory(columns, values, types, time_zone)
        bucket = int(buckets.ids(table.slice(row, 1))[0]) if buckets else None
        keys.append((directory, bucket))
    return rank[inverse.reshape(-1)], keys
