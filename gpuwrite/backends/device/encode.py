"""A batch of pages of every column, encoded on the device in a fixed handful of launches.

The host holds the page table (column, rows, level entries, values of each page); after one read of each
page's dictionary state (`page_info`: entries and bytes at its end, the overflow, the first-page test) it
chooses every page's encoding exactly as parquet-java would, orders the batch by value kind and encoding so
each encoder runs once over a contiguous range of pages, and launches: values (ids, DELTA, PLAIN...), levels,
statistics, compression, the stored choice, body gather, CRC and page headers. Sizes come back in a second
read, with what the footer and indexes need.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from gpuwrite.kernels.encode.delta import delta_max_size
from gpuwrite.kernels.encode.fallback import PLAIN_WIDTH
from gpuwrite.kernels.encode.pages import crc32_table
from gpuwrite.kernels.plan.layout import (
    CT_DECIMAL,
    CT_DEF,
    CT_DEFW,
    CT_DICT,
    CT_KEYS,
    CT_KIND,
    CT_OFFS,
    CT_REP,
    CT_REPW,
    CT_VALS,
    K_BOOL,
    K_BYTES,
    K_DOUBLE,
    K_FLBA,
    K_FLOAT,
    K_INT32,
    K_INT64,
    K_INT96,
)
from gpuwrite.kernels.plan.page_layout import (
    F_COUNT,
    F_DEF_LEN,
    F_ENCODING,
    F_NUM_NULLS,
    F_NUM_ROWS,
    F_NUM_VALUES,
    F_REP_LEN,
    HEADER_BOUND,
    I_COUNT,
    I_KEEPS,
    I_OVERFLOWED,
    I_VALUE_BYTES,
    I_WIDTH,
)

from ...encode.rules import fallback_codes
from ...format.enums import Encoding
from . import dict_pages, steps
from .codecs import PageCodec, aligned
from .dict_pages import Counts, DictPages
from .dictionary import DeviceDictionary
from .ops import Device
from .window import DeviceWindow

# fallback encoding per kind code: "delta", and "plain" (PLAIN for all)
_FALLBACK, _PLAIN_FALLBACK = fallback_codes("delta"), fallback_codes("plain")
_CRC_TABLE = crc32_table()


@dataclass
class PageTable:
    """Pages of a batch (host int64 arrays, one entry per page): column, window rows a..b, level entries
    ea..eb and non-null values va..vb (relative to the column)."""

    col: np.ndarray
    a: np.ndarray
    b: np.ndarray
    ea: np.ndarray
    eb: np.ndarray
    va: np.ndarray
    vb: np.ndarray

    def __len__(self) -> int:
        return len(self.col)

    def take(self, order: np.ndarray) -> PageTable:
        """The pages in another order (or a subset)."""
        return PageTable(*(getattr(self, f.name)[order] for f in fields(self)))

    @staticmethod
    def concat(tables: list[PageTable]) -> PageTable:
        """Pages of several tables, one after the other."""
        return PageTable(*(np.concatenate([getattr(t, f.name) for t in tables]).astype(np.int64)
                           for f in fields(PageTable)))


@dataclass
class EncodedBatch:
    """A batch's pages on the device, in batch order, and (after `fetch`) what the host needs of them."""

    pages: PageTable
    encoding: np.ndarray
    info: np.ndarray
    fields: Any  # device int64[F_COUNT, P]: header fields
    bodies: Any  # device uint8: page bodies at body_off
    body_off: Any  # device int64[P + 1]
    body_len: Any
    headers: Any  # device uint8: page p's header at p * HEADER_BOUND
    header_len: Any
    crc: Any
    ext: Any  # device int64[P, 4]: min / max (see page_layout.page_extremes)
    same: Any  # device int64[P]: every value equal (byte kinds)
    host: dict[str, np.ndarray] | None = None
    order: np.ndarray | None = None  # the given page at each batch position
    dicts: tuple[DictPages, Counts] | None = None  # dictionary pages made with the batch (BatchSetup.dictionaries)
    # what the host knew of it without reading its results (BatchSetup.early, compressed): body_off, body_len, ext,
    # same, and dict_body_len (its dictionary pages' stored lengths)
    known: dict[str, np.ndarray] | None = None

    def fetch_with(self, device: Device, extra: list[Any], name: str = "batch and replay") -> list[np.ndarray]:
        """Read the per-page results and `extra` device arrays in one sync (counted under `name`); the extra
        arrays' host copies."""
        names = ("fields", "body_off", "body_len", "header_len", "crc", "ext", "same")
        got = device.download_many([getattr(self, n) for n in names] + extra, name)
        self.host = dict(zip(names, got[:len(names)], strict=True))
        return got[len(names):]

    def fetch(self, device: Device) -> dict[str, np.ndarray]:
        """Read the per-page results (one sync)."""
        if self.host is None:
            names = ("fields", "body_off", "body_len", "header_len", "crc", "ext", "same")
            got = device.download_many([getattr(self, n) for n in names], "batch")
            self.host = dict(zip(names, got, strict=True))
        return self.host


