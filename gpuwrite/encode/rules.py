"""parquet-java's per-page encoding rules that every backend applies: fallback encodings, buffered value
sizes, the first-page dictionary test, NaN's canonical bits and the page CRC."""

from __future__ import annotations

import zlib

import numpy as np

try:  # ISA-L's CRC-32 (folding with carry-less multiplies): ~5x zlib's, the same checksum
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # a platform without its wheel: zlib's
    _crc32 = zlib.crc32

from gpuwrite.kernels.encode.plain import all_canonical, canonical_float_bits32, canonical_float_bits64

from ..format.enums import Encoding
from ..pipeline.leafdata import Array, LeafData
from ..schema import Kind, Leaf

# SPEC: FallbackValuesWriter raw size: PLAIN-equivalent bytes per value (length + 4 for byte arrays,
# FIXED_LEN_BYTE_ARRAY and INT96 included).
_RAW_WIDTH = {"int32": 4, "float": 4, "int64": 8, "double": 8}
# Values encoding when the dictionary is off or abandoned (DefaultV2ValuesWriterFactory), BOOLEAN PLAIN by choice.
FALLBACK: dict[Kind, Encoding] = {
    "bool": Encoding.PLAIN, "int32": Encoding.DELTA_BINARY_PACKED, "int64": Encoding.DELTA_BINARY_PACKED,
    "float": Encoding.PLAIN, "double": Encoding.PLAIN, "int96": Encoding.PLAIN,
    "bytes": Encoding.DELTA_BYTE_ARRAY, "flba": Encoding.DELTA_BYTE_ARRAY}


def fallback_encoding(kind: Kind, mode: str) -> Encoding:
    """The values encoding of a `kind` page without the dictionary under WriteOptions.fallback_encoding `mode`:
    FALLBACK for "delta"; PLAIN for every kind for "plain" (SPEC: DefaultV1ValuesWriterFactory's fallback)."""
    return Encoding.PLAIN if mode == "plain" else FALLBACK[kind]


def raw_value_bytes(leaf: Leaf, data: LeafData, va: int, vb: int) -> int:
    """parquet-java's buffered value size for a page: PLAIN-equivalent bytes (booleans: packed bits)."""
    if leaf.kind == "bool":
        return (vb - va) // 8
    if leaf.kind in _RAW_WIDTH:
        return _RAW_WIDTH[leaf.kind] * (vb - va)
    offsets = data.byte_offsets
    return int(offsets[vb] - offsets[va]) + 4 * (vb - va)


def keeps_dictionary(encoded: int, dictionary: int, raw: int) -> bool:
    """SPEC: DictionaryValuesWriter.isCompressionSatisfying, judged on the chunk's first page only: the
    dictionary stays iff its encoded ids plus the dictionary's bytes are smaller than the raw values."""
    return encoded + dictionary < raw


def canonical_bits(kind: Kind, values: Array) -> Array:
    """Float / double values as IEEE bits with every NaN in Java's canonical form (floatToIntBits /
    doubleToLongBits); the PLAIN bytes, dictionary keys and statistics of both backends use these. Values
    holding no other NaN come back as a view of `values` (read-only use: no copy is made)."""
    if kind == "float":
        bits = values.view(np.int32)
        return bits if all_canonical(bits, False) else canonical_float_bits32(bits)
    bits = values.view(np.int64)
    return bits if all_canonical(bits, True) else canonical_float_bits64(bits)


def signed_crc32(body: bytes | memoryview) -> int:
    """The page CRC as Thrift's i32 holds it (the CRC-32 of zlib and gzip, two's complement)."""
    return as_signed32(_crc32(body))


def as_signed32(crc: int) -> int:
    """An unsigned 32-bit CRC as a signed i32."""
    return crc - (1 << 32) if crc >= 1 << 31 else crc
