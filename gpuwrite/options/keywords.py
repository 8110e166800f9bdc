"""The option keywords every public writer takes (`write_table`, `ParquetWriter`, `write_dataset`), written once
as the `WriteKeywords` TypedDict: their names and types, their documentation (appended to each writer's
docstring), and "did you mean" for a misspelt keyword.

Each writer takes them as `**keywords: Unpack[WriteKeywords]` (type checkers and IDEs see every keyword and its
type); `public_writer` shows them in the writer's runtime signature too (`help()`, `inspect.signature`).
`tests/options/test_keywords.py` checks the names agree with WriteOptions' fields and pyarrow's aliases.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec, TypedDict, TypeVar, get_args, get_type_hints

from ..errors import OptionError
from .aliases import UNSET, Unset, suggestion

P = ParamSpec("P")
R = TypeVar("R")


class WriteKeywords(TypedDict, total=False):
    """The option keywords of the public writers: every WriteOptions field and pyarrow's aliases (ALIASES), as
    the writers accept them; one not given (or None) leaves the value to `options`, else the default."""

    compression: str | None | Unset  # None is uncompressed (pyarrow's), so "not given" is UNSET
    compression_level: int | None
    row_group_size: int | None
    block_size: int | None
    block_row_count_limit: int | None
    data_page_size: int | None
    page_size: int | None
    page_row_count_limit: int | None
    page_size_check_min: int | None
    page_size_check_max: int | None
    page_size_check_estimate: bool | None
    page_value_count_threshold: int | None
    use_dictionary: bool | str | Sequence[str] | None
    enable_dictionary: bool | None
    column_dictionary: Mapping[str, bool] | None
    dictionary_page_size: int | None
    write_statistics: bool | None
    statistics_truncate_length: int | None
    column_index_truncate_length: int | None
    page_checksum: bool | None
    timestamp_type: str | None
    legacy_format: bool | None
    datetime_rebase: str | None
    int96_rebase: str | None
    time_zone: str | None
    widen_unsigned: bool | None
    fallback_encoding: str | None
    validate: bool | None
    device: str | None
    spark_version: str | None
    bloom_filter_enabled: bool | None
    bloom_filter_columns: Mapping[str, bool] | Sequence[str] | None
    bloom_filter_ndv: Mapping[str, int] | None
    bloom_filter_fpp: Mapping[str, float] | None
    bloom_filter_max_bytes: int | None
    bloom_filter_adaptive: bool | None
    bloom_filter_candidates: int | None
    allow_truncated_timestamps: bool | None
    # pyarrow's other pq.write_table keywords (pyarrow_keywords.py: accepted where they mean what gpuwrite
    # writes, else refused saying what it writes instead)
    version: str | None
    data_page_version: str | None
    use_deprecated_int96_timestamps: bool | None
    coerce_timestamps: str | None
    flavor: str | None
    dictionary_pagesize_limit: int | None
    write_page_checksum: bool | None
    max_rows_per_page: int | None
    bloom_filter_options: Mapping[str, bool | Mapping[str, float]] | None
    write_page_index: bool | None
    store_schema: bool | None
    use_compliant_nested_type: bool | None
    store_decimal_as_integer: bool | None
    use_byte_stream_split: bool | Sequence[str] | None
    column_encoding: str | Mapping[str, str] | None
    sorting_columns: Sequence[Any] | None
    encryption_properties: Any | None
    write_batch_size: int | None
    use_content_defined_chunking: bool | Mapping[str, int] | None
    write_time_adjusted_to_utc: bool | None
    writer_engine_version: str | None


KEYWORD_TYPES: dict[str, Any] = get_type_hints(WriteKeywords)
OPTION_KEYWORDS: tuple[str, ...] = tuple(KEYWORD_TYPES)

OPTIONS_DOC = """
Option keywords (all optional; "not given" leaves the value to `options`, else the default shown, which is Spark
4.3's / parquet-java 1.17's; docs/options.md has the Spark key of each and when to change it):

  compression: str | None      codec: "snappy" (default), "zstd", "gzip", "lz4_raw", "uncompressed" / "none";
                               None writes uncompressed, as in pyarrow.
  compression_level: int       zstd (-131072..22, default 3) or gzip (0..9, default 6) level.
  row_group_size: int          rows per row group at most (pyarrow's name; = block_row_count_limit).
  block_size: int              row group size in bytes as parquet-java measures it while writing
                               (default 134217728 = 128 MiB); a row group ends at either limit.
  block_row_count_limit: int   rows per row group at most (default 2147483647: no limit).
  data_page_size / page_size: int   page size in bytes (default 1048576 = 1 MiB).
  page_row_count_limit: int    rows per page at most (default 20000).
  page_size_check_min / page_size_check_max: int   rows between page size checks (default 100 / 10000).
  page_size_check_estimate: bool   estimate the next check from the rows per byte (default True).
  page_value_count_threshold: int  values per page of a repeated column at most (default 1073741823).
  use_dictionary: bool | str | list[str]   pyarrow's: True / False for every column, or the columns
                               (dotted paths) to dictionary-encode, the others not.
  enable_dictionary: bool      dictionary-encode every column first (default True).
  column_dictionary: dict[str, bool]   per column (dotted path) override of enable_dictionary.
  dictionary_page_size: int    bytes a dictionary may grow to before the chunk falls back (default 1048576).
  write_statistics: bool       only True (the default): statistics and page indexes are always written.
  statistics_truncate_length: int    bytes of binary min/max kept in chunk statistics (default: all).
  column_index_truncate_length: int  bytes of binary min/max kept in the column index (default 64).
  page_checksum: bool          CRC-32 of every page (default True).
  timestamp_type: str          "INT96" (default), "TIMESTAMP_MICROS" or "TIMESTAMP_MILLIS" for zoned timestamps.
  legacy_format: bool          Spark's writeLegacyFormat: FLBA decimals, Spark 1.4 lists and maps (default False).
  datetime_rebase / int96_rebase: str   "CORRECTED" (default), "LEGACY" or "EXCEPTION" for values before 1582.
  time_zone: str               session time zone for LEGACY rebasing and partition names (default "UTC").
  widen_unsigned: bool         write uint8 / uint16 / uint32 / uint64 as int16 / int32 / int64 / decimal(20,0),
                               losslessly, marked in Spark's schema in the footer (default False: refused).
  fallback_encoding: str       values of pages without a dictionary: "delta" (default: parquet-java v2's
                               DELTA_BINARY_PACKED / DELTA_BYTE_ARRAY) or "plain" (for Iceberg readers before 1.11).
  validate: bool               refuse values a reader would fail on (default True).
  device: str                  "auto" (default: the GPU when there is one), "cpu" or "gpu".
  spark_version: str           the footer's org.apache.spark.version (default "4.3.0").
  bloom_filter_enabled: bool   a bloom filter for every column (default False).
  bloom_filter_columns: dict[str, bool] | list[str]   per column on / off.
  bloom_filter_ndv: dict[str, int]     expected distinct values per column (enables and sizes its filter).
  bloom_filter_fpp: dict[str, float]   false positive probability per column (default 0.01).
  bloom_filter_max_bytes: int  largest filter in bytes (default 1048576).
  bloom_filter_adaptive: bool  size filters by the distinct values seen (default False).
  bloom_filter_candidates: int candidate sizes of an adaptive filter (default 5).
  allow_truncated_timestamps: bool   pyarrow's: cut timestamp[ns] values (pandas' datetime64[ns]) to
                               microseconds, toward zero as pyarrow does, instead of refusing sub-microsecond
                               parts (default False).

