"""Test helper: two chunk encoders of one leaf (the one-call page path and the per-section one) fed the same
pages, some dropped and encoded again, then compared page by page and dictionary by dictionary."""

from __future__ import annotations

from collections.abc import Sequence

from gpuwrite.encode.chunk import ChunkEncoder
from gpuwrite.page_model import EncodedPage
from gpuwrite.pipeline.leafdata import LeafData


def page_fields(p: EncodedPage) -> tuple:
    """What a page is made of: its span, encoding, body, section lengths, compression, CRC and statistics."""
    s = p.sections
    return (p.span, p.encoding, bytes(s.body), s.rep_len, s.def_len, s.values_len, s.compressed, s.crc, p.stats)


def assert_same_chunks(fused: ChunkEncoder, ref: ChunkEncoder, data: LeafData, ranges: Sequence[tuple[int, int]],
                       drop: bool) -> None:
    """Encode `ranges` of `data` with both encoders (a batch of the first half and one more, with `drop` the
    last two of those dropped and encoded again as when a row group ended earlier, then the rest); their pages
    and finished dictionaries must be the same, byte for byte."""
    for enc in (fused, ref):
        enc.encode_pages(data, ranges[:len(ranges) // 2 + 1])
        if drop:  # the row group ended earlier: the last pages go, and are encoded again
            enc.truncate(max(0, len(enc.pages) - 2))
            enc.encode_pages(data, ranges[len(enc.pages):len(ranges) // 2 + 1])
        enc.encode_pages(data, ranges[len(ranges) // 2 + 1:])
    assert [page_fields(p) for p in fused.pages] == [page_fields(p) for p in ref.pages], fused.leaf.dotted
    a, b = fused.finish(), ref.finish()
    assert (a.dictionary is None) == (b.dictionary is None)
    if a.dictionary is not None and b.dictionary is not None:
        assert bytes(a.dictionary.body) == bytes(b.dictionary.body)
        assert a.dictionary.num_values == b.dictionary.num_values
