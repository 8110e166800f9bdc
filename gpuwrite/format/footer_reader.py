"""Read a Parquet footer and walk page headers without any Parquet library, for inspection and tests.

Decoded structs are raw ``{field_id: value}`` dicts (see ``thrift.read_struct``); ``named`` turns one
into ``{field_name: value}`` recursively, using the field table ``FIELDS`` taken from parquet.thrift.
"""

from __future__ import annotations

import io
import os
import struct
from collections.abc import Iterator
from enum import IntEnum
from typing import IO, Any, NamedTuple

from gpuwrite.errors import GpuwriteError
from gpuwrite.format import enums
from gpuwrite.format.thrift import ThriftDecodeError, decode_struct, read_struct

MAGIC = b"PAR1"
ENCRYPTED_MAGIC = b"PARE"
_FIRST_HEADER_READ = 1024


class FooterError(GpuwriteError, ValueError):
    """A file that is not a plain-footer Parquet file (bad magic, bad footer length, encrypted footer)."""


class Field(NamedTuple):
    """One IDL field: its name, the struct it holds (element struct for lists) and its enum, if any."""

    name: str
    struct: str | None = None
    enum: type[IntEnum] | None = None


def _f(name: str, struct_name: str | None = None, enum: type[IntEnum] | None = None) -> Field:
    """Shorthand for a Field row in the tables below."""
    return Field(name, struct_name, enum)