pyarrow's other write_table keywords mean what they mean there where gpuwrite can honour them, and are refused
with what gpuwrite writes instead where it cannot (docs/options.md has the table):
  dictionary_pagesize_limit (= dictionary_page_size), write_page_checksum (= page_checksum), max_rows_per_page
  (= page_row_count_limit), bloom_filter_options ({column: True | {"ndv": n, "fpp": p}}), coerce_timestamps
  ("us" / "ms": timestamp_type TIMESTAMP_MICROS / _MILLIS), use_deprecated_int96_timestamps (True: INT96),
  version ("2.4" / "2.6"; not "1.0"), data_page_version ("2.0" only: v2 pages), flavor ("spark"),
  write_page_index (True only), store_schema (False only: Spark's schema, not Arrow's, is stored),
  use_compliant_nested_type (True only), store_decimal_as_integer (True only), use_byte_stream_split (False
  only), column_encoding, sorting_columns, encryption_properties (None only), write_batch_size (refused),
  use_content_defined_chunking (False only), write_time_adjusted_to_utc (TIME columns are refused anyway)
  and writer_engine_version (ignored, as pyarrow ignores it).

An unknown keyword raises gpuwrite.OptionError naming the closest known one; a bad value names the option.
"""


def keyword_parameters() -> list[inspect.Parameter]:
    """The option keywords as keyword-only parameters, typed, each defaulting to its "not given" value (UNSET
    where None is a value, as for compression; else None)."""
    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=hint,
                              default=UNSET if Unset in get_args(hint) else None)
            for name, hint in KEYWORD_TYPES.items()]


def shown_signature(fn: Callable[..., Any]) -> inspect.Signature:
    """`fn`'s signature with its `**keywords: Unpack[WriteKeywords]` spelled out as the option keywords, so that
    `help()` and `inspect.signature` list each one as type checkers see them."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    spread = [i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD]
    if not spread:
        raise TypeError(f"{fn.__qualname__} takes no **keywords: Unpack[WriteKeywords]")
    return sig.replace(parameters=[*params[:spread[0]], *keyword_parameters()])


def _suggesting(fn: Callable[P, R], sig: inspect.Signature) -> Callable[P, R]:
    """`fn`, but a keyword not in `sig` is an OptionError naming the closest one `sig` has."""
    params = sig.parameters
    names = [n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(fn)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        for name in kwargs:
            if name not in params:
                raise OptionError(f"unknown option {name!r}{suggestion(name, names)}")
        return fn(*args, **kwargs)

    return checked


def suggest_keywords(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, but a misspelt keyword is an OptionError naming the closest known one (Python's own TypeError names
    none)."""
    return _suggesting(fn, inspect.signature(fn))


def public_writer(fn: Callable[P, R], before: Callable[[], None] | None = None) -> Callable[P, R]:
    """A public writer taking `**keywords: Unpack[WriteKeywords]`: misspelt keywords suggest the closest one,
    its signature shows the option keywords, and their documentation is appended to its docstring; `before`
    runs first on each call (the API's entry points register the DataFrame accessors there)."""
    shown = shown_signature(fn)
    checked = _suggesting(fn, shown)

    @functools.wraps(checked)
    def entry(*args: P.args, **kwargs: P.kwargs) -> R:
        if before is not None:
            before()
        return checked(*args, **kwargs)

    entry.__signature__ = shown  # type: ignore[attr-defined]
    entry.__doc__ = inspect.cleandoc(fn.__doc__ or "") + "\n\n" + OPTIONS_DOC.strip() + "\n"
    return entry
