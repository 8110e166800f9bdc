"""Parquet Thrift structs (apache/parquet-format parquet.thrift) as slotted dataclasses that write themselves.

Each ``write`` emits fields in IDL id order. Optional fields (default ``None``) are skipped when None;
required fields are always written, so a None there fails loudly instead of making a file readers
reject. Attribute names follow the IDL (``logicalType``, ``numBytes``, union members in capitals) so
they match the spec and the names ``footer_reader`` prints. Enum-typed fields take the IntEnums of
``gpuwrite.format.enums`` or plain ints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gpuwrite.format.thrift import CompactWriter, Writable

_TIME_UNITS = ("MILLIS", "MICROS", "NANOS")
_EMPTY_LOGICAL_TYPES = ("STRING", "MAP", "LIST", "ENUM", "DATE", "UNKNOWN", "JSON", "BSON", "UUID", "FLOAT16")


def _write_union(w: CompactWriter, name: str, members: Iterable[tuple[int, Writable | None]]) -> None:
    """Write a Thrift union: a struct with exactly one member set."""
    chosen = [(fid, value) for fid, value in members if value is not None]
    if len(chosen) != 1:
        raise ValueError(f"{name} is a union: set exactly one member, not {len(chosen)}")
    w.struct_begin()
    w.field_struct(*chosen[0])
    w.struct_end()


@dataclass(slots=True, frozen=True)
class Empty:
    """A struct with no fields: the members of TimeUnit, ColumnOrder and the bloom-filter unions."""

    def write(self, w: CompactWriter) -> None:
        """Write the empty struct (just its stop byte)."""
        w.struct_begin()
        w.struct_end()


EMPTY = Empty()


@dataclass(slots=True, kw_only=True)
class Statistics:
    """Min/max/null statistics of a page or column chunk; min/max values are PLAIN-encoded bytes."""

    max: bytes | None = None
    min: bytes | None = None
    null_count: int | None = None
    distinct_count: int | None = None
    max_value: bytes | None = None
    min_value: bytes | None = None
    is_max_value_exact: bool | None = None
    is_min_value_exact: bool | None = None
    nan_count: int | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        if self.max is not None:
            w.field_binary(1, self.max)
        if self.min is not None:
            w.field_binary(2, self.min)
        if self.null_count is not None:
            w.field_i64(3, self.null_count)
        if self.distinct_count is not None:
            w.field_i64(4, self.distinct_count)
        if self.max_value is not None:
            w.field_binary(5, self.max_value)
        if self.min_value is not None:
            w.field_binary(6, self.min_value)
        if self.is_max_value_exact is not None:
            w.field_bool(7, self.is_max_value_exact)
        if self.is_min_value_exact is not None:
            w.field_bool(8, self.is_min_value_exact)
        if self.nan_count is not None:
            w.field_i64(9, self.nan_count)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class SizeStatistics:
    """Unencoded BYTE_ARRAY size and level histograms, for readers' memory estimates and pruning."""

    unencoded_byte_array_data_bytes: int | None = None
    repetition_level_histogram: list[int] | None = None
    definition_level_histogram: list[int] | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        if self.unencoded_byte_array_data_bytes is not None:
            w.field_i64(1, self.unencoded_byte_array_data_bytes)
        if self.repetition_level_histogram is not None:
            w.field_list_i64(2, self.repetition_level_histogram)
        if self.definition_level_histogram is not None:
            w.field_list_i64(3, self.definition_level_histogram)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class PageEncodingStats:
    """How many pages of one type use one encoding, so readers can tell if a chunk is all-dictionary."""

    page_type: int
    encoding: int
    count: int

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order."""
        w.struct_begin()
        w.field_i32(1, self.page_type)
        w.field_i32(2, self.encoding)
        w.field_i32(3, self.count)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class DataPageHeader:
    """Header of a v1 data page (levels inline with the values); kept for completeness and reading."""

    num_values: int
    encoding: int
    definition_level_encoding: int
    repetition_level_encoding: int
    statistics: Statistics | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        w.field_i32(1, self.num_values)
        w.field_i32(2, self.encoding)
        w.field_i32(3, self.definition_level_encoding)
        w.field_i32(4, self.repetition_level_encoding)
        if self.statistics is not None:
            w.field_struct(5, self.statistics)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class DictionaryPageHeader:
    """Header of the one dictionary page that starts a dictionary-encoded column chunk."""

    num_values: int
    encoding: int
    is_sorted: bool | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        w.field_i32(1, self.num_values)
        w.field_i32(2, self.encoding)
        if self.is_sorted is not None:
            w.field_bool(3, self.is_sorted)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class DataPageHeaderV2:
    """Header of a v2 data page: uncompressed RLE levels first, then the (maybe compressed) values."""

    num_values: int
    num_nulls: int
    num_rows: int
    encoding: int
    definition_levels_byte_length: int
    repetition_levels_byte_length: int
    is_compressed: bool | None = None
    statistics: Statistics | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        w.field_i32(1, self.num_values)
        w.field_i32(2, self.num_nulls)
        w.field_i32(3, self.num_rows)
        w.field_i32(4, self.encoding)
        w.field_i32(5, self.definition_levels_byte_length)
        w.field_i32(6, self.repetition_levels_byte_length)
        if self.is_compressed is not None:
            w.field_bool(7, self.is_compressed)
        if self.statistics is not None:
            w.field_struct(8, self.statistics)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class PageHeader:
    """Header in front of every page; exactly one of the per-kind headers should be set."""

    type: int
    uncompressed_page_size: int
    compressed_page_size: int
    crc: int | None = None
    data_page_header: DataPageHeader | None = None
    index_page_header: Empty | None = None
    dictionary_page_header: DictionaryPageHeader | None = None
    data_page_header_v2: DataPageHeaderV2 | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields (crc is a signed i32 on the wire)."""
        w.struct_begin()
        w.field_i32(1, self.type)
        w.field_i32(2, self.uncompressed_page_size)
        w.field_i32(3, self.compressed_page_size)
        if self.crc is not None:
            w.field_i32(4, self.crc)
        if self.data_page_header is not None:
            w.field_struct(5, self.data_page_header)
        if self.index_page_header is not None:
            w.field_struct(6, self.index_page_header)
        if self.dictionary_page_header is not None:
            w.field_struct(7, self.dictionary_page_header)
        if self.data_page_header_v2 is not None:
            w.field_struct(8, self.data_page_header_v2)
        w.struct_end()


