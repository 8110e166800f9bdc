"""Declarative Thrift structs: each field is declared once, and one generic writer serializes them all.

A struct is a class deriving from ``ThriftStruct`` (or ``ThriftUnion``) under ``@thrift_struct``; each
field says its IDL id and wire type where it is declared::

    @thrift_struct
    class PageLocation(ThriftStruct):
        offset: int = req(1, I64)
        compressed_page_size: int = req(2, I32)
        first_row_index: int = req(3, I64)

``req`` fields are always written (None there fails loudly); ``opt`` fields default to None and are
skipped while None; lists name their element type (``opt(2, LIST, I64)``). The decorator makes the class
a slotted, keyword-only dataclass (``kw_only=False`` keeps positional construction) and precomputes, once
per class, a write plan: per field in id order the short-form field header, how to encode the value and
whether it is required, plus one getter that reads every field into a tuple. ``ThriftStruct.write`` walks
that plan, so there is no per-struct serialization code to write by hand; each class gets that walk unrolled
into straight-line code once, when it is made (``_compiled_write``: the same bytes, a third less time).
"""

from __future__ import annotations

import dataclasses
import enum
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar, overload

from gpuwrite.format.thrift import (
    CT_BINARY,
    CT_FALSE,
    CT_I8,
    CT_I16,
    CT_I32,
    CT_I64,
    CT_LIST,
    CT_STRUCT,
    CT_TRUE,
    CompactWriter,
    out_of_range,
    put_binary_list,
    put_bool_list,
    put_i32_list,
    put_i64_list,
    put_list_header,
    put_string_list,
    put_varint,
)

if TYPE_CHECKING:  # typeshed ships typing_extensions, so mypy sees the marker under any target version
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - the marker only matters to type checkers

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        """Stand-in for typing.dataclass_transform before Python 3.11."""
        return lambda f: f


class TType(enum.Enum):
    """Thrift wire types the Parquet structs use (parquet.thrift has no double, set or map fields)."""

    BOOL = "bool"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I64 = "i64"
    BINARY = "binary"
    STRING = "string"
    STRUCT = "struct"
    LIST = "list"


BOOL, I8, I16, I32, I64 = TType.BOOL, TType.I8, TType.I16, TType.I32, TType.I64
BINARY, STRING, STRUCT, LIST = TType.BINARY, TType.STRING, TType.STRUCT, TType.LIST

_SPEC_KEY = "thrift"


class FieldSpec(NamedTuple):
    """One declared field: IDL id, wire type, list element type (lists only), and whether it is required."""

    fid: int
    ttype: TType
    elem: TType | None
    required: bool


def req(fid: int, ttype: TType, elem: TType | None = None, *, default: Any = dataclasses.MISSING,
        default_factory: Any = dataclasses.MISSING) -> Any:
    """Declare a required field: always written, so None there fails at write time. No default unless given."""
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata={_SPEC_KEY: FieldSpec(fid, ttype, elem, True)})


def opt(fid: int, ttype: TType, elem: TType | None = None, *, default: Any = None) -> Any:
    """Declare an optional field or union member: skipped while None; defaults to None unless given."""
    return dataclasses.field(default=default, metadata={_SPEC_KEY: FieldSpec(fid, ttype, elem, False)})


# How ThriftStruct.write encodes a value after its field header (plan entry ``kind``).
_INT, _BOOL, _BINARY, _STRING, _STRUCT, _STRUCTS, _CALL, _DONE = range(8)

_ZIGZAG = {I16: (CT_I16, 15), I32: (CT_I32, 31), I64: (CT_I64, 63)}
_ZIGZAG_NAMES = {15: "i16", 31: "i32", 63: "i64"}


def _put_i8(buf: bytearray, value: int) -> None:
    """Append an i8 as one two's-complement byte."""
    if not -128 <= value <= 127:
        raise out_of_range("i8", value)
    buf.append(value & 0xFF)


_LIST_PUTS: dict[TType, Callable[[bytearray, Any], None]] = {
    BOOL: put_bool_list, I32: put_i32_list, I64: put_i64_list, BINARY: put_binary_list, STRING: put_string_list,
}


