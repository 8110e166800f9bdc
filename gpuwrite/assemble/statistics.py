"""Statistics structs as parquet-java writes them (ParquetMetadataConverter.toParquetStatistics)."""

from __future__ import annotations

from ..encode.stats import MAX_STATS_SIZE, truncatable
from ..encode.truncate import truncate_max, truncate_min
from ..format.structs import Statistics
from ..options.model import INT_MAX
from ..page_model import PageStats
from ..schema import BOOLEAN, BYTE_ARRAY, DOUBLE, FIXED_LEN_BYTE_ARRAY, FLOAT, INT32, INT64, INT96, Leaf


def _signed_legacy_order(leaf: Leaf) -> bool:
    """Whether the deprecated min/max fields apply (legacy sort order SIGNED)."""
    if leaf.is_decimal or leaf.physical == INT96:
        return False
    return leaf.physical in (BOOLEAN, INT32, INT64, FLOAT, DOUBLE)


def statistics(leaf: Leaf, st: PageStats, truncate_length: int = INT_MAX) -> Statistics:
    """The ColumnMetaData.statistics parquet-java writes (ParquetMetadataConverter.toParquetStatistics)."""
    if not st.has_values:
        return Statistics(null_count=st.null_count)
    lo, hi = st.min_bytes, st.max_bytes
    binary = leaf.physical in (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY)
    cut = binary and truncate_length != INT_MAX
    size = (min(len(lo), truncate_length) + min(len(hi), truncate_length)) if cut else len(lo) + len(hi)
    if size >= MAX_STATS_SIZE:
        return Statistics()
    if leaf.physical == INT96 and not st.all_same:
        return Statistics(null_count=st.null_count)
    if cut and truncatable(leaf):
        lo, hi = truncate_min(lo, truncate_length), truncate_max(hi, truncate_length)
    equal = lo == hi
    out = Statistics(null_count=st.null_count)
    if _signed_legacy_order(leaf) or equal:
        out.min, out.max = lo, hi
    if leaf.physical != INT96 or equal:
        out.min_value, out.max_value = lo, hi
    return out
