"""The page model every backend hands to the assembler: where a page lies (`PageSpan`), its body
(`PageSections`), the finished data and dictionary pages, the column chunk, and a page's statistics.

Plain data, shared by the CPU encoders (`encode/`), the GPU backend (`backends/device/`), the row-group driver
and the assembler (`assemble/`); the rules that fill it live with the encoders.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .pipeline.leafdata import LeafData

Section = bytes | memoryview  # a page section; large value sections stay views of the buffer they were built in
Compressor = Callable[[Section], Section]


class PageSpan(NamedTuple):
    """Where a page lies in the window: rows a..b, level entries ea..eb, non-null values va..vb. A named tuple,
    as `PageSections`: immutable and made in 0.4 us, where a frozen dataclass takes 3.4 us (two per page:
    7 of the 12 us of Python a page of store_sales cost in the GPU path's chunks)."""

    a: int
    b: int
    ea: int
    eb: int
    va: int
    vb: int

    @classmethod
    def of(cls, data: LeafData, a: int, b: int) -> PageSpan:
        """The span of rows a..b of `data`."""
        return cls(a, b, data.entry_index(a), data.entry_index(b), data.value_index(a), data.value_index(b))

    @property
    def num_rows(self) -> int:
        """Rows (records) in the page."""
        return self.b - self.a

    @property
    def num_values(self) -> int:
        """Level entries in the page (Parquet's num_values: nulls and empty containers included)."""
        return self.eb - self.ea

    @property
    def num_nulls(self) -> int:
        """Entries without a value."""
        return self.num_values - (self.vb - self.va)


class PageSections(NamedTuple):
    """A page body: repetition levels, definition levels, then the stored (maybe compressed) values."""

    body: Section
    rep_len: int
    def_len: int
    values_len: int  # the values section before compression
    compressed: bool
    crc: int | None


@dataclass
class EncodedPage:
    """A finished data page: its sections, what the footer, indexes and statistics need, and (once the
    assembler made it) its DATA_PAGE_V2 header."""

    span: PageSpan
    first_row: int  # first row of the page within its row group
    encoding: int
    sections: PageSections
    stats: PageStats
    byte_array_bytes: int | None  # unencoded BYTE_ARRAY bytes (SizeStatistics), BYTE_ARRAY leaves only
    rep_histogram: list[int] | None = None  # per repetition level, when the max level is > 0
    def_histogram: list[int] | None = None  # per definition level, when the max level is > 1
    header: bytes | memoryview = b""
    column: str = ""  # the leaf's dotted path, for error messages

    @property
    def body(self) -> Section:
        """The page's bytes after its header."""
        return self.sections.body

    @property
    def num_rows(self) -> int:
        """Rows (records) in the page."""
        return self.span.num_rows

    @property
    def num_values(self) -> int:
        """Level entries in the page."""
        return self.span.num_values

    @property
    def num_nulls(self) -> int:
        """Entries without a value."""
        return self.span.num_nulls

    @property
    def uncompressed_size(self) -> int:
        """Levels plus the values section before compression."""
        s = self.sections
        return s.rep_len + s.def_len + s.values_len

    @property
    def size(self) -> int:
        """Bytes on disk, header included."""
        return len(self.header) + len(self.sections.body)


@dataclass(frozen=True)
class DictionaryPage:
    """A chunk's PLAIN dictionary page: stored body, its size before compression, entries and CRC."""

    body: Section
    uncompressed_size: int
    num_values: int
    crc: int | None
    header: bytes | memoryview = b""  # its DICTIONARY_PAGE header, when the backend made it (else the assembler)


@dataclass
class EncodedChunk:
    """A finished column chunk: optional dictionary page, data pages, and the bloom filter bitset."""

    dictionary: DictionaryPage | None
    pages: list[EncodedPage] = field(default_factory=list)
    bloom_filter: bytes | None = None  # bitset written after the offset indexes, when the chunk gets one
    blob: bytes | memoryview | None = None  # the chunk's bytes in file order, when the backend laid them out


@dataclass
class PageStats:
    """Statistics of one page: null count, and min/max as comparable keys plus their PLAIN bytes."""

    null_count: int
    num_values: int
    min_key: Any = None
    max_key: Any = None
    min_bytes: bytes = b""
    max_bytes: bytes = b""
    all_same: bool = True  # every non-null value identical (INT96 only writes min/max then)
    # FLOAT / DOUBLE: NaN values, and the largest non-NaN value when NaN is the max (Iceberg's metrics count NaN
    # and never use it as a bound; parquet-java's statistics keep NaN as the max).
    nan_count: int = 0
    max_not_nan_key: Any = None
    max_not_nan_bytes: bytes = b""

    @property
    def has_values(self) -> bool:
        """Whether the page holds at least one non-null value."""
        return self.num_values > 0

    def bounds_without_nan(self) -> tuple[bytes, bytes] | None:
        """PLAIN bytes of the smallest and largest non-NaN value (None when every value is null or NaN)."""
        if self.num_values <= self.nan_count:
            return None
        if self.nan_count:
            return self.min_bytes, self.max_not_nan_bytes
        return self.min_bytes, self.max_bytes
