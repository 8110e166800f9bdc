"""Parquet Thrift structs (apache/parquet-format parquet.thrift), each field declared once.

Every field names its IDL id and wire type where it is declared (``req``: always written, so a None there
fails loudly instead of making a file readers reject; ``opt``: skipped while None); the one generic writer
of ``gpuwrite.format.declare`` serializes any struct in id order from that declaration. Attribute names
follow the IDL (``logicalType``, ``numBytes``, union members in capitals) so they match the spec and the
names ``footer_reader`` prints. Enum-typed fields take the IntEnums of ``gpuwrite.format.enums`` or plain
ints.
"""

from __future__ import annotations

from gpuwrite.format.declare import (
    BINARY,
    BOOL,
    I8,
    I16,
    I32,
    I64,
    LIST,
    STRING,
    STRUCT,
    ThriftStruct,
    ThriftUnion,
    opt,
    req,
    thrift_struct,
)

_TIME_UNITS = ("MILLIS", "MICROS", "NANOS")
_EMPTY_LOGICAL_TYPES = ("STRING", "MAP", "LIST", "ENUM", "DATE", "UNKNOWN", "JSON", "BSON", "UUID", "FLOAT16")


@thrift_struct(frozen=True)
class Empty(ThriftStruct):
    """A struct with no fields: the members of TimeUnit, ColumnOrder and the bloom-filter unions."""


EMPTY = Empty()


@thrift_struct
class Statistics(ThriftStruct):
    """Min/max/null statistics of a page or column chunk; min/max values are PLAIN-encoded bytes."""

    max: bytes | None = opt(1, BINARY)
    min: bytes | None = opt(2, BINARY)
    null_count: int | None = opt(3, I64)
    distinct_count: int | None = opt(4, I64)
    max_value: bytes | None = opt(5, BINARY)
    min_value: bytes | None = opt(6, BINARY)
    is_max_value_exact: bool | None = opt(7, BOOL)
    is_min_value_exact: bool | None = opt(8, BOOL)
    nan_count: int | None = opt(9, I64)


@thrift_struct
class SizeStatistics(ThriftStruct):
    """Unencoded BYTE_ARRAY size and level histograms, for readers' memory estimates and pruning."""

    unencoded_byte_array_data_bytes: int | None = opt(1, I64)
    repetition_level_histogram: list[int] | None = opt(2, LIST, I64)
    definition_level_histogram: list[int] | None = opt(3, LIST, I64)


@thrift_struct
class PageEncodingStats(ThriftStruct):
    """How many pages of one type use one encoding, so readers can tell if a chunk is all-dictionary."""

    page_type: int = req(1, I32)
    encoding: int = req(2, I32)
    count: int = req(3, I32)


@thrift_struct
class DataPageHeader(ThriftStruct):
    """Header of a v1 data page (levels inline with the values); kept for completeness and reading."""

    num_values: int = req(1, I32)
    encoding: int = req(2, I32)
    definition_level_encoding: int = req(3, I32)
    repetition_level_encoding: int = req(4, I32)
    statistics: Statistics | None = opt(5, STRUCT)


@thrift_struct
class DictionaryPageHeader(ThriftStruct):
    """Header of the one dictionary page that starts a dictionary-encoded column chunk."""

    num_values: int = req(1, I32)
    encoding: int = req(2, I32)
    is_sorted: bool | None = opt(3, BOOL)


@thrift_struct
class DataPageHeaderV2(ThriftStruct):
    """Header of a v2 data page: uncompressed RLE levels first, then the (maybe compressed) values."""

    num_values: int = req(1, I32)
    num_nulls: int = req(2, I32)
    num_rows: int = req(3, I32)
    encoding: int = req(4, I32)
    definition_levels_byte_length: int = req(5, I32)
    repetition_levels_byte_length: int = req(6, I32)
    is_compressed: bool | None = opt(7, BOOL)
    statistics: Statistics | None = opt(8, STRUCT)


@thrift_struct
class PageHeader(ThriftStruct):
    """Header in front of every page; exactly one of the per-kind headers should be set."""

    type: int = req(1, I32)
    uncompressed_page_size: int = req(2, I32)
    compressed_page_size: int = req(3, I32)
    crc: int | None = opt(4, I32)
    data_page_header: DataPageHeader | None = opt(5, STRUCT)
    index_page_header: Empty | None = opt(6, STRUCT)
    dictionary_page_header: DictionaryPageHeader | None = opt(7, STRUCT)
    data_page_header_v2: DataPageHeaderV2 | None = opt(8, STRUCT)


@thrift_struct(kw_only=False)
class KeyValue(ThriftStruct):
    """One key/value metadata entry (file or column chunk)."""

    key: str = req(1, STRING)
    value: str | None = opt(2, STRING)


