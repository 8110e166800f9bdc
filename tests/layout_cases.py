"""Shared inputs and CPU references of the per-page bookkeeping tests (kernels/plan/page_layout.py): header fields
and the bytes assemble/pages.py serializes for them, page tables of random cuts over a device window, and one
helper that runs a step on a `Device` from host arrays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from device_cases import device_window, random_table
from gpuwrite.kernels.dictionary.row_group import dictionary_bytes
from gpuwrite.kernels.plan.layout import CT_ENT, CT_ENTN, CT_OFFS, CT_VALS
from gpuwrite.kernels.plan.page_layout import F_COUNT, HEADER_BOUND, I_COUNT
from hypothesis import strategies as st

from gpuwrite.assemble.pages import data_page_header, dictionary_header
from gpuwrite.backends.device.dictionary import build_dictionary
from gpuwrite.backends.device.ops import Device, Kernel
from gpuwrite.encode.rules import as_signed32
from gpuwrite.format.enums import Encoding, PageType
from gpuwrite.format.structs import DataPageHeaderV2, DictionaryPageHeader, PageHeader
from gpuwrite.format.thrift import serialize
from gpuwrite.options.model import WriteOptions
from gpuwrite.page_model import DictionaryPage, EncodedPage, PageSections, PageSpan, PageStats
from gpuwrite.pipeline.leafdata import LeafData
from gpuwrite.schema import Leaf

I32_MAX = 2**31 - 1
FILL = 0xA5  # output buffers start with it, so a stray or missing write shows


class SizedBody:
    """Stands in for a page body of `n` bytes: the header writer only takes its length (sizes up to 2^31 - 1
    need no real buffer)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n


@st.composite
def data_page_fields(draw: st.DrawFn) -> list[int]:
    """One page's header fields (F_* order) as a consistent page would have them, any size up to 2^31 - 1."""
    values = draw(st.integers(0, I32_MAX))
    nulls = draw(st.integers(0, values))
    rows = draw(st.integers(0, values))
    encoding = int(draw(st.sampled_from(list(Encoding))))
    uncompressed = draw(st.integers(0, I32_MAX))
    def_len = draw(st.integers(0, uncompressed))
    rep_len = draw(st.integers(0, uncompressed - def_len))
    compressed = draw(st.booleans())
    stored = draw(st.integers(0, I32_MAX))
    return [values, nulls, rows, encoding, def_len, rep_len, int(compressed), uncompressed, stored]


CRCS = st.integers(0, 2**32 - 1) | st.sampled_from([0, 1, I32_MAX, 2**31, 2**32 - 1])


def data_page_reference(row: Sequence[int], crc: int | None) -> bytes:
    """What assemble.pages writes for a page with header fields `row` (F_* order) and unsigned `crc`,
    checked against the generic Thrift writer: assemble.pages and the device step share one serializer
    (kernels/page_layout.data_page_v2_header), so the independent bytes are the declared structs'."""
    values, nulls, rows, encoding, def_len, rep_len, compressed, uncompressed, stored = (int(v) for v in row)
    signed = None if crc is None else as_signed32(crc)
    sections = PageSections(SizedBody(stored), rep_len, def_len, uncompressed - rep_len - def_len,  # type: ignore
                            bool(compressed), signed)
    page = EncodedPage(PageSpan(0, rows, 0, values, 0, values - nulls), 0, encoding, sections,
                       PageStats(nulls, values - nulls), None)
    header = data_page_header(page)
    assert header == serialize(PageHeader(
        type=PageType.DATA_PAGE_V2, uncompressed_page_size=uncompressed, compressed_page_size=stored,
        crc=signed, data_page_header_v2=DataPageHeaderV2(
            num_values=values, num_nulls=nulls, num_rows=rows, encoding=encoding,
            definition_levels_byte_length=def_len, repetition_levels_byte_length=rep_len,
            is_compressed=bool(compressed))))
    return header


def dictionary_reference(row: Sequence[int], crc: int | None) -> bytes:
    """What assemble.pages writes for a dictionary page with fields (entries, uncompressed, compressed),
    checked against the generic Thrift writer (as `data_page_reference`)."""
    entries, uncompressed, stored = (int(v) for v in row)
    signed = None if crc is None else as_signed32(crc)
    page = DictionaryPage(SizedBody(stored), uncompressed, entries, signed)  # type: ignore[arg-type]
    header = dictionary_header(page)
    assert header == serialize(PageHeader(
        type=PageType.DICTIONARY_PAGE, uncompressed_page_size=uncompressed, compressed_page_size=stored,
        crc=signed, dictionary_page_header=DictionaryPageHeader(num_values=entries, encoding=Encoding.PLAIN)))
    return header


