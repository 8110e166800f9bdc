"""`max_partitions`: how many partition directories one `write_dataset` may create (pyarrow's limit, 1024 by
default), so a partition column with a value per row (prices, ids, timestamps) is refused up front instead of
making a directory per row. Spark has no such limit; `gpuwrite.spark.write_parquet` sets none.

When the rows are gathered and sorted (the default) they are counted before any file is opened; when files are
opened as rows stream in (`max_open_files`, presorted input) each new directory is counted as it comes, and the
staging directory is discarded on the error, so nothing is left behind either way.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from ..spark.policy.ordering import empty_to_null
from ..spark.policy.partitions import PartitionError

DEFAULT_MAX_PARTITIONS = 1024  # SPEC: pyarrow.dataset.write_dataset(max_partitions=1024)


def _too_many(columns: Sequence[str], count: str, limit: int, per_column: str = "") -> PartitionError:
    """The error: the columns, the count (and each column's distinct values when known), the limit."""
    detail = f" ({per_column})" if per_column else ""
    return PartitionError(f"partition_by={list(columns)} would create {count} partition directories{detail}, more "
                          f"than max_partitions={limit:,}: pass a larger max_partitions if you mean it, or partition "
                          "by columns with fewer distinct values; nothing was written")


def check_partition_count(table: pa.Table, columns: Sequence[str], limit: int) -> None:
    """Refuse `table` if its distinct partition values (empty strings taken as null, as Spark does) make more
    than `limit` directories; 0 is no limit."""
    if not limit or not columns or table.num_rows <= limit:
        return
    keys = pa.table([empty_to_null(table.column(c)) for c in columns], names=[f"k{i}" for i in range(len(columns))])
    count = keys.group_by(keys.column_names).aggregate([]).num_rows
    if count > limit:
        import pyarrow.compute as pc  # only to word the error: a write need not load it

        per_column = ", ".join(f"{c}: {pc.count_distinct(keys.column(i), mode='all').as_py():,} distinct values"
                               for i, c in enumerate(columns))
        raise _too_many(columns, f"{count:,}", limit, per_column)


class PartitionBudget:
    """Counts the directories a streaming write opens; raises once there are more than `limit` (0: no limit)."""

    def __init__(self, columns: Sequence[str], limit: int) -> None:
        self.columns, self.limit = list(columns), limit
        self.seen: set[str] = set()

    def add(self, directory: str) -> None:
        """Count one directory (again is free)."""
        if not self.limit or directory in self.seen:
            return
        self.seen.add(directory)
        if len(self.seen) > self.limit:
            raise _too_many(self.columns, f"at least {len(self.seen):,}", self.limit)
