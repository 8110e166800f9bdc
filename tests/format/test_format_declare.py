"""The declarative struct writer: its bytes equal CompactWriter's field-by-field output for every wire type,
required/union rules fail loudly, and declarations it cannot encode are refused when the class is made."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
from gpuwrite.format.thrift import CompactWriter, decode_struct, serialize


@thrift_struct
class Inner(ThriftStruct):
    """A small nested struct."""

    a: int = req(1, I32)
    b: str | None = opt(2, STRING)


# Ids leave gaps of 1, 14, 15, 16 and more, so short and long field headers both occur, also after skips.
@thrift_struct
class Every(ThriftStruct):
    """One optional field of every wire type and list element type."""

    flag: bool | None = opt(1, BOOL)
    tiny: int | None = opt(2, I8)
    short: int | None = opt(3, I16)
    word: int | None = opt(17, I32)
    long: int | None = opt(18, I64)
    blob: bytes | None = opt(33, BINARY)
    text: str | None = opt(47, STRING)
    inner: Inner | None = opt(48, STRUCT)
    flags: list[bool] | None = opt(49, LIST, BOOL)
    words: list[int] | None = opt(50, LIST, I32)
    longs: list[int] | None = opt(60, LIST, I64)
    blobs: list[bytes] | None = opt(300, LIST, BINARY)
    texts: list[str] | None = opt(301, LIST, STRING)
    inners: list[Inner] | None = opt(32767, LIST, STRUCT)
    late_flag: bool | None = opt(766, BOOL)


# CompactWriter method suffix per field, to build the expected bytes the old hand-written way.
METHODS = {
    "flag": "bool", "tiny": "i8", "short": "i16", "word": "i32", "long": "i64", "blob": "binary",
    "text": "string", "inner": "struct", "flags": "list_bool", "words": "list_i32", "longs": "list_i64",
    "blobs": "list_binary", "texts": "list_string", "inners": "list_struct", "late_flag": "bool",
}
IDS = {f.name: f.metadata["thrift"].fid for f in dataclasses.fields(Every)}


class HandInner:
    """Inner written field by field with CompactWriter, as structs.py did before the declarations."""

    def __init__(self, inner: Inner) -> None:
        self.inner = inner

    def write(self, w: CompactWriter) -> None:
        """Write a, then b when set."""
        w.struct_begin()
        w.field_i32(1, self.inner.a)
        if self.inner.b is not None:
            w.field_string(2, self.inner.b)
        w.struct_end()


def hand_written(obj: Every) -> bytes:
    """The bytes CompactWriter's field methods give for the set fields of ``obj``, in id order."""
    w = CompactWriter()
    w.struct_begin()
    for name in sorted(METHODS, key=IDS.__getitem__):
        value = getattr(obj, name)
        if value is None:
            continue
        if name == "inner":
            value = HandInner(value)
        elif name == "inners":
            value = [HandInner(v) for v in value]
        getattr(w, "field_" + METHODS[name])(IDS[name], value)
    w.struct_end()
    return w.getvalue()


def ints(bits: int) -> st.SearchStrategy[int]:
    """Every integer of a signed width."""
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


inners = st.builds(Inner, a=ints(32), b=st.none() | st.text(max_size=5))
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "flag": st.booleans(), "tiny": ints(8), "short": ints(16), "word": ints(32), "long": ints(64),
    "blob": st.binary(max_size=200), "text": st.text(max_size=20), "inner": inners,
    "flags": st.lists(st.booleans(), max_size=20), "words": st.lists(ints(32), max_size=20),
    "longs": st.lists(ints(64), max_size=20), "blobs": st.lists(st.binary(max_size=9), max_size=16),
    "texts": st.lists(st.text(max_size=4), max_size=16), "inners": st.lists(inners, max_size=3),
    "late_flag": st.booleans(),
}


@given(st.fixed_dictionaries({}, optional={name: strategy for name, strategy in VALUES.items()}))
def test_generic_writer_matches_compact_writer_field_calls(kwargs: dict[str, Any]) -> None:
    obj = Every(**kwargs)
    data = serialize(obj)
    assert data == hand_written(obj)
    generic = CompactWriter()
    ThriftStruct.write(obj, generic)  # the plan walked, as each class's compiled writer unrolls it
    assert generic.getvalue() == data and type(obj).write is not ThriftStruct.write
    decoded = decode_struct(data)
    assert set(decoded) == {IDS[name] for name in kwargs}
    for name, value in kwargs.items():
        if name in ("inner", "inners", "text", "texts"):
            continue
        assert decoded[IDS[name]] == value