def header_args(fields: np.ndarray, crc: np.ndarray, has_crc: bool) -> list[Any]:
    """Arguments of PAGE_HEADERS / DICT_HEADERS for fields given one row per item (the kernels take one row
    per field): one HEADER_BOUND region per item, filled with FILL."""
    n = len(fields)
    out = np.full(n * HEADER_BOUND + 1, FILL, dtype=np.uint8)
    return [np.ascontiguousarray(fields.T), crc, has_crc, out, np.arange(n, dtype=np.int64) * HEADER_BOUND,
            np.full(n, -7, np.int64)]


def dictionary_header_args(rows: np.ndarray, crc: np.ndarray, has_crc: bool) -> list[Any]:
    """Arguments of DICT_HEADERS for rows of (entries, uncompressed size, stored size): outputs at 4 and 6."""
    n = len(rows)
    out = np.full(n * HEADER_BOUND + 1, FILL, dtype=np.uint8)
    return [np.ascontiguousarray(rows[:, :2].T), rows[:, 2].copy(), crc, has_crc, out,
            np.arange(n, dtype=np.int64) * HEADER_BOUND, np.full(n, -7, np.int64)]


def run_step(device: Device, kernel: Kernel, items: int, args: Sequence[Any], out: Sequence[int]) -> list[np.ndarray]:
    """Upload the host arrays of `args` (scalars pass as they are), launch `kernel` over `items`, and download
    the arguments at positions `out` (the step's outputs) after one sync."""
    dev = [device.upload(a) if isinstance(a, np.ndarray) else a for a in args]
    device.launch(kernel, items, *dev)
    return device.download_many([dev[i] for i in out])


def empty_fields(n: int) -> np.ndarray:
    """Header fields of n pages, all zero."""
    return np.zeros((n, F_COUNT), dtype=np.int64)


# -- a window with its dictionary and pages of random cuts -----------------------------------------------


def layout_table(rows: int, seed: int, distinct: int) -> pa.Table:
    """`device_cases.random_table` plus a zoned timestamp column (an INT96 leaf, dictionary-encoded, row 0 null)."""
    table = random_table(rows, seed, distinct)
    rng = np.random.default_rng(seed + 1)
    micros = rng.integers(-distinct, distinct, rows) * 3_600_000_000
    mask = rng.random(rows) < 0.1
    mask[0] = True  # a chunk whose first page holds no value
    return table.append_column("ts", pa.array(micros, pa.timestamp("us", tz="UTC"), mask=mask))


@dataclass
class PagedWindow:
    """A window on the stand-in device, its dictionary (host copies) and a page table of random cuts, pages of
    all columns shuffled together; the page arrays are what PAGE_INFO and EXTREMES take."""

    leaves: Sequence[Leaf]
    datas: list[LeafData]
    cols: np.ndarray
    arenas: dict[str, np.ndarray]
    dictionary: dict[str, np.ndarray]  # ids, efirst, ebytes, overflow
    dict_columns: np.ndarray
    col: np.ndarray
    a: np.ndarray
    va: np.ndarray
    vb: np.ndarray


def column_cuts(data: LeafData, rng: np.random.Generator, pages: int) -> list[tuple[int, int]]:
    """Rows a..b of each page of a column: random cuts, plus some rows without values made pages of their own
    (so pages of 0 values occur; the first such row always is, so a column whose row 0 is null starts with an
    empty page)."""
    rows = data.num_rows
    cuts = {0, rows, *rng.integers(1, max(rows, 2), pages - 1).tolist()}
    empty = [r for r in range(rows) if data.value_index(r + 1) == data.value_index(r)]
    for r in [*empty[:1], *rng.permutation(empty)[:2].tolist()]:
        cuts |= {r, r + 1}
    ordered = sorted(c for c in cuts if 0 <= c <= rows)
    return list(zip(ordered[:-1], ordered[1:], strict=True))