class PlanEntry(NamedTuple):
    """One field's precomputed write step (see ThriftStruct.write); plans hold them as plain tuples."""

    fid: int
    prev: int  # id of the field declared before it; -1 when the short header cannot follow it
    short: int  # the one-byte header when ``prev`` was the last field written (bools: the true one); the low
    # nibble is always the compact type
    kind: int
    arg: Any  # _INT: the zigzag shift (15, 31 or 63); _CALL: put(buf, value), which appends the value
    required: bool


def _entry(cls_name: str, name: str, spec: FieldSpec, prev: int) -> PlanEntry:
    """Build the plan entry of one declared field, rejecting declarations the writer cannot encode."""
    fid, ttype, elem, required = spec
    if (ttype is LIST) != (elem is not None):
        raise TypeError(f"{cls_name}.{name}: a list field needs an element type, and only a list takes one")
    arg: Any = None
    ctype, kind = CT_STRUCT, _CALL
    if ttype in _ZIGZAG:
        ctype, arg = _ZIGZAG[ttype]
        kind = _INT
    elif ttype is BOOL:
        ctype, kind = CT_TRUE, _BOOL
    elif ttype is I8:
        ctype, arg = CT_I8, _put_i8
    elif ttype is BINARY or ttype is STRING:
        ctype, kind = CT_BINARY, _BINARY if ttype is BINARY else _STRING
    elif ttype is STRUCT:
        kind = _STRUCT
    elif elem is STRUCT:
        ctype, kind = CT_LIST, _STRUCTS
    else:
        assert elem is not None
        if elem not in _LIST_PUTS:
            raise TypeError(f"{cls_name}.{name}: list<{elem.value}> is not supported")
        ctype, arg = CT_LIST, _LIST_PUTS[elem]
    delta = fid - prev
    short = (delta << 4) | ctype if delta <= 15 else ctype
    return PlanEntry(fid, prev if delta <= 15 else -1, short, kind, arg, required)