@thrift_struct
class SortingColumn(ThriftStruct):
    """Declares that a row group is sorted on one column."""

    column_idx: int = req(1, I32)
    descending: bool = req(2, BOOL)
    nulls_first: bool = req(3, BOOL)


@thrift_struct
class TimeUnit(ThriftUnion):
    """Union MILLIS=1 | MICROS=2 | NANOS=3, each an empty struct."""

    MILLIS: Empty | None = opt(1, STRUCT)
    MICROS: Empty | None = opt(2, STRUCT)
    NANOS: Empty | None = opt(3, STRUCT)

    @classmethod
    def of(cls, unit: str) -> TimeUnit:
        """Build the union from 'MILLIS', 'MICROS' or 'NANOS'."""
        if unit not in _TIME_UNITS:
            raise ValueError(f"time unit must be one of {_TIME_UNITS}, not {unit!r}")
        return cls(**{unit: EMPTY})


@thrift_struct
class DecimalType(ThriftStruct):
    """DECIMAL logical type: scale and precision (also repeated in SchemaElement for old readers)."""

    scale: int = req(1, I32)
    precision: int = req(2, I32)


@thrift_struct
class TimeType(ThriftStruct):
    """TIME logical type."""

    isAdjustedToUTC: bool = req(1, BOOL)
    unit: TimeUnit = req(2, STRUCT)


@thrift_struct
class TimestampType(ThriftStruct):
    """TIMESTAMP logical type."""

    isAdjustedToUTC: bool = req(1, BOOL)
    unit: TimeUnit = req(2, STRUCT)


@thrift_struct
class IntType(ThriftStruct):
    """INTEGER logical type; bitWidth is an i8 on the wire (8, 16, 32 or 64)."""

    bitWidth: int = req(1, I8)
    isSigned: bool = req(2, BOOL)


@thrift_struct
class LogicalType(ThriftUnion):
    """Union of logical type annotations (id 9 is reserved for INTERVAL); set exactly one member."""

    STRING: Empty | None = opt(1, STRUCT)
    MAP: Empty | None = opt(2, STRUCT)
    LIST: Empty | None = opt(3, STRUCT)
    ENUM: Empty | None = opt(4, STRUCT)
    DECIMAL: DecimalType | None = opt(5, STRUCT)
    DATE: Empty | None = opt(6, STRUCT)
    TIME: TimeType | None = opt(7, STRUCT)
    TIMESTAMP: TimestampType | None = opt(8, STRUCT)
    INTEGER: IntType | None = opt(10, STRUCT)
    UNKNOWN: Empty | None = opt(11, STRUCT)
    JSON: Empty | None = opt(12, STRUCT)
    BSON: Empty | None = opt(13, STRUCT)
    UUID: Empty | None = opt(14, STRUCT)
    FLOAT16: Empty | None = opt(15, STRUCT)

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


@thrift_struct
class SchemaElement(ThriftStruct):
    """One node of the depth-first flattened schema: a group (num_children set) or a leaf (type set)."""

    type: int | None = opt(1, I32)
    type_length: int | None = opt(2, I32)
    repetition_type: int | None = opt(3, I32)
    name: str = req(4, STRING)
    num_children: int | None = opt(5, I32)
    converted_type: int | None = opt(6, I32)
    scale: int | None = opt(7, I32)
    precision: int | None = opt(8, I32)
    field_id: int | None = opt(9, I32)
    logicalType: LogicalType | None = opt(10, STRUCT)


@thrift_struct
class ColumnMetaData(ThriftStruct):
    """Metadata of one column chunk: type, encodings, codec, sizes, page offsets and statistics."""

    type: int = req(1, I32)
    encodings: list[int] = req(2, LIST, I32)
    path_in_schema: list[str] = req(3, LIST, STRING)
    codec: int = req(4, I32)
    num_values: int = req(5, I64)
    total_uncompressed_size: int = req(6, I64)
    total_compressed_size: int = req(7, I64)
    key_value_metadata: list[KeyValue] | None = opt(8, LIST, STRUCT)
    data_page_offset: int = req(9, I64)
    index_page_offset: int | None = opt(10, I64)
    dictionary_page_offset: int | None = opt(11, I64)
    statistics: Statistics | None = opt(12, STRUCT)
    encoding_stats: list[PageEncodingStats] | None = opt(13, LIST, STRUCT)
    bloom_filter_offset: int | None = opt(14, I64)
    bloom_filter_length: int | None = opt(15, I32)
    size_statistics: SizeStatistics | None = opt(16, STRUCT)


