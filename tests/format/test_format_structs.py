"""Parquet structs: ids and wire types, checked by hand-built files that pyarrow must read and by
re-encoding pyarrow's own footers, page headers and page indexes byte for byte."""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import struct
import zlib
from decimal import Decimal
from enum import IntEnum
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus import corpus_file

from gpuwrite.format import structs
from gpuwrite.format.enums import (
    BoundaryOrder,
    CompressionCodec,
    ConvertedType,
    Encoding,
    FieldRepetitionType,
    PageType,
    Type,
)
from gpuwrite.format.footer_reader import (
    FIELDS,
    NAMES,
    FooterError,
    chunk_range,
    iter_page_headers,
    named,
    read_footer,
)
from gpuwrite.format.structs import (
    ColumnChunk,
    ColumnIndex,
    ColumnMetaData,
    ColumnOrder,
    DataPageHeaderV2,
    FileMetaData,
    KeyValue,
    LogicalType,
    PageEncodingStats,
    PageHeader,
    RowGroup,
    SchemaElement,
    Statistics,
)
from gpuwrite.format.thrift import decode_struct, read_struct, serialize

STRUCT_CLASSES = [
    cls for cls in vars(structs).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == structs.__name__
]


def to_named(value: Any) -> Any:
    """What ``named(read_struct(serialize(value)))`` should give: None fields dropped, str as bytes."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_named(getattr(value, f.name))
            for f in dataclasses.fields(value) if getattr(value, f.name) is not None
        }
    if isinstance(value, list):
        return [to_named(v) for v in value]
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, IntEnum):
        return int(value)
    return value


def build(struct_name: str, decoded: Any) -> Any:
    """Rebuild a dataclass from a decoded dict (the inverse of serialize + read_struct)."""
    if struct_name == "Empty":
        assert decoded == {}
        return structs.EMPTY
    cls = getattr(structs, struct_name)
    types = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    kwargs = {}
    for fid, value in decoded.items():
        field = FIELDS[struct_name][fid]
        assert field.name in types, f"{struct_name} lacks field {fid} ({field.name}) that the file has"
        if field.struct is not None:
            value = [build(field.struct, v) for v in value] if isinstance(value, list) else build(
                field.struct, value
            )
        elif "str" in types[field.name]:
            value = [v.decode() for v in value] if isinstance(value, list) else value.decode()
        kwargs[field.name] = value
    return cls(**kwargs)


def stats(lo: bytes, hi: bytes) -> Statistics:
    """Exact min/max statistics with no nulls, in the non-deprecated fields."""
    return Statistics(null_count=0, min_value=lo, max_value=hi, is_min_value_exact=True, is_max_value_exact=True)


def full_instances() -> list[Any]:
    """One instance of every struct (and every union member) with every field set."""
    st = Statistics(
        max=b"\x09", min=b"\x01", null_count=3, distinct_count=7, max_value=b"\x09\x00", min_value=b"\x01\x00",
        is_max_value_exact=True, is_min_value_exact=False, nan_count=2,
    )
    unit = structs.TimeUnit.of("NANOS")
    logical = [LogicalType.of(n) for n in structs._EMPTY_LOGICAL_TYPES] + [
        LogicalType.decimal(2, 9), LogicalType.time(False, "MILLIS"), LogicalType.timestamp(True, "MICROS"),
        LogicalType.integer(-8, True),
    ]
    kv = [KeyValue("k", "v"), KeyValue("only-key")]
    md = ColumnMetaData(
        type=Type.BYTE_ARRAY, encodings=[Encoding.PLAIN, Encoding.RLE], path_in_schema=["a", "b"],
        codec=CompressionCodec.ZSTD, num_values=1 << 40, total_uncompressed_size=-1, total_compressed_size=5,
        key_value_metadata=kv, data_page_offset=4, index_page_offset=9, dictionary_page_offset=3, statistics=st,
        encoding_stats=[PageEncodingStats(page_type=PageType.DATA_PAGE_V2, encoding=Encoding.PLAIN, count=2)],
        bloom_filter_offset=1 << 33, bloom_filter_length=77,
        size_statistics=structs.SizeStatistics(
            unencoded_byte_array_data_bytes=12, repetition_level_histogram=[1, 2],
            definition_level_histogram=list(range(20)),
        ),
    )
    chunk = ColumnChunk(
        file_path="x.parquet", file_offset=0, meta_data=md, offset_index_offset=100, offset_index_length=20,
        column_index_offset=80, column_index_length=20,
    )
    return [
        st, *logical, *kv, md, chunk,
        structs.DataPageHeader(
            num_values=5, encoding=0, definition_level_encoding=3, repetition_level_encoding=4, statistics=st
        ),
        PageHeader(
            type=PageType.DATA_PAGE, uncompressed_page_size=10, compressed_page_size=8, crc=-(1 << 31),
            data_page_header=structs.DataPageHeader(
                num_values=1, encoding=0, definition_level_encoding=3, repetition_level_encoding=3
            ),
            index_page_header=structs.EMPTY,
            dictionary_page_header=structs.DictionaryPageHeader(num_values=3, encoding=0, is_sorted=True),
            data_page_header_v2=DataPageHeaderV2(
                num_values=3, num_nulls=1, num_rows=2, encoding=Encoding.DELTA_BINARY_PACKED,
                definition_levels_byte_length=4, repetition_levels_byte_length=5, is_compressed=False, statistics=st,
            ),
        ),
        SchemaElement(
            type=Type.FIXED_LEN_BYTE_ARRAY, type_length=16, repetition_type=FieldRepetitionType.OPTIONAL,
            name="dec", num_children=0, converted_type=ConvertedType.DECIMAL, scale=2, precision=30, field_id=-5,
            logicalType=LogicalType.decimal(2, 30),
        ),
        RowGroup(
            columns=[chunk], total_byte_size=100, num_rows=10,
            sorting_columns=[structs.SortingColumn(column_idx=0, descending=True, nulls_first=False)],
            file_offset=4, total_compressed_size=90, ordinal=-300,
        ),
        ColumnOrder.type_order(),
        ColumnOrder(IEEE_754_TOTAL_ORDER=structs.EMPTY),
        FileMetaData(
            version=2, schema=[SchemaElement(name="schema", num_children=0)], num_rows=0, row_groups=[],
            key_value_metadata=kv, created_by="me", column_orders=[ColumnOrder.type_order()],
        ),
        structs.OffsetIndex(
            page_locations=[structs.PageLocation(4, 100, 0), structs.PageLocation(1 << 35, 7, 1 << 34)],
            unencoded_byte_array_data_bytes=[5, 6],
        ),
        ColumnIndex(
            null_pages=[False, True] * 10, min_values=[b"a", b""] * 10, max_values=[b"z", b""] * 10,
            boundary_order=BoundaryOrder.ASCENDING, null_counts=[0, 4] * 10, repetition_level_histograms=[1, 2],
            definition_level_histograms=[3, 4], nan_counts=[0] * 20,
        ),
        structs.BloomFilterHeader(numBytes=1024),
        structs.TimeType(isAdjustedToUTC=True, unit=unit),
        structs.TimestampType(isAdjustedToUTC=False, unit=structs.TimeUnit.of("MILLIS")),
    ]


@pytest.mark.parametrize("obj", full_instances(), ids=lambda o: type(o).__name__)
def test_every_field_roundtrips_under_its_idl_name(obj: Any) -> None:
    decoded = decode_struct(serialize(obj))
    assert named(type(obj).__name__, decoded) == to_named(obj)
    assert build(type(obj).__name__, decoded) == obj


def test_every_struct_is_in_the_name_table() -> None:
    for cls in STRUCT_CLASSES:
        names = {f.name for f in dataclasses.fields(cls)}
        assert names <= set(NAMES[cls.__name__].values()), cls.__name__
    assert {cls.__name__ for cls in STRUCT_CLASSES} <= set(FIELDS)


def test_declared_ids_match_the_reader_table() -> None:
    # the writer's declarations and footer_reader's names come from the IDL separately: they must agree
    for cls in STRUCT_CLASSES:
        declared = {f.metadata["thrift"].fid: f.name for f in dataclasses.fields(cls)}
        assert declared == {fid: NAMES[cls.__name__].get(fid) for fid in declared}, cls.__name__


def test_narrow_integer_wire_types() -> None:
    # IntType.bitWidth is an i8: header 0x13 then one raw byte
    assert serialize(structs.IntType(bitWidth=8, isSigned=True)) == b"\x13\x08\x11\x00"
    # RowGroup.ordinal is an i16 (type 4) after a delta of 4 from field 3
    rg = serialize(RowGroup(columns=[], total_byte_size=0, num_rows=0, ordinal=1))
    assert rg.endswith(b"\x44\x02\x00")
    # PageLocation: i64, i32, i64
    assert serialize(structs.PageLocation(1, 2, 3)) == b"\x16\x02\x15\x04\x16\x06\x00"
    # ColumnIndex.null_pages is list<bool>, boundary_order an i32 enum
    ci = ColumnIndex(null_pages=[True], min_values=[b""], max_values=[b""], boundary_order=BoundaryOrder.DESCENDING)
    assert serialize(ci) == b"\x19\x11\x01" + b"\x19\x18\x00" + b"\x19\x18\x00" + b"\x15\x04" + b"\x00"
    # BloomFilterHeader: i32 then three unions, each holding one empty struct
    assert serialize(structs.BloomFilterHeader(numBytes=32)) == b"\x15\x40" + b"\x1c\x1c\x00\x00" * 3 + b"\x00"


def test_unions_need_exactly_one_member() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        serialize(LogicalType())
    with pytest.raises(ValueError, match="exactly one"):
        serialize(LogicalType(STRING=structs.EMPTY, JSON=structs.EMPTY))
    with pytest.raises(ValueError):
        structs.TimeUnit.of("SECONDS")
    with pytest.raises(ValueError):
        LogicalType.of("DECIMAL")


def test_required_fields_fail_loudly_when_none() -> None:
    with pytest.raises(TypeError, match="PageLocation.offset"):
        serialize(structs.PageLocation(None, 1, 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ColumnChunk.meta_data"):
        serialize(ColumnChunk(meta_data=None))  # type: ignore[arg-type]


# --- hand-built Parquet files -------------------------------------------------------------------------

PLAIN_FORMATS = {Type.INT32: "i", Type.INT64: "q"}


def plain(ptype: Type, values: list[Any]) -> bytes:
    """PLAIN-encode values: little-endian fixed width, or 4-byte length + bytes for BYTE_ARRAY."""
    if ptype == Type.BYTE_ARRAY:
        return b"".join(struct.pack("<I", len(v)) + v for v in values)
    return struct.pack(f"<{len(values)}{PLAIN_FORMATS[ptype]}", *values)


def stat_bytes(ptype: Type, value: Any) -> bytes:
    """A statistics value: PLAIN without the length prefix."""
    return value if ptype == Type.BYTE_ARRAY else plain(ptype, [value])


def signed_crc(data: bytes) -> int:
    """CRC-32 of the page body as the signed i32 PageHeader.crc holds."""
    crc = zlib.crc32(data)
    return crc - (1 << 32) if crc >= 1 << 31 else crc


def column_chunk(out: bytearray, leaf: SchemaElement, values: list[Any], bad_crc: bool) -> ColumnChunk:
    """Append one DATA_PAGE_V2 page of PLAIN values for a REQUIRED leaf; return its ColumnChunk."""
    assert leaf.type is not None
    ptype = Type(leaf.type)
    data = plain(ptype, values)
    st = stats(stat_bytes(ptype, min(values)), stat_bytes(ptype, max(values)))
    header = serialize(PageHeader(
        type=PageType.DATA_PAGE_V2, uncompressed_page_size=len(data), compressed_page_size=len(data),
        crc=signed_crc(data) ^ (1 if bad_crc else 0),
        data_page_header_v2=DataPageHeaderV2(
            num_values=len(values), num_nulls=0, num_rows=len(values), encoding=Encoding.PLAIN,
            definition_levels_byte_length=0, repetition_levels_byte_length=0, is_compressed=False, statistics=st,
        ),
    ))
    offset = len(out)
    out += header + data
    return ColumnChunk(file_offset=0, meta_data=ColumnMetaData(
        type=ptype, encodings=[Encoding.PLAIN], path_in_schema=[leaf.name], codec=CompressionCodec.UNCOMPRESSED,
        num_values=len(values), total_uncompressed_size=len(header) + len(data),
        total_compressed_size=len(header) + len(data), key_value_metadata=[KeyValue("column", leaf.name)],
        data_page_offset=offset, statistics=st,
        encoding_stats=[PageEncodingStats(page_type=PageType.DATA_PAGE_V2, encoding=Encoding.PLAIN, count=1)],
    ))


def build_file(leaves: list[tuple[SchemaElement, list[Any]]], bad_crc: bool = False) -> bytes:
    """A complete one-row-group Parquet file: PAR1, one page per column, FileMetaData, length, PAR1."""
    out = bytearray(b"PAR1")
    chunks = [column_chunk(out, leaf, values, bad_crc) for leaf, values in leaves]
    sizes = sum(c.meta_data.total_compressed_size for c in chunks)
    num_rows = len(leaves[0][1])
    footer = serialize(FileMetaData(
        version=1,
        schema=[SchemaElement(name="schema", num_children=len(leaves))] + [leaf for leaf, _ in leaves],
        num_rows=num_rows,
        row_groups=[RowGroup(
            columns=chunks, total_byte_size=sizes, num_rows=num_rows, file_offset=4, total_compressed_size=sizes,
            ordinal=0,
        )],
        key_value_metadata=[KeyValue("gpuwrite.test", "yes"), KeyValue("answer", "42")],
        created_by="gpuwrite version 0.1.0 (build test)",
        column_orders=[ColumnOrder.type_order() for _ in leaves],
    ))
    return bytes(out + footer + struct.pack("<I", len(footer)) + b"PAR1")


def required(name: str, ptype: Type, **kwargs: Any) -> SchemaElement:
    """A REQUIRED leaf schema element."""
    return SchemaElement(type=ptype, repetition_type=FieldRepetitionType.REQUIRED, name=name, **kwargs)


INT32_VALUES = [7, -3, 2_000_000_000, 0, -2_000_000_000, 42]


def test_hand_built_int32_file_reads_in_pyarrow() -> None:
    data = build_file([(required("x", Type.INT32), INT32_VALUES)])
    pf = pq.ParquetFile(io.BytesIO(data), page_checksum_verification=True)
    table = pf.read()
    assert table.schema.field("x").type == pa.int32()
    assert not table.schema.field("x").nullable
    assert table.column("x").to_pylist() == INT32_VALUES

    md = pf.metadata
    assert (md.num_rows, md.num_columns, md.num_row_groups) == (6, 1, 1)
    assert md.format_version == "1.0"
    assert md.created_by == "gpuwrite version 0.1.0 (build test)"
    assert md.metadata == {b"gpuwrite.test": b"yes", b"answer": b"42"}
    col = md.row_group(0).column(0)
    assert col.compression == "UNCOMPRESSED"
    assert "PLAIN" in col.encodings
    assert col.num_values == 6
    assert col.data_page_offset == 4
    assert col.metadata == {b"column": b"x"}
    assert col.is_stats_set
    assert (col.statistics.min, col.statistics.max) == (-2_000_000_000, 2_000_000_000)
    assert col.statistics.null_count == 0
    assert col.statistics.has_null_count


def test_page_crc_is_checked_by_pyarrow() -> None:
    data = build_file([(required("x", Type.INT32), INT32_VALUES)], bad_crc=True)
    with pytest.raises(OSError, match="(?i)crc|checksum"):
        pq.ParquetFile(io.BytesIO(data), page_checksum_verification=True).read()


LONG = "é" * 1500
UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
LOGICAL_LEAVES: list[tuple[SchemaElement, list[Any], list[Any], pa.DataType, str]] = [
    (required("s", Type.BYTE_ARRAY, logicalType=LogicalType.of("STRING")),
     [b"b", LONG.encode(), b"c", b""], ["b", LONG, "c", ""], pa.string(), "STRING"),
    (required("d", Type.INT32, scale=2, precision=9, logicalType=LogicalType.decimal(2, 9)),
     [12345, -1, 0, 999999999], [Decimal("123.45"), Decimal("-0.01"), Decimal("0.00"), Decimal("9999999.99")],
     pa.decimal128(9, 2), "DECIMAL"),
    (required("ts", Type.INT64, logicalType=LogicalType.timestamp(True, "MICROS")),
     [0, 1_700_000_000_000_000, -1, 5],
     [EPOCH + datetime.timedelta(microseconds=v) for v in (0, 1_700_000_000_000_000, -1, 5)],
     pa.timestamp("us", tz="UTC"), "TIMESTAMP"),
    (required("i8", Type.INT32, logicalType=LogicalType.integer(8, True)),
     [-128, 127, 0, 1], [-128, 127, 0, 1], pa.int8(), "INT"),
    (required("day", Type.INT32, logicalType=LogicalType.of("DATE")),
     [0, 19000, -1, 3], [datetime.date(1970, 1, 1) + datetime.timedelta(days=v) for v in (0, 19000, -1, 3)],
     pa.date32(), "DATE"),
]
LOGICAL_FILE = [(leaf, values) for leaf, values, _, _, _ in LOGICAL_LEAVES]


def test_hand_built_logical_types_read_in_pyarrow() -> None:
    # no converted_type is written, so pyarrow can only have these types from our LogicalType unions
    pf = pq.ParquetFile(io.BytesIO(build_file(LOGICAL_FILE)), page_checksum_verification=True)
    table = pf.read()
    for i, (leaf, _, expected, arrow_type, logical_name) in enumerate(LOGICAL_LEAVES):
        assert pf.metadata.schema.column(i).logical_type.type == logical_name
        assert table.schema.field(leaf.name).type == arrow_type
        assert table.column(leaf.name).to_pylist() == expected
    int8 = json.loads(pf.metadata.schema.column(3).logical_type.to_json())
    assert (int8["bitWidth"], int8["isSigned"]) == (8, True)
    assert (pf.metadata.schema.column(1).precision, pf.metadata.schema.column(1).scale) == (9, 2)
    s_stats = pf.metadata.row_group(0).column(0).statistics
    assert (s_stats.min, s_stats.max) == ("", LONG)
    ts_stats = pf.metadata.row_group(0).column(2).statistics
    assert ts_stats.max == EPOCH + datetime.timedelta(microseconds=1_700_000_000_000_000)


def test_footer_reader_walks_the_hand_built_file() -> None:
    data = build_file(LOGICAL_FILE)
    footer = read_footer(data)
    assert footer == read_footer(io.BytesIO(data))
    names = named("FileMetaData", footer, enum_names=True)
    assert [s["name"] for s in names["schema"]] == [b"schema", b"s", b"d", b"ts", b"i8", b"day"]
    assert names["schema"][4]["logicalType"] == {"INTEGER": {"bitWidth": 8, "isSigned": True}}
    assert names["row_groups"][0]["ordinal"] == 0
    for chunk in footer[4][0][1]:
        pages = list(iter_page_headers(data, chunk))
        assert len(pages) == 1
        offset, header, header_len = pages[0]
        assert offset == chunk_range(chunk)[0]
        page = named("PageHeader", header, enum_names=True)
        assert page["type"] == "DATA_PAGE_V2"
        assert page["data_page_header_v2"]["encoding"] == "PLAIN"
        assert page["data_page_header_v2"]["is_compressed"] is False
        assert header_len + header[3] == chunk[3][7]
    # the string column's header carries 3000-byte statistics: longer than the first read
    assert list(iter_page_headers(data, footer[4][0][1][0]))[0][2] > 3000


# --- pyarrow's own files, re-encoded byte for byte ---------------------------------------------------------


@pytest.fixture(scope="module")
def arrow_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A pyarrow file with v2 pages, dictionaries, nulls, a nested list, CRCs and a page index."""
    n = 500
    table = pa.table({
        "i": pa.array(range(n), pa.int32()),
        "s": pa.array([f"s{i % 7}" if i % 5 else None for i in range(n)]),
        "f": pa.array([i / 3 for i in range(n)], pa.float32()),
        "l": pa.array([[i, -i] if i % 3 else None for i in range(n)], pa.list_(pa.int64())),
        "ts": pa.array(range(n), pa.timestamp("ns", tz="UTC")),
        "t": pa.array(range(n), pa.time64("us")),
        "dec": pa.array([Decimal(i * 7).scaleb(-3) for i in range(n)], pa.decimal128(20, 3)),
        "b": pa.array([i % 2 == 0 for i in range(n)]),
        "u16": pa.array(range(n), pa.uint16()),
    })
    path = tmp_path_factory.mktemp("arrow") / "a.parquet"
    pq.write_table(
        table, path, data_page_version="2.0", write_page_index=True, write_page_checksum=True,
        compression="snappy", data_page_size=512, use_dictionary=["s", "i"], row_group_size=300,
        sorting_columns=[pq.SortingColumn(0)],
    )
    return path.read_bytes()


