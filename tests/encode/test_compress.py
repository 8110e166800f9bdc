"""compress.packer_after against compress.compressor: level bytes then the very bytes the codec's compressor
gives, or None exactly when those are not smaller than the values (the page then stores them raw)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuwrite.encode.compress import compressor, packer_after

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
values_strategy = (st.binary(max_size=3000)
                   | st.lists(st.sampled_from([b"ka", b"lo", b"mi ", b"https://www.", b"\x00" * 9]), max_size=600)
                   .map(b"".join))


@SETTINGS
@pytest.mark.parametrize("codec", ["snappy", "lz4_raw"])
@given(values=values_strategy, head=st.binary(max_size=40))
def test_packer_after_matches_compressor(codec: str, values: bytes, head: bytes) -> None:
    pack = packer_after(codec)
    assert pack is not None
    view = memoryview(np.frombuffer(values, dtype=np.uint8).copy())
    got = pack(view, head)
    packed = bytes(compressor(codec)(view))
    if len(packed) < len(values):
        assert got is not None and bytes(got) == head + packed
    else:
        assert got is None


@pytest.mark.parametrize("codec", ["uncompressed", "zstd", "gzip"])
def test_packer_after_only_for_codecs_compressing_into_a_buffer(codec: str) -> None:
    assert packer_after(codec) is None
