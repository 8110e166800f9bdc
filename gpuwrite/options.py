"""Write options: one frozen object with Spark's defaults, built from Python keywords and Spark / parquet-java keys.

Keywords win over keys. Every key parquet-java or Spark reads for a Parquet write is listed in `_KEYS`; an
unknown key or a bad value raises OptionError naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import OptionError

DEFAULT_BLOCK_SIZE = 128 * 1024 * 1024
DEFAULT_PAGE_SIZE = 1024 * 1024
DEFAULT_DICTIONARY_PAGE_SIZE = 1024 * 1024
DEFAULT_PAGE_ROW_COUNT_LIMIT = 20_000
DEFAULT_MIN_ROW_COUNT_FOR_PAGE_SIZE_CHECK = 100
DEFAULT_MAX_ROW_COUNT_FOR_PAGE_SIZE_CHECK = 10_000
DEFAULT_PAGE_VALUE_COUNT_THRESHOLD = (2**31 - 1) // 2
DEFAULT_COLUMN_INDEX_TRUNCATE_LENGTH = 64
DEFAULT_STATISTICS_TRUNCATE_LENGTH = 2**31 - 1
DEFAULT_ZSTD_LEVEL = 3
DEFAULT_SPARK_VERSION = "4.3.0"
INT_MAX = 2**31 - 1

CODECS = ("uncompressed", "snappy", "gzip", "zstd", "lz4_raw")
_CODEC_ALIASES = {"none": "uncompressed", "uncompressed": "uncompressed", "snappy": "snappy", "gzip": "gzip",
                  "zstd": "zstd", "lz4_raw": "lz4_raw", "lz4raw": "lz4_raw"}
TIMESTAMP_TYPES = ("INT96", "TIMESTAMP_MICROS", "TIMESTAMP_MILLIS")
REBASE_MODES = ("CORRECTED",)
DEVICES = ("auto", "cpu", "gpu")


@dataclass(frozen=True)
class WriteOptions:
    """Everything that shapes the bytes of a file; defaults are Spark 4.3's and parquet-java 1.17's."""

    compression: str = "snappy"
    compression_level: int | None = None
    block_size: int = DEFAULT_BLOCK_SIZE
    block_row_count_limit: int = INT_MAX
    page_size: int = DEFAULT_PAGE_SIZE
    dictionary_page_size: int = DEFAULT_DICTIONARY_PAGE_SIZE
    enable_dictionary: bool = True
    column_dictionary: Mapping[str, bool] = field(default_factory=dict)
    page_row_count_limit: int = DEFAULT_PAGE_ROW_COUNT_LIMIT
    page_size_check_min: int = DEFAULT_MIN_ROW_COUNT_FOR_PAGE_SIZE_CHECK
    page_size_check_max: int = DEFAULT_MAX_ROW_COUNT_FOR_PAGE_SIZE_CHECK
    page_size_check_estimate: bool = True
    page_value_count_threshold: int = DEFAULT_PAGE_VALUE_COUNT_THRESHOLD
    page_checksum: bool = True
    statistics_truncate_length: int = DEFAULT_STATISTICS_TRUNCATE_LENGTH
    column_index_truncate_length: int = DEFAULT_COLUMN_INDEX_TRUNCATE_LENGTH
    timestamp_type: str = "INT96"
    legacy_format: bool = False
    datetime_rebase: str = "CORRECTED"
    int96_rebase: str = "CORRECTED"
    time_zone: str = "UTC"
    device: str = "auto"
    spark_version: str = DEFAULT_SPARK_VERSION

    def __post_init__(self) -> None:
        _check_choice("compression", self.compression, CODECS)
        _check_choice("timestamp_type", self.timestamp_type, TIMESTAMP_TYPES)
        _check_choice("device", self.device, DEVICES)
        for name in ("datetime_rebase", "int96_rebase"):
            if getattr(self, name) not in REBASE_MODES:
                raise OptionError(f"option {name}={getattr(self, name)!r}: only CORRECTED is supported so far "
                                  "(LEGACY and EXCEPTION rebase are not implemented yet)")
        for name in ("block_size", "page_size", "page_row_count_limit", "page_size_check_min",
                     "page_size_check_max", "block_row_count_limit", "page_value_count_threshold",
                     "column_index_truncate_length", "statistics_truncate_length"):
            _check_positive(name, getattr(self, name))
        if self.dictionary_page_size < 0:
            raise OptionError(f"option dictionary_page_size must be >= 0, got {self.dictionary_page_size}")
        if self.compression_level is not None and self.compression not in ("zstd", "gzip"):
            raise OptionError(f"option compression_level applies to zstd and gzip, not {self.compression!r}")

    def dictionary_enabled(self, column: str) -> bool:
        """Whether `column` (dotted path) is dictionary-encoded first, with per-column overrides."""
        return self.column_dictionary.get(column, self.enable_dictionary)

    def replace(self, **changes: Any) -> WriteOptions:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_conf(cls, conf: Mapping[str, Any] | None = None, **keywords: Any) -> WriteOptions:
        """Build options from Spark / parquet-java keys, then Python keywords (keywords win)."""
        values: dict[str, Any] = {}
        column_dict: dict[str, bool] = {}
        codec_sources: dict[str, str] = {}
        for key, raw in (conf or {}).items():
            if not isinstance(key, str):
                raise OptionError(f"option keys must be strings, got {key!r}")
            base, _, column = key.partition("#")
            if base == "parquet.enable.dictionary" and column:
                column_dict[column] = _parse_bool(key, raw)
                continue
            if base in _CODEC_KEYS and not column:
                codec_sources[base] = _parse_codec(key, raw)
                continue
            if base.startswith("parquet.bloom.filter."):
                if base not in _BLOOM_KEYS:
                    raise OptionError(f"unknown option {key!r}")
                _refuse_bloom(key, raw)
                continue
            spec = _KEYS.get(base)
            if spec is None or column:
                raise OptionError(f"unknown option {key!r}")
            name, parse = spec
            if name is None:
                parse(key, raw)
                continue
            values[name] = parse(key, raw)
        for key in _CODEC_KEYS:
            if key in codec_sources:
                values["compression"] = codec_sources[key]
                break
        if column_dict:
            values["column_dictionary"] = column_dict
        for name, value in keywords.items():
            if name not in _FIELDS:
                raise OptionError(f"unknown option {name!r}")
            if value is None and name != "compression_level":
                continue
            if name == "compression":
                value = _parse_codec("compression", value)
            values[name] = value
        return cls(**values)


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    """Raise OptionError unless value is one of choices."""
    if value not in choices:
        raise OptionError(f"option {name}={value!r} is not one of {', '.join(choices)}")


def _check_positive(name: str, value: Any) -> None:
    """Raise OptionError unless value is a positive int."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise OptionError(f"option {name} must be a positive integer, got {value!r}")


