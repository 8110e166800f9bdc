"""One column chunk, page by page: parquet-java's dictionary-with-fallback decisions, then page bytes.

The planner (`gpuwrite.plan`) decides where pages end; this module turns each page's rows into a
DATA_PAGE_V2 (levels, values, header, CRC) and, at the end, the dictionary page and the chunk metadata.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gpuwrite.kernels.bits import bit_width_u64
from gpuwrite.kernels.delta import byte_array_prefixes, delta_encode, delta_max_size, gather_suffixes
from gpuwrite.kernels.plain import canonical_float_bits32, canonical_float_bits64
from gpuwrite.kernels.rle import rle_emitted_size, rle_encode, rle_max_size

from ..columns import LeafData
from ..format.enums import Encoding, PageType
from ..format.structs import DataPageHeaderV2, DictionaryPageHeader, PageHeader
from ..format.thrift import serialize
from ..options import BloomSpec
from ..schema import BYTE_ARRAY, Leaf
from .bloom import BloomBuilder, chunk_bitset
from .dictionary import Dictionary
from .stats import PageStats, page_stats

# SPEC: FallbackValuesWriter raw size: PLAIN-equivalent bytes per value (length + 4 for byte arrays,
# FIXED_LEN_BYTE_ARRAY and INT96 included).
_RAW_WIDTH = {"int32": 4, "float": 4, "int64": 8, "double": 8}
# Values encoding when the dictionary is off or abandoned (DefaultV2ValuesWriterFactory), BOOLEAN PLAIN by choice.
FALLBACK = {"bool": Encoding.PLAIN, "int32": Encoding.DELTA_BINARY_PACKED, "int64": Encoding.DELTA_BINARY_PACKED,
            "float": Encoding.PLAIN, "double": Encoding.PLAIN, "int96": Encoding.PLAIN,
            "bytes": Encoding.DELTA_BYTE_ARRAY, "flba": Encoding.DELTA_BYTE_ARRAY}


@dataclass
class EncodedPage:
    """A finished data page: header and body bytes plus what the footer and indexes need."""

    header: bytes
    body: bytes
    encoding: int
    first_row: int
    num_rows: int
    num_values: int
    num_nulls: int
    uncompressed_size: int
    stats: PageStats
    byte_array_bytes: int | None
    rep_histogram: list[int] | None = None  # per repetition level, when the max level is > 0
    def_histogram: list[int] | None = None  # per definition level, when the max level is > 1

    @property
    def size(self) -> int:
        """Bytes on disk, header included."""
        return len(self.header) + len(self.body)


@dataclass
class EncodedChunk:
    """A finished column chunk: optional dictionary page, data pages, and chunk-level facts."""

    dictionary_header: bytes | None
    dictionary_body: bytes | None
    dictionary_uncompressed: int
    dictionary_entries: int
    pages: list[EncodedPage] = field(default_factory=list)
    bloom_filter: bytes | None = None  # bitset written after the offset indexes, when the chunk gets one


def signed_crc32(body: bytes) -> int:
    """The page CRC as Thrift's i32 holds it (zlib's CRC-32, two's complement)."""
    crc = zlib.crc32(body)
    return crc - (1 << 32) if crc >= 1 << 31 else crc


def level_width(max_level: int) -> int:
    """Bit width of levels up to max_level."""
    return int(max_level).bit_length()


def finish_page(leaf: Leaf, data: LeafData, first_row: int, a: int, b: int, encoding: int, rep_len: int,
                def_len: int, values_len: int, body: bytes, compressed: bool, crc: int | None,
                stats: PageStats) -> EncodedPage:
    """The DATA_PAGE_V2 for rows a..b of a leaf, from its finished body (rep levels, def levels, stored values)."""
    ea, eb = data.entry_index(a), data.entry_index(b)
    va, vb = int(data.value_index(a)), int(data.value_index(b))
    num_values = eb - ea
    num_nulls = num_values - (vb - va)
    levels_len = rep_len + def_len
    header = PageHeader(
        type=PageType.DATA_PAGE_V2, uncompressed_page_size=levels_len + values_len, compressed_page_size=len(body),
        crc=crc, data_page_header_v2=DataPageHeaderV2(
            num_values=num_values, num_nulls=num_nulls, num_rows=b - a, encoding=encoding,
            definition_levels_byte_length=def_len, repetition_levels_byte_length=rep_len,
            is_compressed=compressed))
    byte_array = None
    if leaf.physical == BYTE_ARRAY:
        byte_array = int(data.offsets[vb] - data.offsets[va])
    rep_hist = def_hist = None
    # SPEC: SizeStatistics level histograms: repetition when its max level > 0, definition when > 1.
    if leaf.max_rep > 0:
        rep_hist = np.bincount(data.rep[ea:eb], minlength=leaf.max_rep + 1).tolist()
    if leaf.max_def > 1:
        def_hist = np.bincount(data.def_levels[ea:eb], minlength=leaf.max_def + 1).tolist()
    return EncodedPage(serialize(header), body, encoding, first_row, b - a, num_values, num_nulls,
                       levels_len + values_len, stats, byte_array, rep_hist, def_hist)