@dataclass(slots=True)
class KeyValue:
    """One key/value metadata entry (file or column chunk)."""

    key: str
    value: str | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping an unset value."""
        w.struct_begin()
        w.field_string(1, self.key)
        if self.value is not None:
            w.field_string(2, self.value)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class SortingColumn:
    """Declares that a row group is sorted on one column."""

    column_idx: int
    descending: bool
    nulls_first: bool

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order."""
        w.struct_begin()
        w.field_i32(1, self.column_idx)
        w.field_bool(2, self.descending)
        w.field_bool(3, self.nulls_first)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class TimeUnit:
    """Union MILLIS=1 | MICROS=2 | NANOS=3, each an empty struct."""

    MILLIS: Empty | None = None
    MICROS: Empty | None = None
    NANOS: Empty | None = None

    @classmethod
    def of(cls, unit: str) -> TimeUnit:
        """Build the union from 'MILLIS', 'MICROS' or 'NANOS'."""
        if unit not in _TIME_UNITS:
            raise ValueError(f"time unit must be one of {_TIME_UNITS}, not {unit!r}")
        return cls(**{unit: EMPTY})

    def write(self, w: CompactWriter) -> None:
        """Write the union with its one member."""
        _write_union(w, "TimeUnit", ((1, self.MILLIS), (2, self.MICROS), (3, self.NANOS)))