def _parse_bool(key: str, raw: Any) -> bool:
    """Parse a Hadoop-style boolean ('true' / 'false', any case)."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise OptionError(f"option {key!r} must be true or false, got {raw!r}")


def _parse_int(key: str, raw: Any) -> int:
    """Parse an integer option value."""
    try:
        value = int(str(raw).strip()) if not isinstance(raw, int) or isinstance(raw, bool) else raw
    except ValueError:
        raise OptionError(f"option {key!r} must be an integer, got {raw!r}") from None
    if isinstance(value, bool):
        raise OptionError(f"option {key!r} must be an integer, got {raw!r}")
    return value


def _parse_codec(key: str, raw: Any) -> str:
    """Map Spark's codec names to ours; refuse the ones we cannot write."""
    text = str(raw).strip().lower()
    if text in _CODEC_ALIASES:
        return _CODEC_ALIASES[text]
    if text in ("lzo", "brotli", "lz4"):
        raise OptionError(f"option {key!r}={raw!r}: codec {text} is not supported by gpuwrite "
                          f"(use one of {', '.join(CODECS)})")
    raise OptionError(f"option {key!r}={raw!r} is not a known codec ({', '.join(CODECS)})")


def _parse_upper_choice(choices: tuple[str, ...]) -> Callable[[str, Any], str]:
    """A parser for case-insensitive enumerated values."""
    def parse(key: str, raw: Any) -> str:
        text = str(raw).strip().upper()
        if text not in choices:
            raise OptionError(f"option {key!r}={raw!r} is not one of {', '.join(choices)}")
        return text
    return parse


def _parse_rebase(key: str, raw: Any) -> str:
    """Rebase modes: only CORRECTED is implemented; LEGACY and EXCEPTION are named as not supported yet."""
    text = str(raw).strip().upper()
    if text in ("LEGACY", "EXCEPTION"):
        raise OptionError(f"option {key!r}={raw!r}: LEGACY and EXCEPTION rebase are not implemented yet")
    if text != "CORRECTED":
        raise OptionError(f"option {key!r}={raw!r} is not one of CORRECTED, LEGACY, EXCEPTION")
    return text


