"""parquet-java's BinaryTruncator: shorten min/max byte strings so they still bound the values.

Used for `parquet.statistics.truncate.length` (and the column index's truncate length). Applies to BINARY
and FIXED_LEN_BYTE_ARRAY without annotation or with STRING/ENUM/JSON/BSON; a no-op for decimals and INT96.
"""

from __future__ import annotations

_MAX_CODE_POINT = 0x10FFFF


def _utf8(value: bytes) -> str | None:
    """The text if value is valid UTF-8, else None."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _utf8_prefix(text: str, length: int) -> str:
    """Longest prefix of whole characters whose UTF-8 form has at most `length` bytes."""
    out = []
    used = 0
    for ch in text:
        n = len(ch.encode("utf-8"))
        if used + n > length:
            break
        out.append(ch)
        used += n
    return "".join(out)


def truncate_min(value: bytes, length: int) -> bytes:
    """A prefix of at most `length` bytes (cut at a character boundary for valid UTF-8): still <= value."""
    if len(value) <= length:
        return value
    text = _utf8(value)
    if text is None:
        return value[:length]
    return _utf8_prefix(text, length).encode("utf-8")


def _increment_utf8(text: str) -> bytes | None:
    """Smallest-effort successor: bump the last character that can be bumped, dropping those that cannot."""
    chars = list(text)
    while chars:
        cp = ord(chars[-1]) + 1
        if 0xD800 <= cp <= 0xDFFF:
            cp = 0xE000
        if cp <= _MAX_CODE_POINT:
            chars[-1] = chr(cp)
            return "".join(chars).encode("utf-8")
        chars.pop()
    return None


def _increment_bytes(prefix: bytes) -> bytes | None:
    """+1 on the last byte with carry (0xFF bytes are dropped); None when every byte is 0xFF."""
    buf = bytearray(prefix)
    while buf:
        if buf[-1] != 0xFF:
            buf[-1] += 1
            return bytes(buf)
        buf.pop()
    return None


def truncate_max(value: bytes, length: int) -> bytes:
    """A value of at most `length` bytes that is still >= value; the value itself when none exists."""
    if len(value) <= length:
        return value
    text = _utf8(value)
    bumped = _increment_bytes(value[:length]) if text is None else _increment_utf8(_utf8_prefix(text, length))
    if bumped is None or len(bumped) > length:
        return value
    return bumped