def dictionary_header(raw_len: int, body: bytes, count: int, checksum: bool) -> bytes:
    """The serialized DICTIONARY_PAGE header (PLAIN entries) for a finished dictionary body."""
    header = PageHeader(type=PageType.DICTIONARY_PAGE, uncompressed_page_size=raw_len,
                        compressed_page_size=len(body), crc=signed_crc32(body) if checksum else None,
                        dictionary_page_header=DictionaryPageHeader(num_values=count, encoding=Encoding.PLAIN))
    return serialize(header)


def raw_value_bytes(leaf: Leaf, data: LeafData, va: int, vb: int) -> int:
    """parquet-java's buffered value size for a page: PLAIN-equivalent bytes (booleans: packed bits)."""
    if leaf.kind == "bool":
        return (vb - va) // 8
    if leaf.kind in _RAW_WIDTH:
        return _RAW_WIDTH[leaf.kind] * (vb - va)
    return int(data.offsets[vb] - data.offsets[va]) + 4 * (vb - va)


class LevelMeter:
    """Tracks the bytes parquet-java's level encoders (repetition, then definition) have emitted for the
    current page."""

    def __init__(self, leaf: Leaf) -> None:
        self.def_width = level_width(leaf.max_def)
        self.rep_width = level_width(leaf.max_rep)
        self.state = np.zeros(6, dtype=np.int64)
        self.rep_state = np.zeros(6, dtype=np.int64)
        self.upto = 0
        self.size = 0

    def reset(self, row: int) -> None:
        """A new page starts at `row`."""
        self.state[:] = 0
        self.rep_state[:] = 0
        self.upto = row
        self.size = 0

    def bytes_until(self, data: LeafData, row: int) -> int:
        """Emitted bytes once rows up to `row` are fed (rows are fed once, in order)."""
        if self.def_width == 0 and self.rep_width == 0:
            return 0
        if row > self.upto:
            ea, eb = data.entry_index(self.upto), data.entry_index(row)
            size = 0
            if self.rep_width:
                size += int(rle_emitted_size(data.rep, ea, eb, self.rep_width, self.rep_state))
            if self.def_width:
                size += int(rle_emitted_size(data.def_levels, ea, eb, self.def_width, self.state))
            self.size = size
            self.upto = row
        return self.size


def _rle_levels(levels: np.ndarray, ea: int, eb: int, width: int) -> bytes:
    """A v2 level section: RLE/bit-packed hybrid at `width`, no length prefix; empty when the width is 0."""
    if width == 0:
        return b""
    out = np.empty(rle_max_size(eb - ea, width), dtype=np.uint8)
    end = rle_encode(levels, ea, eb, width, out, 0)
    return out[:end].tobytes()


def _encode_levels(leaf: Leaf, data: LeafData, a: int, b: int) -> tuple[bytes, bytes]:
    """Repetition and definition level sections of rows a..b."""
    ea, eb = data.entry_index(a), data.entry_index(b)
    rep = _rle_levels(data.rep, ea, eb, level_width(leaf.max_rep)) if leaf.max_rep else b""
    return rep, _rle_levels(data.def_levels, ea, eb, level_width(leaf.max_def))


def _encode_ids(ids: np.ndarray, dict_size: int) -> bytes:
    """RLE_DICTIONARY body: one bit-width byte, then the hybrid runs (width from the current dictionary size)."""
    width = 32 if dict_size == 0 else int(bit_width_u64(np.uint64(dict_size - 1)))
    out = np.empty(rle_max_size(len(ids), width) + 1, dtype=np.uint8)
    out[0] = width
    end = rle_encode(ids, 0, len(ids), width, out, 1)
    return out[:end].tobytes()


def _delta(values: np.ndarray, is32: bool) -> bytes:
    """DELTA_BINARY_PACKED bytes of an int64 array."""
    out = np.empty(delta_max_size(len(values)), dtype=np.uint8)
    end = delta_encode(values, 0, len(values), is32, out, 0)
    return out[:end].tobytes()


def _delta_byte_array(data: LeafData, va: int, vb: int) -> bytes:
    """DELTA_BYTE_ARRAY: prefix lengths, suffix lengths (both DELTA_BINARY_PACKED), then suffix bytes."""
    n = vb - va
    prefix = np.empty(n, dtype=np.int64)
    suffix = np.empty(n, dtype=np.int64)
    total = byte_array_prefixes(data.offsets, data.data, va, vb, prefix, suffix)
    tail = np.empty(total, dtype=np.uint8)
    gather_suffixes(data.offsets, data.data, va, vb, prefix, tail, 0)
    return _delta(prefix, True) + _delta(suffix, True) + tail.tobytes()


