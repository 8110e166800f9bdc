"""Page compression for the GPU backend: nvCOMP's batched codecs on a GPU, the host codec otherwise.

nvCOMP is used with RAW bitstreams (plain snappy / zstd / LZ4 block / gzip streams, one per page), which any
Parquet reader decodes. Under the simulator, or for a codec nvCOMP lacks, pages go through the same host
codec the CPU backend uses, so the simulated GPU path writes the CPU path's bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...encode.compress import compressor
from .arrays import DeviceArrays

# Parquet codec -> nvCOMP algorithm (RAW bitstream). LZ4 RAW is the LZ4 block format, Parquet's LZ4_RAW.
NVCOMP_ALGORITHMS = {"snappy": "Snappy", "zstd": "Zstd", "lz4_raw": "LZ4", "gzip": "Gzip"}


class HostCodec:
    """Compresses each page on the host with the CPU backend's codec."""

    name = "host"

    def __init__(self, codec: str, level: int | None, arrays: DeviceArrays) -> None:
        self.compress_one = compressor(codec, level)
        self.arrays = arrays

    def compress(self, pages: list[Any]) -> list[Any]:
        """Compressed device buffers for the given device buffers (one per page)."""
        out = []
        for page in pages:
            raw = self.arrays.to_host(page).tobytes()
            out.append(self.arrays.to_device(np.frombuffer(self.compress_one(raw), dtype=np.uint8)))
        return out


class NvcompCodec:
    """Compresses all pages of a batch in one nvCOMP call (`nvidia.nvcomp`, RAW bitstream)."""

    name = "nvcomp"

    def __init__(self, codec: str, arrays: DeviceArrays) -> None:
        from nvidia import nvcomp

        self.nvcomp = nvcomp
        self.arrays = arrays
        self.codec = nvcomp.Codec(algorithm=NVCOMP_ALGORITHMS[codec], bitstream_kind=nvcomp.BitstreamKind.RAW)

    def compress(self, pages: list[Any]) -> list[Any]:
        """Compressed device buffers for the given device buffers, as one batch."""
        if not pages:
            return []
        encoded = self.codec.encode([self.nvcomp.as_array(p) for p in pages])
        return [self.arrays.xp.asarray(e).view(self.arrays.xp.uint8) for e in encoded]


def page_codec(codec: str, level: int | None, arrays: DeviceArrays) -> HostCodec | NvcompCodec:
    """nvCOMP for the codec when on a real GPU and nvCOMP can do it, else the host codec."""
    if not arrays.simulator and codec in NVCOMP_ALGORITHMS and level is None:
        try:
            return NvcompCodec(codec, arrays)
        except Exception:  # nvCOMP missing, too old for this algorithm (Gzip needs 5.3), or no device
            pass
    return HostCodec(codec, level, arrays)
