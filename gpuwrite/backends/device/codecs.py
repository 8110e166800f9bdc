"""Compression of a batch's values sections: nvCOMP's batched codecs on a GPU, the host codec elsewhere.

Every page's values section is compressed in one call per batch; a page keeps its compressed bytes only when
they are smaller (parquet-java's rule, applied by the `stored` step). The sections start on `ALIGN` bytes
(the encoder lays them out so), as nvCOMP requires of its inputs; outputs go to one preallocated buffer whose
slots are nvCOMP's bound for each page's size, also aligned. The compressed sizes come back to the host once
per batch (a counted sync: nvCOMP's batch API reports them there) and go back up for the `stored` step; the
host codec of the stand-in device and the simulator mirrors that read, so the cost model counts it.

nvCOMP is used with RAW bitstreams (plain snappy / zstd / LZ4 block / deflate streams, one per page), which
any Parquet reader decodes; its bytes differ from the host codec's, so with a codec the GPU path's pages
and row-group cuts can differ from the CPU path's (docs/compatibility.md). Under the simulator and on the
stand-in device the host codec runs, so those paths write the CPU path's bytes. A failure inside nvCOMP is
an error naming nvCOMP; there is no silent host fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ...encode.compress import compressor
from ...errors import GpuwriteError
from .cost import LaunchRecord, codec_scratch_bytes
from .ops import Device

# Parquet codec -> nvCOMP algorithm (RAW bitstream). LZ4 RAW is the LZ4 block format, Parquet's LZ4_RAW.
NVCOMP_ALGORITHMS = {"snappy": "Snappy", "zstd": "Zstd", "lz4_raw": "LZ4", "gzip": "Gzip"}
ALIGN = 16  # start of every codec input and output slot: nvCOMP's most restrictive alignment


def aligned(sizes: np.ndarray) -> np.ndarray:
    """`sizes` rounded up to a multiple of `ALIGN` (slot sizes that keep the next slot aligned)."""
    return (sizes + (ALIGN - 1)) // ALIGN * ALIGN


CODEC_THREADS = 128  # nvCOMP's Snappy kernel: one page a block of 4 warps, the first finding matches
CODEC_LANES = 32  # input bytes its matching warp takes a step


def codec_work(codec: str, lengths: np.ndarray, out_bytes: int) -> LaunchRecord:
    """One batched encode as the cost model sees it (cost.py): a block per non-empty page, a page's bytes walked
    CODEC_LANES a step, the pages read and `out_bytes` written, and nvCOMP's scratch for the batch."""
    todo = lengths[lengths > 0]
    longest = int(todo.max()) if len(todo) else 0
    return LaunchRecord("compress", max(1, len(todo)), CODEC_THREADS, max(1, -(-longest // CODEC_LANES)),
                        int(todo.sum()), int(out_bytes), codec_scratch_bytes(codec, len(todo), longest))


def starts(sizes: np.ndarray) -> np.ndarray:
    """Offsets of items of `sizes` laid back to back."""
    out = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=out[1:])
    return out


class PageCodec(Protocol):
    """Compresses the values sections (or dictionary pages) of a batch."""

    name: str

    def compress(self, device: Device, src: Any, runs: tuple[np.ndarray, np.ndarray],
                 always: bool | np.ndarray = False, host_sizes: list[np.ndarray] | None = None
                 ) -> tuple[Any, np.ndarray, Any]:
        """(buffer, slot offsets on the host, compressed lengths on the device) for the runs (offsets, lengths)
        of `src`, each run starting on `ALIGN` bytes. Every slot holds at least its run's raw length, so a
        page that keeps its raw bytes can be copied into its slot. Without `always` (for all runs, or per run),
        a page whose compressed bytes are not smaller reports its raw length (its compressed bytes are not
        used); with it, every result is kept. `host_sizes`: the lengths as read on the host are appended to it
        (what follows is laid out without reading them back)."""


class HostCodec:
    """The CPU backend's codec (cramjam), page by page, as one device step; its sizes are read back and sent
    up again as nvCOMP's are (one counted sync and one copy per call)."""

    name = "host"

    def __init__(self, codec: str, level: int | None) -> None:
        self.compress_one = compressor(codec, level)
        self.codec_name = codec

    def compress(self, device: Device, src: Any, runs: tuple[np.ndarray, np.ndarray],
                 always: bool | np.ndarray = False, host_sizes: list[np.ndarray] | None = None
                 ) -> tuple[Any, np.ndarray, Any]:
        """Compress each run into a slot of its raw length (with `always`, of the codec's worst case)."""
        offsets, lengths = runs
        keep = np.broadcast_to(np.asarray(always, dtype=bool), np.shape(lengths))
        if keep.any():
            slot = np.where(keep, lengths + lengths // 2 + 1024, lengths)
            out_off = starts(aligned(slot))
            total = int(out_off[-1] + slot[-1]) if len(offsets) else 0
        else:
            out_off = offsets
            total = int(offsets[-1] + lengths[-1]) if len(offsets) else 0
        out = device.empty(total + 8, np.uint8)
        sizes = np.array(lengths, dtype=np.int64)
        every = keep.tolist()

        def run() -> None:
            view, dst = np.asarray(src), np.asarray(out)
            for p in range(len(offsets)):
                a, n, o = int(offsets[p]), int(lengths[p]), int(out_off[p])
                packed = self.compress_one(view[a:a + n].tobytes()) if n else b""
                if every[p] or 0 < len(packed) < n:
                    dst[o:o + len(packed)] = np.frombuffer(packed, dtype=np.uint8)
                    sizes[p] = len(packed)
        device.host_step("compress", run, work=codec_work(self.codec_name, np.asarray(lengths), total))
        device.wait("compressed sizes")
        if host_sizes is not None:
            host_sizes.append(sizes)
        return out, out_off, device.upload(sizes)


class NvcompCodec:
    """nvCOMP (`nvidia.nvcomp`, RAW bitstream): all non-empty runs of a batch in one batched encode, from
    aligned input slots into one preallocated output buffer."""

    name = "nvcomp"

    def __init__(self, codec: str, nvcomp: Any = None, stream: int = 0) -> None:
        """`stream`: the writer's CUDA stream (`Device.stream_ptr`); nvCOMP queues its work there, after the
        encoders that wrote the pages (left to itself, nvCOMP would create a stream of its own, which does not
        wait for them)."""
        if nvcomp is None:
            try:
                from nvidia import nvcomp as module
            except ImportError as exc:  # pragma: no cover - needs the gpu extra
                from .cuda_packages import install_hint

                raise GpuwriteError(f"compression {codec!r} on the GPU needs nvCOMP ({install_hint()}): "
                                    f"{exc}") from exc
            nvcomp = module
        self.nvcomp, self.codec_name = nvcomp, codec
        try:
            self.codec = nvcomp.Codec(algorithm=NVCOMP_ALGORITHMS[codec], bitstream_kind=nvcomp.BitstreamKind.RAW,
                                      cuda_stream=int(stream))
            align = int(self.codec.get_required_compression_alignment())
            self.bound = self._bound_fit()
        except Exception as exc:
            raise GpuwriteError(f"nvCOMP could not set up its {codec} codec: {exc}") from exc
        if ALIGN % align:
            raise GpuwriteError(f"nvCOMP's {codec} codec needs {align}-byte aligned buffers; gpuwrite aligns to "
                                f"{ALIGN}")

    def _bound_fit(self) -> Callable[[np.ndarray], np.ndarray]:
        """Output capacity per input size: nvCOMP's bound is affine in the size (a constant plus a fraction);
        it is read at three sizes, fitted through the extremes with rounding slack and checked in between."""
        sizes = (1, 1 << 16, 1 << 24)
        bounds = [int(self.codec.get_max_comp_buffer_size(self.nvcomp.as_array(np.zeros(n, np.uint8))))
                  for n in sizes]
        slope = (bounds[2] - bounds[0]) / (sizes[2] - sizes[0])

        def fit(n: np.ndarray) -> np.ndarray:
            return np.asarray(bounds[0] + np.ceil((n - 1) * slope), dtype=np.int64) + ALIGN

        if int(fit(np.array([sizes[1]]))[0]) < bounds[1]:
            raise GpuwriteError(f"nvCOMP's {self.codec_name} output bound is not affine in the input size")
        return fit

    def compress(self, device: Device, src: Any, runs: tuple[np.ndarray, np.ndarray],
                 always: bool | np.ndarray = False, host_sizes: list[np.ndarray] | None = None
                 ) -> tuple[Any, np.ndarray, Any]:
        """One batched nvCOMP encode over every non-empty run; sizes read back once."""
        offsets, lengths = runs
        todo = np.flatnonzero(lengths > 0)
        cap = np.zeros(len(lengths), dtype=np.int64)
        cap[todo] = aligned(np.maximum(self.bound(lengths[todo]), lengths[todo]))
        out_off = starts(cap)
        out = device.empty(int(cap.sum()) + 8, np.uint8)
        sizes = np.array(lengths, dtype=np.int64)
        if len(todo):
            nv = self.nvcomp
            try:
                srcs = nv.as_arrays(src, offsets[todo].tolist(), lengths[todo].tolist())
                outs = nv.as_arrays(out, out_off[todo].tolist(), cap[todo].tolist())
                done = device.host_step("nvcomp", self.codec.encode, srcs, outs,
                                        work=codec_work(self.codec_name, lengths, int(cap.sum())))
                got = np.asarray(device.wait("compressed sizes", lambda: done.buffer_sizes), dtype=np.int64)
            except Exception as exc:
                raise GpuwriteError(f"nvCOMP failed to compress a batch of {len(todo)} pages with "
                                    f"{self.codec_name}: {exc}") from exc
            keep = (got < lengths[todo]) | np.broadcast_to(np.asarray(always, dtype=bool), np.shape(lengths))[todo]
            sizes[todo[keep]] = got[keep]
        if host_sizes is not None:
            host_sizes.append(sizes)
        return out, out_off, device.upload(sizes)


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
    return NvcompCodec(codec, stream=device.stream_ptr())


__all__ = ["ALIGN", "HostCodec", "NvcompCodec", "PageCodec", "aligned", "page_codec", "starts"]
