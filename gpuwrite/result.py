"""What a write produced: the file, its row count and size, and a readable summary of its footer."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .format.enums import Encoding
from .format.structs import FileMetaData, Statistics
from .page_model import PageStats
from .schema import BOOLEAN, DOUBLE, FLOAT, INT32, INT64, PHYSICAL_NAMES, Leaf


@dataclass(frozen=True)
class ChunkSummary:
    """One column chunk: what Iceberg-style metrics and tests need without re-reading the file."""

    path: str
    physical_type: str
    encodings: tuple[str, ...]
    num_values: int
    null_count: int | None
    min: Any
    max: Any
    compressed_size: int
    uncompressed_size: int
    page_count: int
    has_dictionary_page: bool
    data_page_offset: int
    dictionary_page_offset: int | None
    bloom_filter_offset: int | None = None
    # Counted while encoding, not read from the footer: NaN values (FLOAT / DOUBLE chunks, else None), and the
    # smallest and largest non-null, non-NaN values, untruncated (None when there is none). Iceberg's metrics.
    nan_count: int | None = None
    value_bounds: tuple[Any, Any] | None = None


@dataclass(frozen=True)
class RowGroupSummary:
    """One row group: its rows, sizes and column chunks."""

    num_rows: int
    total_byte_size: int
    total_compressed_size: int
    columns: tuple[ChunkSummary, ...]


@dataclass(frozen=True)
class FooterSummary:
    """The footer as written: row groups, key/value metadata and the writer name."""

    num_rows: int
    created_by: str
    key_value_metadata: dict[str, str]
    row_groups: tuple[RowGroupSummary, ...]
    num_columns: int = 0  # leaf columns of the schema (a file with no row groups has them too)

    def __repr__(self) -> str:
        """One line: rows, row groups, columns and the metadata keys (not Spark's kilobytes of schema JSON)."""
        return (f"FooterSummary(num_rows={self.num_rows:,}, row_groups={len(self.row_groups)}, "
                f"columns={self.num_columns}, "
                f"created_by={self.created_by!r}, key_value_metadata=[{', '.join(map(repr, self.key_value_metadata))}])")


@dataclass(frozen=True)
class FileResult:
    """A written file: where, how many rows, bytes on disk, and its footer.

    The footer's summary may be given as the call that builds it (`summarize` bound to its arguments): it is
    then built when `footer` is first read, so a caller that never reads it does not pay for it (about 0.7 ms
    at the end of an 80-column write, measured). A pickled result holds the summary itself."""

    path: str
    num_rows: int
    size: int
    summary: FooterSummary | Callable[[], FooterSummary] = field(repr=False, compare=False)
    metadata: FileMetaData = field(repr=False)

    @property
    def footer(self) -> FooterSummary:
        """The readable summary of the file's footer (built on first use)."""
        summary = self.summary
        if not isinstance(summary, FooterSummary):
            summary = summary()
            object.__setattr__(self, "summary", summary)  # frozen: set once, to what it stands for
        return summary

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with the summary built (the call that builds it refers to the writer's state)."""
        return {**self.__dict__, "summary": self.footer}

    def __repr__(self) -> str:
        """One line: where, rows, bytes, row groups and columns (`.footer` has the details)."""
        return (f"FileResult(path={self.path!r}, num_rows={self.num_rows:,}, size={self.size:,} bytes, "
                f"row_groups={len(self.footer.row_groups)}, columns={self.footer.num_columns})")


_ENCODING_NAMES = {int(e): e.name for e in Encoding}  # looked up per chunk: Encoding(e) costs 5 us a call
_FORMATS = {INT32: "<i", INT64: "<q", FLOAT: "<f", DOUBLE: "<d", BOOLEAN: "<?"}


def decode_stat(leaf: Leaf, raw: bytes | None) -> Any:
    """A statistics value as a Python value (ints, floats, bools; bytes for byte arrays and INT96)."""
    if raw is None:
        return None
    if leaf.is_decimal:
        unscaled = (int.from_bytes(raw, "little", signed=True) if leaf.physical in (INT32, INT64)
                    else int.from_bytes(raw, "big", signed=True))
        from decimal import Decimal
        return Decimal(unscaled).scaleb(-leaf.decimal_scale)
    fmt = _FORMATS.get(leaf.physical)
    return struct.unpack(fmt, raw)[0] if fmt else raw


def _stat_value(st: Statistics | None, leaf: Leaf, which: str) -> Any:
    """min or max from min_value/max_value, else the legacy field."""
    if st is None:
        return None
    raw = getattr(st, f"{which}_value") or getattr(st, which)
    return decode_stat(leaf, raw)


def _value_bounds(leaf: Leaf, st: PageStats | None) -> tuple[Any, Any] | None:
    """Decoded smallest and largest non-NaN value of a chunk's merged page statistics."""
    bounds = st.bounds_without_nan() if st is not None else None
    return None if bounds is None else (decode_stat(leaf, bounds[0]), decode_stat(leaf, bounds[1]))


def summarize(meta: FileMetaData, leaves: tuple[Leaf, ...], page_counts: list[list[int]],
              chunk_stats: list[list[PageStats]] | None = None) -> FooterSummary:
    """Readable footer summary from the FileMetaData we wrote, each chunk's data page count and (when given)
    each chunk's merged page statistics."""
    groups = []
    for r, (rg, counts) in enumerate(zip(meta.row_groups, page_counts, strict=True)):
        chunks = []
        stats: list[PageStats | None] = list(chunk_stats[r]) if chunk_stats else [None] * len(leaves)
        for cc, leaf, pages, merged in zip(rg.columns, leaves, counts, stats, strict=True):
            m = cc.meta_data
            assert m is not None
            st = m.statistics
            chunks.append(ChunkSummary(
                path=".".join(m.path_in_schema), physical_type=PHYSICAL_NAMES[m.type],
                encodings=tuple(_ENCODING_NAMES[e] for e in m.encodings), num_values=m.num_values,
                null_count=st.null_count if st is not None else None, min=_stat_value(st, leaf, "min"),
                max=_stat_value(st, leaf, "max"), compressed_size=m.total_compressed_size,
                uncompressed_size=m.total_uncompressed_size, page_count=pages,
                has_dictionary_page=m.dictionary_page_offset is not None, data_page_offset=m.data_page_offset,
                dictionary_page_offset=m.dictionary_page_offset, bloom_filter_offset=m.bloom_filter_offset,
                nan_count=merged.nan_count if merged is not None and m.type in (FLOAT, DOUBLE) else None,
                value_bounds=_value_bounds(leaf, merged)))
        groups.append(RowGroupSummary(rg.num_rows, rg.total_byte_size, rg.total_compressed_size or 0,
                                      tuple(chunks)))
    kv = {k.key: k.value or "" for k in meta.key_value_metadata or []}
    return FooterSummary(meta.num_rows, meta.created_by or "", kv, tuple(groups), len(leaves))
