"""The option keywords every public writer takes (`write_table`, `ParquetWriter`, `write_dataset`): their names,
their documentation (appended to each writer's docstring), and "did you mean" for a misspelt keyword.

Each writer spells the keywords out in its signature (so `help()`, IDEs and type checkers see them) and hands
them on with `given(locals())`; `tests/test_keywords.py` checks every writer takes every keyword.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from ..errors import OptionError
from ..integrations.accessors import register_if_imported
from .aliases import ALIASES, suggestion
from .model import WriteOptions

P = ParamSpec("P")
R = TypeVar("R")

OPTION_KEYWORDS: tuple[str, ...] = (*(f.name for f in dataclasses.fields(WriteOptions)), *ALIASES)

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

An unknown keyword raises gpuwrite.OptionError naming the closest known one; a bad value names the option.
"""


def given(scope: Mapping[str, Any]) -> dict[str, Any]:
    """The option keywords of a writer's call, from its `locals()` taken before anything else is bound."""
    return {name: scope[name] for name in OPTION_KEYWORDS}


def suggest_keywords(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, but a misspelt keyword is an OptionError naming the closest known one (Python's own TypeError names
    none)."""
    params = inspect.signature(fn).parameters
    names = [n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(fn)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        for name in kwargs:
            if name not in params:
                raise OptionError(f"unknown option {name!r}{suggestion(name, names)}")
        return fn(*args, **kwargs)

    return checked


def public_writer(fn: Callable[P, R]) -> Callable[P, R]:
    """`suggest_keywords(fn)` with the option keywords' documentation appended to its docstring; each call first
    gives pandas / cudf DataFrames `df.gpuwrite` if that library was imported after gpuwrite (a look-up when not)."""
    checked = suggest_keywords(fn)

    @functools.wraps(checked)
    def entry(*args: P.args, **kwargs: P.kwargs) -> R:
        register_if_imported()
        return checked(*args, **kwargs)

    entry.__doc__ = inspect.cleandoc(fn.__doc__ or "") + "\n\n" + OPTIONS_DOC.strip() + "\n"
    return entry