def _parse_writer_version(key: str, raw: Any) -> None:
    """Only v2 pages are written: PARQUET_1_0 / v1 is an error."""
    text = str(raw).strip()
    if text.lower() in ("v2", "parquet_2_0"):
        return
    if text.lower() in ("v1", "parquet_1_0"):
        raise OptionError(f"option {key!r}={raw!r}: gpuwrite writes Parquet v2 data pages only "
                          "(use Spark's own writer for v1 pages)")
    raise OptionError(f"option {key!r}={raw!r} is not a writer version (v1, v2, PARQUET_1_0, PARQUET_2_0)")


def _parse_str(key: str, raw: Any) -> str:
    """A non-empty string value."""
    text = str(raw).strip()
    if not text:
        raise OptionError(f"option {key!r} must not be empty")
    return text


def _ignore(key: str, raw: Any) -> None:
    """Keys Spark sets that change nothing in a single file (kept so Spark configs pass through)."""


def _refuse_bloom(key: str, raw: Any) -> None:
    """Bloom filters are not written yet: enabling one is an error rather than a silently missing filter."""
    base = key.partition("#")[0]
    if base in ("parquet.bloom.filter.enabled", "parquet.bloom.filter.adaptive.enabled"):
        if not _parse_bool(key, raw):
            return
    elif base not in ("parquet.bloom.filter.expected.ndv",):
        return
    raise OptionError(f"option {key!r}: bloom filters are not implemented yet")


_CODEC_KEYS = ("compression", "parquet.compression", "spark.sql.parquet.compression.codec")
_BLOOM_KEYS = ("parquet.bloom.filter.enabled", "parquet.bloom.filter.expected.ndv", "parquet.bloom.filter.fpp",
               "parquet.bloom.filter.max.bytes", "parquet.bloom.filter.adaptive.enabled",
               "parquet.bloom.filter.candidates.number")
_KEYS: dict[str, tuple[str | None, Callable[[str, Any], Any]]] = {
    "parquet.block.size": ("block_size", _parse_int),
    "parquet.block.row.count.limit": ("block_row_count_limit", _parse_int),
    "parquet.page.size": ("page_size", _parse_int),
    "parquet.dictionary.page.size": ("dictionary_page_size", _parse_int),
    "parquet.enable.dictionary": ("enable_dictionary", _parse_bool),
    "parquet.page.row.count.limit": ("page_row_count_limit", _parse_int),
    "parquet.page.size.row.check.min": ("page_size_check_min", _parse_int),
    "parquet.page.size.row.check.max": ("page_size_check_max", _parse_int),
    "parquet.page.size.check.estimate": ("page_size_check_estimate", _parse_bool),
    "parquet.page.value.count.threshold": ("page_value_count_threshold", _parse_int),
    "parquet.page.write-checksum.enabled": ("page_checksum", _parse_bool),
    "parquet.statistics.truncate.length": ("statistics_truncate_length", _parse_int),
    "parquet.columnindex.truncate.length": ("column_index_truncate_length", _parse_int),
    "parquet.compression.codec.zstd.level": ("compression_level", _parse_int),
    "parquet.writer.version": (None, _parse_writer_version),
    "parquet.summary.metadata.level": (None, _ignore),
    "spark.sql.parquet.outputTimestampType": ("timestamp_type", _parse_upper_choice(TIMESTAMP_TYPES)),
    "spark.sql.parquet.writeLegacyFormat": ("legacy_format", _parse_bool),
    "spark.sql.parquet.datetimeRebaseModeInWrite": ("datetime_rebase", _parse_rebase),
    "spark.sql.parquet.int96RebaseModeInWrite": ("int96_rebase", _parse_rebase),
    "spark.sql.session.timeZone": ("time_zone", _parse_str),
}
_FIELDS = {f.name for f in dataclasses.fields(WriteOptions)}


def resolve_options(options: WriteOptions | Mapping[str, Any] | None, keywords: Mapping[str, Any]) -> WriteOptions:
    """Combine an options object or key mapping with keyword overrides into one WriteOptions."""
    if isinstance(options, WriteOptions):
        unknown = set(keywords) - _FIELDS
        if unknown:
            raise OptionError(f"unknown option {sorted(unknown)[0]!r}")
        return options.replace(**{k: v for k, v in keywords.items() if v is not None}) if keywords else options
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options must be a WriteOptions or a mapping of keys, got {type(options).__name__}")
    return WriteOptions.from_conf(options, **keywords)
