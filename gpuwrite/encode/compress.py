"""Page compression through cramjam: raw snappy, zstd, gzip and raw LZ4 blocks, as parquet-java frames them."""

from __future__ import annotations

from collections.abc import Callable

import cramjam

from ..format.enums import CompressionCodec
from ..options import DEFAULT_ZSTD_LEVEL

CODEC_IDS = {
    "uncompressed": CompressionCodec.UNCOMPRESSED,
    "snappy": CompressionCodec.SNAPPY,
    "gzip": CompressionCodec.GZIP,
    "zstd": CompressionCodec.ZSTD,
    "lz4_raw": CompressionCodec.LZ4_RAW,
}
# Spark's file-name extension per codec (CompressionCodecName.getExtension).
EXTENSIONS = {"uncompressed": "", "snappy": ".snappy", "gzip": ".gz", "zstd": ".zstd", "lz4_raw": ".lz4raw"}


def compressor(codec: str, level: int | None = None) -> Callable[[bytes | memoryview], bytes | memoryview]:
    """A function compressing one page body with `codec` (identity for uncompressed). The result is a view of
    cramjam's output buffer, not a copy of it (pages can be large)."""
    if codec == "uncompressed":
        return bytes
    if codec == "snappy":
        return lambda b: memoryview(cramjam.snappy.compress_raw(b))
    if codec == "zstd":
        lvl = DEFAULT_ZSTD_LEVEL if level is None else level
        return lambda b: memoryview(cramjam.zstd.compress(b, level=lvl))
    if codec == "gzip":
        lvl = 6 if level is None else level
        return lambda b: memoryview(cramjam.gzip.compress(b, level=lvl))
    if codec == "lz4_raw":
        return lambda b: memoryview(cramjam.lz4.compress_block(b, store_size=False))
    raise ValueError(f"unknown codec {codec!r}")
