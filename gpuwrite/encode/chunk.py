"""One column chunk, page by page, on the CPU: parquet-java's dictionary-with-fallback decisions, then each
page's sections (levels, values, compression, CRC) and the numbers the assembler needs.

The planner decides where pages end; the assembler (`gpuwrite.assemble`) turns what this module returns into
page headers, chunk metadata and indexes. Pages can be dropped again (`truncate`) when the row group ends
before them, so the encoder keeps, per page, the dictionary state it started from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gpuwrite.kernels.encode.delta import byte_array_prefixes, delta_encode, delta_max_size, gather_suffixes
from gpuwrite.kernels.encode.fallback import keeps_dictionary
from gpuwrite.kernels.encode.float_page import float_page, float_pages
from gpuwrite.kernels.encode.int_page import R_COUNT, int_page, int_pages
from gpuwrite.kernels.encode.plain import plain_byte_array
from gpuwrite.kernels.encode.rle import rle_encode, rle_max_size

from ..format.enums import Encoding
from ..options.model import BloomSpec, WriteOptions
from ..page_model import (
    Compressor,
    DictionaryPage,
    EncodedChunk,
    EncodedPage,
    PageSections,
    PageSpan,
    PageStats,
    Section,
)
from ..pipeline import buffers
from ..pipeline.buffers import Arena
from ..pipeline.leafdata import NO_ROWS, Array, LeafData
from ..schema import BYTE_ARRAY, INT32, INT64, Leaf
from .bloom import BloomBuilder, chunk_bitset, hash_values
from .compress import PackAfter, packer_after
from .dictionary import Dictionary
from .rules import canonical_bits, fallback_encoding, raw_value_bytes, signed_crc32
from .stats import PACKERS, level_histogram, page_stats, repetition_histogram, stats_of

_NO_TABLE = np.zeros(0, dtype=np.int32)  # the dictionary arguments of a page encoded without one
_NO_KEYS = np.zeros(0, dtype=np.int64)
_NO_IDS = np.zeros(0, dtype=np.int32)
_RLE_DICTIONARY = int(Encoding.RLE_DICTIONARY)
FLAT_BATCH = 2  # a column's batch of at least this many flat INT32 / INT64 / FLOAT / DOUBLE pages: one call



def _fit(out: np.ndarray, n: int) -> np.ndarray:
    """The first `n` bytes of a page buffer (`ChunkEncoder._page_buffer`): malloc's shrunk in place (realloc: no
    copy, and a page that keeps a view of it keeps no spare bytes; no view of it may exist yet), a slab's cut."""
    if out.base is None:
        out.resize(n, refcheck=False)
        return out
    return out[:n]


def page_sections(levels: tuple[bytes, bytes], values: Section, chunk: ChunkOptions,
                  borrowed: bool = False) -> PageSections:
    """Compress the values section where that makes it smaller (parquet-java keeps the raw bytes
    otherwise), join the sections and take the CRC. `borrowed`: `values` is a view of the input, copied only
    where the page keeps it as it is (compressed or joined to levels, it is read once and let go)."""
    rep, dfn = levels
    stored, compressed = values, bool(values)
    body: Section | None = None
    if values and not chunk.identity:
        if chunk.pack_after is not None:  # levels (if any) and the values, compressed or not, in one buffer
            body, compressed = chunk.pack_after(values, rep + dfn)
        else:
            packed = chunk.compress(values)
            if len(packed) < len(values):
                stored = packed
            else:
                compressed = False
    if body is None:
        body = rep + dfn + stored if rep or dfn else stored  # (no copy of a large section without levels)
    if borrowed and body is values:
        body = bytes(values)
    return PageSections(body, len(rep), len(dfn), len(values), compressed, signed_crc32(body) if chunk.checksum else None)