FIELDS: dict[str, dict[int, Field]] = {
    "Empty": {},
    "Statistics": {
        1: _f("max"), 2: _f("min"), 3: _f("null_count"), 4: _f("distinct_count"), 5: _f("max_value"),
        6: _f("min_value"), 7: _f("is_max_value_exact"), 8: _f("is_min_value_exact"), 9: _f("nan_count"),
    },
    "SizeStatistics": {
        1: _f("unencoded_byte_array_data_bytes"), 2: _f("repetition_level_histogram"),
        3: _f("definition_level_histogram"),
    },
    "PageEncodingStats": {
        1: _f("page_type", enum=enums.PageType), 2: _f("encoding", enum=enums.Encoding), 3: _f("count"),
    },
    "DataPageHeader": {
        1: _f("num_values"), 2: _f("encoding", enum=enums.Encoding),
        3: _f("definition_level_encoding", enum=enums.Encoding),
        4: _f("repetition_level_encoding", enum=enums.Encoding), 5: _f("statistics", "Statistics"),
    },
    "DictionaryPageHeader": {
        1: _f("num_values"), 2: _f("encoding", enum=enums.Encoding), 3: _f("is_sorted"),
    },
    "DataPageHeaderV2": {
        1: _f("num_values"), 2: _f("num_nulls"), 3: _f("num_rows"), 4: _f("encoding", enum=enums.Encoding),
        5: _f("definition_levels_byte_length"), 6: _f("repetition_levels_byte_length"),
        7: _f("is_compressed"), 8: _f("statistics", "Statistics"),
    },
    "PageHeader": {
        1: _f("type", enum=enums.PageType), 2: _f("uncompressed_page_size"), 3: _f("compressed_page_size"),
        4: _f("crc"), 5: _f("data_page_header", "DataPageHeader"), 6: _f("index_page_header", "Empty"),
        7: _f("dictionary_page_header", "DictionaryPageHeader"),
        8: _f("data_page_header_v2", "DataPageHeaderV2"),
    },
    "KeyValue": {1: _f("key"), 2: _f("value")},
    "SortingColumn": {1: _f("column_idx"), 2: _f("descending"), 3: _f("nulls_first")},
    "TimeUnit": {1: _f("MILLIS", "Empty"), 2: _f("MICROS", "Empty"), 3: _f("NANOS", "Empty")},
    "DecimalType": {1: _f("scale"), 2: _f("precision")},
    "TimeType": {1: _f("isAdjustedToUTC"), 2: _f("unit", "TimeUnit")},
    "TimestampType": {1: _f("isAdjustedToUTC"), 2: _f("unit", "TimeUnit")},
    "IntType": {1: _f("bitWidth"), 2: _f("isSigned")},
    "LogicalType": {
        1: _f("STRING", "Empty"), 2: _f("MAP", "Empty"), 3: _f("LIST", "Empty"), 4: _f("ENUM", "Empty"),
        5: _f("DECIMAL", "DecimalType"), 6: _f("DATE", "Empty"), 7: _f("TIME", "TimeType"),
        8: _f("TIMESTAMP", "TimestampType"), 10: _f("INTEGER", "IntType"), 11: _f("UNKNOWN", "Empty"),
        12: _f("JSON", "Empty"), 13: _f("BSON", "Empty"), 14: _f("UUID", "Empty"),
        15: _f("FLOAT16", "Empty"),
    },
    "SchemaElement": {
        1: _f("type", enum=enums.Type), 2: _f("type_length"),
        3: _f("repetition_type", enum=enums.FieldRepetitionType), 4: _f("name"), 5: _f("num_children"),
        6: _f("converted_type", enum=enums.ConvertedType), 7: _f("scale"), 8: _f("precision"),
        9: _f("field_id"), 10: _f("logicalType", "LogicalType"),
    },
    "ColumnMetaData": {
        1: _f("type", enum=enums.Type), 2: _f("encodings", enum=enums.Encoding), 3: _f("path_in_schema"),
        4: _f("codec", enum=enums.CompressionCodec), 5: _f("num_values"), 6: _f("total_uncompressed_size"),
        7: _f("total_compressed_size"), 8: _f("key_value_metadata", "KeyValue"),
        9: _f("data_page_offset"), 10: _f("index_page_offset"), 11: _f("dictionary_page_offset"),
        12: _f("statistics", "Statistics"), 13: _f("encoding_stats", "PageEncodingStats"),
        14: _f("bloom_filter_offset"), 15: _f("bloom_filter_length"),
        16: _f("size_statistics", "SizeStatistics"),
    },
    "ColumnChunk": {
        1: _f("file_path"), 2: _f("file_offset"), 3: _f("meta_data", "ColumnMetaData"),
        4: _f("offset_index_offset"), 5: _f("offset_index_length"), 6: _f("column_index_offset"),
        7: _f("column_index_length"), 8: _f("crypto_metadata"), 9: _f("encrypted_column_metadata"),
    },
    "RowGroup": {
        1: _f("columns", "ColumnChunk"), 2: _f("total_byte_size"), 3: _f("num_rows"),
        4: _f("sorting_columns", "SortingColumn"), 5: _f("file_offset"), 6: _f("total_compressed_size"),
        7: _f("ordinal"),
    },
    "ColumnOrder": {1: _f("TYPE_ORDER", "Empty"), 2: _f("IEEE_754_TOTAL_ORDER", "Empty")},
    "FileMetaData": {
        1: _f("version"), 2: _f("schema", "SchemaElement"), 3: _f("num_rows"),
        4: _f("row_groups", "RowGroup"), 5: _f("key_value_metadata", "KeyValue"), 6: _f("created_by"),
        7: _f("column_orders", "ColumnOrder"), 8: _f("encryption_algorithm"),
        9: _f("footer_signing_key_metadata"),
    },
    "PageLocation": {1: _f("offset"), 2: _f("compressed_page_size"), 3: _f("first_row_index")},
    "OffsetIndex": {1: _f("page_locations", "PageLocation"), 2: _f("unencoded_byte_array_data_bytes")},
    "ColumnIndex": {
        1: _f("null_pages"), 2: _f("min_values"), 3: _f("max_values"),
        4: _f("boundary_order", enum=enums.BoundaryOrder), 5: _f("null_counts"),
        6: _f("repetition_level_histograms"), 7: _f("definition_level_histograms"), 8: _f("nan_counts"),
    },
    "BloomFilterAlgorithm": {1: _f("BLOCK", "Empty")},
    "BloomFilterHash": {1: _f("XXHASH", "Empty")},
    "BloomFilterCompression": {1: _f("UNCOMPRESSED", "Empty")},
    "BloomFilterHeader": {
        1: _f("numBytes"), 2: _f("algorithm", "BloomFilterAlgorithm"), 3: _f("hash", "BloomFilterHash"),
        4: _f("compression", "BloomFilterCompression"),
    },
}

NAMES: dict[str, dict[int, str]] = {s: {fid: f.name for fid, f in table.items()} for s, table in FIELDS.items()}


def _enum_name(enum: type[IntEnum], value: Any) -> Any:
    """Name an enum value, leaving values the enum does not know (newer spec) as ints."""
    try:
        return enum(value).name
    except ValueError:
        return value


