"""The GPU backend's page codecs on the stand-in device: nvCOMP's batched API (a stand-in module with its
Python interface, compressing with the host codec) gets aligned inputs, preallocated aligned outputs that are
large enough, one encode per batch and one counted size read, and writes the CPU path's bytes; its failures are
errors naming nvCOMP with nothing left behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cramjam
import numpy as np
import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.backends.device import builder as device_builder
from gpuwrite.backends.device.codecs import ALIGN, HostCodec, NvcompCodec, page_codec
from gpuwrite.backends.device.ops import Device, standin
from gpuwrite.errors import GpuwriteError
from gpuwrite.tools.demo_data import store_sales_table


class _Batch:
    """nvcomp.BatchArray's part gpuwrite uses: entries carved from one buffer by offsets and sizes."""

    def __init__(self, buffer: Any, offsets: list[int], sizes: list[int]) -> None:
        self.buffer, self.offsets, self.sizes = np.asarray(buffer), offsets, sizes

    @property
    def buffer_sizes(self) -> list[int]:
        return list(self.sizes)


class FakeNvcomp:
    """The `nvidia.nvcomp` calls gpuwrite makes, with nvCOMP's documented contracts: inputs and outputs
    aligned to the codec's alignment, a ValueError when an output entry is too small."""

    class BitstreamKind:
        RAW = "raw"

    def __init__(self, alignment: int = 8, fail: bool = False, bound: Any = None) -> None:
        self.alignment, self.fail = alignment, fail
        self.bound = bound or (lambda n: 32 + n + n // 6)  # nvCOMP's snappy bound
        self.encodes: list[tuple[_Batch, _Batch]] = []
        self.streams: list[int] = []  # the cuda_stream each Codec was created on
        fake = self

        class Codec:
            def __init__(self, algorithm: str, bitstream_kind: str, cuda_stream: int) -> None:
                assert algorithm == "Snappy" and bitstream_kind == "raw"
                fake.streams.append(cuda_stream)

            def get_required_compression_alignment(self) -> int:
                return fake.alignment

            def get_max_comp_buffer_size(self, source: Any) -> int:
                return int(fake.bound(len(source)))

            def encode(self, srcs: _Batch, out: _Batch) -> _Batch:
                if fake.fail:
                    raise RuntimeError("nvcompStatus_t 10: cannot launch")
                fake.encodes.append((srcs, out))
                sizes = []
                for a, n, o, cap in zip(srcs.offsets, srcs.sizes, out.offsets, out.sizes, strict=True):
                    assert (srcs.buffer.ctypes.data + a) % fake.alignment == 0, "unaligned input"
                    assert (out.buffer.ctypes.data + o) % fake.alignment == 0, "unaligned output"
                    packed = bytes(cramjam.snappy.compress_raw(srcs.buffer[a:a + n].tobytes()))
                    if len(packed) > cap:
                        raise ValueError("output buffer too small")
                    out.buffer[o:o + len(packed)] = np.frombuffer(packed, np.uint8)
                    sizes.append(len(packed))
                return _Batch(out.buffer, out.offsets, sizes)

        self.Codec = Codec

    def as_array(self, source: Any) -> Any:
        return np.asarray(source)

    def as_arrays(self, buffer: Any, offsets: list[int], sizes: list[int]) -> _Batch:
        return _Batch(buffer, offsets, sizes)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeNvcomp]:
    """The GPU backend on the stand-in device with the nvCOMP stand-in as its codec."""
    nv = FakeNvcomp()
    monkeypatch.setattr(device_builder, "page_codec",
                        lambda codec, level, device: NvcompCodec(codec, nv) if codec != "uncompressed" else None)
    with standin():
        yield nv


def _write(path: Path, table: pa.Table, device: str, **opts: Any) -> bytes:
    gpuwrite.write_table(table, path / f"{device}.parquet", device=device, compression="snappy", **opts)
    return (path / f"{device}.parquet").read_bytes()


