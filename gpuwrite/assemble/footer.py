"""Footer structs as parquet-java fills them: schema elements, column metadata, row groups, FileMetaData."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._version import __version__
from ..format.enums import Encoding, PageType
from ..format.structs import (
    ColumnChunk,
    ColumnMetaData,
    ColumnOrder,
    FileMetaData,
    KeyValue,
    LogicalType,
    PageEncodingStats,
    RowGroup,
    SchemaElement,
    SizeStatistics,
)
from ..page_model import EncodedChunk, PageStats
from ..schema import BYTE_ARRAY, FileSchema, Group, Leaf
from .statistics import statistics

ROOT_NAME = "spark_schema"
CREATED_BY = f"gpuwrite version {__version__} (build {__version__})"


def _logical(leaf: Leaf) -> LogicalType | None:
    """LogicalType union for a leaf's annotation."""
    lg = leaf.logical
    if lg is None:
        return None
    if lg.kind == "STRING":
        return LogicalType.of("STRING")
    if lg.kind == "DATE":
        return LogicalType.of("DATE")
    if lg.kind == "DECIMAL":
        return LogicalType.decimal(lg.scale, lg.precision)
    if lg.kind == "TIMESTAMP":
        return LogicalType.timestamp(lg.adjusted_to_utc, lg.unit)
    if lg.kind == "INTEGER":
        return LogicalType.integer(lg.bit_width, True)
    raise ValueError(f"unknown logical type {lg.kind}")


def _leaf_element(leaf: Leaf, name: str) -> SchemaElement:
    """The SchemaElement of a leaf, written under `name`."""
    return SchemaElement(
        type=leaf.physical, type_length=leaf.type_length or None, repetition_type=leaf.repetition_type,
        name=name, converted_type=leaf.converted,
        scale=leaf.decimal_scale if leaf.is_decimal else None,
        precision=leaf.decimal_precision if leaf.is_decimal else None,
        logicalType=_logical(leaf), field_id=leaf.field_id)


def _elements(node: Group | Leaf, out: list[SchemaElement]) -> None:
    """Depth-first: the node, then its children."""
    if isinstance(node, Leaf):
        out.append(_leaf_element(node, node.path[-1]))
        return
    logical = LogicalType.of(node.logical) if node.logical else None
    out.append(SchemaElement(repetition_type=node.repetition, name=node.name, num_children=len(node.children),
                             converted_type=node.converted, logicalType=logical, field_id=node.field_id))
    for child in node.children:
        _elements(child, out)


def schema_elements(schema: FileSchema) -> list[SchemaElement]:
    """Root `spark_schema` (no repetition) then every node depth first, as parquet-java serialises them."""
    roots = schema.roots or schema.leaves
    out = [SchemaElement(name=ROOT_NAME, num_children=len(roots))]
    for node in roots:
        _elements(node, out)
    return out


@dataclass(frozen=True)
class ChunkLayout:
    """Where a chunk's pages landed in the file: its first byte, its dictionary page header's length (0 when
    it has no dictionary page) and the offset of each data page."""

    start: int
    dictionary_header_len: int
    page_offsets: tuple[int, ...]


def column_metadata(leaf: Leaf, chunk: EncodedChunk, layout: ChunkLayout, codec: int, truncate_length: int, *,
                    merged: PageStats) -> ColumnMetaData:
    """ColumnMetaData for a chunk written at `layout`; `merged`: its pages' statistics merged (the caller keeps
    them for the row group too)."""
    encodings: list[int] = []
    stats: list[PageEncodingStats] = []
    dict_offset = None
    total_unc = total_comp = 0
    if chunk.dictionary is not None:
        dict_offset = layout.start
        encodings.append(Encoding.PLAIN)
        stats.append(PageEncodingStats(page_type=PageType.DICTIONARY_PAGE, encoding=Encoding.PLAIN, count=1))
        total_unc += layout.dictionary_header_len + chunk.dictionary.uncompressed_size
        total_comp += layout.dictionary_header_len + len(chunk.dictionary.body)
    counts: dict[int, int] = {}
    num_values = 0
    for page in chunk.pages:  # one pass over the pages
        counts[page.encoding] = counts.get(page.encoding, 0) + 1
        total_unc += len(page.header) + page.uncompressed_size
        total_comp += page.size
        num_values += page.num_values
    for enc, n in counts.items():
        if enc not in encodings:
            encodings.append(enc)
        stats.append(PageEncodingStats(page_type=PageType.DATA_PAGE_V2, encoding=enc, count=n))
    # SPEC: parquet-java 1.16+ writes SizeStatistics for every chunk: unencoded bytes for BYTE_ARRAY only, no
    # level histograms where the max level is 0 (repetition) or <= 1 (definition), so flat non-binary
    # columns get an empty struct.
    size_stats = SizeStatistics()
    if leaf.physical == BYTE_ARRAY:
        size_stats.unencoded_byte_array_data_bytes = sum(p.byte_array_bytes or 0 for p in chunk.pages)
    if leaf.max_rep > 0:
        size_stats.repetition_level_histogram = _sum_histograms([p.rep_histogram for p in chunk.pages],
                                                                leaf.max_rep)
    if leaf.max_def > 1:
        size_stats.definition_level_histogram = _sum_histograms([p.def_histogram for p in chunk.pages],
                                                                leaf.max_def)
    first_page = layout.start + total_comp if not chunk.pages else layout.page_offsets[0]
    return ColumnMetaData(
        type=leaf.physical, encodings=encodings, path_in_schema=list(leaf.path), codec=codec,
        num_values=num_values, total_uncompressed_size=total_unc,
        total_compressed_size=total_comp, data_page_offset=first_page, dictionary_page_offset=dict_offset,
        statistics=statistics(leaf, merged, truncate_length), encoding_stats=stats, size_statistics=size_stats)


def _sum_histograms(pages: list[list[int] | None], max_level: int) -> list[int]:
    """Chunk histogram: the per-level sum of its pages' histograms."""
    total = [0] * (max_level + 1)
    for hist in pages:
        for level, count in enumerate(hist or ()):
            total[level] += count
    return total


def row_group(chunks: Sequence[ColumnChunk], num_rows: int, ordinal: int) -> RowGroup:
    """RowGroup with parquet-java's totals and file_offset (first chunk's first page)."""
    metas = [c.meta_data for c in chunks]
    first = metas[0]
    offset = first.dictionary_page_offset if first.dictionary_page_offset is not None else first.data_page_offset
    return RowGroup(columns=list(chunks), total_byte_size=sum(m.total_uncompressed_size for m in metas),
                    num_rows=num_rows, file_offset=offset,
                    total_compressed_size=sum(m.total_compressed_size for m in metas), ordinal=ordinal)


def file_metadata(schema: FileSchema, row_groups: list[RowGroup], num_rows: int,
                  key_value: list[tuple[str, str]]) -> FileMetaData:
    """FileMetaData: version 1, the given key/value metadata in order (none: field unset), TYPE_ORDER."""
    kv = [KeyValue(key=k, value=v) for k, v in key_value] or None
    return FileMetaData(version=1, schema=schema_elements(schema), num_rows=num_rows, row_groups=row_groups,
                        key_value_metadata=kv, created_by=CREATED_BY,
                        column_orders=[ColumnOrder.type_order() for _ in schema.leaves])