def encoded_page(leaf: Leaf, data: LeafData, span: PageSpan, *, first_row: int, encoding: int,
                 sections: PageSections, stats: PageStats, shared: SharedLevels | None = None) -> EncodedPage:
    """The page for `span` of `data`, with its level histograms (nested leaves' through `shared` when given)
    and unencoded byte size."""
    byte_array = None
    if leaf.physical == BYTE_ARRAY:
        offsets = data.byte_offsets
        byte_array = int(offsets[span.vb] - offsets[span.va])
    rep_hist = def_hist = None
    # SPEC: SizeStatistics level histograms: repetition when its max level > 0, definition when > 1.
    if leaf.max_rep == 1:  # counted from the page's rows (`repetition_histogram`)
        assert data.rep is not None
        rep_hist = repetition_histogram(data.rep, span.ea, span.eb, span.num_rows, 1)
    elif leaf.max_rep > 1:
        assert data.rep is not None
        rep_hist = shared.histogram(data.rep, span, leaf.max_rep) if shared is not None \
            else _histogram(data.rep, span, leaf.max_rep)
    if leaf.max_def > 1:
        def_hist = shared.histogram(data.def_levels, span, leaf.max_def) \
            if shared is not None else _histogram(data.def_levels, span, leaf.max_def)
    return EncodedPage(span, first_row, encoding, sections, stats, byte_array, rep_hist, def_hist, column=leaf.dotted)


def _histogram(levels: Array, span: PageSpan, max_level: int) -> list[int]:
    """How many of the page's level entries are at each level 0..max_level."""
    return level_histogram(levels, span.ea, span.eb, max_level)


def dictionary_page(raw: bytes, count: int, chunk: ChunkOptions, body: Section | None = None) -> DictionaryPage:
    """The page for PLAIN entries `raw` (compressed here unless `body` already holds the stored bytes)."""
    if body is None:
        body = raw if chunk.identity else chunk.compress(raw)
    return DictionaryPage(body, len(raw), count, signed_crc32(body) if chunk.checksum else None)


@dataclass(frozen=True)
class ChunkOptions:
    """What one column chunk's encoding depends on, resolved from the write options for its leaf."""

    use_dictionary: bool
    dictionary_limit: int
    compress: Compressor
    identity: bool  # the codec leaves bytes as they are (uncompressed)
    checksum: bool
    bloom: BloomSpec | None
    plain_fallback: bool = False  # WriteOptions.fallback_encoding == "plain"
    # levels + compressed values in one buffer (compress.packer_after; same bytes as `compress`), or None
    pack_after: PackAfter | None = None
    arena: Arena | None = None  # where compressed pages and large dictionary tables come from (None: malloc)

    @classmethod
    def for_leaf(cls, leaf: Leaf, opts: WriteOptions, compress: Compressor) -> ChunkOptions:
        """The leaf's settings (per-column dictionary and bloom filter overrides applied); `compress` is
        `compress.compressor` of the options' codec."""
        return cls.for_leaves([leaf], opts, compress)[0]

    @classmethod
    def for_leaves(cls, leaves: Sequence[Leaf], opts: WriteOptions, compress: Compressor,
                   arena: Arena | None = None) -> list[ChunkOptions]:
        """Each leaf's `for_leaf`, leaves with the same settings sharing one object (a wide table's columns
        mostly do: one object per column cost more than the rest of the column's options). `arena`: where the
        compressed pages' buffers and large dictionary tables come from (`buffers.Arena`; malloc when None)."""
        pack, identity = packer_after(opts.compression, arena), opts.compression == "uncompressed"
        shared: dict[tuple[bool, BloomSpec | None], ChunkOptions] = {}
        out = []
        for leaf in leaves:
            dotted = leaf.dotted
            key = (opts.dictionary_enabled(dotted) and leaf.kind != "bool", opts.bloom_filter(dotted))
            options = shared.get(key)
            if options is None:
                options = shared[key] = cls(key[0], opts.dictionary_page_size, compress, identity,
                                            opts.page_checksum, key[1], opts.fallback_encoding == "plain", pack,
                                            arena)
            out.append(options)
        return out


def _rle_levels(levels: Array, ea: int, eb: int, width: int) -> bytes:
    """A v2 level section: RLE/bit-packed hybrid at `width`, no length prefix; empty when the width is 0."""
    if width == 0:
        return b""
    out = np.empty(rle_max_size(eb - ea, width), dtype=np.uint8)
    end = rle_encode(levels, ea, eb, width, out, 0)
    return out[:end].tobytes()


