"""A data file's Iceberg metrics from the writer's own results, never by reading the file back.

Counts, sizes and split offsets come from the footer gpuwrite wrote; bounds and NaN counts from the values
counted while encoding (`ChunkSummary.value_bounds`: untruncated, never NaN; `ChunkSummary.nan_count`). Which
metrics a column gets, and how bounds are truncated and serialised, is pyiceberg's own policy
(`compute_statistics_plan`, `StatsAggregator`): the table's `write.metadata.metrics.default` (truncate(16)) and
`write.metadata.metrics.column.<name>` modes, counts only for nested columns. Unlike pyiceberg's pyarrow path,
NaN values are counted and never become a bound (SPEC: Iceberg spec, "Manifests": nan_value_counts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyiceberg.io.pyarrow import MetricModeTypes, StatsAggregator, compute_statistics_plan
from pyiceberg.schema import Schema
from pyiceberg.types import PrimitiveType, StringType

from ..result import ChunkSummary, FileResult
from ..schema import Leaf
from .profile import IcebergWriteError


def _bound(iceberg_type: PrimitiveType, value: Any) -> Any:
    """A chunk bound as pyiceberg's StatsAggregator takes it (strings as str; everything else as decoded)."""
    if isinstance(iceberg_type, StringType) and isinstance(value, bytes):
        return value.decode("utf-8")
    return value


def split_offsets(result: FileResult) -> list[int]:
    """Each row group's first byte: its first chunk's dictionary page, else its first data page (sorted)."""
    out = []
    for rg in result.footer.row_groups:
        first = rg.columns[0]
        dictionary = first.dictionary_page_offset
        use_dict = first.has_dictionary_page and dictionary is not None and dictionary < first.data_page_offset
        out.append(dictionary if use_dict and dictionary is not None else first.data_page_offset)
    return sorted(out)


def _add(counts: dict[int, int], fid: int, value: int | None) -> None:
    if value is not None:
        counts[fid] = counts.get(fid, 0) + value


def file_metrics(result: FileResult, leaves: tuple[Leaf, ...], schema: Schema,
                 properties: Mapping[str, str]) -> dict[str, Any]:
    """DataFile fields (record_count, column_sizes, value/null/NaN counts, lower/upper bounds, split_offsets)
    for a file gpuwrite wrote with the table's field ids."""
    plan = compute_statistics_plan(schema, dict(properties))
    sizes: dict[int, int] = {}
    values: dict[int, int] = {}
    nulls: dict[int, int] = {}
    nans: dict[int, int] = {}
    aggregates: dict[int, StatsAggregator] = {}
    for rg in result.footer.row_groups:
        for leaf, chunk in zip(leaves, rg.columns, strict=True):
            fid = leaf.field_id
            if fid is None or fid not in plan:
                raise IcebergWriteError(f"column {leaf.dotted!r} carries no field id of the table schema")
            mode = plan[fid].mode.type
            _add(sizes, fid, chunk.compressed_size)
            if mode == MetricModeTypes.NONE:
                continue
            _add(values, fid, chunk.num_values)
            _add(nulls, fid, chunk.null_count)
            _add(nans, fid, chunk.nan_count)
            if mode != MetricModeTypes.COUNTS:
                _aggregate(aggregates, plan[fid], chunk)
    lower, upper = {}, {}
    for fid, agg in aggregates.items():
        lo, hi = agg.min_as_bytes(), agg.max_as_bytes()
        if lo is not None:
            lower[fid] = lo
        if hi is not None:
            upper[fid] = hi
    return {"record_count": result.num_rows, "column_sizes": sizes, "value_counts": values,
            "null_value_counts": nulls, "nan_value_counts": nans, "lower_bounds": lower, "upper_bounds": upper,
            "split_offsets": split_offsets(result)}


def _aggregate(aggregates: dict[int, StatsAggregator], collector: Any, chunk: ChunkSummary) -> None:
    """Fold one chunk's bounds into its field's aggregator (pyiceberg's truncation and serialisation)."""
    if chunk.value_bounds is None:
        return
    fid = collector.field_id
    agg = aggregates.get(fid)
    if agg is None:
        try:
            agg = StatsAggregator(collector.iceberg_type, chunk.physical_type, collector.mode.length)
        except ValueError as err:
            raise IcebergWriteError(f"column {collector.column_name!r}: {err}") from None
        aggregates[fid] = agg
    lo, hi = chunk.value_bounds
    agg.update_min(_bound(collector.iceberg_type, lo))
    agg.update_max(_bound(collector.iceberg_type, hi))