def fallback_values(leaf: Leaf, data: LeafData, va: int, vb: int) -> bytes:
    """Values va..vb in the leaf's fallback encoding (see FALLBACK)."""
    kind = leaf.kind
    if kind == "bool":
        return np.packbits(data.values[va:vb], bitorder="little").tobytes()
    if kind in ("int32", "int64"):
        return _delta(data.values[va:vb].astype(np.int64, copy=False), kind == "int32")
    if kind == "float":
        return canonical_float_bits32(data.values[va:vb].view(np.int32)).tobytes()
    if kind == "double":
        return canonical_float_bits64(data.values[va:vb].view(np.int64)).tobytes()
    if kind == "int96":
        return data.data[data.offsets[va]:data.offsets[vb]].tobytes()
    return _delta_byte_array(data, va, vb)


class ChunkEncoder:
    """Encodes the pages of one column chunk in order, holding the dictionary state between them."""

    def __init__(self, leaf: Leaf, *, use_dictionary: bool, dictionary_limit: int,
                 compress: Callable[[bytes], bytes], codec_is_identity: bool, checksum: bool,
                 bloom: BloomSpec | None = None) -> None:
        self.leaf = leaf
        self.compress = compress
        self.identity = codec_is_identity
        self.checksum = checksum
        self.dictionary: Dictionary | None = None
        if use_dictionary and leaf.kind != "bool":
            self.dictionary = Dictionary(leaf, dictionary_limit)
        self.dict_entries_used = 0  # entries at the end of the last dictionary-encoded page
        self.fell_back = self.dictionary is None
        self.pages: list[EncodedPage] = []
        self.rows_written = 0
        # SPEC: ColumnValueCollector inserts every non-null value's hash, whatever the page's encoding.
        self.bloom = BloomBuilder(leaf, bloom) if bloom is not None else None

    def _values(self, data: LeafData, va: int, vb: int) -> tuple[int, bytes]:
        """Encoding and body of a page's values, applying parquet-java's dictionary rules."""
        d = self.dictionary
        if self.fell_back or d is None:
            return FALLBACK[self.leaf.kind], fallback_values(self.leaf, data, va, vb)
        ids, overflow = d.insert(data, va, vb)
        if overflow < 0:
            body = _encode_ids(ids, d.size)
            first = not self.pages
            # SPEC: DictionaryValuesWriter.isCompressionSatisfying, first page only: keep iff
            # encoded + dictionary < raw.
            if not first or len(body) + d.byte_size < raw_value_bytes(self.leaf, data, va, vb):
                self.dict_entries_used = d.size
                return Encoding.RLE_DICTIONARY, body
        self.fell_back = True
        return FALLBACK[self.leaf.kind], fallback_values(self.leaf, data, va, vb)

    def encode_page(self, data: LeafData, a: int, b: int) -> EncodedPage:
        """Encode rows a..b of `data` (row indices of the window) as the chunk's next DATA_PAGE_V2."""
        va, vb = int(data.value_index(a)), int(data.value_index(b))
        num_nulls = (data.entry_index(b) - data.entry_index(a)) - (vb - va)
        rep, dfn = _encode_levels(self.leaf, data, a, b)
        levels = rep + dfn
        encoding, values = self._values(data, va, vb)
        if self.bloom is not None:
            self.bloom.add(data, va, vb)
        stored, compressed = values, bool(values)
        if values and not self.identity:
            packed = self.compress(values)
            if len(packed) < len(values):
                stored = packed
            else:
                compressed = False
        body = levels + stored
        crc = signed_crc32(body) if self.checksum else None
        page = finish_page(self.leaf, data, self.rows_written, a, b, int(encoding), len(rep), len(dfn),
                           len(values), body, compressed, crc, page_stats(self.leaf, data, va, vb, num_nulls))
        self.rows_written += b - a
        self.pages.append(page)
        return page

    def finish(self) -> EncodedChunk:
        """The chunk: a dictionary page when any page used the dictionary, then the data pages."""
        d = self.dictionary
        count = self.dict_entries_used
        bloom = chunk_bitset(self.bloom, [p.encoding for p in self.pages])
        if d is None or count == 0:
            return EncodedChunk(None, None, 0, 0, self.pages, bloom)
        raw = d.plain_page(count)
        body = self.compress(raw) if not self.identity else raw
        header = dictionary_header(len(raw), body, count, self.checksum)
        return EncodedChunk(header, body, len(raw), count, self.pages, bloom)