def assert_reencodes(struct_name: str, raw: bytes) -> dict[int, Any]:
    """Decode raw bytes, rebuild our dataclass from them and check it serializes to the same bytes."""
    decoded = decode_struct(raw)
    assert serialize(build(struct_name, decoded)) == raw
    return decoded


def test_pyarrow_footer_reencodes_identically(arrow_file: bytes) -> None:
    length = struct.unpack("<I", arrow_file[-8:-4])[0]
    footer = assert_reencodes("FileMetaData", arrow_file[-8 - length : -8])
    assert len(footer[4]) == 2


def test_pyarrow_page_headers_reencode_identically(arrow_file: bytes) -> None:
    footer = read_footer(arrow_file)
    kinds = set()
    for row_group in footer[4]:
        for chunk in row_group[1]:
            for offset, header, header_len in iter_page_headers(arrow_file, chunk):
                assert_reencodes("PageHeader", arrow_file[offset : offset + header_len])
                kinds.add(header[1])
    assert kinds == {PageType.DICTIONARY_PAGE, PageType.DATA_PAGE_V2}


def test_pyarrow_page_index_reencodes_identically(arrow_file: bytes) -> None:
    footer = read_footer(arrow_file)
    for row_group in footer[4]:
        for chunk in row_group[1]:
            column_index = arrow_file[chunk[6] : chunk[6] + chunk[7]]
            offset_index = arrow_file[chunk[4] : chunk[4] + chunk[5]]
            ci = assert_reencodes("ColumnIndex", column_index)
            oi = assert_reencodes("OffsetIndex", offset_index)
            assert len(ci[1]) == len(ci[2]) == len(oi[1])
            data_pages = [p for p in iter_page_headers(arrow_file, chunk) if p[1][1] == PageType.DATA_PAGE_V2]
            assert [loc[1] for loc in oi[1]] == [p[0] for p in data_pages]


