"""A row group's finished chunks from its encoded batches: dictionary pages on the device, the file's bytes
gathered in file order on the device and read back in one copy, and the per-page facts the footer needs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuwrite.kernels.layout import CT_DICT, CT_KIND, K_BYTES, K_FLBA, K_INT96
from gpuwrite.kernels.page_layout import (
    F_COMPRESSED,
    F_DEF_LEN,
    F_REP_LEN,
    F_UNCOMPRESSED,
    HEADER_BOUND,
    I_BYTES,
    I_ENTRIES,
    I_VALUE_BYTES,
)
from gpuwrite.kernels.pages import crc32_table

from ...encode.chunk import DictionaryPage, EncodedChunk, EncodedPage, PageSections, PageSpan
from ...encode.rules import as_signed32
from ...encode.stats import stats_of
from ...format.enums import Encoding
from ...schema import BYTE_ARRAY, Leaf
from . import steps
from .codecs import PageCodec
from .dictionary import DeviceDictionary
from .encode import EncodedBatch
from .ops import Device
from .window import DeviceWindow

_BYTE_KINDS = (K_BYTES, K_FLBA, K_INT96)


@dataclass(frozen=True)
class PageRef:
    """Page j of batch k."""

    batch: int
    index: int


@dataclass
class _DictPages:
    """The row group's dictionary pages on the device (one per column that has one)."""

    columns: list[int]
    count: np.ndarray
    raw_len: np.ndarray
    body: Any
    body_off: np.ndarray
    body_len: Any
    headers: Any
    header_len: Any
    crc: Any


def _dictionary_pages(device: Device, win: DeviceWindow, dic: DeviceDictionary,
                      chunk: tuple[PageCodec | None, bool], counts: dict[int, tuple[int, int]]) -> _DictPages:
    """PLAIN dictionary pages of the columns in `counts` (column -> (entries, their bytes)), compressed (always:
    parquet-java compresses a dictionary page whatever the result), with CRCs and headers."""
    codec, checksum = chunk
    columns = sorted(counts)
    count = np.array([counts[c][0] for c in columns], dtype=np.int64)
    raw_len = np.array([counts[c][1] for c in columns], dtype=np.int64)
    off = np.zeros(len(columns), dtype=np.int64)
    np.cumsum(raw_len[:-1], out=off[1:])
    ar = win.arenas
    raw = device.empty(int(raw_len.sum()) + 8, np.uint8)
    small = device.upload(np.stack([np.array(columns, dtype=np.int64), count, raw_len, off]))
    device.launch(steps.DICT_PAGES, len(columns), small[0], small[1], win.dev_cols, dic.efirst, dic.bcum, ar.v32,
                  ar.v64, ar.idx, ar.dat, raw, small[3])
    if codec is None:
        body, body_off, body_len = raw, off, small[2]
    else:
        body, body_off, body_len = codec.compress(device, raw, (off, raw_len), always=True)
    crc = device.empty(len(columns), np.int64)  # read only with checksums, which write it
    d_off = device.upload(body_off)
    if checksum:
        device.launch(steps.CRC32, len(columns), body, d_off, body_len, device.upload(crc32_table()), crc)
    headers = device.empty(len(columns) * HEADER_BOUND, np.uint8)
    header_len = device.empty(len(columns), np.int64)
    device.launch(steps.DICT_HEADERS, len(columns), small[1:3], body_len, crc, checksum, headers,
                  device.upload(np.arange(len(columns), dtype=np.int64) * HEADER_BOUND), header_len)
    return _DictPages(columns, count, raw_len, body, body_off, body_len, headers, header_len, crc)


def dictionary_counts(cols: np.ndarray, batches: Sequence[EncodedBatch],
                      kept: Sequence[Sequence[PageRef]]) -> dict[int, tuple[int, int]]:
    """Per dictionary column with a dictionary-encoded page: (entries its dictionary page holds, their bytes) —
    the state at the end of its last dictionary-encoded page."""
    out = {}
    for c, refs in enumerate(kept):
        if not cols[c, CT_DICT]:
            continue
        best = (0, 0)
        for r in refs:
            b = batches[r.batch]
            if b.encoding[r.index] == Encoding.RLE_DICTIONARY:
                entries = int(b.info[r.index, I_ENTRIES])
                if entries > best[0]:
                    best = (entries, int(b.info[r.index, I_BYTES]))
        if best[0] > 0:
            out[c] = best
    return out


