"""compress.packer_after against compress.compressor: level bytes then the very bytes the codec's compressor
gives when those are smaller than the values, else the values as they are (the page then stores them raw); from
malloc or from a `buffers.Arena`, each page's buffer cut back to what it holds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuwrite.encode.compress import compressor, packer_after
from gpuwrite.pipeline import buffers

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
values_strategy = (st.binary(max_size=3000)
                   | st.lists(st.sampled_from([b"ka", b"lo", b"mi ", b"https://www.", b"\x00" * 9]), max_size=600)
                   .map(b"".join))


def _expected(codec: str, values: bytes, head: bytes) -> tuple[bytes, bool]:
    packed = bytes(compressor(codec)(memoryview(values)))
    return (head + packed, True) if len(packed) < len(values) else (head + values, False)


@SETTINGS
@pytest.mark.parametrize("codec", ["snappy", "lz4_raw"])
@given(values=values_strategy, head=st.binary(max_size=40))
def test_packer_after_matches_compressor(codec: str, values: bytes, head: bytes) -> None:
    pack = packer_after(codec)
    assert pack is not None
    view = memoryview(np.frombuffer(values, dtype=np.uint8).copy())
    body, compressed = pack(view, head)
    assert (bytes(body), compressed) == _expected(codec, values, head)


@SETTINGS
@pytest.mark.usefixtures("_fresh")
@pytest.mark.parametrize("codec", ["snappy", "lz4_raw"])
@given(pages=st.lists(st.tuples(values_strategy, st.binary(max_size=40)), min_size=1, max_size=12))
def test_pages_packed_from_an_arena_lie_back_to_back_and_stay_as_packed(codec: str,
                                                                        pages: list[tuple[bytes, bytes]]) -> None:
    """Each page's buffer is cut back to its bytes and the next starts right after it in the same slab: no page
    is overwritten by a later one."""
    arena = buffers.Arena(slab_bytes=buffers.MIN_BYTES)
    pack = packer_after(codec, arena)
    assert pack is not None
    bodies = [pack(memoryview(values), head) for values, head in pages]
    for (values, head), (body, compressed) in zip(pages, bodies, strict=True):
        assert (bytes(body), compressed) == _expected(codec, values, head)
    arrays = [np.frombuffer(body, dtype=np.uint8) for body, _ in bodies]
    base = bodies[0][0].obj.base.__array_interface__["data"][0]  # offsets within the slab
    starts = [a.__array_interface__["data"][0] - base for a in arrays]
    for a, start, nxt in zip(arrays, starts, starts[1:], strict=False):
        assert nxt == -(-(start + len(a)) // buffers.ARENA_ALIGN) * buffers.ARENA_ALIGN  # one slab, no spare bytes
    assert len({id(body.obj.base) for body, _ in bodies}) == 1  # views of one kept slab
    assert any(body.obj.base is slab for slab in buffers._PAGE_SLABS.slabs)



@pytest.mark.parametrize("codec", ["uncompressed", "zstd", "gzip"])
def test_packer_after_only_for_codecs_compressing_into_a_buffer(codec: str) -> None:
    assert packer_after(codec) is None