def _convert(f: Field, value: Any, enum_names: bool) -> Any:
    """Name one field value: recurse into structs (and lists of them), optionally name enum values."""
    if f.struct is not None:
        if isinstance(value, list):
            return [named(f.struct, v, enum_names) if isinstance(v, dict) else v for v in value]
        if isinstance(value, dict):
            return named(f.struct, value, enum_names)
    if enum_names and f.enum is not None:
        if isinstance(value, list):
            return [_enum_name(f.enum, v) for v in value]
        return _enum_name(f.enum, value)
    return value


def named(struct_name: str, decoded: dict[int, Any], enum_names: bool = False) -> dict[Any, Any]:
    """Rename a decoded struct's field ids to IDL names, recursively; unknown ids stay as int keys."""
    table = FIELDS[struct_name]
    out: dict[Any, Any] = {}
    for fid, value in decoded.items():
        f = table.get(fid)
        if f is None:
            out[fid] = value
        else:
            out[f.name] = _convert(f, value, enum_names)
    return out


def _footer_bytes_from_buffer(data: bytes | bytearray | memoryview) -> memoryview:
    """Slice the serialized FileMetaData out of a whole file held in memory."""
    view = memoryview(data).cast("B")
    if len(view) < 12:
        raise FooterError(f"{len(view)} bytes is too short for a Parquet file")
    length = _check_tail(bytes(view[-8:]), len(view))
    return view[len(view) - 8 - length : len(view) - 8]


def _check_tail(tail: bytes, file_size: int) -> int:
    """Validate the 8-byte tail (footer length + magic) and return the footer length."""
    if tail[4:] == ENCRYPTED_MAGIC:
        raise FooterError("encrypted footers (PARE) are not supported")
    if tail[4:] != MAGIC:
        raise FooterError(f"bad trailing magic {tail[4:]!r}, expected {MAGIC!r}")
    length: int = struct.unpack("<I", tail[:4])[0]
    if length + 12 > file_size:
        raise FooterError(f"footer length {length} does not fit a {file_size}-byte file")
    return length


def _footer_bytes_from_file(f: IO[bytes]) -> bytes:
    """Read the serialized FileMetaData from the end of a seekable binary file."""
    size = f.seek(0, os.SEEK_END)
    if size < 12:
        raise FooterError(f"{size} bytes is too short for a Parquet file")
    f.seek(size - 8)
    length = _check_tail(f.read(8), size)
    f.seek(size - 8 - length)
    return f.read(length)


def read_footer(source: str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes]) -> dict[int, Any]:
    """Decode the FileMetaData of a Parquet file (path, whole-file bytes or binary file) by field id."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return decode_struct(_footer_bytes_from_buffer(source))
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            return decode_struct(_footer_bytes_from_file(f))
    return decode_struct(_footer_bytes_from_file(source))


def _chunk_metadata(column_chunk: dict[int, Any]) -> dict[int, Any]:
    """Accept a decoded ColumnChunk (meta_data is field 3) or a decoded ColumnMetaData itself."""
    inner = column_chunk.get(3)
    return inner if isinstance(inner, dict) else column_chunk


def chunk_range(column_chunk: dict[int, Any]) -> tuple[int, int]:
    """Return (start, end) file offsets of a column chunk's pages, dictionary page included."""
    md = _chunk_metadata(column_chunk)
    start = md[9]
    dict_offset = md.get(11)
    if dict_offset is not None and 0 < dict_offset < start:
        start = dict_offset
    return start, start + md[7]


def _read_header_at(f: IO[bytes], offset: int, limit: int) -> tuple[dict[int, Any], int]:
    """Decode the page header at ``offset``, reading more bytes while it is cut short (big statistics)."""
    size = _FIRST_HEADER_READ
    while True:
        f.seek(offset)
        blob = f.read(min(size, limit))
        try:
            return read_struct(blob, 0)
        except ThriftDecodeError:
            if len(blob) < size:
                raise
            size *= 4


def iter_page_headers(
    f: IO[bytes] | bytes | bytearray | memoryview, column_chunk: dict[int, Any]
) -> Iterator[tuple[int, dict[int, Any], int]]:
    """Walk a column chunk's pages: yield (file offset, decoded PageHeader, header length in bytes)."""
    stream: IO[bytes] = io.BytesIO(bytes(f)) if isinstance(f, (bytes, bytearray, memoryview)) else f
    offset, end = chunk_range(column_chunk)
    while offset < end:
        header, header_len = _read_header_at(stream, offset, end - offset)
        yield offset, header, header_len
        offset += header_len + header[3]
    if offset != end:
        raise FooterError(f"pages overrun the column chunk: ended at {offset}, chunk ends at {end}")