def paged_window(rows: int, seed: int, limit: int, distinct: int = 50) -> PagedWindow:
    """A random window (see `layout_table`) with dictionaries built under `limit`, cut into pages."""
    device = Device("standin")
    opts = WriteOptions(dictionary_page_size=limit, column_dictionary={"b": False})
    leaves, datas, win = device_window(device, layout_table(rows, seed, distinct), opts)
    d = build_dictionary(device, win.cols, win.dev_cols, win.arenas, limit)
    rng = np.random.default_rng(seed)
    table = []
    for c, data in enumerate(datas):
        for a, b in column_cuts(data, rng, int(rng.integers(1, 12))):
            table.append((c, a, data.value_index(a), data.value_index(b)))
    pages = np.array(table, dtype=np.int64)[rng.permutation(len(table))]
    arenas = {name: np.asarray(getattr(win.arenas, name)) for name in ("lev", "idx", "v8", "v32", "v64", "dat")}
    names = ("ids", "efirst", "ebytes", "overflow")
    dictionary = {name: np.asarray(device.download(getattr(d, name))) for name in names}
    return PagedWindow(leaves, datas, win.cols, arenas, dictionary, d.columns, *(pages[:, k].copy() for k in range(4)))


def info_args(w: PagedWindow) -> list[Any]:
    """Arguments of PAGE_INFO over every page of `w` (output: position 10, filled with -7)."""
    d = w.dictionary
    info = np.full((len(w.col), I_COUNT), -7, dtype=np.int64)
    return [w.col, w.a, w.va, w.vb, w.cols, w.arenas["idx"], d["ids"], d["efirst"], d["ebytes"], d["overflow"], info]


def value_position(w: PagedWindow, c: int, i: int) -> int:
    """Arena position of value i of column c: in v8 / v32 / v64 for fixed kinds, in idx (its offset) for byte
    kinds (the positions the min / max kernels report)."""
    if w.leaves[c].fixed_width:
        return int(w.cols[c, CT_VALS]) + i
    return int(w.cols[c, CT_OFFS]) + i


def extremes_args(w: PagedWindow, rng: np.random.Generator) -> list[Any]:
    """Arguments of EXTREMES (output: position 8): each page's values as arena positions, and a random value
    of each page as its min and as its max (-1 for pages without values)."""
    n = len(w.col)
    bounds = np.array([[value_position(w, int(c), int(v)) for c, v in zip(w.col, w.va, strict=True)],
                       [value_position(w, int(c), int(v)) for c, v in zip(w.col, w.vb, strict=True)]], np.int64)
    minmax = np.full((2, n), -1, dtype=np.int64)
    for p in range(n):
        c, va, vb = int(w.col[p]), int(w.va[p]), int(w.vb[p])
        if vb > va:
            minmax[0, p] = value_position(w, c, int(rng.integers(va, vb)))
            minmax[1, p] = value_position(w, c, int(rng.integers(va, vb)))
    ar = w.arenas
    return [w.col, bounds, minmax, w.cols, ar["v8"], ar["v32"], ar["v64"], ar["idx"], np.full((n, 4), -7, np.int64)]


def entries_of(w: PagedWindow, c: int) -> int:
    """Entries of column c's whole dictionary that the device recorded (all of them within its entry room)."""
    ent, room = int(w.cols[c, CT_ENT]), int(w.cols[c, CT_ENTN])
    return int((w.dictionary["efirst"][ent:ent + room] < 2**31 - 1).sum())


def dictionary_page_args(w: PagedWindow, counts: np.ndarray, sizes: Sequence[int]) -> list[Any]:
    """Arguments of DICT_PAGES (output: position 9) for the first counts[k] entries of each dictionary column,
    pages of `sizes` bytes back to back with 3 spare bytes after each."""
    ends = np.cumsum(np.asarray(sizes, dtype=np.int64) + 3)
    out_off = np.concatenate(([0], ends[:-1])).astype(np.int64)
    ar, d = w.arenas, w.dictionary
    out = np.full(int(ends[-1]) if len(ends) else 1, FILL, dtype=np.uint8)
    return [w.dict_columns, counts.astype(np.int64), w.cols, d["efirst"], d["ebytes"], ar["v32"], ar["v64"], ar["idx"],
            ar["dat"], out, out_off]


def plain_bytes(w: PagedWindow, c: int, count: int) -> int:
    """Bytes of column c's first `count` entries in PLAIN: the dictionary bytes once the last of them is in
    (parquet-java accounts an entry at its PLAIN size)."""
    if count == 0:
        return 0
    return dictionary_bytes(w.cols, c, count, w.dictionary["ebytes"])
