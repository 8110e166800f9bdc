"""A row group's finished chunks from its encoded batches: dictionary pages on the device, the file's bytes
gathered in file order on the device and read back in one copy, and the per-page facts the footer needs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuwrite.kernels.plan.layout import CT_KIND, K_BYTES, K_FLBA, K_INT96
from gpuwrite.kernels.plan.page_layout import (
    F_COMPRESSED,
    F_COUNT,
    F_DEF_LEN,
    F_REP_LEN,
    F_UNCOMPRESSED,
    HEADER_BOUND,
    I_VALUE_BYTES,
)

from ...encode.rules import as_signed32
from ...encode.stats import stats_of
from ...options.model import BloomSpec
from ...page_model import DictionaryPage, EncodedChunk, EncodedPage, PageSections, PageSpan
from ...schema import BYTE_ARRAY, Leaf
from . import dict_pages, steps
from .bloom import build_blooms
from .codecs import PageCodec
from .copies import PendingDownload
from .dict_pages import Counts, DictPages
from .dictionary import DeviceDictionary
from .encode import EncodedBatch, PageTable
from .ops import Device
from .window import DeviceWindow

_BYTE_KINDS = (K_BYTES, K_FLBA, K_INT96)
# dictionary pages made ahead, their sizes read (None: read with the row group's bytes), the entries they hold
ReadyDict = tuple[DictPages, list[np.ndarray] | None, Counts]
_Late = tuple[Any, np.ndarray, Any] | None  # a source pair laid out before its headers' lengths are read


@dataclass
class KeptPages:
    """The pages a row group keeps, in the order they were kept (per column, in row order): column, batch,
    and page index within the batch (host int64 arrays of one length)."""

    col: np.ndarray
    batch: np.ndarray
    index: np.ndarray

    @staticmethod
    def of(parts: Sequence[tuple[np.ndarray, int, np.ndarray]]) -> KeptPages:
        """Pages (columns, batch, indices) of several batches, in the order given."""
        cols = [np.asarray(c, dtype=np.int64) for c, _, _ in parts]
        return KeptPages(np.concatenate(cols) if cols else np.zeros(0, np.int64),
                         np.concatenate([np.full(len(c), k, np.int64) for c, (_, k, _) in zip(cols, parts, strict=True)])
                         if cols else np.zeros(0, np.int64),
                         np.concatenate([np.asarray(i, dtype=np.int64) for _, _, i in parts]) if cols
                         else np.zeros(0, np.int64))

    def in_file_order(self) -> KeptPages:
        """The pages grouped by column (stable: each column's pages stay in row order)."""
        order = np.argsort(self.col, kind="stable")
        return KeptPages(self.col[order], self.batch[order], self.index[order])


def _dictionary_pages(device: Device, win: DeviceWindow, dic: DeviceDictionary,
                      chunk: tuple[PageCodec | None, bool], counts: Counts) -> DictPages:
    """PLAIN dictionary pages of the columns in `counts` (column -> (entries, their bytes)), compressed (always:
    parquet-java compresses a dictionary page whatever the result), with CRCs and headers."""
    codec, checksum = chunk
    raw = dict_pages.layout(device, counts)
    buf = device.empty(raw.end + 8, np.uint8)
    dict_pages.write_raw(device, win, dic, raw, buf)
    if codec is None:
        body: tuple[Any, np.ndarray, Any] = (buf, raw.off, raw.small[2])
    else:
        body = codec.compress(device, buf, (raw.off, raw.raw_len), always=True)
    return dict_pages.finish(device, raw, body, checksum)


@dataclass
class _Flat:
    """Per kept page in file order: its batch's per-page host results gathered into flat arrays."""

    col: np.ndarray
    batch: np.ndarray
    index: np.ndarray
    table: PageTable  # the pages' spans (column-relative)
    encoding: np.ndarray
    info: np.ndarray
    header_len: np.ndarray
    body_off: np.ndarray
    body_len: np.ndarray
    crc: np.ndarray
    ext: np.ndarray  # [n, 4]
    same: np.ndarray
    fields: np.ndarray  # [n, F_COUNT]

    @staticmethod
    def of(batches: Sequence[EncodedBatch], hosts: Sequence[dict[str, np.ndarray]], kept: KeptPages) -> _Flat:
        """The kept pages' facts (one gather per array over the batches' concatenated results)."""
        sizes = np.array([len(b.pages) for b in batches], dtype=np.int64)
        base = np.zeros(len(batches), dtype=np.int64)
        np.cumsum(sizes[:-1], out=base[1:])
        g = base[kept.batch] + kept.index

        def cat(name: str) -> np.ndarray:
            return np.concatenate([h[name][:len(b.pages)] for b, h in zip(batches, hosts, strict=True)])

        table = PageTable.concat([b.pages for b in batches]).take(g)
        return _Flat(kept.col, kept.batch, kept.index, table,
                     np.concatenate([b.encoding for b in batches])[g], np.concatenate([b.info for b in batches])[g],
                     cat("header_len")[g], cat("body_off")[g], cat("body_len")[g], cat("crc")[g], cat("ext")[g],
                     cat("same")[g], np.concatenate([h["fields"][:, :len(b.pages)].T
                                                     for b, h in zip(batches, hosts, strict=True)])[g])


def dictionary_counts(cols: np.ndarray, flat: _Flat) -> Counts:
    """Per dictionary column with a dictionary-encoded page among the kept pages: (entries its dictionary page
    holds, their bytes) (`dict_pages.dictionary_counts`)."""
    return dict_pages.dictionary_counts(cols, flat.col, flat.encoding, flat.info)


def assemble_chunks(device: Device, state: tuple[DeviceWindow, DeviceDictionary], leaves: Sequence[Leaf],
                    batches: Sequence[EncodedBatch], kept: KeptPages,
                    chunk: tuple[PageCodec | None, bool], *,
                    blooms: Sequence[BloomSpec | None]) -> list[EncodedChunk]:
    """The row group's chunks (`queue_chunks`, waited for now)."""
    return queue_chunks(device, state, leaves, batches, kept, chunk, blooms=blooms)()


def queue_chunks(device: Device, state: tuple[DeviceWindow, DeviceDictionary], leaves: Sequence[Leaf],
                 batches: Sequence[EncodedBatch], kept: KeptPages,
                 chunk: tuple[PageCodec | None, bool], *, blooms: Sequence[BloomSpec | None],
                 ready: ReadyDict | None = None) -> Callable[[], list[EncodedChunk]]:
    """The row group's chunks: dictionary pages, then every kept page's header and body, gathered in file order
    into one buffer on the device, its read back (with the byte-kind statistics and the bloom filters, built on
    the device from `blooms`, each column's filter settings) queued as one download on the copy stream. The
    function returned waits for it (one sync) and makes the chunks: until it is called, the host and the
    writer's stream go on (the next row group's kernels). `ready`: dictionary pages made with a batch for
    a guessed cut (or the cut), with their sizes read and the entries they hold: used when the kept pages need
    those. A batch whose results were not read (`EncodedBatch.known`), and dictionary pages whose sizes were not
    (None in `ready`), are laid out from what the host knows: each header in a slot of HEADER_BOUND bytes, its
    body right after it (a chunk with such a slot is handed over in pieces); their results are read with the
    bytes."""
    win, dic = state
    late = [b.host is None and b.known is not None for b in batches]
    hosts = [_known_host(b) if later else b.fetch(device) for b, later in zip(batches, late, strict=True)]
    order = kept.in_file_order()
    flat = _Flat.of(batches, hosts, order)
    filters = build_blooms(device, win, leaves, blooms, (flat.col, flat.table.va, flat.table.vb, flat.encoding))
    counts = dictionary_counts(win.cols, flat)
    dp: DictPages | None = None
    dict_sizes: list[np.ndarray] | None = None
    dict_late = False
    if ready is not None and ready[2] == counts:
        dp, dict_sizes = ready[0], ready[1]
        if dict_sizes is None:  # made with a batch whose results are read with the bytes
            dict_late = True
            maker = next(b for b in batches if b.dicts is not None and b.dicts[0] is dp)
            assert maker.known is not None
            d = len(dp.columns)
            dict_sizes = [np.full(d, HEADER_BOUND, np.int64), maker.known["dict_body_len"], np.zeros(d, np.int64)]
    elif counts:
        dp = _dictionary_pages(device, win, dic, chunk, counts)
        dict_sizes = device.download_many([dp.header_len, dp.body_len, dp.crc], "dictionary sizes")
    sources: list[Any] = []
    lates: list[_Late] = []
    more: list[Any] = []
    for b, later in zip(batches, late, strict=True):
        sources += [b.headers, b.bodies]
        lates.append((b.header_len, hosts[len(lates)]["body_off"], b.body_len) if later else None)
        more += [b.fields, b.header_len, b.crc] if later else []
    if dp is not None:
        sources += [dp.headers, dp.body]
        lates.append((dp.header_len, dp.body_off, dp.body_len) if dict_late else None)
        more += [dp.header_len, dp.crc] if dict_late else []
    segments, page_at = _segments(flat, len(leaves), (len(sources), dp, dict_sizes))
    byte_kind = np.isin(win.cols[flat.col, CT_KIND], _BYTE_KINDS) & (flat.table.vb > flat.table.va)
    bounds = flat.ext[byte_kind]
    extra = (bounds[:, [0, 2]].reshape(-1), bounds[:, [1, 3]].reshape(-1))  # min then max of each page
    more += [] if filters is None else [filters.words, filters.counts]
    total, pending, seg_pos = _gather(device, (sources, lates), segments, (win.arenas.dat, extra), more)
    stats_at = np.zeros(len(flat.col) + 1, dtype=np.int64)
    np.cumsum(np.where(byte_kind, flat.ext[:, 1] + flat.ext[:, 3], 0), out=stats_at[1:])
    win = win.host_side()  # the arenas are not kept for the deferred write: the next window is built beside it

    def finished() -> list[EncodedChunk]:
        nonlocal flat, dict_sizes
        blob, stats, *got = pending.result()
        for b, later in zip(batches, late, strict=True):
            if later:
                b.host = {**_known_host(b), "fields": got[0], "header_len": got[1], "crc": got[2]}
                got = got[3:]
        if any(late):
            flat = _Flat.of(batches, [b.host for b in batches], order)  # type: ignore[misc]
        if dict_late and dict_sizes is not None:
            dict_sizes = [got[0], dict_sizes[1], got[1]]
            got = got[2:]
        chunks = _chunks(leaves, (win, flat, page_at, seg_pos), (dp, dict_sizes),
                         (memoryview(blob[:total].data), stats, stats_at), chunk[1])
        if filters is not None:
            for c, bitset in filters.bitsets(got[0], got[1]).items():
                chunks[c].bloom_filter = bitset
        return chunks

    return finished


def _known_host(b: EncodedBatch) -> dict[str, np.ndarray]:
    """A batch's per-page results as the host knows them before reading them (`EncodedBatch.known`): headers
    HEADER_BOUND bytes (their slots), CRCs and header fields still zero."""
    assert b.known is not None
    n = len(b.pages)
    return {"fields": np.zeros((F_COUNT, n), np.int64), "body_off": b.known["body_off"],
            "body_len": b.known["body_len"], "header_len": np.full(n, HEADER_BOUND, np.int64),
            "crc": np.zeros(n, np.int64), "ext": b.known["ext"], "same": b.known["same"]}


def _segments(flat: _Flat, columns: int, dicts: tuple[int, DictPages | None, list[np.ndarray] | None]
              ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """(source, offset, length) of every run of bytes of the file's row group in order — per column its
    dictionary page's header and body, then each page's header and body — and, per column, the index of its
    first segment (with one past the end)."""
    n_sources, dp, dict_sizes = dicts
    n = len(flat.col)
    src = np.empty(2 * n, dtype=np.int64)
    off = np.empty(2 * n, dtype=np.int64)
    length = np.empty(2 * n, dtype=np.int64)
    src[0::2], src[1::2] = 2 * flat.batch, 2 * flat.batch + 1
    off[0::2], off[1::2] = flat.index * HEADER_BOUND, flat.body_off
    length[0::2], length[1::2] = flat.header_len, flat.body_len
    first = np.searchsorted(flat.col, np.arange(columns + 1)) * 2
    if dp is None or dict_sizes is None:
        return (src, off, length), first
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    at = [0]
    for c in range(columns):
        if c in dp.columns:
            k = dp.columns.index(c)
            parts.append((np.array([n_sources - 2, n_sources - 1]), np.array([k * HEADER_BOUND, dp.body_off[k]]),
                          np.array([dict_sizes[0][k], dict_sizes[1][k]])))
        a, b = first[c], first[c + 1]
        parts.append((src[a:b], off[a:b], length[a:b]))
        at.append(at[-1] + (2 if c in dp.columns else 0) + int(b - a))
    joined = tuple(np.concatenate([p[i] for p in parts]).astype(np.int64) for i in range(3))
    return (joined[0], joined[1], joined[2]), np.array(at, dtype=np.int64)


def _gather(device: Device, paired: tuple[list[Any], list[_Late]], segments: tuple[np.ndarray, np.ndarray, np.ndarray],
            extra: tuple[Any, tuple[np.ndarray, np.ndarray]], more: list[Any]
            ) -> tuple[int, PendingDownload, np.ndarray]:
    """Copy every segment to its place in one buffer, and the `extra` runs (offsets, lengths) of another buffer
    to a second one; queue their read back, with the device arrays `more`, on the copy stream (waited for once):
    the segments' bytes and the download. The segments come in pairs, a (dictionary) page's header from source
    2k then its body from source 2k + 1, which follow each other in the file: one launch per pair of sources
    copies both (a header and its body an item). A late pair (its header lengths on the device only: (header
    lengths, body offsets on the host, body lengths)) copies every header of its source into its slot, in the
    source's order, the body right after it. Also returns each segment's place."""
    sources, lates = paired
    src_ids, offs, lengths = segments
    out_off = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=out_off[1:])
    total = int(lengths.sum())
    blob = device.empty(total + 8, np.uint8)
    pair = src_ids[0::2] // 2
    assert np.array_equal(src_ids[1::2], src_ids[0::2] + 1) and not np.any(src_ids[0::2] % 2)
    for p in range(len(sources) // 2):
        pick = 2 * np.flatnonzero(pair == p)
        if len(pick) == 0:
            continue
        head, body = sources[2 * p], sources[2 * p + 1]
        zero = np.zeros(len(pick), dtype=np.int64)
        late = lates[p]
        if late is not None:
            header_len, body_off, body_len = late
            item = offs[pick] // HEADER_BOUND  # the header's (page's) place in its source
            count = len(pick)
            assert np.array_equal(np.sort(item), np.arange(count)), "a late source's items are all kept"
            slot = np.empty(count, dtype=np.int64)
            slot[item] = out_off[pick]
            d = device.upload(np.stack([np.arange(count, dtype=np.int64) * HEADER_BOUND,
                                        np.asarray(body_off[:count], dtype=np.int64), slot, zero]))
            device.launch(steps.GATHER, count, head, d[0], header_len, body, d[1], body_len, body, d[3], d[3], blob,
                          d[2])
            continue
        d = device.upload(np.stack([offs[pick], lengths[pick], offs[pick + 1], lengths[pick + 1], out_off[pick],
                                    zero]))
        device.launch(steps.GATHER, len(pick), head, d[0], d[1], body, d[2], d[3], body, d[5], d[5], blob, d[4])
    dat, (e_off, e_len) = extra
    e_out = np.zeros(len(e_len), dtype=np.int64)
    np.cumsum(e_len[:-1], out=e_out[1:])
    stats = device.empty(int(e_len.sum()) + 8, np.uint8)
    if len(e_len):
        _copy(device, dat, (e_off, e_len), stats, e_out)
    return total, device.download_later([blob, stats, *more], "row group bytes"), out_off


def _copy(device: Device, src: Any, runs: tuple[np.ndarray, np.ndarray], out: Any, out_off: np.ndarray) -> None:
    """out[out_off[i]:+length[i]] = src[offset[i]:+length[i]] for every run (one block per run)."""
    offsets, lengths = runs
    if len(offsets) == 0:
        return
    d = device.upload(np.stack([offsets, lengths, out_off, np.zeros(len(offsets), dtype=np.int64)]))
    z = d[3]
    device.launch(steps.GATHER, len(offsets), src, z, z, src, z, z, src, d[0], d[1], out, d[2])


def _chunks(leaves: Sequence[Leaf], layout: tuple[DeviceWindow, _Flat, np.ndarray, np.ndarray],
            parts: tuple[DictPages | None, list[np.ndarray] | None],
            data: tuple[memoryview, np.ndarray, np.ndarray], checksum: bool) -> list[EncodedChunk]:
    """EncodedChunks whose bytes are slices of the blob: each (dictionary) page's header at its segment's place
    (`layout`: per column its first segment, and each segment's place), its body right after it; a chunk whose
    pages follow each other is handed over as one slice too (the assembler writes it in one piece), one with a
    header slot's slack inside it in pieces."""
    win, flat, first, seg_pos = layout
    places = seg_pos.tolist()
    dp, dict_sizes = parts
    blob, stats, stats_at = data
    t = flat.table
    # Python ints once per array (cheaper than a NumPy scalar per field per page)
    a, b, ea, eb, va, vb = (x.tolist() for x in (t.a, t.b, t.ea, t.eb, t.va, t.vb))
    hlen, blen, enc = flat.header_len.tolist(), flat.body_len.tolist(), flat.encoding.tolist()
    crcs = flat.crc.tolist()
    f = flat.fields
    rep_len, def_len = f[:, F_REP_LEN].tolist(), f[:, F_DEF_LEN].tolist()
    unc, compressed = f[:, F_UNCOMPRESSED].tolist(), f[:, F_COMPRESSED].tolist()
    ext, same, vbytes = flat.ext.tolist(), flat.same.tolist(), flat.info[:, I_VALUE_BYTES].tolist()
    at = stats_at.tolist()
    col_first = np.searchsorted(flat.col, np.arange(len(leaves) + 1)).tolist()
    out = []
    for c, leaf in enumerate(leaves):
        seg = int(first[c])
        start = pos = places[seg] if seg < len(places) else 0
        whole = True  # every page right after the one before
        dictionary = None
        if dp is not None and dict_sizes is not None and c in dp.columns:
            k = dp.columns.index(c)
            dh, db = int(dict_sizes[0][k]), int(dict_sizes[1][k])
            crc = as_signed32(int(dict_sizes[2][k])) if checksum else None
            hp = places[seg]
            whole &= hp == pos
            dictionary = DictionaryPage(blob[hp + dh:hp + dh + db], int(dp.raw_len[k]), int(dp.count[k]),
                                        crc, header=blob[hp:hp + dh])
            pos, seg = hp + dh + db, seg + 2
        byte_kind = int(win.cols[c, CT_KIND]) in _BYTE_KINDS
        floats = leaf.kind in ("float", "double")
        binary = leaf.physical == BYTE_ARRAY
        nested = leaf.max_rep > 0 or leaf.max_def > 1
        dotted = leaf.dotted
        pages = []
        for j in range(col_first[c], col_first[c + 1]):
            span = PageSpan(a[j], b[j], ea[j], eb[j], va[j], vb[j])
            h, n = hlen[j], blen[j]
            hp = places[seg]
            whole &= hp == pos
            pos, seg = hp, seg + 2
            sections = PageSections(blob[pos + h:pos + h + n], rep_len[j], def_len[j],
                                    unc[j] - rep_len[j] - def_len[j], bool(compressed[j]),
                                    as_signed32(crcs[j]) if checksum else None)
            count = vb[j] - va[j]
            e = ext[j]
            extremes: tuple[Any, Any] = (e[0], e[1])
            if byte_kind and count > 0:
                s0 = at[j]
                extremes = (stats[s0:s0 + e[1]].tobytes(), stats[s0 + e[1]:s0 + e[1] + e[3]].tobytes())
            nan: tuple[int, int | None] = (0, None)
            if floats:
                nan = (e[2], e[3] if 0 < e[2] < count else None)
            st = stats_of(leaf, count, eb[j] - ea[j] - count, extremes, bool(same[j]), nan)
            rep_hist, def_hist = win.histograms(leaf, span, c) if nested else (None, None)
            pages.append(EncodedPage(span, a[j], enc[j], sections, st, vbytes[j] if binary else None, rep_hist,
                                     def_hist, header=blob[pos:pos + h], column=dotted))
            pos += h + n
        out.append(EncodedChunk(dictionary, pages, None, blob=blob[start:pos] if whole else None))
    return out
