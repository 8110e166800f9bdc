"""parquet-java's per-page encoding rules that every backend applies: fallback encodings, buffered value
sizes (`kernels/encode/fallback.py`, the device's own), NaN's canonical bits and the page CRC."""

from __future__ import annotations

import zlib

import numpy as np

try:  # ISA-L's CRC-32 (folding with carry-less multiplies): ~5x zlib's, the same checksum
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # a platform without its wheel: zlib's
    _crc32 = zlib.crc32

from gpuwrite.kernels.encode.fallback import raw_size
from gpuwrite.kernels.encode.plain import all_canonical, canonical_float_bits32, canonical_float_bits64
from gpuwrite.kernels.plan.layout import KIND_CODES

from ..format.enums import Encoding
from ..pipeline.leafdata import Array, LeafData
from ..schema import Kind, Leaf

# Values encoding when the dictionary is off or abandoned (DefaultV2ValuesWriterFactory), BOOLEAN PLAIN by choice.
FALLBACK: dict[Kind, Encoding] = {
    "bool": Encoding.PLAIN, "int32": Encoding.DELTA_BINARY_PACKED, "int64": Encoding.DELTA_BINARY_PACKED,
    "float": Encoding.PLAIN, "double": Encoding.PLAIN, "int96": Encoding.PLAIN,
    "bytes": Encoding.DELTA_BYTE_ARRAY, "flba": Encoding.DELTA_BYTE_ARRAY}


def fallback_encoding(kind: Kind, mode: str) -> Encoding:
    """The values encoding of a `kind` page without the dictionary under WriteOptions.fallback_encoding `mode`:
    FALLBACK for "delta"; PLAIN for every kind for "plain" (SPEC: DefaultV1ValuesWriterFactory's fallback)."""
    return Encoding.PLAIN if mode == "plain" else FALLBACK[kind]


def fallback_codes(mode: str) -> np.ndarray:
    """`fallback_encoding` of every kind under `mode`, indexed by its device kind code (kernels/plan/layout.py
    KIND_CODES): the device backend's lookup table, derived from FALLBACK rather than written again."""
    codes = np.empty(len(KIND_CODES), dtype=np.int64)
    for kind in FALLBACK:
        codes[KIND_CODES[kind]] = fallback_encoding(kind, mode)
    return codes


def raw_value_bytes(leaf: Leaf, data: LeafData, va: int, vb: int) -> int:
    """parquet-java's buffered value size for a page: PLAIN-equivalent bytes (booleans: packed bits), as
    `kernels/fallback.raw_size` counts them for the device."""
    nbytes = 0
    if not leaf.fixed_width:
        offsets = data.byte_offsets
        nbytes = int(offsets[vb] - offsets[va])
    return int(raw_size(KIND_CODES[leaf.kind], int(vb - va), nbytes))


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