def _values_getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A function returning the named attributes as one tuple, compiled from source as dataclasses compiles
    ``__init__``: its ``obj.name`` loads specialize to direct slot reads, cheaper than operator.attrgetter."""
    for name in names:
        if not name.isidentifier():
            raise TypeError(f"{name!r} is not an attribute name")
    body = "".join(f"obj.{name}, " for name in names)
    getter: Callable[[Any], tuple[Any, ...]] = eval(f"lambda obj: ({body})")  # names checked above
    return getter


Layout = tuple[Callable[[Any], tuple[Any, ...]], tuple[tuple[Any, ...], ...]]


def _layout(cls: type) -> Layout:
    """The values getter and write plan of a dataclass whose fields were all declared with req/opt."""
    specs = []
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(_SPEC_KEY)
        if not isinstance(spec, FieldSpec):
            raise TypeError(f"{cls.__name__}.{f.name} has no Thrift declaration: use req() or opt()")
        if issubclass(cls, ThriftUnion) and (spec.required or spec.ttype is not STRUCT):
            raise TypeError(f"{cls.__name__}.{f.name}: union members are declared opt(id, STRUCT)")
        specs.append((spec.fid, f.name, spec))
    specs.sort(key=lambda t: t[0])
    plan: list[tuple[Any, ...]] = []
    prev = 0
    for fid, name, spec in specs:
        if not 1 <= fid <= 32767:
            raise TypeError(f"{cls.__name__}.{name}: field id {fid} is outside 1..32767")
        if fid == prev:
            raise TypeError(f"{cls.__name__}.{name}: field id {fid} is declared twice")
        plan.append(tuple(_entry(cls.__name__, name, spec, prev)))  # exact tuples unpack fastest
        prev = fid
    return _values_getter([name for _, name, _ in specs]), tuple(plan)


class ThriftStruct:
    """Base of the declared structs: ``write`` serializes any of them from its class's write plan."""

    __slots__ = ()
    _thrift: ClassVar[Layout]  # (values getter, plan), set by @thrift_struct

    def write(self, w: CompactWriter) -> None:
        """Write the set fields in id order and the stop byte; a required field that is None raises TypeError.

        Speed matters (a header per page, a PageLocation per page): values come from one getter call,
        a None field costs one test, the field header is the precomputed byte when the previous declared
        field was the last one written, and integers, bools and binaries are encoded inline.
        """
        getter, plan = self._thrift
        buf = w.buf
        append = buf.append
        last = 0
        for entry, value in zip(plan, getter(self)):  # noqa: B905 - equal lengths by construction
            if value is None:
                if entry[5]:
                    raise _missing(self, entry[0])
                continue
            fid, prev, short, kind, arg, _ = entry
            if last == prev:
                append(short)
            elif fid - last <= 15:
                append(((fid - last) << 4) | (short & 0x0F))
            else:  # long form (rare): the type byte, then the id as a zigzag i16 varint (ids are positive)
                ctype = short & 0x0F
                if kind == _BOOL:
                    ctype, kind = (CT_TRUE if value else CT_FALSE), _DONE
                append(ctype)
                put_varint(buf, fid << 1)
            last = fid
            if kind == _INT:
                sign = value >> arg  # 0 or -1 exactly when the value fits the type
                if sign and sign != -1:
                    raise out_of_range(_ZIGZAG_NAMES[arg], value)
                n = (value << 1) ^ sign
                while n > 0x7F:
                    append((n & 0x7F) | 0x80)
                    n >>= 7
                append(n)
            elif kind == _STRUCT:
                value.write(w)
            elif kind == _BINARY or kind == _STRING:
                if kind == _STRING:
                    value = value.encode("utf-8")
                elif type(value) is memoryview:
                    value = value.cast("B")
                n = len(value)
                while n > 0x7F:
                    append((n & 0x7F) | 0x80)
                    n >>= 7
                append(n)
                buf += value
            elif kind == _BOOL:
                if not value:
                    buf[-1] += 1  # the short header just appended: CT_TRUE -> CT_FALSE (a bool has no body)
            elif kind == _CALL:
                arg(buf, value)
            elif kind == _STRUCTS:
                put_list_header(buf, CT_STRUCT, len(value))
                for item in value:
                    item.write(w)
        append(0)


class ThriftUnion(ThriftStruct):
    """Base of the declared unions: exactly one member must be set, else writing raises ValueError.

    Members are optional structs (every parquet.thrift union is), so the one set member is written directly.
    """

    __slots__ = ()

    def write(self, w: CompactWriter) -> None:
        """Check that exactly one member is set, then write the union as a struct holding just that member."""
        getter, plan = self._thrift
        count, fid = 0, 0
        member: Any = None
        for entry, value in zip(plan, getter(self)):  # noqa: B905 - equal lengths by construction
            if value is not None:
                count += 1
                fid, member = entry[0], value
        if count != 1:
            raise ValueError(f"{type(self).__name__} is a union: set exactly one member, not {count}")
        buf = w.buf
        if fid <= 15:
            buf.append((fid << 4) | CT_STRUCT)
        else:
            buf.append(CT_STRUCT)
            put_varint(buf, fid << 1)
        member.write(w)
        buf.append(0)