@dataclass(slots=True, kw_only=True)
class DecimalType:
    """DECIMAL logical type: scale and precision (also repeated in SchemaElement for old readers)."""

    scale: int
    precision: int

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order."""
        w.struct_begin()
        w.field_i32(1, self.scale)
        w.field_i32(2, self.precision)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class TimeType:
    """TIME logical type."""

    isAdjustedToUTC: bool
    unit: TimeUnit

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order."""
        w.struct_begin()
        w.field_bool(1, self.isAdjustedToUTC)
        w.field_struct(2, self.unit)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class TimestampType:
    """TIMESTAMP logical type."""

    isAdjustedToUTC: bool
    unit: TimeUnit

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order."""
        w.struct_begin()
        w.field_bool(1, self.isAdjustedToUTC)
        w.field_struct(2, self.unit)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class IntType:
    """INTEGER logical type; bitWidth is an i8 on the wire (8, 16, 32 or 64)."""

    bitWidth: int
    isSigned: bool

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order."""
        w.struct_begin()
        w.field_i8(1, self.bitWidth)
        w.field_bool(2, self.isSigned)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class LogicalType:
    """Union of logical type annotations (id 9 is reserved for INTERVAL); set exactly one member."""

    STRING: Empty | None = None
    MAP: Empty | None = None
    LIST: Empty | None = None
    ENUM: Empty | None = None
    DECIMAL: DecimalType | None = None
    DATE: Empty | None = None
    TIME: TimeType | None = None
    TIMESTAMP: TimestampType | None = None
    INTEGER: IntType | None = None
    UNKNOWN: Empty | None = None
    JSON: Empty | None = None
    BSON: Empty | None = None
    UUID: Empty | None = None
    FLOAT16: Empty | None = None

    @classmethod
    def of(cls, name: str) -> LogicalType:
        """Build a parameterless member: STRING, MAP, LIST, ENUM, DATE, UNKNOWN, JSON, BSON, UUID, FLOAT16."""
        if name not in _EMPTY_LOGICAL_TYPES:
            raise ValueError(f"{name!r} is not a parameterless logical type {_EMPTY_LOGICAL_TYPES}")
        out = cls()
        setattr(out, name, EMPTY)
        return out

    @classmethod
    def decimal(cls, scale: int, precision: int) -> LogicalType:
        """Build DECIMAL(precision, scale)."""
        return cls(DECIMAL=DecimalType(scale=scale, precision=precision))

    @classmethod
    def time(cls, adjusted_to_utc: bool, unit: str) -> LogicalType:
        """Build TIME with a unit of 'MILLIS', 'MICROS' or 'NANOS'."""
        return cls(TIME=TimeType(isAdjustedToUTC=adjusted_to_utc, unit=TimeUnit.of(unit)))

    @classmethod
    def timestamp(cls, adjusted_to_utc: bool, unit: str) -> LogicalType:
        """Build TIMESTAMP with a unit of 'MILLIS', 'MICROS' or 'NANOS'."""
        return cls(TIMESTAMP=TimestampType(isAdjustedToUTC=adjusted_to_utc, unit=TimeUnit.of(unit)))

    @classmethod
    def integer(cls, bit_width: int, signed: bool) -> LogicalType:
        """Build INTEGER(bit_width, signed)."""
        return cls(INTEGER=IntType(bitWidth=bit_width, isSigned=signed))

    def write(self, w: CompactWriter) -> None:
        """Write the union with its one member."""
        _write_union(
            w,
            "LogicalType",
            (
                (1, self.STRING),
                (2, self.MAP),
                (3, self.LIST),
                (4, self.ENUM),
                (5, self.DECIMAL),
                (6, self.DATE),
                (7, self.TIME),
                (8, self.TIMESTAMP),
                (10, self.INTEGER),
                (11, self.UNKNOWN),
                (12, self.JSON),
                (13, self.BSON),
                (14, self.UUID),
                (15, self.FLOAT16),
            ),
        )


