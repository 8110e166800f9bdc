"""The page CRC: the CRC-32 of zlib (gzip's polynomial) as a signed i32, whichever implementation computes it."""

from __future__ import annotations

import importlib
import sys
import zlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gpuwrite.encode import rules


@given(st.binary(max_size=5000))
def test_page_crc_is_zlibs_as_a_signed_i32(body):
    expected = zlib.crc32(body)
    got = rules.signed_crc32(body)
    assert -(1 << 31) <= got < 1 << 31
    assert got & 0xFFFFFFFF == expected


def test_page_crc_of_a_view_of_a_large_section():
    data = np.random.default_rng(3).integers(0, 256, 3_000_000, dtype=np.uint8)
    view = data[17:2_900_000].data
    assert rules.signed_crc32(view) & 0xFFFFFFFF == zlib.crc32(view)


def test_page_crc_falls_back_to_zlib_when_isal_is_absent(monkeypatch):
    monkeypatch.setitem(sys.modules, "isal.isal_zlib", None)  # the import fails, as where isal has no wheel
    try:
        importlib.reload(rules)
        assert rules._crc32 is zlib.crc32
        assert rules.signed_crc32(b"parquet") & 0xFFFFFFFF == zlib.crc32(b"parquet")
    finally:
        monkeypatch.undo()
        importlib.reload(rules)
    assert rules._crc32 is not zlib.crc32