def _compiled_write(cls: type) -> Callable[[Any, CompactWriter], None]:
    """``ThriftStruct.write`` for one class, its plan unrolled into straight-line code (as dataclasses compiles
    ``__init__``): the same bytes and errors, without the per-field plan lookups and kind tests, which made up
    half of a footer's time (a ColumnChunk per column: 20,000 columns wrote 200,000 structs)."""
    _, plan = cls._thrift  # type: ignore[attr-defined]
    names = [f.name for f in sorted(dataclasses.fields(cls), key=lambda f: f.metadata[_SPEC_KEY].fid)]
    env: dict[str, Any] = {"put_varint": put_varint, "out_of_range": out_of_range, "_missing": _missing,
                           "put_list_header": put_list_header}
    lines = ["def write(self, w):", "    buf = w.buf", "    append = buf.append", "    last = 0"]
    for i, ((fid, _, short, kind, arg, required), name) in enumerate(zip(plan, names, strict=True)):
        ctype = short & 0x0F
        lines += [f"    v = self.{name}", "    if v is not None:", f"        d = {fid} - last", "        if d <= 15:",
                  f"            append((d << 4) | {ctype})"]
        if kind == _BOOL:  # the short header is the true one; a false bool adds one to it (no body either way)
            lines += ["            if not v:", "                buf[-1] += 1", "        else:",
                      f"            append({CT_TRUE} if v else {CT_FALSE})", f"            put_varint(buf, {fid << 1})"]
        else:
            lines += ["        else:", f"            append({ctype})", f"            put_varint(buf, {fid << 1})"]
        if kind == _INT:
            lines += [f"        sign = v >> {arg}", "        if sign and sign != -1:",
                      f"            raise out_of_range({_ZIGZAG_NAMES[arg]!r}, v)", "        n = (v << 1) ^ sign"]
        elif kind == _STRUCT:
            lines.append("        v.write(w)")
        elif kind == _BINARY or kind == _STRING:
            lines.append("        v = v.encode('utf-8')" if kind == _STRING else
                         "        if type(v) is memoryview: v = v.cast('B')")
            lines += ["        n = len(v)"]
        elif kind == _CALL:
            env[f"_put{i}"] = arg
            lines.append(f"        _put{i}(buf, v)")
        elif kind == _STRUCTS:
            lines += [f"        put_list_header(buf, {CT_STRUCT}, len(v))", "        for item in v:",
                      "            item.write(w)"]
        if kind in (_INT, _BINARY, _STRING):  # a varint: the zigzag value, or the byte length
            lines += ["        while n > 0x7F:", "            append((n & 0x7F) | 0x80)", "            n >>= 7",
                      "        append(n)"]
            if kind != _INT:
                lines.append("        buf += v")
        lines.append(f"        last = {fid}")
        if required:
            lines += ["    else:", f"        raise _missing(self, {fid})"]
    lines.append("    append(0)")
    exec("\n".join(lines), env)  # built from the class's own declarations only
    write: Callable[[Any, CompactWriter], None] = env["write"]
    write.__qualname__ = f"{cls.__qualname__}.write"
    write.__doc__ = ThriftStruct.write.__doc__
    return write


def _missing(obj: ThriftStruct, fid: int) -> TypeError:
    """The error for a required field left None (a file with it missing would be rejected by readers)."""
    names = {f.metadata[_SPEC_KEY].fid: f.name for f in dataclasses.fields(obj)}  # type: ignore[arg-type]
    return TypeError(f"{type(obj).__name__}.{names[fid]} (field {fid}) is required but is None")


T = TypeVar("T", bound=ThriftStruct)


@overload
def thrift_struct(cls: type[T], /) -> type[T]: ...


@overload
def thrift_struct(*, kw_only: bool = True, frozen: bool = False) -> Callable[[type[T]], type[T]]: ...


# opt is deliberately not a field specifier: type checkers then read ``= opt(...)`` as a default value,
# which it is (None), while ``= req(...)`` is a field without one unless it passes default=.
@dataclass_transform(kw_only_default=True, field_specifiers=(req, dataclasses.field))
def thrift_struct(cls: type[T] | None = None, /, *, kw_only: bool = True,
                  frozen: bool = False) -> type[T] | Callable[[type[T]], type[T]]:
    """Make a ThriftStruct subclass a slotted dataclass (keyword-only unless told) and attach its write plan."""

    def wrap(c: type[T]) -> type[T]:
        if not issubclass(c, ThriftStruct):
            raise TypeError(f"{c.__name__} must derive from ThriftStruct or ThriftUnion")
        out = dataclasses.dataclass(c, slots=True, kw_only=kw_only, frozen=frozen)
        out._thrift = _layout(out)
        if out.write is ThriftStruct.write:  # unions and hand-written writers keep theirs
            out.write = _compiled_write(out)  # type: ignore[method-assign,assignment]
        return out

    return wrap if cls is None else wrap(cls)