@dataclass(slots=True, kw_only=True)
class SchemaElement:
    """One node of the depth-first flattened schema: a group (num_children set) or a leaf (type set)."""

    type: int | None = None
    type_length: int | None = None
    repetition_type: int | None = None
    name: str
    num_children: int | None = None
    converted_type: int | None = None
    scale: int | None = None
    precision: int | None = None
    field_id: int | None = None
    logicalType: LogicalType | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        if self.type is not None:
            w.field_i32(1, self.type)
        if self.type_length is not None:
            w.field_i32(2, self.type_length)
        if self.repetition_type is not None:
            w.field_i32(3, self.repetition_type)
        w.field_string(4, self.name)
        if self.num_children is not None:
            w.field_i32(5, self.num_children)
        if self.converted_type is not None:
            w.field_i32(6, self.converted_type)
        if self.scale is not None:
            w.field_i32(7, self.scale)
        if self.precision is not None:
            w.field_i32(8, self.precision)
        if self.field_id is not None:
            w.field_i32(9, self.field_id)
        if self.logicalType is not None:
            w.field_struct(10, self.logicalType)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class ColumnMetaData:
    """Metadata of one column chunk: type, encodings, codec, sizes, page offsets and statistics."""

    type: int
    encodings: list[int]
    path_in_schema: list[str]
    codec: int
    num_values: int
    total_uncompressed_size: int
    total_compressed_size: int
    key_value_metadata: list[KeyValue] | None = None
    data_page_offset: int
    index_page_offset: int | None = None
    dictionary_page_offset: int | None = None
    statistics: Statistics | None = None
    encoding_stats: list[PageEncodingStats] | None = None
    bloom_filter_offset: int | None = None
    bloom_filter_length: int | None = None
    size_statistics: SizeStatistics | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        w.field_i32(1, self.type)
        w.field_list_i32(2, self.encodings)
        w.field_list_string(3, self.path_in_schema)
        w.field_i32(4, self.codec)
        w.field_i64(5, self.num_values)
        w.field_i64(6, self.total_uncompressed_size)
        w.field_i64(7, self.total_compressed_size)
        if self.key_value_metadata is not None:
            w.field_list_struct(8, self.key_value_metadata)
        w.field_i64(9, self.data_page_offset)
        if self.index_page_offset is not None:
            w.field_i64(10, self.index_page_offset)
        if self.dictionary_page_offset is not None:
            w.field_i64(11, self.dictionary_page_offset)
        if self.statistics is not None:
            w.field_struct(12, self.statistics)
        if self.encoding_stats is not None:
            w.field_list_struct(13, self.encoding_stats)
        if self.bloom_filter_offset is not None:
            w.field_i64(14, self.bloom_filter_offset)
        if self.bloom_filter_length is not None:
            w.field_i32(15, self.bloom_filter_length)
        if self.size_statistics is not None:
            w.field_struct(16, self.size_statistics)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class ColumnChunk:
    """A column chunk's metadata and page-index locations (no encryption).

    ``meta_data`` is optional in the IDL, but the spec says writers MUST set it, so it is required here.
    """

    file_path: str | None = None
    file_offset: int = 0
    meta_data: ColumnMetaData
    offset_index_offset: int | None = None
    offset_index_length: int | None = None
    column_index_offset: int | None = None
    column_index_length: int | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        if self.file_path is not None:
            w.field_string(1, self.file_path)
        w.field_i64(2, self.file_offset)
        w.field_struct(3, self.meta_data)
        if self.offset_index_offset is not None:
            w.field_i64(4, self.offset_index_offset)
        if self.offset_index_length is not None:
            w.field_i32(5, self.offset_index_length)
        if self.column_index_offset is not None:
            w.field_i64(6, self.column_index_offset)
        if self.column_index_length is not None:
            w.field_i32(7, self.column_index_length)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class RowGroup:
    """One row group: its column chunks (in schema leaf order), sizes and row count."""

    columns: list[ColumnChunk]
    total_byte_size: int
    num_rows: int
    sorting_columns: list[SortingColumn] | None = None
    file_offset: int | None = None
    total_compressed_size: int | None = None
    ordinal: int | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields (ordinal is an i16)."""
        w.struct_begin()
        w.field_list_struct(1, self.columns)
        w.field_i64(2, self.total_byte_size)
        w.field_i64(3, self.num_rows)
        if self.sorting_columns is not None:
            w.field_list_struct(4, self.sorting_columns)
        if self.file_offset is not None:
            w.field_i64(5, self.file_offset)
        if self.total_compressed_size is not None:
            w.field_i64(6, self.total_compressed_size)
        if self.ordinal is not None:
            w.field_i16(7, self.ordinal)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class ColumnOrder:
    """Union naming the sort order of a leaf's min/max statistics; TYPE_ORDER is the usual one."""

    TYPE_ORDER: Empty | None = None
    IEEE_754_TOTAL_ORDER: Empty | None = None

    @classmethod
    def type_order(cls) -> ColumnOrder:
        """Build TYPE_ORDER, the order defined by the column's logical or physical type."""
        return cls(TYPE_ORDER=EMPTY)

    def write(self, w: CompactWriter) -> None:
        """Write the union with its one member."""
        _write_union(w, "ColumnOrder", ((1, self.TYPE_ORDER), (2, self.IEEE_754_TOTAL_ORDER)))