def _run_of(level: int, count: int, width: int) -> bytes:
    """`_rle_levels` of `count` >= 8 equal levels, without a kernel call: parquet-java's encoder makes them one
    repeated run (ULEB128 header count << 1, then the level in (width + 7) // 8 little-endian bytes)."""
    header = count << 1
    out = bytearray()
    while header >= 0x80:
        out.append((header & 0x7F) | 0x80)
        header >>= 7
    out.append(header)
    return bytes(out) + level.to_bytes((width + 7) // 8, "little")


class SharedLevels:
    """One row group's nested level sections and histograms, by the level array and entries they come from:
    sibling leaves of a list share one array of repetition levels, and of definition levels where their own
    nodes hold no nulls (`pipeline.levels.LevelMemo`), and their pages end at the same rows, so a page's level
    sections are the same bytes for each of them: encoded once. Entries hold the array (its memory, the key,
    is not reused while they do); safe from several threads (at worst a section is encoded twice)."""

    def __init__(self) -> None:
        self._done: dict[tuple[int, int, int, int], tuple[Array, bytes | list[int]]] = {}

    def section(self, levels: Array, span: PageSpan, width: int) -> bytes:
        """`_rle_levels` of the page's levels."""
        key = (levels.__array_interface__["data"][0], span.ea, span.eb, -width)
        done = self._done.get(key)
        if done is None:
            done = self._done[key] = (levels, _rle_levels(levels, span.ea, span.eb, width))
        assert isinstance(done[1], bytes)
        return done[1]

    def histogram(self, levels: Array, span: PageSpan, max_level: int) -> list[int]:
        """`_histogram` of the page's levels."""
        key = (levels.__array_interface__["data"][0], span.ea, span.eb, max_level)
        done = self._done.get(key)
        if done is None:
            done = self._done[key] = (levels, _histogram(levels, span, max_level))
        assert isinstance(done[1], list)
        return done[1]


def encode_levels(leaf: Leaf, data: LeafData, span: PageSpan,
                  shared: SharedLevels | None = None) -> tuple[bytes, bytes]:
    """Repetition and definition level sections of a page (a page whose entries all hold a value has every
    definition level at its maximum: one run, written without the encoder); nested leaves' through `shared`
    when given."""
    rep = b""
    if leaf.max_rep:
        assert data.rep is not None
        rep = shared.section(data.rep, span, leaf.rep_width) if shared is not None \
            else _rle_levels(data.rep, span.ea, span.eb, leaf.rep_width)
    if leaf.def_width and span.num_nulls == 0 and span.num_values >= 8:
        return rep, _run_of(leaf.max_def, span.num_values, leaf.def_width)
    if shared is not None and leaf.max_def > 1:
        return rep, shared.section(data.def_levels, span, leaf.def_width)
    return rep, _rle_levels(data.def_levels, span.ea, span.eb, leaf.def_width)


def _encode_ids(ids: Array, dict_size: int) -> bytes:
    """RLE_DICTIONARY body: one bit-width byte, then the hybrid runs (width from the current dictionary size)."""
    width = 32 if dict_size == 0 else (dict_size - 1).bit_length()
    out = np.empty(rle_max_size(len(ids), width) + 1, dtype=np.uint8)
    out[0] = width
    end = rle_encode(ids, 0, len(ids), width, out, 1)
    return out[:end].tobytes()


def _delta(values: Array, is32: bool) -> bytes:
    """DELTA_BINARY_PACKED bytes of an int32 or int64 array (the kernel widens each value as it reads it)."""
    out = np.empty(delta_max_size(len(values)), dtype=np.uint8)
    end = delta_encode(values, 0, len(values), is32, out, 0)
    return out[:end].tobytes()


def _delta_byte_array(data: LeafData, va: int, vb: int) -> Section:
    """DELTA_BYTE_ARRAY: prefix lengths, suffix lengths (both DELTA_BINARY_PACKED), then suffix bytes."""
    n = vb - va
    prefix = np.empty(n, dtype=np.int64)
    suffix = np.empty(n, dtype=np.int64)
    offsets, raw = data.byte_offsets, data.byte_data
    total = byte_array_prefixes(offsets, raw, va, vb, prefix, suffix)
    # one buffer for the three parts, so the suffix bytes (which can be large values) are copied once here
    out = np.empty(2 * delta_max_size(n) + total, dtype=np.uint8)
    end = delta_encode(prefix, 0, n, True, out, 0)
    end = delta_encode(suffix, 0, n, True, out, end)
    end = gather_suffixes(offsets, raw, va, vb, prefix, out, end)
    return out[:end].data


def fallback_values(leaf: Leaf, data: LeafData, va: int, vb: int, plain: bool = False) -> Section:
    """Values va..vb in the leaf's fallback encoding (see rules.fallback_encoding; `plain`: PLAIN for every
    kind)."""
    kind = leaf.kind
    if kind == "bool":
        return np.packbits(data.value_array[va:vb], bitorder="little").tobytes()
    if kind in ("int32", "int64"):
        if plain:
            return np.asarray(data.value_array[va:vb], dtype="<i4" if kind == "int32" else "<i8").tobytes()
        return _delta(data.value_array[va:vb], kind == "int32")
    if kind in ("float", "double"):
        return canonical_bits(kind, data.value_array[va:vb]).tobytes()
    if kind == "int96" or (plain and kind == "flba"):
        offsets = data.byte_offsets
        return data.byte_data[offsets[va]:offsets[vb]].tobytes()
    if plain:
        return _plain_byte_array(data, va, vb)
    return _delta_byte_array(data, va, vb)


def _plain_byte_array(data: LeafData, va: int, vb: int) -> Section:
    """PLAIN BYTE_ARRAY values va..vb: each a 4-byte little-endian length, then its bytes."""
    offsets = data.byte_offsets
    out = np.empty(int(offsets[vb] - offsets[va]) + 4 * (vb - va), dtype=np.uint8)
    end = plain_byte_array(offsets, data.byte_data, va, vb, out, 0)
    return out[:end].data


class _Checkpoint(NamedTuple):
    """The encoder's state before a page, restored when that page is dropped (a named tuple: made once per
    page, where a frozen dataclass cost 3 us)."""

    dict_size: int
    dict_bytes: int
    dict_entries_used: int
    fell_back: bool


class ChunkEncoder:
    """Encodes the pages of one column chunk in order, holding the dictionary state between them."""

    def __init__(self, leaf: Leaf, chunk: ChunkOptions) -> None:
        self.leaf = leaf
        self.chunk = chunk
        self.dictionary: Dictionary | None = None
        if chunk.use_dictionary:
            self.dictionary = Dictionary(leaf, chunk.dictionary_limit, chunk.arena)
        self.dict_entries_used = 0  # entries at the end of the last dictionary-encoded page
        self.fell_back = self.dictionary is None
        self.pages: list[EncodedPage] = []
        self._checkpoints: list[_Checkpoint] = []
        # SPEC: ColumnValueCollector inserts every non-null value's hash, whatever the page's encoding; hashes
        # are kept per page and inserted at finish, so dropped pages leave no trace.
        self._hashes: list[Array] = []
        # the last finish() and the pages it was built from: asked again with the same pages (a row group's
        # chunks written ahead of its end, then finished), the same chunk comes back, built once
        self._finished: tuple[list[EncodedPage], EncodedChunk] | None = None
        # flat INT32 / INT64 leaves (with the default DELTA fallback): each page in one compiled call
        self.shared: SharedLevels | None = None  # level sections shared with sibling leaves (CpuEncoders sets it)
        self._int_pages = leaf.kind in ("int32", "int64") and not leaf.nested and leaf.max_def <= 1 \
            and not chunk.plain_fallback
        self._floats = leaf.kind in ("float", "double")
        # flat FLOAT / DOUBLE leaves: levels, statistics and dictionary ids of each page in one compiled call
        self._float_pages = self._floats and not leaf.nested and leaf.max_def <= 1
        # what `_flat_page` reads per page, looked up once
        self._levels, self._is32, self._wide = leaf.max_def == 1, leaf.kind == "int32", leaf.kind == "double"
        # PLAIN bytes of a bound: an integer's, or a float's raw bits as the same-width integer's
        # (read by flat INT32 / INT64 / FLOAT / DOUBLE leaves only)
        self._pack = PACKERS[INT32 if leaf.kind in ("int32", "float") else INT64]
        # a float's raw bits (signed) to Java's Float/Double.compare order: negatives' magnitude bits flipped
        self._magnitude = (1 << 31) - 1 if leaf.kind == "float" else (1 << 63) - 1
        self._fallback = int(fallback_encoding(leaf.kind, "plain" if chunk.plain_fallback else "delta"))

    def _values(self, data: LeafData, va: int, vb: int, no_nan: bool = False
                ) -> tuple[int, Section, tuple[Array, int] | None]:
        """Encoding and body of a page's values, applying parquet-java's dictionary rules; with the values'
        ids and the dictionary size when the page is dictionary-encoded. `no_nan`: a float / double page known
        to hold no NaN, whose PLAIN bytes are then the input's own (a view: see `page_sections`' `borrowed`)."""
        d = self.dictionary
        if not (self.fell_back or d is None):
            ids, overflow = d.insert(data, va, vb, no_nan)
            if overflow < 0:
                body = _encode_ids(ids, d.size)
                if self.pages or keeps_dictionary(len(body), d.byte_size, raw_value_bytes(self.leaf, data, va, vb)):
                    self.dict_entries_used = d.size
                    return Encoding.RLE_DICTIONARY, body, (ids, d.size)
            self.fell_back = True
        plain = self.chunk.plain_fallback
        encoding = fallback_encoding(self.leaf.kind, "plain" if plain else "delta")
        if no_nan and self._floats:
            return encoding, self._plain_floats(data, va, vb)[0], None
        return encoding, fallback_values(self.leaf, data, va, vb, plain), None

    def encode_page(self, data: LeafData, a: int, b: int) -> EncodedPage:
        """Encode rows a..b of `data` (row indices of the window) as the chunk's next DATA_PAGE_V2."""
        if self._int_pages or self._float_pages:
            page = self._flat_page(data, a, b)
            self.pages.append(page)
            return page
        d = self.dictionary
        self._checkpoints.append(_Checkpoint(d.size if d else 0, d.byte_size if d else 0, self.dict_entries_used,
                                             self.fell_back))
        span = PageSpan.of(data, a, b)
        borrowed = False
        if self._floats:  # statistics first: a page without NaN needs no canonical pass over its values
            levels = encode_levels(self.leaf, data, span, self.shared)
            stats = page_stats(self.leaf, data, span.va, span.vb, span.num_nulls)
            encoding, values, _ = self._values(data, span.va, span.vb, no_nan=not stats.nan_count)
            borrowed = isinstance(values, memoryview)
        else:
            levels = encode_levels(self.leaf, data, span, self.shared)
            encoding, values, ids = self._values(data, span.va, span.vb)
            stats = page_stats(self.leaf, data, span.va, span.vb, span.num_nulls, ids)
        if self.chunk.bloom is not None:
            self._hashes.append(hash_values(self.leaf, data, span.va, span.vb))
        first_row = self.pages[-1].first_row + self.pages[-1].num_rows if self.pages else 0
        page = encoded_page(self.leaf, data, span, first_row=first_row, encoding=int(encoding),
                              sections=page_sections(levels, values, self.chunk, borrowed), stats=stats, shared=self.shared)
        self.pages.append(page)
        return page

    def _bounds_stats(self, nulls: int, n: int, lo: int, hi: int) -> PageStats:
        """A flat INT32 / INT64 / FLOAT / DOUBLE page's statistics from its bounds as the page kernels return
        them: integers, or a float page's raw bits when it holds no NaN (canonical then: stats_of's keys and
        bytes, made here, the order keys Java's Float/Double.compare with negatives' magnitude bits flipped)."""
        if n == 0:
            return PageStats(null_count=nulls, num_values=0)
        pack = self._pack
        if self._float_pages:
            m = self._magnitude
            return PageStats(nulls, n, lo if lo >= 0 else lo ^ m, hi if hi >= 0 else hi ^ m, pack(lo), pack(hi))
        return PageStats(nulls, n, lo, hi, pack(lo), pack(hi))

    def _plain_floats(self, data: LeafData, va: int, vb: int) -> tuple[Section, bool]:
        """PLAIN values va..vb of a float / double page known to hold no NaN, and whether they are borrowed: the
        input's own bits (canonical as they are: no check, no copy) where contiguous, else copied."""
        own = data.value_array[va:vb]
        if own.flags.c_contiguous:
            return own.view(np.uint8).data, True
        return fallback_values(self.leaf, data, va, vb, self.chunk.plain_fallback), False

    def _page_buffer(self, nbytes: int) -> np.ndarray:
        """A buffer for pages' encoded sections (uint8): from kept slabs (`buffers.page_buffer`) where the codec
        joins every page's sections into new memory (`ChunkOptions.pack_after`: no page keeps a view of this one, so
        it is free once the pages are encoded), else from malloc (a page may keep its values section as a view
        of it: `_fit` then shrinks it in place)."""
        if self.chunk.pack_after is not None:
            return buffers.page_buffer(nbytes)
        return np.empty(nbytes, dtype=np.uint8)

    def _dictionary_args(self, n: int) -> tuple[Array, Array, int, int, int, int]:
        """The dictionary's table, keys, size, entry size, byte size and limit as int_page / float_page take
        them (fixed_insert's), with room reserved for `n` more entries; empty ones when it is not in use."""
        d = self.dictionary
        if self.fell_back or d is None:
            return _NO_TABLE, _NO_KEYS, 0, 0, 0, 0
        d.reserve(n)
        return d.table, d.keys, d.size, d.entry_size, d.byte_size, d.limit

    def _after_page(self, as_ids: bool, size: int, byte_size: int, ids_bytes: int, data: LeafData,
                    span: PageSpan) -> bool:
        """parquet-java's dictionary rules after a one-call page that used the dictionary: its new size kept, a
        first page written as ids (`ids_bytes` of them) kept so only when the dictionary pays for itself
        (SPEC: DictionaryValuesWriter.isCompressionSatisfying), else the chunk falls back. Whether the page
        stays dictionary-encoded."""
        d = self.dictionary
        assert d is not None
        d.size, d.byte_size = size, byte_size
        if as_ids and not self.pages and not keeps_dictionary(ids_bytes, byte_size,
                                                              raw_value_bytes(self.leaf, data, span.va, span.vb)):
            as_ids = False
        if as_ids:
            self.dict_entries_used = size
        else:
            self.fell_back = True
        return as_ids

    def _flat_page(self, data: LeafData, a: int, b: int) -> EncodedPage:
        """`encode_page` for a flat INT32 / INT64 / FLOAT / DOUBLE leaf: levels, statistics and dictionary ids
        from one compiled call (kernels/int_page, kernels/float_page), parquet-java's dictionary rules applied
        as `_values` applies them, and no more Python around it than a page needs: a write runs this thousands
        of times on threads that share the GIL (a store_sales write 3,300 times, at about 60 us of Python each
        through the per-section helpers). The per-section path is its reference (tests/encode)."""
        leaf, d = self.leaf, self.dictionary
        use_dictionary = not self.fell_back and d is not None
        self._checkpoints.append(_Checkpoint(d.size, d.byte_size, self.dict_entries_used, self.fell_back)
                                 if d is not None else _Checkpoint(0, 0, self.dict_entries_used, self.fell_back))
        valid = data.valid
        if valid is None:
            va, vb, flags = a, b, NO_ROWS
        else:
            va, vb, flags = data.value_index(a), data.value_index(b), valid.view(np.uint8)
        span = PageSpan(a, b, a, b, va, vb)  # flat: a row is one level entry
        n, rows = vb - va, b - a
        nulls = rows - n
        table, keys, size, entry_size, byte_size, limit = self._dictionary_args(n)
        ids = np.empty(n, dtype=np.int32) if use_dictionary else _NO_IDS
        values = data.value_array
        borrowed = False
        body: Section
        if self._int_pages:
            out = self._page_buffer(rle_max_size(rows, 1) + max(rle_max_size(n, 32) + 1, delta_max_size(n)))
            levels_end, end, size, byte_size, as_ids, lo, hi = int_page(
                flags, a, b, self._levels, values, va, vb, use_dictionary, table, keys, size, entry_size, byte_size,
                limit, ids, self._is32, out)
            dfn = out[:levels_end].tobytes()
            body = _fit(out, end)[levels_end:].data
            if use_dictionary:
                kept = self._after_page(as_ids, size, byte_size, end - levels_end, data, span)
                if as_ids and not kept:  # the first page, written as ids, did not pay for the dictionary
                    body = fallback_values(leaf, data, va, vb)
                as_ids = kept
            encoding = _RLE_DICTIONARY if as_ids else self._fallback
            stats = self._bounds_stats(nulls, n, int(lo), int(hi))
        else:
            wide = self._wide
            out = self._page_buffer(rle_max_size(rows, 1) + (rle_max_size(n, 32) + 1 if use_dictionary else 0))
            levels_end, end, size, byte_size, as_ids, lo, hi, nans, top, has_top = float_page(
                flags, a, b, self._levels, values.view(np.int64 if wide else np.int32), va, vb, wide,
                use_dictionary, table, keys, size, entry_size, byte_size, limit, ids, out)
            dfn = out[:levels_end].tobytes()
            if nans:
                stats = stats_of(leaf, n, nulls, (int(lo), int(hi)), True, (int(nans), int(top) if has_top else None))
            else:
                stats = self._bounds_stats(nulls, n, int(lo), int(hi))
            if use_dictionary and nans:  # the keys need the canonical copy: the per-section path
                code, body, _ = self._values(data, va, vb)
                encoding = int(code)
            elif use_dictionary and self._after_page(as_ids, size, byte_size, end - levels_end, data, span):
                encoding, body = _RLE_DICTIONARY, _fit(out, end)[levels_end:].data
            else:
                encoding = self._fallback
                if nans:
                    body = fallback_values(leaf, data, va, vb, self.chunk.plain_fallback)
                else:
                    body, borrowed = self._plain_floats(data, va, vb)
        if self.chunk.bloom is not None:
            self._hashes.append(hash_values(leaf, data, va, vb))
        pages = self.pages
        first_row = pages[-1].first_row + pages[-1].span.num_rows if pages else 0
        return EncodedPage(span, first_row, encoding, page_sections((b"", dfn), body, self.chunk, borrowed), stats,
                           None, column=leaf.dotted)

    def encode_pages(self, data: LeafData, ranges: Sequence[tuple[int, int]]) -> list[EncodedPage]:
        """Encode the chunk's next pages, rows a..b of the window for each (a, b)."""
        d = self.dictionary
        if d is not None and d.size and not self.fell_back:
            d.warm()  # pages come a batch at a time: other columns' batches ran since this one's last page
        if (self._int_pages or self._float_pages) and self.chunk.bloom is None and len(ranges) >= FLAT_BATCH:
            return self._flat_batch(data, ranges)
        return [self.encode_page(data, a, b) for a, b in ranges]

    def _flat_batch(self, data: LeafData, ranges: Sequence[tuple[int, int]]) -> list[EncodedPage]:
        """`encode_page` of each range of a flat INT32 / INT64 / FLOAT / DOUBLE leaf: the levels, values and
        statistics of as many pages at once as one compiled call can do (kernels int_pages / float_pages stop
        where the dictionary must grow or falls back, and before a float page holding a NaN); a chunk's first
        page with a dictionary (whose rules need Python: `_after_page`) and a page with a NaN as `_flat_page`
        encodes them. The same pages as one `_flat_page` each (tests/encode/test_int_pages.py,
        test_float_pages.py), with about half their Python: a store_sales write has 3,300 pages, and its
        threads spent a third of the write holding the GIL around them."""
        done: list[EncodedPage] = []
        i = 0
        while i < len(ranges):
            k = 0
            if self.pages or self.dictionary is None or self.fell_back:
                k = self._flat_run(data, ranges[i:], done)
            if k == 0:
                page = self._flat_page(data, *ranges[i])
                self.pages.append(page)
                done.append(page)
                k = 1
            i += k
        return done

    def _flat_run(self, data: LeafData, ranges: Sequence[tuple[int, int]], done: list[EncodedPage]) -> int:
        """One int_pages / float_pages call over the first of `ranges`: their pages appended to the chunk's and
        to `done`; how many it encoded (0 when the first is a float page holding a NaN)."""
        d = self.dictionary
        use_dictionary = not self.fell_back and d is not None
        starts, ends = [r[0] for r in ranges], [r[1] for r in ranges]
        a, b = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
        valid = data.valid
        if valid is None:
            va, vb, flags = a, b, NO_ROWS
            first_values, end_values = starts, ends
        else:
            first_values, end_values = [data.value_index(x) for x in starts], [data.value_index(x) for x in ends]
            va, vb = np.array(first_values, dtype=np.int64), np.array(end_values, dtype=np.int64)
            flags = valid.view(np.uint8)
        counts = vb - va
        table, keys, size, entry_size, byte_size, limit = self._dictionary_args(int(counts[0]))
        ids = np.empty(int(counts.max()), dtype=np.int32) if use_dictionary else _NO_IDS
        res = np.empty((len(ranges), R_COUNT), dtype=np.int64)
        bound = rle_max_size(b - a, 1)
        if self._int_pages:
            out = self._page_buffer(int((bound + np.maximum(rle_max_size(counts, 32) + 1, delta_max_size(counts))).sum()))
            k = int_pages(flags, a, b, va, vb, self._levels, data.value_array, use_dictionary, table, keys, size,
                          entry_size, byte_size, limit, ids, self._is32, out, res)
        else:
            if use_dictionary:
                bound = bound + rle_max_size(counts, 32) + 1
            out = self._page_buffer(int(bound.sum()))
            bits = data.value_array.view(np.int64 if self._wide else np.int32)
            k = float_pages(flags, a, b, va, vb, self._levels, bits, self._wide, use_dictionary, table, keys, size,
                            entry_size, byte_size, limit, ids, out, res)
        if k == 0:
            return 0
        results = res[:k].tolist()
        view = _fit(out, results[-1][2]).data
        fallback, column, floats = self._fallback, self.leaf.dotted, self._float_pages
        pages = self.pages
        first_row = pages[-1].first_row + pages[-1].span.num_rows if pages else 0
        # the dictionary's state before each page (its checkpoint), advanced page by page
        dict_size, dict_bytes_before = (d.size, d.byte_size) if d is not None else (0, 0)
        used, fell_back = self.dict_entries_used, self.fell_back
        for j, (start, levels_end, end, entries, dict_bytes, as_ids, lo, hi) in enumerate(results):
            self._checkpoints.append(_Checkpoint(dict_size, dict_bytes_before, used, fell_back))
            pa_, pb, pva, pvb = starts[j], ends[j], first_values[j], end_values[j]
            if use_dictionary:
                dict_size, dict_bytes_before = entries, dict_bytes
                if as_ids:
                    used = entries
                else:
                    fell_back = True
            borrowed = False
            body: Section = view[levels_end:end]
            if floats and not as_ids:  # PLAIN: no NaN in a page this call did
                body, borrowed = self._plain_floats(data, pva, pvb)
            sections = page_sections((b"", bytes(view[start:levels_end])), body, self.chunk, borrowed)
            page = EncodedPage(PageSpan(pa_, pb, pa_, pb, pva, pvb), first_row, _RLE_DICTIONARY if as_ids else fallback,
                               sections, self._bounds_stats(pb - pa_ - (pvb - pva), pvb - pva, lo, hi), None,
                               column=column)
            first_row += pb - pa_
            pages.append(page)
            done.append(page)
        if d is not None and use_dictionary:
            d.size, d.byte_size = dict_size, dict_bytes_before
        self.dict_entries_used, self.fell_back = used, fell_back
        return k

    def truncate(self, keep: int) -> None:
        """Drop every page after the first `keep`, restoring the state the first dropped page started from."""
        if keep >= len(self.pages):
            return
        cp = self._checkpoints[keep]
        if self.dictionary is not None:
            self.dictionary.truncate(cp.dict_size, cp.dict_bytes)
        self.dict_entries_used, self.fell_back = cp.dict_entries_used, cp.fell_back
        del self.pages[keep:], self._checkpoints[keep:], self._hashes[keep:]

    def finish(self) -> EncodedChunk:
        """The chunk: a dictionary page when any page used the dictionary, then the data pages (the same
        object as the last call's while no page was added or dropped since)."""
        if self._finished is not None and len(self._finished[0]) == len(self.pages) \
                and all(a is b for a, b in zip(self._finished[0], self.pages, strict=True)):
            return self._finished[1]
        chunk = self._build()
        self._finished = (list(self.pages), chunk)
        return chunk

    def _build(self) -> EncodedChunk:
        """The chunk, built from the pages and dictionary as they are now."""
        builder = None
        if self.chunk.bloom is not None:
            builder = BloomBuilder(self.leaf, self.chunk.bloom, sum(p.span.vb - p.span.va for p in self.pages))
            for hashes in self._hashes:
                builder.add_hashes(hashes)
        bloom = chunk_bitset(builder, [p.encoding for p in self.pages])
        d = self.dictionary
        count = self.dict_entries_used
        if d is None or count == 0:
            return EncodedChunk(None, list(self.pages), bloom)
        return EncodedChunk(dictionary_page(d.plain_page(count), count, self.chunk), list(self.pages), bloom)
