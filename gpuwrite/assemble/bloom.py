"""Bloom filter blocks as written after the offset indexes (header, then the chunk's bitset), and the warning
given when a write's filters outweigh the data they index."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

from ..errors import BloomFilterSizeWarning
from ..format.structs import BloomFilterHeader, FileMetaData
from ..format.thrift import serialize


def bloom_filter_block(bitset: bytes) -> bytes:
    """BloomFilterHeader (BLOCK, XXHASH, UNCOMPRESSED) followed by the bitset."""
    return serialize(BloomFilterHeader(numBytes=len(bitset))) + bitset


def filter_weight(footers: Iterable[FileMetaData]) -> tuple[int, int, dict[str, int]]:
    """(bloom filter bytes, column chunk bytes, filter bytes per column path) over the files' footers."""
    filters = data = 0
    per_column: dict[str, int] = {}
    for meta in footers:
        for rg in meta.row_groups:
            for chunk in rg.columns:
                md = chunk.meta_data
                data += md.total_compressed_size
                if md.bloom_filter_length:
                    path = ".".join(md.path_in_schema)
                    per_column[path] = per_column.get(path, 0) + md.bloom_filter_length
                    filters += md.bloom_filter_length
    return filters, data, per_column


WARN_FILTER_BYTES = 64 * 1024  # below this, filters outweighing a tiny write's data are no one's concern


def warn_if_filters_outweigh_data(footers: Iterable[FileMetaData], what: str) -> None:
    """One BloomFilterSizeWarning when the filters of a write (`what`: its file or dataset, for the message)
    take more bytes than all its column chunks (and over 64 KiB): naming the filtered columns, largest first."""
    filters, data, per_column = filter_weight(footers)
    if filters <= max(data, WARN_FILTER_BYTES):
        return
    columns = ", ".join(repr(c) for c in sorted(per_column, key=lambda c: (-per_column[c], c)))
    warnings.warn(f"gpuwrite: the bloom filters of {what} take {filters:,} bytes, more than the {data:,} bytes of "
                  f"data they index (filtered columns: {columns}); many small row groups, a large expected NDV or "
                  "adaptive filters make filters outweigh small chunks: write fewer, larger row groups, or leave "
                  "the filters off these columns", BloomFilterSizeWarning, stacklevel=3)