@thrift_struct
class ColumnChunk(ThriftStruct):
    """A column chunk's metadata and page-index locations (no encryption).

    ``meta_data`` is optional in the IDL, but the spec says writers MUST set it, so it is required here.
    """

    file_path: str | None = opt(1, STRING)
    file_offset: int = req(2, I64, default=0)
    meta_data: ColumnMetaData = req(3, STRUCT)
    offset_index_offset: int | None = opt(4, I64)
    offset_index_length: int | None = opt(5, I32)
    column_index_offset: int | None = opt(6, I64)
    column_index_length: int | None = opt(7, I32)


@thrift_struct
class RowGroup(ThriftStruct):
    """One row group: its column chunks (in schema leaf order), sizes and row count."""

    columns: list[ColumnChunk] = req(1, LIST, STRUCT)
    total_byte_size: int = req(2, I64)
    num_rows: int = req(3, I64)
    sorting_columns: list[SortingColumn] | None = opt(4, LIST, STRUCT)
    file_offset: int | None = opt(5, I64)
    total_compressed_size: int | None = opt(6, I64)
    ordinal: int | None = opt(7, I16)


@thrift_struct
class ColumnOrder(ThriftUnion):
    """Union naming the sort order of a leaf's min/max statistics; TYPE_ORDER is the usual one."""

    TYPE_ORDER: Empty | None = opt(1, STRUCT)
    IEEE_754_TOTAL_ORDER: Empty | None = opt(2, STRUCT)

    @classmethod
    def type_order(cls) -> ColumnOrder:
        """Build TYPE_ORDER, the order defined by the column's logical or physical type."""
        return cls(TYPE_ORDER=EMPTY)


@thrift_struct
class FileMetaData(ThriftStruct):
    """The footer: schema, row groups, key/value metadata, writer name and column orders."""

    version: int = req(1, I32)
    schema: list[SchemaElement] = req(2, LIST, STRUCT)
    num_rows: int = req(3, I64)
    row_groups: list[RowGroup] = req(4, LIST, STRUCT)
    key_value_metadata: list[KeyValue] | None = opt(5, LIST, STRUCT)
    created_by: str | None = opt(6, STRING)
    column_orders: list[ColumnOrder] | None = opt(7, LIST, STRUCT)


@thrift_struct(kw_only=False)
class PageLocation(ThriftStruct):
    """Where a data page starts, its size including the header, and its first row in the row group."""

    offset: int = req(1, I64)
    compressed_page_size: int = req(2, I32)
    first_row_index: int = req(3, I64)


@thrift_struct
class OffsetIndex(ThriftStruct):
    """Page index part 1: the location of every data page of a column chunk."""

    page_locations: list[PageLocation] = req(1, LIST, STRUCT)
    unencoded_byte_array_data_bytes: list[int] | None = opt(2, LIST, I64)


@thrift_struct
class ColumnIndex(ThriftStruct):
    """Page index part 2: per-page null flags, min/max bounds and counts, for page skipping."""

    null_pages: list[bool] = req(1, LIST, BOOL)
    min_values: list[bytes] = req(2, LIST, BINARY)
    max_values: list[bytes] = req(3, LIST, BINARY)
    boundary_order: int = req(4, I32)
    null_counts: list[int] | None = opt(5, LIST, I64)
    repetition_level_histograms: list[int] | None = opt(6, LIST, I64)
    definition_level_histograms: list[int] | None = opt(7, LIST, I64)
    nan_counts: list[int] | None = opt(8, LIST, I64)


@thrift_struct
class BloomFilterAlgorithm(ThriftUnion):
    """Union with the one algorithm Parquet defines: BLOCK (split-block)."""

    BLOCK: Empty | None = opt(1, STRUCT, default=EMPTY)


@thrift_struct
class BloomFilterHash(ThriftUnion):
    """Union with the one hash Parquet defines: XXHASH (64-bit xxHash)."""

    XXHASH: Empty | None = opt(1, STRUCT, default=EMPTY)


@thrift_struct
class BloomFilterCompression(ThriftUnion):
    """Union with the one bloom-filter compression Parquet defines: UNCOMPRESSED."""

    UNCOMPRESSED: Empty | None = opt(1, STRUCT, default=EMPTY)


@thrift_struct
class BloomFilterHeader(ThriftStruct):
    """Header in front of a column chunk's bloom filter bitset; the unions default to their one member."""

    numBytes: int = req(1, I32)
    algorithm: BloomFilterAlgorithm = req(2, STRUCT, default_factory=BloomFilterAlgorithm)
    hash: BloomFilterHash = req(3, STRUCT, default_factory=BloomFilterHash)
    compression: BloomFilterCompression = req(4, STRUCT, default_factory=BloomFilterCompression)