@dataclass(frozen=True)
class _Segment:
    """A run of bytes of one source buffer, copied to the file blob."""

    source: int
    offset: int
    length: int


def assemble_chunks(device: Device, state: tuple[DeviceWindow, DeviceDictionary], leaves: Sequence[Leaf],
                    batches: Sequence[EncodedBatch], kept: Sequence[Sequence[PageRef]],
                    chunk: tuple[PageCodec | None, bool]) -> list[EncodedChunk]:
    """The row group's chunks: dictionary pages, then every kept page's header and body, gathered in file order
    into one buffer on the device and read back (with the byte-kind statistics) in one copy."""
    win, dic = state
    counts = dictionary_counts(win.cols, batches, kept)
    dp = _dictionary_pages(device, win, dic, chunk, counts) if counts else None
    hosts = [b.fetch(device) for b in batches]
    dict_sizes = None
    if dp is not None:
        dict_sizes = device.download_many([dp.header_len, dp.body_len, dp.crc])
    sources: list[Any] = []
    for b in batches:
        sources += [b.headers, b.bodies]
    if dp is not None:
        sources += [dp.headers, dp.body]
    segments: list[_Segment] = []
    stats_segments: list[_Segment] = []
    for c, refs in enumerate(kept):
        if dp is not None and dict_sizes is not None and c in counts:
            k = dp.columns.index(c)
            segments.append(_Segment(len(sources) - 2, k * HEADER_BOUND, int(dict_sizes[0][k])))
            segments.append(_Segment(len(sources) - 1, int(dp.body_off[k]), int(dict_sizes[1][k])))
        byte_kind = int(win.cols[c, CT_KIND]) in _BYTE_KINDS
        for r in refs:
            h = hosts[r.batch]
            segments.append(_Segment(2 * r.batch, r.index * HEADER_BOUND, int(h["header_len"][r.index])))
            segments.append(_Segment(2 * r.batch + 1, int(h["body_off"][r.index]), int(h["body_len"][r.index])))
            if byte_kind and batches[r.batch].pages.vb[r.index] > batches[r.batch].pages.va[r.index]:
                e = h["ext"][r.index]
                stats_segments += [_Segment(-1, int(e[0]), int(e[1])), _Segment(-1, int(e[2]), int(e[3]))]
    blob, stats = _gather(device, sources, segments, (win.arenas.dat, stats_segments))
    return _chunks(leaves, (win, batches, kept), (hosts, dp, dict_sizes), (memoryview(blob.data), stats), chunk[1])


def _gather(device: Device, sources: list[Any], segments: list[_Segment],
            extra: tuple[Any, list[_Segment]]) -> tuple[np.ndarray, np.ndarray]:
    """Copy every segment to its place in one buffer (one launch per source buffer), and the `extra` segments of
    another buffer to a second one; read both back in one copy."""
    lengths = np.array([s.length for s in segments], dtype=np.int64)
    out_off = np.zeros(len(segments), dtype=np.int64)
    np.cumsum(lengths[:-1], out=out_off[1:])
    blob = device.empty(int(lengths.sum()) + 8, np.uint8)
    src_ids = np.array([s.source for s in segments], dtype=np.int64)
    offs = np.array([s.offset for s in segments], dtype=np.int64)
    for sid, buf in enumerate(sources):
        pick = np.flatnonzero(src_ids == sid)
        _copy(device, buf, (offs[pick], lengths[pick]), blob, out_off[pick])
    dat, extra_segments = extra
    e_len = np.array([s.length for s in extra_segments], dtype=np.int64)
    e_out = np.zeros(len(extra_segments), dtype=np.int64)
    np.cumsum(e_len[:-1], out=e_out[1:])
    stats = device.empty(int(e_len.sum()) + 8, np.uint8)
    if extra_segments:
        _copy(device, dat, (np.array([s.offset for s in extra_segments], dtype=np.int64), e_len), stats, e_out)
    host_blob, host_stats = device.download_many([blob, stats])
    return host_blob[:int(lengths.sum())], host_stats


