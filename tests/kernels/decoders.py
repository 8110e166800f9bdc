"""Independent pure-Python decoders for Parquet's RLE/bit-packed hybrid and DELTA encodings, from the spec.

Written from parquet-format's Encodings.md only (not from gpuwrite's kernels), so the kernel tests can check
round trips against a second implementation. Every decoder returns the decoded values and the position just
past the bytes it consumed.
"""

from __future__ import annotations


def read_uleb128(buf: bytes, pos: int) -> tuple[int, int]:
    """Unsigned LEB128 varint at buf[pos:]; returns (value, new position)."""
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated ULEB128")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def read_zigzag(buf: bytes, pos: int) -> tuple[int, int]:
    """Zigzag-encoded ULEB128 varint at buf[pos:]; returns (signed value, new position)."""
    raw, pos = read_uleb128(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def unpack_bits(buf: bytes, pos: int, count: int, width: int) -> list[int]:
    """`count` unsigned integers of `width` bits packed LSB first starting at byte buf[pos]."""
    if width == 0:
        return [0] * count
    nbytes = (count * width + 7) // 8
    chunk = buf[pos:pos + nbytes]
    if len(chunk) < nbytes:
        raise ValueError("truncated bit-packed data")
    big = int.from_bytes(chunk, "little")
    mask = (1 << width) - 1
    return [(big >> (i * width)) & mask for i in range(count)]


def decode_rle_hybrid(buf: bytes, width: int, count: int, pos: int = 0) -> tuple[list[int], int]:
    """Decode `count` values of the RLE/bit-packed hybrid (no length prefix) at `width` bits."""
    out: list[int] = []
    value_bytes = (width + 7) // 8
    while len(out) < count:
        header, pos = read_uleb128(buf, pos)
        if header & 1:
            groups = header >> 1
            if groups == 0:
                raise ValueError("bit-packed run of zero groups")
            n = groups * 8
            out.extend(unpack_bits(buf, pos, n, width))
            pos += groups * width
        else:
            run = header >> 1
            if run == 0:
                raise ValueError("RLE run of length zero")
            raw = buf[pos:pos + value_bytes]
            if len(raw) < value_bytes:
                raise ValueError("truncated RLE value")
            value = int.from_bytes(raw, "little")
            if value >> width if width else value:
                raise ValueError(f"RLE value {value} does not fit in {width} bits")
            pos += value_bytes
            out.extend([value] * run)
    if len(out) - count >= 8:
        raise ValueError("a whole bit-packed group past the last value")
    return out[:count], pos


def _wrap(v: int, bits: int) -> int:
    """Two's-complement reinterpretation of v modulo 2**bits."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def decode_delta_binary_packed(buf: bytes, bits: int, pos: int = 0) -> tuple[list[int], int]:
    """Decode a DELTA_BINARY_PACKED stream of INT32 (bits=32) or INT64 (bits=64) values with wrapping adds."""
    block_size, pos = read_uleb128(buf, pos)
    miniblocks, pos = read_uleb128(buf, pos)
    total, pos = read_uleb128(buf, pos)
    first, pos = read_zigzag(buf, pos)
    if block_size == 0 or block_size % 128 or miniblocks == 0 or (block_size // miniblocks) % 32:
        raise ValueError(f"bad block layout {block_size}/{miniblocks}")
    if first != _wrap(first, bits):
        raise ValueError(f"first value {first} out of range for INT{bits}")
    per_mini = block_size // miniblocks
    if total == 0:
        return [], pos
    out = [first]
    prev = first
    while len(out) < total:
        min_delta, pos = read_zigzag(buf, pos)
        if min_delta != _wrap(min_delta, bits):
            raise ValueError(f"min delta {min_delta} out of range for INT{bits}")
        widths = list(buf[pos:pos + miniblocks])
        if len(widths) < miniblocks:
            raise ValueError("truncated miniblock widths")
        pos += miniblocks
        for width in widths:
            if len(out) >= total:
                break
            if width > bits:
                raise ValueError(f"miniblock width {width} > {bits}")
            deltas = unpack_bits(buf, pos, per_mini, width)
            pos += per_mini * width // 8
            for d in deltas[:total - len(out)]:
                prev = _wrap(prev + min_delta + d, bits)
                out.append(prev)
    return out, pos


def decode_delta_length_byte_array(buf: bytes, count: int, pos: int = 0) -> tuple[list[bytes], int]:
    """Decode DELTA_LENGTH_BYTE_ARRAY: INT32 delta-packed lengths, then the concatenated bytes."""
    lengths, pos = decode_delta_binary_packed(buf, 32, pos)
    if len(lengths) != count:
        raise ValueError(f"expected {count} lengths, found {len(lengths)}")
    out: list[bytes] = []
    for n in lengths:
        if n < 0 or pos + n > len(buf):
            raise ValueError(f"bad length {n}")
        out.append(bytes(buf[pos:pos + n]))
        pos += n
    return out, pos


def decode_delta_byte_array(buf: bytes, pos: int = 0) -> tuple[list[bytes], int]:
    """Decode DELTA_BYTE_ARRAY: delta-packed prefix lengths, then a DELTA_LENGTH_BYTE_ARRAY of suffixes."""
    prefixes, pos = decode_delta_binary_packed(buf, 32, pos)
    suffixes, pos = decode_delta_length_byte_array(buf, len(prefixes), pos)
    out: list[bytes] = []
    prev = b""
    for p, s in zip(prefixes, suffixes, strict=False):
        if p < 0 or p > len(prev):
            raise ValueError(f"prefix length {p} longer than the previous value ({len(prev)})")
        prev = prev[:p] + s
        out.append(prev)
    return out, pos
