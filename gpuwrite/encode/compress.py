"""Page compression through cramjam: raw snappy, zstd, gzip and raw LZ4 blocks, as parquet-java frames them."""

from __future__ import annotations

from collections.abc import Callable

import cramjam
import numpy as np

from ..format.enums import CompressionCodec
from ..options.model import DEFAULT_ZSTD_LEVEL

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


PackAfter = Callable[[bytes | memoryview, bytes], "memoryview | None"]


def packer_after(codec: str) -> PackAfter | None:
    """For codecs cramjam compresses into a caller's buffer (snappy, lz4_raw): a function giving `head` then
    the compressed values in one buffer, or None when compression does not make the values smaller. A page with
    level sections is then joined without copying its compressed values again (their bytes are the same as
    `compressor(codec)` gives). None for the other codecs."""
    if codec == "snappy":
        return lambda values, head: _pack_after(values, head, cramjam.snappy.compress_raw_max_len(values),
                                                cramjam.snappy.compress_raw_into)
    if codec == "lz4_raw":
        return lambda values, head: _pack_after(values, head, cramjam.lz4.compress_block_bound(values),
                                                lambda v, out: cramjam.lz4.compress_block_into(v, out, store_size=False))
    return None


def _pack_after(values: bytes | memoryview, head: bytes, bound: int,
                into: Callable[[bytes | memoryview, memoryview], int]) -> memoryview | None:
    """`head` + compressed `values` in one buffer sized by the codec's bound, shrunk in place to what was written
    (realloc: no copy, and a page keeps no spare bytes); None when the compressed values are not smaller."""
    h = len(head)
    out = np.empty(h + bound, dtype=np.uint8)
    view = out.data
    view[:h] = head
    n = into(values, view[h:])
    if n >= len(values):
        return None
    out.resize(h + n, refcheck=False)  # no view of `out` is left (cramjam's ended with the call)
    return out.data