def _copy(device: Device, src: Any, runs: tuple[np.ndarray, np.ndarray], out: Any, out_off: np.ndarray) -> None:
    """out[out_off[i]:+length[i]] = src[offset[i]:+length[i]] for every run (one block per run)."""
    offsets, lengths = runs
    if len(offsets) == 0:
        return
    d = device.upload(np.stack([offsets, lengths, out_off, np.zeros(len(offsets), dtype=np.int64)]))
    z = d[3]
    device.launch(steps.GATHER, len(offsets), src, z, z, src, z, z, src, d[0], d[1], out, d[2])


def _chunks(leaves: Sequence[Leaf], layout: tuple[DeviceWindow, Sequence[EncodedBatch], Sequence[Sequence[PageRef]]],
            parts: tuple[list[dict[str, np.ndarray]], _DictPages | None, list[np.ndarray] | None],
            data: tuple[memoryview, np.ndarray], checksum: bool) -> list[EncodedChunk]:
    """EncodedChunks whose bytes are slices of the blob (the assembler writes each chunk in one piece)."""
    win, batches, kept = layout
    hosts, dp, dict_sizes = parts
    blob, stats = data
    out = []
    pos = spos = 0
    for c, (leaf, refs) in enumerate(zip(leaves, kept, strict=True)):
        start = pos
        dictionary = None
        if dp is not None and dict_sizes is not None and c in dp.columns:
            k = dp.columns.index(c)
            hlen, blen = int(dict_sizes[0][k]), int(dict_sizes[1][k])
            crc = as_signed32(int(dict_sizes[2][k])) if checksum else None
            dictionary = DictionaryPage(blob[pos + hlen:pos + hlen + blen], int(dp.raw_len[k]), int(dp.count[k]),
                                        crc, header=blob[pos:pos + hlen])
            pos += hlen + blen
        byte_kind = int(win.cols[c, CT_KIND]) in _BYTE_KINDS
        pages = []
        for r in refs:
            page, used = _page(leaf, (batches[r.batch], hosts[r.batch], r.index), (blob, pos),
                               stats[spos:] if byte_kind else None, (win, checksum))
            spos += used
            pos += page.size
            pages.append(page)
        out.append(EncodedChunk(dictionary, pages, None, blob=blob[start:pos]))
    return out


def _page(leaf: Leaf, source: tuple[EncodedBatch, dict[str, np.ndarray], int], at: tuple[memoryview, int],
          stats: np.ndarray | None, ctx: tuple[DeviceWindow, bool]) -> tuple[EncodedPage, int]:
    """Page j of a batch as an EncodedPage whose header and body are views of the blob at `pos`; returns it and
    the statistics bytes it used (byte kinds: its min then its max)."""
    b, h, j = source
    blob, pos = at
    win, checksum = ctx
    p = b.pages
    span = PageSpan(int(p.a[j]), int(p.b[j]), int(p.ea[j]), int(p.eb[j]), int(p.va[j]), int(p.vb[j]))
    hlen, blen = int(h["header_len"][j]), int(h["body_len"][j])
    f = h["fields"][:, j]
    crc = as_signed32(int(h["crc"][j])) if checksum else None
    sections = PageSections(blob[pos + hlen:pos + hlen + blen], int(f[F_REP_LEN]), int(f[F_DEF_LEN]),
                            int(f[F_UNCOMPRESSED] - f[F_REP_LEN] - f[F_DEF_LEN]), bool(f[F_COMPRESSED]), crc)
    count = span.vb - span.va
    used = 0
    e = h["ext"][j]
    extremes: tuple[Any, Any] = (int(e[0]), int(e[1]))
    if stats is not None and count > 0:
        used = int(e[1]) + int(e[3])
        extremes = (stats[:int(e[1])].tobytes(), stats[int(e[1]):used].tobytes())
    nan: tuple[int, int | None] = (0, None)
    if leaf.kind in ("float", "double"):
        nan = (int(e[2]), int(e[3]) if 0 < int(e[2]) < count else None)
    st = stats_of(leaf, count, span.num_nulls, extremes, bool(h["same"][j]), nan)
    byte_array = int(b.info[j, I_VALUE_BYTES]) if leaf.physical == BYTE_ARRAY else None
    rep_hist, def_hist = win.histograms(leaf, span, int(p.col[j]))
    page = EncodedPage(span, span.a, int(b.encoding[j]), sections, st, byte_array, rep_hist, def_hist,
                       header=blob[pos:pos + hlen])
    return page, used