def test_field_headers_short_long_and_after_skips() -> None:
    # field 17 after nothing: delta 17 needs the long form; after field 3 it is a short delta of 14
    assert serialize(Every(word=1)) == b"\x05\x22\x02\x00"
    assert serialize(Every(short=0, word=1)) == b"\x34\x00\xe5\x02\x00"
    # bools carry their value in the header, short and long form alike
    assert serialize(Every(flag=False)) == b"\x12\x00"
    assert serialize(Every(late_flag=True)) == b"\x01\xfc\x0b\x00"
    assert serialize(Every(late_flag=False)) == b"\x02\xfc\x0b\x00"
    # the largest id, written as a zigzag varint
    assert serialize(Every(inners=[])) == b"\x09\xfe\xff\x03\x0c\x00"


def test_memoryview_binary_is_written_as_bytes() -> None:
    view = memoryview(bytes(range(8))).cast("I")
    assert decode_struct(serialize(Every(blob=view, blobs=[view]))) == {33: bytes(range(8)), 300: [bytes(range(8))]}


@pytest.mark.parametrize(
    ("name", "value"),
    [("tiny", 128), ("tiny", -129), ("short", 1 << 15), ("word", 1 << 31), ("word", -(1 << 31) - 1),
     ("long", 1 << 63), ("long", -(1 << 63) - 1), ("words", [0, 1 << 31]), ("longs", [-(1 << 63) - 1])],
)
def test_out_of_range_integers_raise(name: str, value: Any) -> None:
    with pytest.raises(ValueError, match="does not fit"):
        serialize(Every(**{name: value}))


def test_required_none_names_the_field() -> None:
    with pytest.raises(TypeError, match=r"Inner\.a \(field 1\) is required"):
        serialize(Inner(a=None))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Inner\.a"):
        serialize(Every(inners=[Inner(a=1), Inner(a=None)]))  # type: ignore[arg-type]


@thrift_struct
class Choice(ThriftUnion):
    """A union of two structs, the second far enough to need a long field header."""

    near: Inner | None = opt(1, STRUCT)
    far: Inner | None = opt(20, STRUCT)


def test_union_needs_exactly_one_member() -> None:
    assert serialize(Choice(near=Inner(a=1))) == b"\x1c\x15\x02\x00\x00"
    assert serialize(Choice(far=Inner(a=-1, b="x"))) == b"\x0c\x28\x15\x01\x18\x01x\x00\x00"
    for bad in (Choice(), Choice(near=Inner(a=1), far=Inner(a=1))):
        with pytest.raises(ValueError, match="Choice is a union: set exactly one member"):
            serialize(bad)
    with pytest.raises(TypeError, match="union members are declared opt"):
        thrift_struct(type("BadUnion", (ThriftUnion,), {"__annotations__": {"x": "int"}, "x": opt(1, I32)}))


@thrift_struct(kw_only=False)
class Positional(ThriftStruct):
    """Positional construction, a required field with a default and one with a factory."""

    x: int = req(1, I64)
    y: int = req(2, I32, default=7)
    z: list[int] = req(3, LIST, I32, default_factory=list)


@thrift_struct(frozen=True)
class Frozen(ThriftStruct):
    """A frozen struct."""

    x: int = req(1, I32)


def test_constructors_are_slotted_dataclasses() -> None:
    p = Positional(5)
    assert (p.x, p.y, p.z) == (5, 7, [])
    assert serialize(p) == b"\x16\x0a\x15\x0e\x19\x05\x00"
    assert not hasattr(p, "__dict__")
    with pytest.raises(TypeError):
        Inner(1)  # type: ignore[misc]
    with pytest.raises(TypeError):
        Inner()  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Frozen(x=1).x = 2  # type: ignore[misc]
    assert Inner(a=1) == Inner(a=1, b=None) != Inner(a=1, b="")


def test_declarations_the_writer_cannot_encode_are_refused() -> None:
    def make(**annotations_and_values: Any) -> None:
        ns: dict[str, Any] = {"__annotations__": {k: "Any" for k in annotations_and_values}}
        ns.update(annotations_and_values)
        thrift_struct(type("Bad", (ThriftStruct,), ns))

    with pytest.raises(TypeError, match="no Thrift declaration"):
        make(x=None)
    with pytest.raises(TypeError, match="declared twice"):
        make(x=req(1, I32), y=opt(1, I64))
    with pytest.raises(TypeError, match="needs an element type"):
        make(x=req(1, LIST))
    with pytest.raises(TypeError, match="only a list takes one"):
        make(x=req(1, I32, I32))
    with pytest.raises(TypeError, match="outside 1..32767"):
        make(x=req(0, I32))
    with pytest.raises(TypeError, match="list<i8> is not supported"):
        make(x=req(1, LIST, I8))
    with pytest.raises(TypeError, match="must derive from ThriftStruct"):
        thrift_struct(type("Plain", (), {}))  # type: ignore[type-var]