def test_footer_reader_on_parquet_testing_file() -> None:
    path = corpus_file("datapage_v2.snappy.parquet")
    md = pq.ParquetFile(path).metadata
    footer = read_footer(path)
    assert footer == read_footer(str(path))
    assert footer[3] == md.num_rows
    assert len(footer[4]) == md.num_row_groups
    assert len(footer[4][0][1]) == md.num_columns
    assert sum(1 for s in footer[2] if 5 not in s) == md.num_columns
    with path.open("rb") as f:
        for i, chunk in enumerate(footer[4][0][1]):
            meta = md.row_group(0).column(i)
            assert chunk[3][7] == meta.total_compressed_size
            pages = list(iter_page_headers(f, chunk))
            assert pages[0][0] == (meta.dictionary_page_offset or meta.data_page_offset)
            values = sum(h[8][1] for _, h, _ in pages if 8 in h)
            assert values == meta.num_values


def test_footer_errors() -> None:
    good = build_file([(required("x", Type.INT32), [1])])
    with pytest.raises(FooterError, match="magic"):
        read_footer(good[:-1] + b"X")
    with pytest.raises(FooterError, match="encrypted"):
        read_footer(good[:-4] + b"PARE")
    with pytest.raises(FooterError, match="too short"):
        read_footer(b"PAR1PAR1")
    with pytest.raises(FooterError, match="does not fit"):
        read_footer(good[:-8] + struct.pack("<I", 1 << 20) + b"PAR1")


def test_read_struct_on_whole_file_offsets() -> None:
    data = build_file([(required("x", Type.INT32), [1, 2])])
    header, end = read_struct(data, 4)
    assert header[1] == PageType.DATA_PAGE_V2
    assert data[end : end + 8] == struct.pack("<2i", 1, 2)