@dataclass(slots=True, kw_only=True)
class FileMetaData:
    """The footer: schema, row groups, key/value metadata, writer name and column orders."""

    version: int
    schema: list[SchemaElement]
    num_rows: int
    row_groups: list[RowGroup]
    key_value_metadata: list[KeyValue] | None = None
    created_by: str | None = None
    column_orders: list[ColumnOrder] | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        w.field_i32(1, self.version)
        w.field_list_struct(2, self.schema)
        w.field_i64(3, self.num_rows)
        w.field_list_struct(4, self.row_groups)
        if self.key_value_metadata is not None:
            w.field_list_struct(5, self.key_value_metadata)
        if self.created_by is not None:
            w.field_string(6, self.created_by)
        if self.column_orders is not None:
            w.field_list_struct(7, self.column_orders)
        w.struct_end()


@dataclass(slots=True)
class PageLocation:
    """Where a data page starts, its size including the header, and its first row in the row group."""

    offset: int
    compressed_page_size: int
    first_row_index: int

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order."""
        w.struct_begin()
        w.field_i64(1, self.offset)
        w.field_i32(2, self.compressed_page_size)
        w.field_i64(3, self.first_row_index)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class OffsetIndex:
    """Page index part 1: the location of every data page of a column chunk."""

    page_locations: list[PageLocation]
    unencoded_byte_array_data_bytes: list[int] | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        w.field_list_struct(1, self.page_locations)
        if self.unencoded_byte_array_data_bytes is not None:
            w.field_list_i64(2, self.unencoded_byte_array_data_bytes)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class ColumnIndex:
    """Page index part 2: per-page null flags, min/max bounds and counts, for page skipping."""

    null_pages: list[bool]
    min_values: list[bytes]
    max_values: list[bytes]
    boundary_order: int
    null_counts: list[int] | None = None
    repetition_level_histograms: list[int] | None = None
    definition_level_histograms: list[int] | None = None
    nan_counts: list[int] | None = None

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order, skipping unset fields."""
        w.struct_begin()
        w.field_list_bool(1, self.null_pages)
        w.field_list_binary(2, self.min_values)
        w.field_list_binary(3, self.max_values)
        w.field_i32(4, self.boundary_order)
        if self.null_counts is not None:
            w.field_list_i64(5, self.null_counts)
        if self.repetition_level_histograms is not None:
            w.field_list_i64(6, self.repetition_level_histograms)
        if self.definition_level_histograms is not None:
            w.field_list_i64(7, self.definition_level_histograms)
        if self.nan_counts is not None:
            w.field_list_i64(8, self.nan_counts)
        w.struct_end()


@dataclass(slots=True, kw_only=True)
class BloomFilterAlgorithm:
    """Union with the one algorithm Parquet defines: BLOCK (split-block)."""

    BLOCK: Empty | None = EMPTY

    def write(self, w: CompactWriter) -> None:
        """Write the union with its one member."""
        _write_union(w, "BloomFilterAlgorithm", ((1, self.BLOCK),))


@dataclass(slots=True, kw_only=True)
class BloomFilterHash:
    """Union with the one hash Parquet defines: XXHASH (64-bit xxHash)."""

    XXHASH: Empty | None = EMPTY

    def write(self, w: CompactWriter) -> None:
        """Write the union with its one member."""
        _write_union(w, "BloomFilterHash", ((1, self.XXHASH),))


@dataclass(slots=True, kw_only=True)
class BloomFilterCompression:
    """Union with the one bloom-filter compression Parquet defines: UNCOMPRESSED."""

    UNCOMPRESSED: Empty | None = EMPTY

    def write(self, w: CompactWriter) -> None:
        """Write the union with its one member."""
        _write_union(w, "BloomFilterCompression", ((1, self.UNCOMPRESSED),))


@dataclass(slots=True, kw_only=True)
class BloomFilterHeader:
    """Header in front of a column chunk's bloom filter bitset; the unions default to their one member."""

    numBytes: int
    algorithm: BloomFilterAlgorithm = field(default_factory=BloomFilterAlgorithm)
    hash: BloomFilterHash = field(default_factory=BloomFilterHash)
    compression: BloomFilterCompression = field(default_factory=BloomFilterCompression)

    def write(self, w: CompactWriter) -> None:
        """Write the struct in id order."""
        w.struct_begin()
        w.field_i32(1, self.numBytes)
        w.field_struct(2, self.algorithm)
        w.field_struct(3, self.hash)
        w.field_struct(4, self.compression)
        w.struct_end()
