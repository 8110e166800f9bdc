"""Compact protocol writer/reader: exact bytes from the spec, round trips, and malformed input."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuwrite.format.thrift import (
    CompactWriter,
    ThriftDecodeError,
    decode_struct,
    iter_structs,
    read_struct,
    read_varint,
    serialize,
)

I8 = (-(1 << 7), (1 << 7) - 1)
I16 = (-(1 << 15), (1 << 15) - 1)
I32 = (-(1 << 31), (1 << 31) - 1)
I64 = (-(1 << 63), (1 << 63) - 1)


@dataclass
class Fields:
    """A test struct: a list of (field id, writer method name, value) written in the given order."""

    items: list[tuple[int, str, Any]]

    def write(self, w: CompactWriter) -> None:
        """Write every item with the named CompactWriter method, then the stop byte."""
        w.struct_begin()
        for fid, kind, value in self.items:
            getattr(w, "field_" + kind)(fid, value)
        w.struct_end()


def one(kind: str, value: Any, fid: int = 1) -> bytes:
    """Serialize a struct holding a single field."""
    return serialize(Fields([(fid, kind, value)]))


def roundtrip(items: list[tuple[int, str, Any]]) -> dict[int, Any]:
    """Write the items as one struct and decode them back with the schema-less reader."""
    return decode_struct(serialize(Fields(items)))


def test_spec_bytes_for_small_fields() -> None:
    assert one("i32", 1) == b"\x15\x02\x00"
    assert one("i32", -1) == b"\x15\x01\x00"
    assert one("i64", 64) == b"\x16\x80\x01\x00"
    assert one("i16", -2) == b"\x14\x03\x00"
    assert one("i8", -1) == b"\x13\xff\x00"
    assert one("bool", True) == b"\x11\x00"
    assert one("bool", False) == b"\x12\x00"
    assert one("binary", b"ab") == b"\x18\x02ab\x00"
    assert one("string", "é") == b"\x18\x02\xc3\xa9\x00"
    assert one("double", 1.0) == b"\x17" + bytes.fromhex("000000000000f03f") + b"\x00"


def test_field_id_deltas_short_and_long_form() -> None:
    # delta 15 is the largest short form; 16 needs the long form (type byte, zigzag i16 id)
    assert one("i32", 0, fid=15) == b"\xf5\x00\x00"
    assert one("i32", 0, fid=16) == b"\x05\x20\x00\x00"
    # a backwards jump (delta <= 0) and a repeated id both need the long form
    data = serialize(Fields([(5, "i32", 0), (3, "i32", 0), (3, "bool", True)]))
    assert data == b"\x55\x00" + b"\x05\x06\x00" + b"\x01\x06" + b"\x00"
    assert decode_struct(data) == {5: 0, 3: True}
    assert roundtrip([(300, "i64", 7), (1, "i8", 3), (-4, "bool", False), (32767, "i16", 9)]) == {
        300: 7, 1: 3, -4: False, 32767: 9,
    }


@pytest.mark.parametrize(
    ("kind", "bounds"), [("i8", I8), ("i16", I16), ("i32", I32), ("i64", I64)]
)
def test_integer_extremes_roundtrip(kind: str, bounds: tuple[int, int]) -> None:
    lo, hi = bounds
    values = [lo, lo + 1, -64, -65, -1, 0, 1, 63, 64, hi - 1, hi]
    items = [(i + 1, kind, v) for i, v in enumerate(values)]
    assert roundtrip(items) == {i + 1: v for i, v in enumerate(values)}


def test_i64_extremes_are_ten_byte_varints() -> None:
    assert one("i64", I64[1]) == b"\x16" + b"\xfe" + b"\xff" * 8 + b"\x01" + b"\x00"
    assert one("i64", I64[0]) == b"\x16" + b"\xff" * 9 + b"\x01" + b"\x00"


@pytest.mark.parametrize(
    ("kind", "value"),
    [("i8", 128), ("i8", -129), ("i16", 1 << 15), ("i32", 1 << 31), ("i32", -(1 << 31) - 1),
     ("i64", 1 << 63), ("i64", -(1 << 63) - 1), ("list_i32", [0, 1 << 31]), ("list_i64", [1 << 63])],
)
def test_out_of_range_values_raise(kind: str, value: Any) -> None:
    with pytest.raises(ValueError, match="does not fit"):
        one(kind, value)


def test_bool_fields_roundtrip() -> None:
    assert roundtrip([(1, "bool", True), (2, "bool", False), (40, "bool", True)]) == {
        1: True, 2: False, 40: True,
    }


def test_list_headers_short_and_long() -> None:
    assert one("list_i32", [1, 2, 3]) == b"\x19\x35\x02\x04\x06\x00"
    assert one("list_i32", []) == b"\x19\x05\x00"
    fourteen = one("list_i64", [0] * 14)
    assert fourteen[:2] == b"\x19\xe6"
    fifteen = one("list_i64", [0] * 15)
    assert fifteen[:3] == b"\x19\xf6\x0f"
    big = one("list_binary", [b"x"] * 300)
    assert big[:4] == b"\x19\xf8\xac\x02"


def test_list_bool_bytes_match_arrow_and_java() -> None:
    assert one("list_bool", [True, False, True]) == b"\x19\x31\x01\x02\x01\x00"


@pytest.mark.parametrize("n", [0, 1, 14, 15, 16, 200])
def test_lists_roundtrip(n: int) -> None:
    bools = [i % 3 == 0 for i in range(n)]
    i32s = [(-1) ** i * (i * 1000003 % (1 << 31)) for i in range(n)]
    i64s = [(-1) ** i * (i << 40) for i in range(n)]
    blobs = [bytes([i % 256]) * (i % 5) for i in range(n)]
    strings = [f"s{i}é" for i in range(n)]
    structs = [Fields([(1, "i32", i), (2, "string", "x" * i)]) for i in range(n)]
    got = roundtrip([
        (1, "list_bool", bools), (2, "list_i32", i32s), (3, "list_i64", i64s), (4, "list_binary", blobs),
        (5, "list_string", strings), (6, "list_struct", structs),
    ])
    assert got[1] == bools
    assert got[2] == i32s
    assert got[3] == i64s
    assert got[4] == blobs
    assert got[5] == [s.encode() for s in strings]
    assert got[6] == [{1: i, 2: b"x" * i} for i in range(n)]


def test_nested_structs_restore_field_id_state() -> None:
    inner = Fields([(1, "i32", 5), (20, "bool", True), (2, "i64", -9)])
    middle = Fields([(3, "struct", inner), (4, "i8", -3)])
    data = serialize(Fields([(1, "struct", middle), (2, "i32", 1), (17, "struct", Fields([]))]))
    # after the nested struct closes, field 2 is a short-form delta of 1 from field 1
    assert b"\x00\x15\x02" in data
    assert decode_struct(data) == {1: {3: {1: 5, 20: True, 2: -9}, 4: -3}, 2: 1, 17: {}}


def test_writer_clear_reuses_buffer() -> None:
    w = CompactWriter()
    Fields([(9, "i32", 1)]).write(w)
    w.clear()
    Fields([(1, "i32", 1)]).write(w)
    assert w.getvalue() == b"\x15\x02\x00"
    assert len(w) == 3


def test_memoryview_binary_is_written_as_bytes() -> None:
    view = memoryview(bytes(range(8))).cast("I")
    assert roundtrip([(1, "binary", view)]) == {1: bytes(range(8))}


def test_reader_handles_types_the_writer_does_not_emit() -> None:
    double = bytes.fromhex("000000000000f8bf")  # -1.5
    data = (
        b"\x17" + double  # 1: double
        + b"\x1a\x25\x02\x04"  # 2: set<i32> {1, 2}
        + b"\x1b\x02\x85\x01a\x02\x01b\x04"  # 3: map<binary, i32> {a: 1, b: 2}
        + b"\x1b\x00"  # 4: empty map
        + b"\x1d" + bytes(range(16))  # 5: uuid
        + b"\x19\x22\x01\x00"  # 6: list<bool> with element type 2 and a 0 for false
        + b"\x00"
    )
    assert decode_struct(data) == {
        1: -1.5, 2: [1, 2], 3: {b"a": 1, b"b": 2}, 4: {}, 5: bytes(range(16)), 6: [True, False],
    }


def test_read_struct_returns_end_and_iter_structs_walks_concatenation() -> None:
    a = one("i32", 1)
    b = one("string", "hi", fid=3)
    value, end = read_struct(a + b, 0)
    assert (value, end) == ({1: 1}, len(a))
    assert list(iter_structs(a + b)) == [({1: 1}, 0, len(a)), ({3: b"hi"}, len(a), len(a) + len(b))]


def test_read_varint_positions() -> None:
    assert read_varint(b"\x00\xac\x02", 1) == (300, 3)


@pytest.mark.parametrize(
    "data",
    [b"", b"\x15", b"\x15\x80", b"\x18\x05ab\x00", b"\x19\x35\x02", b"\x1c\x15\x02", b"\x17\x00\x00"],
)
def test_truncated_input_raises_decode_error(data: bytes) -> None:
    with pytest.raises(ThriftDecodeError):
        read_struct(data)


def test_bad_input_raises_decode_error() -> None:
    with pytest.raises(ThriftDecodeError, match="unknown compact type"):
        read_struct(b"\x1e\x00")
    with pytest.raises(ThriftDecodeError, match="trailing"):
        decode_struct(b"\x00\x00")
    with pytest.raises(ThriftDecodeError, match="varint"):
        read_struct(b"\x15" + b"\xff" * 12 + b"\x01")
    with pytest.raises(ThriftDecodeError, match="nests"):
        read_struct(b"\x1c" * 100_000)


SCALARS: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
    "bool": st.booleans,
    "i8": lambda: st.integers(*I8),
    "i16": lambda: st.integers(*I16),
    "i32": lambda: st.integers(*I32),
    "i64": lambda: st.integers(*I64),
    "binary": lambda: st.binary(max_size=40),
    "double": lambda: st.floats(allow_nan=False),
    "list_i64": lambda: st.lists(st.integers(*I64), max_size=40),
    "list_bool": lambda: st.lists(st.booleans(), max_size=40),
}


def field_items(children: st.SearchStrategy[Any]) -> st.SearchStrategy[list[tuple[int, str, Any]]]:
    """Lists of (id, kind, value) with unique ids in any order; nested structs come from ``children``."""
    kinds = st.sampled_from([*SCALARS, "struct"])

    def value_for(kind: str) -> st.SearchStrategy[Any]:
        return children.map(Fields) if kind == "struct" else SCALARS[kind]()

    item = st.tuples(st.integers(*I16), kinds).flatmap(
        lambda t: value_for(t[1]).map(lambda v: (t[0], t[1], v))
    )
    return st.lists(item, max_size=12, unique_by=lambda t: t[0])


def expected(items: list[tuple[int, str, Any]]) -> dict[int, Any]:
    """What the reader should return for a Fields struct."""
    return {fid: expected(v.items) if kind == "struct" else v for fid, kind, v in items}


@given(st.recursive(st.just([]), field_items, max_leaves=30))
def test_random_structs_roundtrip(items: list[tuple[int, str, Any]]) -> None:
    assert roundtrip(items) == expected(items)