def test_nvcomp_batches_write_the_cpu_paths_bytes(tmp_path: Path, fake: FakeNvcomp) -> None:
    table = store_sales_table(30_000)
    assert _write(tmp_path, table, "gpu", block_size=1 << 20) == _write(tmp_path, table, "cpu", block_size=1 << 20)
    assert fake.encodes, "nvCOMP was not called"
    for srcs, out in fake.encodes:
        assert all(o % ALIGN == 0 for o in srcs.offsets) and all(o % ALIGN == 0 for o in out.offsets)
        assert all(cap >= fake.bound(n) for n, cap in zip(srcs.sizes, out.sizes, strict=True))
        assert 0 not in srcs.sizes  # empty sections are not sent


def test_one_encode_and_one_size_read_per_batch(fake: FakeNvcomp) -> None:
    device = Device("standin")
    codec = NvcompCodec("snappy", fake)
    rng = np.random.default_rng(1)
    src = np.zeros(4096, np.uint8)
    src[:1000] = rng.integers(0, 4, 1000)  # compresses
    src[1024:1524] = rng.integers(0, 256, 500)  # does not
    offsets, lengths = np.array([0, 1024, 2048]), np.array([1000, 500, 0])
    out, out_off, comp = codec.compress(device, src, (offsets, lengths))
    sizes = np.asarray(comp)
    assert len(fake.encodes) == 1 and device.counters.by_kernel == {"nvcomp": 1}
    assert device.counters.waits == {"compressed sizes": 1} and device.counters.syncs == 1
    expected = len(cramjam.snappy.compress_raw(src[:1000].tobytes()))
    assert sizes.tolist() == [expected, 500, 0]  # not smaller: the raw length (the page keeps its bytes)
    assert bytes(np.asarray(out)[out_off[0]:out_off[0] + expected]) == bytes(cramjam.snappy.compress_raw(
        src[:1000].tobytes()))


def test_host_codec_counts_the_size_read_as_nvcomp_does() -> None:
    device = Device("standin")
    src = np.arange(64, dtype=np.uint8)
    HostCodec("snappy", None).compress(device, src, (np.array([0, 32]), np.array([32, 32])))
    assert device.counters.waits == {"compressed sizes": 1} and device.counters.h2d_copies == 1


def test_nvcomp_failure_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nv = FakeNvcomp(fail=True)
    monkeypatch.setattr(device_builder, "page_codec", lambda codec, level, device: NvcompCodec(codec, nv))
    with standin(), pytest.raises(GpuwriteError, match=r"nvCOMP failed to compress a batch of \d+ pages with snappy"):
        gpuwrite.write_table(store_sales_table(2000), tmp_path / "x.parquet", device="gpu", compression="snappy")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("nv", "message"), [
    (FakeNvcomp(alignment=32), "needs 32-byte aligned buffers"),
    (FakeNvcomp(bound=lambda n: 32 + 64 * int(n ** 0.5)), "not affine"),
])
def test_nvcomp_setup_problems_are_named(nv: FakeNvcomp, message: str) -> None:
    with pytest.raises(GpuwriteError, match=message):
        NvcompCodec("snappy", nv)


def test_level_is_refused_on_the_gpu() -> None:
    device = SimpleNamespace(mode="cuda")
    with pytest.raises(GpuwriteError, match="compression_level=5 cannot be applied on the GPU"):
        page_codec("zstd", 5, device)  # type: ignore[arg-type]


def test_nvcomp_runs_on_the_writers_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """page_codec hands nvCOMP the writer's own stream (`Device.stream`, not CuPy's current one): nvCOMP's own
    default stream would not wait for the kernels that wrote the pages."""
    import sys

    from gpuwrite.backends.device import codecs as device_codecs

    nv = FakeNvcomp()
    current = SimpleNamespace(ptr=0x1)
    cupy = SimpleNamespace(cuda=SimpleNamespace(get_current_stream=lambda: current))
    device = Device("standin")
    device.mode, device.xp = "cuda", cupy  # type: ignore[assignment]
    device.stream = SimpleNamespace(ptr=0x5EED)
    monkeypatch.setitem(sys.modules, "nvidia", SimpleNamespace(nvcomp=nv))
    monkeypatch.setitem(sys.modules, "nvidia.nvcomp", nv)
    codec = device_codecs.page_codec("snappy", None, device)
    assert isinstance(codec, NvcompCodec) and nv.streams == [0x5EED]
