"""Thrift compact protocol: a tight writer for Parquet metadata and a schema-less reader to check it.

The writer appends to one bytearray and keeps only the last field id of each open struct, so a page
header costs a few dozen appends. The reader needs no IDL: it turns any struct into
``{field_id: value}`` with nested structs as dicts, lists and sets as lists, maps as dicts, binary
and string as bytes, and bools as bools.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from gpuwrite.errors import GpuwriteError

CT_STOP = 0
CT_TRUE = 1
CT_FALSE = 2
CT_I8 = 3
CT_I16 = 4
CT_I32 = 5
CT_I64 = 6
CT_DOUBLE = 7
CT_BINARY = 8
CT_LIST = 9
CT_SET = 10
CT_MAP = 11
CT_STRUCT = 12
CT_UUID = 13

_I8_MIN, _I8_MAX = -(1 << 7), (1 << 7) - 1
_I16_MIN, _I16_MAX = -(1 << 15), (1 << 15) - 1
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1

_DOUBLE = struct.Struct("<d")

Buffer = bytes | bytearray | memoryview


class ThriftDecodeError(GpuwriteError, ValueError):
    """Bytes that are not a well-formed compact-protocol struct (truncated, or an unknown type code)."""


class Writable(Protocol):
    """Anything that serializes itself as one complete struct onto a CompactWriter."""

    def write(self, w: CompactWriter) -> None:
        """Write the struct, stop byte included."""


def out_of_range(kind: str, value: int) -> ValueError:
    """Build the error for an integer that does not fit its Thrift type (a silent wrap would corrupt)."""
    return ValueError(f"{value} does not fit in a Thrift {kind}")


def put_varint(buf: bytearray, n: int) -> None:
    """Append a non-negative int as an unsigned LEB128 varint."""
    while n > 0x7F:
        buf.append((n & 0x7F) | 0x80)
        n >>= 7
    buf.append(n)


class CompactWriter:
    """Serializes structs in the Thrift compact protocol onto one growing bytearray (``buf``)."""

    __slots__ = ("buf", "_last", "_stack")

    def __init__(self) -> None:
        self.buf = bytearray()
        self._last = 0
        self._stack: list[int] = []

    def __len__(self) -> int:
        """Bytes written so far (a page header's length once it is written)."""
        return len(self.buf)

    def getvalue(self) -> bytes:
        """Return a copy of everything written so far."""
        return bytes(self.buf)

    def clear(self) -> None:
        """Forget all output and open structs so one writer can serialize many page headers."""
        del self.buf[:]
        self._last = 0
        self._stack.clear()

    def struct_begin(self) -> None:
        """Open a struct: field-id deltas restart from zero inside it."""
        self._stack.append(self._last)
        self._last = 0

    def struct_end(self) -> None:
        """Close the innermost struct with a stop byte and restore the enclosing field-id state."""
        self.buf.append(CT_STOP)
        self._last = self._stack.pop()

    def _header(self, fid: int, ctype: int) -> None:
        """Append a field header: short form for deltas 1..15, else the type then a zigzag i16 id."""
        delta = fid - self._last
        if 0 < delta <= 15:
            self.buf.append((delta << 4) | ctype)
        else:
            self._long_header(fid, ctype)
        self._last = fid

    def _long_header(self, fid: int, ctype: int) -> None:
        """Append the long-form header (type byte, then the id as a zigzag varint) for big or negative jumps."""
        if not _I16_MIN <= fid <= _I16_MAX:
            raise out_of_range("field id (i16)", fid)
        self.buf.append(ctype)
        put_varint(self.buf, (fid << 1) ^ (fid >> 15))

    def field_bool(self, fid: int, value: bool) -> None:
        """Write a bool field; the value lives in the header's type nibble."""
        ctype = CT_TRUE if value else CT_FALSE
        delta = fid - self._last
        if 0 < delta <= 15:
            self.buf.append((delta << 4) | ctype)
        else:
            self._long_header(fid, ctype)
        self._last = fid

    def field_i8(self, fid: int, value: int) -> None:
        """Write an i8 field as one two's-complement byte."""
        if not _I8_MIN <= value <= _I8_MAX:
            raise out_of_range("i8", value)
        self._header(fid, CT_I8)
        self.buf.append(value & 0xFF)

    def field_i16(self, fid: int, value: int) -> None:
        """Write an i16 field as a zigzag varint."""
        if not _I16_MIN <= value <= _I16_MAX:
            raise out_of_range("i16", value)
        self._header(fid, CT_I16)
        put_varint(self.buf, (value << 1) ^ (value >> 15))

    def field_i32(self, fid: int, value: int) -> None:
        """Write an i32 (or enum) field as a zigzag varint."""
        if not _I32_MIN <= value <= _I32_MAX:
            raise out_of_range("i32", value)
        buf = self.buf
        delta = fid - self._last
        if 0 < delta <= 15:
            buf.append((delta << 4) | CT_I32)
        else:
            self._long_header(fid, CT_I32)
        self._last = fid
        n = (value << 1) ^ (value >> 31)
        if n < 0x80:
            buf.append(n)
        else:
            put_varint(buf, n)

    def field_i64(self, fid: int, value: int) -> None:
        """Write an i64 field as a zigzag varint."""
        if not _I64_MIN <= value <= _I64_MAX:
            raise out_of_range("i64", value)
        buf = self.buf
        delta = fid - self._last
        if 0 < delta <= 15:
            buf.append((delta << 4) | CT_I64)
        else:
            self._long_header(fid, CT_I64)
        self._last = fid
        n = (value << 1) ^ (value >> 63)
        if n < 0x80:
            buf.append(n)
        else:
            put_varint(buf, n)

    def field_double(self, fid: int, value: float) -> None:
        """Write a double field as 8 little-endian bytes."""
        self._header(fid, CT_DOUBLE)
        self.buf += _DOUBLE.pack(value)

    def field_binary(self, fid: int, value: Buffer) -> None:
        """Write a binary field: varint length, then the bytes."""
        self._header(fid, CT_BINARY)
        self._binary(value)

    def field_string(self, fid: int, value: str) -> None:
        """Write a string field as UTF-8 binary."""
        self.field_binary(fid, value.encode("utf-8"))

    def field_struct(self, fid: int, value: Writable) -> None:
        """Write a nested struct (or union) field; the value writes its own body and stop byte."""
        self._header(fid, CT_STRUCT)
        value.write(self)

    def field_list_bool(self, fid: int, values: Sequence[bool]) -> None:
        """Write a list<bool>: one byte per element, 1 for true and 2 for false (as Arrow and Java do)."""
        self._header(fid, CT_LIST)
        put_bool_list(self.buf, values)

    def field_list_i32(self, fid: int, values: Sequence[int]) -> None:
        """Write a list<i32> (or list of an enum) of zigzag varints."""
        self._header(fid, CT_LIST)
        put_i32_list(self.buf, values)

    def field_list_i64(self, fid: int, values: Sequence[int]) -> None:
        """Write a list<i64> of zigzag varints."""
        self._header(fid, CT_LIST)
        put_i64_list(self.buf, values)

    def field_list_binary(self, fid: int, values: Sequence[Buffer]) -> None:
        """Write a list<binary>."""
        self._header(fid, CT_LIST)
        put_binary_list(self.buf, values)

    def field_list_string(self, fid: int, values: Sequence[str]) -> None:
        """Write a list<string> as UTF-8 binaries."""
        self._header(fid, CT_LIST)
        put_string_list(self.buf, values)

    def field_list_struct(self, fid: int, values: Sequence[Writable]) -> None:
        """Write a list<struct>; each element writes its own body and stop byte."""
        self._header(fid, CT_LIST)
        put_list_header(self.buf, CT_STRUCT, len(values))
        for v in values:
            v.write(self)

    def _binary(self, value: Buffer) -> None:
        """Append a varint byte length and the bytes."""
        data = value.cast("B") if isinstance(value, memoryview) else value
        put_varint(self.buf, len(data))
        self.buf += data


# Element encoders: the body of a list field after its field header, shared by CompactWriter and the
# declarative struct writer (gpuwrite.format.declare). They append to a bytearray and check ranges.


def put_list_header(buf: bytearray, elem_type: int, size: int) -> None:
    """Append a list header: size and element type in one byte for 0..14 elements, else 0xF0|type, varint size."""
    if size < 15:
        buf.append((size << 4) | elem_type)
    else:
        if size > _I32_MAX:
            raise out_of_range("list size (i32)", size)
        buf.append(0xF0 | elem_type)
        put_varint(buf, size)


def put_bool_list(buf: bytearray, values: Sequence[bool]) -> None:
    """Append a list<bool>'s header and one byte per element (1 true, 2 false)."""
    put_list_header(buf, CT_TRUE, len(values))
    buf += bytes([CT_TRUE if v else CT_FALSE for v in values])


def put_i32_list(buf: bytearray, values: Sequence[int]) -> None:
    """Append a list<i32> (or list of an enum) of zigzag varints."""
    put_list_header(buf, CT_I32, len(values))
    append = buf.append
    for v in values:
        sign = v >> 31  # 0 or -1 exactly when v fits
        if sign and sign != -1:
            raise out_of_range("i32", v)
        n = (v << 1) ^ sign
        while n > 0x7F:
            append((n & 0x7F) | 0x80)
            n >>= 7
        append(n)


def put_i64_list(buf: bytearray, values: Sequence[int]) -> None:
    """Append a list<i64> of zigzag varints."""
    put_list_header(buf, CT_I64, len(values))
    append = buf.append
    for v in values:
        sign = v >> 63  # 0 or -1 exactly when v fits
        if sign and sign != -1:
            raise out_of_range("i64", v)
        n = (v << 1) ^ sign
        while n > 0x7F:
            append((n & 0x7F) | 0x80)
            n >>= 7
        append(n)


def put_binary_list(buf: bytearray, values: Sequence[Buffer]) -> None:
    """Append a list<binary>: per element a varint length and the bytes."""
    put_list_header(buf, CT_BINARY, len(values))
    append = buf.append
    for v in values:
        if type(v) is memoryview:
            v = v.cast("B")
        n = len(v)
        while n > 0x7F:
            append((n & 0x7F) | 0x80)
            n >>= 7
        append(n)
        buf += v


def put_string_list(buf: bytearray, values: Sequence[str]) -> None:
    """Append a list<string> as UTF-8 binaries."""
    put_list_header(buf, CT_BINARY, len(values))
    append = buf.append
    for v in values:
        data = v.encode("utf-8")
        n = len(data)
        while n > 0x7F:
            append((n & 0x7F) | 0x80)
            n >>= 7
        append(n)
        buf += data


def serialize(value: Writable) -> bytes:
    """Serialize one top-level struct to bytes (for footers and other one-off structs)."""
    w = CompactWriter()
    value.write(w)
    return w.getvalue()


def read_varint(buf: Buffer, pos: int) -> tuple[int, int]:
    """Read an unsigned LEB128 varint at ``pos``; return (value, position after it)."""
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ThriftDecodeError("varint longer than 10 bytes")


def _read_zigzag(buf: Buffer, pos: int) -> tuple[int, int]:
    """Read a zigzag varint as a signed int."""
    n, pos = read_varint(buf, pos)
    return (n >> 1) ^ -(n & 1), pos


def _read_binary(buf: Buffer, pos: int) -> tuple[bytes, int]:
    """Read a varint length and that many bytes."""
    n, pos = read_varint(buf, pos)
    end = pos + n
    if end > len(buf):
        raise ThriftDecodeError(f"binary of {n} bytes runs past the end of the buffer")
    return bytes(buf[pos:end]), end


def _read_list(buf: Buffer, pos: int) -> tuple[list[Any], int]:
    """Read a list or set header (short or long form) and its elements."""
    head = buf[pos]
    pos += 1
    size = head >> 4
    if size == 15:
        size, pos = read_varint(buf, pos)
    elem_type = head & 0x0F
    out = []
    for _ in range(size):
        value, pos = _read_value(buf, pos, elem_type)
        out.append(value)
    return out, pos


def _read_map(buf: Buffer, pos: int) -> tuple[dict[Any, Any], int]:
    """Read a map: varint size, then a key/value type byte and the pairs; container keys become reprs."""
    size, pos = read_varint(buf, pos)
    if size == 0:
        return {}, pos
    types = buf[pos]
    pos += 1
    out: dict[Any, Any] = {}
    for _ in range(size):
        key, pos = _read_value(buf, pos, types >> 4)
        value, pos = _read_value(buf, pos, types & 0x0F)
        out[key if not isinstance(key, (list, dict)) else repr(key)] = value
    return out, pos


def _read_value(buf: Buffer, pos: int, ctype: int) -> tuple[Any, int]:
    """Read one value of compact type ``ctype`` outside a field header (bools take a byte here)."""
    if ctype in (CT_I32, CT_I64, CT_I16):
        return _read_zigzag(buf, pos)
    if ctype == CT_BINARY:
        return _read_binary(buf, pos)
    if ctype == CT_STRUCT:
        return _read_struct(buf, pos)
    if ctype in (CT_LIST, CT_SET):
        return _read_list(buf, pos)
    if ctype in (CT_TRUE, CT_FALSE):
        return buf[pos] == CT_TRUE, pos + 1
    if ctype == CT_I8:
        b = buf[pos]
        return (b - 256 if b > 127 else b), pos + 1
    if ctype == CT_DOUBLE:
        return _DOUBLE.unpack_from(buf, pos)[0], pos + 8
    if ctype == CT_MAP:
        return _read_map(buf, pos)
    if ctype == CT_UUID:
        if pos + 16 > len(buf):
            raise ThriftDecodeError("uuid runs past the end of the buffer")
        return bytes(buf[pos : pos + 16]), pos + 16
    raise ThriftDecodeError(f"unknown compact type {ctype} at byte {pos}")


def _read_struct(buf: Buffer, pos: int) -> tuple[dict[int, Any], int]:
    """Read struct fields until the stop byte; bool fields take their value from the type nibble."""
    out: dict[int, Any] = {}
    last = 0
    while True:
        head = buf[pos]
        pos += 1
        if head == CT_STOP:
            return out, pos
        ctype = head & 0x0F
        delta = head >> 4
        if delta:
            fid = last + delta
        else:
            fid, pos = _read_zigzag(buf, pos)
        if ctype == CT_TRUE or ctype == CT_FALSE:
            out[fid] = ctype == CT_TRUE
        else:
            out[fid], pos = _read_value(buf, pos, ctype)
        last = fid


def read_struct(buf: Buffer, pos: int = 0) -> tuple[dict[int, Any], int]:
    """Decode the struct starting at ``pos`` into ``{field_id: value}``; return it and the end position."""
    try:
        return _read_struct(buf, pos)
    except (IndexError, struct.error) as exc:
        raise ThriftDecodeError(f"struct starting at byte {pos} is truncated") from exc
    except RecursionError as exc:
        raise ThriftDecodeError(f"struct starting at byte {pos} nests too deeply") from exc


def decode_struct(buf: Buffer) -> dict[int, Any]:
    """Decode a buffer that holds exactly one struct, rejecting trailing bytes."""
    out, end = read_struct(buf, 0)
    if end != len(buf):
        raise ThriftDecodeError(f"{len(buf) - end} trailing bytes after the struct")
    return out


def iter_structs(buf: Buffer, pos: int = 0) -> Iterable[tuple[dict[int, Any], int, int]]:
    """Yield (struct, start, end) for back-to-back structs until the buffer is used up."""
    while pos < len(buf):
        value, end = read_struct(buf, pos)
        yield value, pos, end
        pos = end
