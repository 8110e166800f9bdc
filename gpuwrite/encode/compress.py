"""Page compression through cramjam: raw snappy, zstd, gzip and raw LZ4 blocks, as parquet-java frames them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import cramjam
import numpy as np

from ..format.enums import CompressionCodec
from ..options.model import DEFAULT_ZSTD_LEVEL

if TYPE_CHECKING:
    from ..pipeline.buffers import Arena

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


PackAfter = Callable[[bytes | memoryview, bytes], "tuple[memoryview, bool]"]


def packer_after(codec: str, arena: Arena | None = None) -> PackAfter | None:
    """For codecs cramjam compresses into a caller's buffer (snappy, lz4_raw): a function giving `head` then the
    values in one buffer, and whether they are compressed there: compressed (the same bytes as
    `compressor(codec)` gives) when that makes them smaller, else as they are (parquet-java then stores the raw
    bytes). A page's sections are so joined without copying its compressed values again. The buffers come from
    `arena` when given (`buffers.Arena`: kept memory), else from malloc. None for the other codecs."""
    if codec == "snappy":
        return lambda values, head: _pack_after(values, head, cramjam.snappy.compress_raw_max_len(values),
                                                cramjam.snappy.compress_raw_into, arena)
    if codec == "lz4_raw":
        return lambda values, head: _pack_after(values, head, cramjam.lz4.compress_block_bound(values),
                                                lambda v, out: cramjam.lz4.compress_block_into(v, out, store_size=False),
                                                arena)
    return None


def _pack_after(values: bytes | memoryview, head: bytes, bound: int,
                into: Callable[[bytes | memoryview, memoryview], int], arena: Arena | None
                ) -> tuple[memoryview, bool]:
    """`head` + compressed `values` in one buffer sized by the codec's bound (at least the values' size), or
    `head` + `values` when compressing does not make them smaller; cut back to what it holds (the arena's next
    buffer starts there; from malloc, shrunk in place by realloc: no copy, and a page keeps no spare bytes)."""
    h = len(head)
    out = np.empty(h + bound, dtype=np.uint8) if arena is None else arena.take(h + bound)
    view = out.data
    view[:h] = head
    n = into(values, view[h:])
    compressed = n < len(values)
    if not compressed:
        n = len(values)
        view[h:h + n] = values
    del view  # (cramjam's view of `out` ended with its call)
    if arena is not None:
        return arena.keep(out, h + n).data, compressed
    out.resize(h + n, refcheck=False)
    return out.data, compressed
