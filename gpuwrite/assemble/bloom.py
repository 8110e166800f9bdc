"""Bloom filter blocks as written after the offset indexes: header, then the chunk's bitset."""

from __future__ import annotations

from ..format.structs import BloomFilterHeader
from ..format.thrift import serialize


def bloom_filter_block(bitset: bytes) -> bytes:
    """BloomFilterHeader (BLOCK, XXHASH, UNCOMPRESSED) followed by the bitset."""
    return serialize(BloomFilterHeader(numBytes=len(bitset))) + bitset