def _exclusive(sizes: np.ndarray) -> np.ndarray:
    """Start of each item when the items are laid back to back."""
    out = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=out[1:])
    return out


def _rle_bounds(n: np.ndarray, width: np.ndarray) -> np.ndarray:
    """rle_max_size per page (0 where the width is 0)."""
    return np.where(width > 0, (n // 8 + 2) * (np.maximum(width, 9) + 2) + 16, 0).astype(np.int64)


def _value_bounds(kind: np.ndarray, dict_page: np.ndarray, n: np.ndarray, nbytes: np.ndarray,
                  width: np.ndarray, *, plain: bool = False) -> np.ndarray:
    """Upper bound of each page's values section in its chosen encoding (`plain`: PLAIN fallback pages)."""
    if plain:
        bound = np.select(
            [kind == K_BOOL, (kind == K_INT32) | (kind == K_FLOAT), (kind == K_INT64) | (kind == K_DOUBLE),
             kind == K_BYTES], [(n + 7) // 8, 4 * n, 8 * n, nbytes + 4 * n], nbytes)
    else:
        delta = delta_max_size(n)  # type: ignore[arg-type]  # integer arithmetic: works on arrays too
        bound = np.select(
            [kind == K_BOOL, (kind == K_INT32) | (kind == K_INT64), kind == K_FLOAT, kind == K_DOUBLE,
             kind == K_INT96], [(n + 7) // 8, delta, 4 * n, 8 * n, nbytes], 2 * delta + nbytes)
    ids = 1 + _rle_bounds(n, np.maximum(width, 1))
    return np.where(dict_page, ids, bound).astype(np.int64) + 8


@dataclass(frozen=True)
class BatchSetup:
    """What a batch's encoding depends on beyond its pages."""

    codec: PageCodec | None  # None: uncompressed
    checksum: bool
    fell_back: np.ndarray  # per column: the chunk's first page failed the dictionary test in an earlier batch
    plain_fallback: bool = False  # WriteOptions.fallback_encoding == "plain": PLAIN values without the dictionary
    # the dictionary pages to make with the batch, from each given page's dictionary choice and state (the entries
    # a row group that ends at a guessed cut needs): laid out beside the values, compressed in the same codec call
    dictionaries: Callable[[np.ndarray, np.ndarray], Counts] | None = None
    # compressed, its statistics' value bounds (ext, same) read with the values' lengths: with the sizes the host
    # lays out, all the file's layout needs (`EncodedBatch.known`), so its results can wait for the row group's
    # bytes (`chunks.queue_chunks`)
    early: bool = False


def choose_encodings(cols: np.ndarray, pages: PageTable, info: np.ndarray,
                     fell_back: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dictionary page?, chunk fell back on its first page?) per page and per column, as parquet-java decides:
    a page is dictionary-encoded while its column is, the dictionary has not overflowed before the page's end,
    and the chunk's first page passed the test (a chunk that fails it falls back for good)."""
    dict_col = cols[pages.col, CT_DICT] == 1
    first_fails = dict_col & (pages.a == 0) & (info[:, I_OVERFLOWED] == 0) & (info[:, I_KEEPS] == 0)
    fell = fell_back.copy()
    fell[pages.col[first_fails]] = True
    return dict_col & (info[:, I_OVERFLOWED] == 0) & ~fell[pages.col], fell


class _Args:
    """Per-page launch arguments: host rows laid in one array, uploaded once; rows are device slices."""

    def __init__(self, device: Device, rows: dict[str, np.ndarray]) -> None:
        self.names = list(rows)
        self.host = np.stack([rows[n] for n in self.names]).astype(np.int64)
        self.dev = device.upload(self.host)

    def __getitem__(self, name: str) -> Any:
        return self.dev[self.names.index(name)]

    def rows(self, first: str, last: str) -> Any:
        """Consecutive rows first..last as one 2-D device array."""
        a, b = self.names.index(first), self.names.index(last)
        return self.dev[a:b + 1]


def spans_and_info(device: Device, win: DeviceWindow, dic: DeviceDictionary, pages: PageTable
                   ) -> tuple[PageTable, np.ndarray]:
    """The pages' level entries and values (`pages` gives column and rows), then their dictionary state, both
    found on the device and read back in one sync: the spans step's output feeds the info step there."""
    n_pages = len(pages)
    if n_pages == 0:
        return pages, np.zeros((0, I_COUNT), dtype=np.int64)
    table = device.upload(np.stack([pages.col, pages.a, pages.b]))
    spans = device.empty(4 * n_pages, np.int64).reshape(4, n_pages)  # ea, eb, va, vb
    device.launch(steps.SPANS, n_pages, table, win.dev_cols, win.arenas.idx, spans)
    info = device.empty(n_pages * I_COUNT, np.int64).reshape(n_pages, I_COUNT)
    device.launch(steps.PAGE_INFO, n_pages, table[0], table[1], spans[2], spans[3], win.dev_cols, win.arenas.idx,
                  dic.ids, dic.efirst, dic.ebytes, dic.overflow, info)
    got, info_host = device.download_many([spans, info], "page spans")
    return PageTable(pages.col, pages.a, pages.b, *(row for row in got)), info_host


def encode_planned(device: Device, state: tuple[DeviceWindow, DeviceDictionary], pages: PageTable, info: np.ndarray,
                   setup: BatchSetup) -> tuple[EncodedBatch, np.ndarray]:
    """Encode `pages` whose dictionary state `info` the host has read; returns the batch (its pages in batch
    order; `EncodedBatch.order[j]` is the given page at batch position j) and the columns whose chunk fell back
    on its first page."""
    win, dic = state
    cols = win.cols
    dict_page, fell = choose_encodings(cols, pages, info, setup.fell_back)
    counts = setup.dictionaries(dict_page, info) if setup.dictionaries is not None else {}
    kind = cols[pages.col, CT_KIND]
    # by kind, then (byte kinds only: their statistics compare decimals apart) decimal, then encoding: one launch
    # per values range (kind, dictionary) and per statistics range (kind, byte decimal)
    order = np.lexsort((pages.a, pages.col, ~dict_page, _byte_decimal(cols, pages.col, kind), kind))
    pages, info, dict_page, kind = pages.take(order), info[order], dict_page[order], kind[order]
    fallback = _PLAIN_FALLBACK if setup.plain_fallback else _FALLBACK
    encoding = np.where(dict_page, int(Encoding.RLE_DICTIONARY), fallback[kind])
    batch = _launch(device, win, dic, _Batch(pages, info, dict_page, kind, encoding, counts), setup)
    batch.order = order
    return batch, fell


@dataclass
class _Batch:
    """The host's plan of a batch, in batch order."""

    pages: PageTable
    info: np.ndarray
    dict_page: np.ndarray
    kind: np.ndarray
    encoding: np.ndarray
    counts: Counts  # the dictionary pages to make with it (none when empty)


def _byte_decimal(cols: np.ndarray, col: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Per page, whether its column is a decimal of a byte kind (their min / max compare as signed numbers);
    0 for other kinds, whose statistics do not depend on it."""
    byte_kind = (kind == K_BYTES) | (kind == K_FLBA) | (kind == K_INT96)
    return np.where(byte_kind, cols[col, CT_DECIMAL], 0)


def _ranges(keys: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run of equal keys."""
    if len(keys) == 0:
        return []
    cuts = np.flatnonzero(np.any(keys[1:] != keys[:-1], axis=1) if keys.ndim > 1 else keys[1:] != keys[:-1]) + 1
    bounds = [0, *cuts.tolist(), len(keys)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _launch(device: Device, win: DeviceWindow, dic: DeviceDictionary, plan: _Batch,
            setup: BatchSetup) -> EncodedBatch:
    """Every launch of a planned batch."""
    cols, ar, pages = win.cols, win.arenas, plan.pages
    n_pages = len(pages)
    col = pages.col
    nvals, nent = pages.vb - pages.va, pages.eb - pages.ea
    width = plan.info[:, I_WIDTH]
    nbytes = plan.info[:, I_VALUE_BYTES]
    val_bound = aligned(_value_bounds(plan.kind, plan.dict_page, nvals, nbytes, width,
                                      plain=setup.plain_fallback))  # codec inputs aligned
    defw, repw = cols[col, CT_DEFW], cols[col, CT_REPW]
    def_bound, rep_bound = _rle_bounds(nent, defw), _rle_bounds(nent, repw)
    byte_kind = (plan.kind == K_BYTES) | (plan.kind == K_FLBA) | (plan.kind == K_INT96)
    value_base = np.where(byte_kind, cols[col, CT_OFFS], cols[col, CT_VALS])
    ids_base = np.where(plan.dict_page, cols[col, CT_KEYS], 0)
    def_base = np.where(cols[col, CT_DEF] >= 0, cols[col, CT_DEF], win.ones)
    rep_base = np.maximum(cols[col, CT_REP], 0)
    args = _Args(device, {
        "val_off": _exclusive(val_bound),
        "vstart": np.where(plan.dict_page, ids_base, value_base) + pages.va,
        "vend": np.where(plan.dict_page, ids_base, value_base) + pages.vb,
        "sstart": value_base + pages.va, "send": value_base + pages.vb, "width": width,
        "dstart": np.where(defw > 0, def_base + pages.ea, 0), "dend": np.where(defw > 0, def_base + pages.eb, 0),
        "defw": defw, "def_off": _exclusive(def_bound),
        "rstart": np.where(repw > 0, rep_base + pages.ea, 0), "rend": np.where(repw > 0, rep_base + pages.eb, 0),
        "repw": repw, "rep_off": _exclusive(rep_bound),
        "hdr_off": np.arange(n_pages, dtype=np.int64) * HEADER_BOUND, "zeros": np.zeros(n_pages, np.int64),
        "col": col,
    })
    head = np.zeros((F_COUNT, n_pages), dtype=np.int64)
    head[F_NUM_VALUES], head[F_NUM_NULLS] = nent, nent - nvals
    head[F_NUM_ROWS], head[F_ENCODING] = pages.b - pages.a, plan.encoding
    fields_dev = device.upload(head)
    raw = dict_pages.layout(device, plan.counts, int(val_bound.sum())) if plan.counts else None
    vals = device.empty(max(int(val_bound.sum()), raw.end if raw is not None else 0) + 8, np.uint8)
    val_len = device.empty(n_pages, np.int64)
    _values(device, ar, dic, plan, args, (vals, val_len), plain=setup.plain_fallback)
    if raw is not None:  # the dictionary pages after the values sections (codec inputs: aligned)
        dict_pages.write_raw(device, win, dic, raw, vals)
    lbuf = device.empty(int(def_bound.sum()) + 8, np.uint8)
    device.launch(steps.RLE, n_pages, ar.lev, args["dstart"], args["dend"], args["defw"], False, lbuf,
                  args["def_off"], fields_dev[F_DEF_LEN])
    rbuf = device.empty(int(rep_bound.sum()) + 8, np.uint8)
    if repw.any():
        device.launch(steps.RLE, n_pages, ar.lev, args["rstart"], args["rend"], args["repw"], False, rbuf,
                      args["rep_off"], fields_dev[F_REP_LEN])
    minmax = device.empty(2 * n_pages, np.int64).reshape(2, n_pages)
    same = device.empty(n_pages, np.int64)  # written for byte kinds, the only pages whose flag is read
    _statistics(device, win, plan, args, (minmax[0], minmax[1], same))
    ext = device.empty(n_pages * 4, np.int64).reshape(n_pages, 4)
    device.launch(steps.EXTREMES, n_pages, args["col"], args.rows("sstart", "send"), minmax, win.dev_cols, ar.v8,
                  ar.v32, ar.v64, ar.idx, ext)
    read = [ext, same] if setup.early else []
    stored, stored_len, body_len, stored_off, dict_body, host = _store(device, setup, (vals, val_len), args,
                                                                        fields_dev, raw, read=read)
    del vals  # the stored sections hold every page's values now (uncompressed, `stored` is them): the raw ones go
    known = None
    if host is not None:  # compressed: every size known on the host
        bodies, body_off, body_len, crc, dicts, laid = _bodies(device, setup, (rbuf, lbuf, stored), args, host,
                                                               (raw, plan.counts))
        if setup.early:
            known = {"body_off": laid[0], "body_len": laid[1], "ext": read[0], "same": read[1],
                     "dict_body_len": host[4]}
    else:
        dicts = None
        if raw is not None and dict_body is not None:
            dicts = (dict_pages.finish(device, raw, dict_pages.detach(device, dict_body), setup.checksum),
                     plan.counts)
        body_off = device.empty(n_pages + 1, np.int64)
        device.launch(steps.SCAN, 1, body_len, n_pages, body_off)
        bodies = device.empty(int((val_bound + def_bound + rep_bound).sum()) + 8, np.uint8)
        device.launch(steps.GATHER, n_pages, rbuf, args["rep_off"], fields_dev[F_REP_LEN], lbuf, args["def_off"],
                      fields_dev[F_DEF_LEN], stored, stored_off, stored_len, bodies, body_off)
        crc = device.empty(n_pages, np.int64)  # read only with checksums, which write it
        if setup.checksum:
            device.launch(steps.CRC32, n_pages, bodies, body_off, body_len, device.upload(_CRC_TABLE), crc)
    headers = device.empty(n_pages * HEADER_BOUND, np.uint8)
    header_len = device.empty(n_pages, np.int64)
    device.launch(steps.PAGE_HEADERS, n_pages, fields_dev, crc, setup.checksum, headers, args["hdr_off"], header_len)
    return EncodedBatch(pages, plan.encoding, plan.info, fields_dev, bodies, body_off, body_len, headers,
                        header_len, crc, ext, same, dicts=dicts, known=known)


def _values(device: Device, ar: Any, dic: DeviceDictionary, plan: _Batch, args: _Args, out: tuple[Any, Any],
            *, plain: bool = False) -> None:
    """Each page's values section, one launch per (kind, encoding) range of the batch (`plain`: fallback pages
    PLAIN for every kind)."""
    vals, val_len = out
    keys = np.stack([plan.kind, plan.dict_page.astype(np.int64)], axis=1)
    for s, e in _ranges(keys):
        kind, is_dict = int(plan.kind[s]), bool(plan.dict_page[s])
        a, b, off, size = args["vstart"][s:e], args["vend"][s:e], args["val_off"][s:e], val_len[s:e]
        if is_dict:
            device.launch(steps.RLE, e - s, dic.ids, a, b, args["width"][s:e], True, vals, off, size)
        elif kind == K_BOOL:
            device.launch(steps.PLAIN_BOOL, e - s, ar.v8, a, b, vals, off, size)
        elif plain and kind in (K_INT32, K_INT64):
            w = PLAIN_WIDTH[kind]
            device.launch(steps.PLAIN_FIXED, e - s, ar.v32 if kind == K_INT32 else ar.v64, a, b, w, 0, vals, off,
                          size)
        elif plain and kind == K_BYTES:
            device.launch(steps.PLAIN_BYTE_ARRAY, e - s, ar.idx, ar.dat, a, b, vals, off, size)
        elif plain and kind == K_FLBA:
            device.launch(steps.COPY_BYTES, e - s, ar.idx, ar.dat, a, b, vals, off, size)
        elif kind in (K_INT32, K_INT64):
            device.launch(steps.DELTA, e - s, ar.v32 if kind == K_INT32 else ar.v64, a, b, kind == K_INT32, vals,
                          off, size)
        elif kind in (K_FLOAT, K_DOUBLE):
            w = PLAIN_WIDTH[kind]
            device.launch(steps.PLAIN_FIXED, e - s, ar.v32 if kind == K_FLOAT else ar.v64, a, b, w, w, vals, off,
                          size)
        elif kind == K_INT96:
            device.launch(steps.COPY_BYTES, e - s, ar.idx, ar.dat, a, b, vals, off, size)
        else:
            scratch = device.empty(2 * len(ar.idx), np.int64)
            device.launch(steps.DELTA_BYTES, e - s, ar.idx, ar.dat, a, b, scratch[:len(ar.idx)],
                          scratch[len(ar.idx):], vals, off, size)


def _statistics(device: Device, win: DeviceWindow, plan: _Batch, args: _Args, out: tuple[Any, Any, Any]) -> None:
    """Each page's min / max value positions (and all-equal for byte kinds), one launch per kind range."""
    imin, imax, same = out
    ar = win.arenas
    decimal = _byte_decimal(win.cols, plan.pages.col, plan.kind)
    for s, e in _ranges(np.stack([plan.kind, decimal], axis=1)):
        kind = int(plan.kind[s])
        a, b = args["sstart"][s:e], args["send"][s:e]
        lo, hi = imin[s:e], imax[s:e]
        if kind in (K_BOOL, K_INT32, K_INT64):
            values = {K_BOOL: ar.v8, K_INT32: ar.v32, K_INT64: ar.v64}[kind]
            device.launch(steps.INT_MINMAX, e - s, values, a, b, lo, hi)
        elif kind in (K_FLOAT, K_DOUBLE):
            device.launch(steps.FLOAT_MINMAX, e - s, ar.v32 if kind == K_FLOAT else ar.v64, a, b, kind == K_FLOAT,
                          lo, hi)
        else:
            device.launch(steps.BYTES_MINMAX, e - s, ar.idx, ar.dat, a, b, bool(decimal[s]), lo, hi, same[s:e])


_HostSizes = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _store(device: Device, setup: BatchSetup, raw: tuple[Any, Any], args: _Args, fields_dev: Any,
           dicts: dict_pages.RawDictPages | None, *, read: list[Any]
           ) -> tuple[Any, Any, Any, Any, tuple[Any, np.ndarray, Any] | None, _HostSizes | None]:
    """Compress the values sections and keep, per page, the smaller form: (stored buffer, stored lengths,
    body lengths, each page's offset in the stored buffer, and the stored dictionary pages `dicts` laid after the
    values: compressed always, in the same codec call); the header fields follow. Compressed, the host knows
    every size (the levels' lengths read with the values' lengths, the codec's sizes): the last item, per page
    its repetition and definition levels' lengths, stored length and offset, per dictionary page its stored
    length and offset (None uncompressed). Compressed, the device arrays `read` are read with the values' lengths
    and replaced by their host copies."""
    vals, val_len = raw
    n_pages = len(args["zeros"])
    stored_len, copy_len, body_len = (device.empty(n_pages, np.int64) for _ in range(3))
    if setup.codec is None:
        device.launch(steps.STORED, n_pages, val_len, val_len, True, fields_dev, stored_len, copy_len, body_len)
        dict_body = (vals, dicts.off, dicts.small[2]) if dicts is not None else None
        return vals, stored_len, body_len, args["val_off"], dict_body, None
    got = device.download_many([val_len, fields_dev[F_REP_LEN], fields_dev[F_DEF_LEN], *read], "values lengths")
    lengths, rep_len, def_len = got[:3]
    read[:] = got[3:]
    val_off = args.host[args.names.index("val_off")]
    runs, always = (val_off, lengths), np.zeros(n_pages, dtype=bool)
    if dicts is not None:
        runs = (np.concatenate([val_off, dicts.off]), np.concatenate([lengths, dicts.raw_len]))
        always = np.concatenate([always, np.ones(len(dicts.columns), dtype=bool)])
    sizes: list[np.ndarray] = []
    comp, comp_off, comp_len = setup.codec.compress(device, vals, runs, always if dicts is not None else False,
                                                    host_sizes=sizes)
    slots = args["val_off"] if comp_off is val_off else device.upload(comp_off[:n_pages])
    dict_body = (comp, comp_off[n_pages:], comp_len[n_pages:]) if dicts is not None else None
    page_len = comp_len[:n_pages] if dicts is not None else comp_len
    device.launch(steps.STORED, n_pages, val_len, page_len, False, fields_dev, stored_len, copy_len, body_len)
    z = args["zeros"]
    device.launch(steps.GATHER, n_pages, vals, z, z, vals, z, z, vals, args["val_off"], copy_len, comp, slots)
    comp_h = sizes[0][:n_pages]
    stored = np.where((lengths > 0) & (comp_h < lengths), comp_h, lengths)  # the stored step's choice (stored_choice)
    host = (rep_len, def_len, stored, np.asarray(comp_off[:n_pages]), sizes[0][n_pages:],
            np.asarray(comp_off[n_pages:]))
    return comp, stored_len, body_len, slots, dict_body, host


def _bodies(device: Device, setup: BatchSetup, bufs: tuple[Any, Any, Any], args: _Args, host: _HostSizes,
            made: tuple[dict_pages.RawDictPages | None, Counts]
            ) -> tuple[Any, Any, Any, Any, Any, tuple[np.ndarray, np.ndarray]]:
    """Every page's body (repetition levels, definition levels, stored values) and after them the dictionary
    pages' stored bodies, gathered into one buffer at offsets the host lays out from `host` (`_store`): one
    gather and one CRC launch for both, and no scan. (bodies, body_off, body_len, the pages' CRCs, the
    dictionary pages made with the batch or None, and body_off and body_len on the host.)"""
    rbuf, lbuf, stored = bufs
    raw, counts = made
    rep_len, def_len, stored_len, stored_off, dict_len, dict_off = host
    n, d = len(rep_len), len(dict_len)
    lens = np.concatenate([rep_len + def_len + stored_len, dict_len]).astype(np.int64)
    rows = np.zeros((8, n + d + 1), dtype=np.int64)
    none = np.zeros(d, dtype=np.int64)
    rows[0, :n + d] = np.concatenate([args.host[args.names.index("rep_off")], none])
    rows[1, :n + d] = np.concatenate([rep_len, none])
    rows[2, :n + d] = np.concatenate([args.host[args.names.index("def_off")], none])
    rows[3, :n + d] = np.concatenate([def_len, none])
    rows[4, :n + d] = np.concatenate([stored_off, dict_off])
    rows[5, :n + d] = np.concatenate([stored_len, dict_len])
    np.cumsum(lens, out=rows[6, 1:])  # each body's offset
    rows[7, :n + d] = lens
    dev = device.upload(rows)
    bodies = device.empty(int(rows[6, -1]) + 8, np.uint8)
    device.launch(steps.GATHER, n + d, rbuf, dev[0], dev[1], lbuf, dev[2], dev[3], stored, dev[4], dev[5], bodies,
                  dev[6])
    crc = device.empty(n + d, np.int64)  # read only with checksums, which write it
    if setup.checksum:
        device.launch(steps.CRC32, n + d, bodies, dev[6], dev[7], device.upload(_CRC_TABLE), crc)
    dicts = None
    if raw is not None:
        dicts = (dict_pages.finish(device, raw, (bodies, rows[6, n:n + d].copy(), dev[7][n:n + d]), setup.checksum,
                                   crc[n:]), counts)
    return bodies, dev[6][:n + 1], dev[7][:n], crc[:n], dicts, (rows[6, :n + 1].copy(), rows[7, :n].copy())
