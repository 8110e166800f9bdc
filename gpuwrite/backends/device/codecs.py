"""Compression of a batch's values sections: nvCOMP's batched codecs on a GPU, the host codec elsewhere.

Every page's values section is compressed in one call per batch; a page keeps its compressed bytes only when
they are smaller (parquet-java's rule, applied by the `stored` step). Output slots are as large as the input
sections: a page whose compressed bytes would not fit is one that keeps its raw bytes anyway, and its
compressed length is reported as its raw length.

nvCOMP is used with RAW bitstreams (plain snappy / zstd / LZ4 block / deflate streams, one per page), which
any Parquet reader decodes; its bytes differ from the host codec's, so with a codec the GPU path's pages
and row-group cuts can differ from the CPU path's (docs/compatibility.md). Under the simulator and on the
stand-in device the host codec runs, so those paths write the CPU path's bytes.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ...encode.compress import compressor
from ...errors import GpuwriteError
from .ops import Device

# Parquet codec -> nvCOMP algorithm (RAW bitstream). LZ4 RAW is the LZ4 block format, Parquet's LZ4_RAW.
NVCOMP_ALGORITHMS = {"snappy": "Snappy", "zstd": "Zstd", "lz4_raw": "LZ4", "gzip": "Gzip"}


def slots(lengths: np.ndarray, always: bool) -> np.ndarray:
    """Output slot sizes: the input's length (a larger result is not kept), or room for any result."""
    return lengths + lengths // 2 + 1024 if always else lengths


class PageCodec(Protocol):
    """Compresses the values sections (or dictionary pages) of a batch."""

    name: str

    def compress(self, device: Device, src: Any, runs: tuple[np.ndarray, np.ndarray],
                 always: bool = False) -> tuple[Any, np.ndarray, Any]:
        """(buffer, slot offsets on the host, compressed lengths on the device) for the runs (offsets, lengths)
        of `src`. Without `always`, slots are the runs' own places and a page whose compressed bytes are not
        smaller reports its raw length (its bytes are not written); with it, every result is kept."""


class HostCodec:
    """The CPU backend's codec (cramjam), page by page, as one device step."""

    name = "host"

    def __init__(self, codec: str, level: int | None) -> None:
        self.compress_one = compressor(codec, level)

    def compress(self, device: Device, src: Any, runs: tuple[np.ndarray, np.ndarray],
                 always: bool = False) -> tuple[Any, np.ndarray, Any]:
        """Compress each run into its slot."""
        offsets, lengths = runs
        out_off = offsets if not always else _starts(slots(lengths, always))
        total = int(out_off[-1] + slots(lengths, always)[-1]) if len(offsets) else 0
        out = device.empty(total + 8, np.uint8)
        comp_len = device.empty(len(offsets), np.int64)

        def run() -> None:
            view, dst, sizes = np.asarray(src), np.asarray(out), np.asarray(comp_len)
            for p in range(len(offsets)):
                a, n, o = int(offsets[p]), int(lengths[p]), int(out_off[p])
                packed = self.compress_one(view[a:a + n].tobytes()) if n else b""
                if always or 0 < len(packed) < n:
                    dst[o:o + len(packed)] = np.frombuffer(packed, dtype=np.uint8)
                    sizes[p] = len(packed)
                else:
                    sizes[p] = n
        device.host_step("compress", run)
        return out, out_off, comp_len


class NvcompCodec:
    """nvCOMP (`nvidia.nvcomp`, RAW bitstream), all pages of a batch in one encode call. nvCOMP's Python API
    allocates each page's output; they are copied into one buffer (a copy per page)."""

    name = "nvcomp"

    def __init__(self, codec: str) -> None:
        try:
            from nvidia import nvcomp
        except ImportError as exc:  # pragma: no cover - needs the gpu extra
            raise GpuwriteError(f"compression {codec!r} on the GPU needs nvCOMP (pip install 'gpuwrite[gpu]'): "
                                f"{exc}") from exc
        self.nvcomp = nvcomp
        self.codec = nvcomp.Codec(algorithm=NVCOMP_ALGORITHMS[codec], bitstream_kind=nvcomp.BitstreamKind.RAW)

    def compress(self, device: Device, src: Any, runs: tuple[np.ndarray, np.ndarray],
                 always: bool = False) -> tuple[Any, np.ndarray, Any]:
        """One batched nvCOMP encode over every non-empty run."""
        xp = device.xp
        offsets, lengths = runs
        out_off = offsets if not always else _starts(slots(lengths, always))
        total = int(out_off[-1] + slots(lengths, always)[-1]) if len(offsets) else 0
        out = device.empty(total + 8, np.uint8)
        comp = np.array(lengths, dtype=np.int64)
        todo = [p for p in range(len(offsets)) if lengths[p] > 0]
        try:
            encoded = device.host_step("nvcomp", self.codec.encode, [
                self.nvcomp.as_array(src[int(offsets[p]):int(offsets[p] + lengths[p])]) for p in todo])
        except Exception as exc:  # pragma: no cover - needs a GPU
            raise GpuwriteError(f"nvCOMP failed to compress a batch of {len(todo)} pages: {exc}") from exc
        for p, arr in zip(todo, encoded, strict=True):  # pragma: no cover - needs a GPU
            packed = xp.asarray(arr).view(xp.uint8)
            if always or len(packed) < lengths[p]:
                out[int(out_off[p]):int(out_off[p]) + len(packed)] = packed
                comp[p] = len(packed)
        return out, out_off, device.upload(comp)


def _starts(sizes: np.ndarray) -> np.ndarray:
    """Offsets of items of `sizes` laid back to back."""
    out = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=out[1:])
    return out


def page_codec(codec: str, level: int | None, device: Device) -> PageCodec | None:
    """The batch codec for `codec` on `device`; None for uncompressed. On a GPU, nvCOMP (a compression level,
    which nvCOMP does not take, is an error naming it); elsewhere the host codec."""
    if codec == "uncompressed":
        return None
    if device.mode != "cuda":
        return HostCodec(codec, level)
    if level is not None:
        raise GpuwriteError(f"compression_level={level} cannot be applied on the GPU: nvCOMP's {codec} takes no "
                            "level; drop the level or write with device='cpu'")
    return NvcompCodec(codec)
