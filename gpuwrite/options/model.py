"""Write options: one frozen object with Spark's defaults, built from Python keywords and Spark / parquet-java keys.

Keywords win over keys. Every key parquet-java reads for a Parquet write is listed in `_KEYS`, Spark's
`spark.sql.*` keys in `options/sql_keys.py`; an unknown key or a bad value raises OptionError naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ..errors import OptionError
from .aliases import ALIASES, suggestion, translate
from .sql_keys import CODEC_KEY, REBASE_MODES, SQL_KEYS, TIMESTAMP_TYPES
from .values import Parser, parse_bool, parse_float, parse_int, zone_problem

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
LONG_MAX = 2**63 - 1  # Java Long.MAX_VALUE; modules that need it import it from here
DEFAULT_BLOOM_FILTER_FPP = 0.01  # SPEC: ParquetProperties.DEFAULT_BLOOM_FILTER_FPP
DEFAULT_BLOOM_FILTER_MAX_BYTES = 1024 * 1024  # SPEC: ParquetProperties.DEFAULT_MAX_BLOOM_FILTER_BYTES
DEFAULT_BLOOM_FILTER_CANDIDATES = 5  # SPEC: ParquetProperties.DEFAULT_BLOOM_FILTER_CANDIDATES_NUMBER
MIN_BLOOM_FILTER_BYTES = 32  # SPEC: BlockSplitBloomFilter.LOWER_BOUND_BYTES (a smaller maximum is an error there)

CODECS = ("uncompressed", "snappy", "gzip", "zstd", "lz4_raw")
_CODEC_ALIASES = {"none": "uncompressed", "uncompressed": "uncompressed", "snappy": "snappy", "gzip": "gzip",
                  "zstd": "zstd", "lz4_raw": "lz4_raw", "lz4raw": "lz4_raw"}
DEVICES = ("auto", "cpu", "gpu")
# Values encoding of pages that are not dictionary-encoded: "delta" is parquet-java v2's
# (DefaultV2ValuesWriterFactory: DELTA_BINARY_PACKED for INT32 / INT64, DELTA_BYTE_ARRAY for BINARY /
# FIXED_LEN_BYTE_ARRAY), "plain" is PLAIN for every type (DefaultV1ValuesWriterFactory's fallback, what Iceberg's
# own writer uses: readers without DELTA_* decoders, e.g. Iceberg's vectorized reader before 1.11, read it).
FALLBACK_ENCODINGS = ("delta", "plain")
ZSTD_LEVEL_KEY = "parquet.compression.codec.zstd.level"
# Levels each codec takes, the same rule for keywords and keys. SPEC: zstd's ZSTD_minCLevel() .. ZSTD_maxCLevel()
# (zstd-jni's Zstd.minCompressionLevel / maxCompressionLevel; parquet-java's ZstandardCodec passes the level
# on unchecked and zstd clamps what lies outside, so 100 would silently be 22: refused here); gzip: what
# java.util.zip.Deflater.setLevel takes (its -1 is the default, which is an unset level here).
COMPRESSION_LEVELS = {"zstd": (-(1 << 17), 22), "gzip": (0, 9)}


@dataclass(frozen=True)
class BloomSpec:
    """One column's bloom filter settings, resolved as parquet-java's ColumnValueCollector reads them."""

    ndv: int | None  # expected distinct values: sizes the filter when set
    fpp: float  # false positive probability
    max_bytes: int  # parquet.bloom.filter.max.bytes
    adaptive: bool  # choose among candidate sizes by the distinct values seen (ignored when ndv is set)
    candidates: int  # number of adaptive candidates


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
    validate: bool = True  # refuse decimals wider than their precision and invalid UTF-8 (validate.py)
    widen_unsigned: bool = False  # write uint8/16/32/64 as int16/int32/int64/decimal(20,0) (widen.py)
    allow_truncated_timestamps: bool = False  # pyarrow's: ns timestamps cut to micros, not refused (widen.py)
    fallback_encoding: str = "delta"  # values of non-dictionary pages: "delta" (parquet-java v2) or "plain"
    spark_version: str = DEFAULT_SPARK_VERSION
    # Bloom filters (parquet.bloom.filter.*): off unless enabled globally, per column, or by an expected NDV.
    bloom_filter_enabled: bool = False
    bloom_filter_columns: Mapping[str, bool] = field(default_factory=dict)  # per column; a list means all True
    bloom_filter_ndv: Mapping[str, int] = field(default_factory=dict)  # per column; also enables the column
    bloom_filter_fpp: Mapping[str, float] = field(default_factory=dict)  # per column; default 0.01
    bloom_filter_max_bytes: int = DEFAULT_BLOOM_FILTER_MAX_BYTES
    bloom_filter_adaptive: bool = False
    bloom_filter_candidates: int = DEFAULT_BLOOM_FILTER_CANDIDATES

    def __post_init__(self) -> None:
        _check_choice("compression", self.compression, CODECS)
        _check_choice("timestamp_type", self.timestamp_type, TIMESTAMP_TYPES)
        _check_choice("device", self.device, DEVICES)
        _check_choice("fallback_encoding", self.fallback_encoding, FALLBACK_ENCODINGS)
        for name in ("datetime_rebase", "int96_rebase"):
            _check_choice(name, getattr(self, name), REBASE_MODES)
        for name in ("block_size", "page_size", "page_row_count_limit", "page_size_check_min",
                     "page_size_check_max", "block_row_count_limit", "page_value_count_threshold",
                     "column_index_truncate_length", "statistics_truncate_length"):
            _check_positive(name, getattr(self, name))
        if not 0 <= self.dictionary_page_size <= LONG_MAX:
            raise OptionError(f"option {_label('dictionary_page_size')} must be from 0 to {LONG_MAX} (2**63 - 1), "
                              f"got {self.dictionary_page_size}")
        if self.compression_level is not None:
            if self.compression not in COMPRESSION_LEVELS:
                raise OptionError(f"option {_label('compression_level')} applies to zstd and gzip, not "
                                  f"{self.compression!r}")
            check_level(_label("compression_level"), self.compression, self.compression_level)
        problem = zone_problem(self.time_zone) if isinstance(self.time_zone, str) else "not a string"
        if problem is not None:
            raise OptionError(f"option {_label('time_zone')}={self.time_zone!r}: {problem}")
        for name in ("validate", "widen_unsigned", "allow_truncated_timestamps"):
            if not isinstance(getattr(self, name), bool):
                raise OptionError(f"option {name} must be True or False, got {getattr(self, name)!r}")
        self._check_bloom()

    def _check_bloom(self) -> None:
        """Validate the bloom filter fields (keyword path; conf keys are checked, by key, while parsing)."""
        columns = self.bloom_filter_columns
        if isinstance(columns, str):  # one column
            columns = [columns]
        if isinstance(columns, (list, tuple, AbstractSet)):
            object.__setattr__(self, "bloom_filter_columns", {c: True for c in columns})
        for name in ("bloom_filter_columns", "bloom_filter_ndv", "bloom_filter_fpp"):
            value = getattr(self, name)
            if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
                raise OptionError(f"option {name} must map column paths to values, got {value!r}")
        for column, on in self.bloom_filter_columns.items():
            if not isinstance(on, bool):
                raise OptionError(f"option bloom_filter_columns[{column!r}] must be True or False, got {on!r}")
        for column, ndv in self.bloom_filter_ndv.items():
            if not isinstance(ndv, int) or isinstance(ndv, bool) or not 0 < ndv <= LONG_MAX:
                raise OptionError(f"option bloom_filter_ndv[{column!r}] must be a positive integer, got {ndv!r}")
            if self.bloom_filter_columns.get(column) is False:
                raise OptionError(f"bloom filter for column {column!r}: an expected NDV is set but the column's "
                                  "bloom filter is disabled (parquet-java's result would depend on key order)")
        for column, fpp in self.bloom_filter_fpp.items():
            if isinstance(fpp, bool) or not isinstance(fpp, (int, float)) or not 0.0 < fpp < 1.0:
                raise OptionError(f"option bloom_filter_fpp[{column!r}] must be a number strictly between 0 and 1, "
                                  f"got {fpp!r}")
        for name in ("bloom_filter_enabled", "bloom_filter_adaptive"):
            if not isinstance(getattr(self, name), bool):
                raise OptionError(f"option {name} must be True or False, got {getattr(self, name)!r}")
        _check_positive("bloom_filter_candidates", self.bloom_filter_candidates)
        m = self.bloom_filter_max_bytes
        if not isinstance(m, int) or isinstance(m, bool) or not MIN_BLOOM_FILTER_BYTES <= m <= INT_MAX:
            raise OptionError(f"option bloom_filter_max_bytes must be an integer from {MIN_BLOOM_FILTER_BYTES} to "
                              f"{INT_MAX}, got {m!r}")
        if self.bloom_filter_candidates > INT_MAX:
            raise OptionError(f"option bloom_filter_candidates must be at most {INT_MAX}")

    def bloom_filter(self, column: str) -> BloomSpec | None:
        """Bloom filter settings for `column` (dotted path), or None when it gets no filter."""
        enabled = column in self.bloom_filter_ndv or self.bloom_filter_columns.get(column, self.bloom_filter_enabled)
        if not enabled:
            return None
        return BloomSpec(ndv=self.bloom_filter_ndv.get(column), fpp=float(self.bloom_filter_fpp.get(
            column, DEFAULT_BLOOM_FILTER_FPP)), max_bytes=self.bloom_filter_max_bytes,
            adaptive=self.bloom_filter_adaptive, candidates=self.bloom_filter_candidates)

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
        written: dict[str, str] = {}  # field -> key it came from
        column_dict: dict[str, bool] = {}
        codec_sources: dict[str, str] = {}
        bloom = _BloomKeys()
        for key, raw in (conf or {}).items():
            if not isinstance(key, str):
                raise OptionError(f"option keys must be strings, got {key!r}")
            base, _, column = key.partition("#")
            if base == "parquet.enable.dictionary" and column:
                column_dict[column] = parse_bool(key, raw)
                continue
            if base in _CODEC_KEYS and not column:
                codec_sources[base] = _parse_codec(key, raw)
                continue
            if base.startswith("parquet.bloom.filter."):
                bloom.parse(key, raw)
                continue
            spec = _KEYS.get(base)
            if spec is None or column:
                raise OptionError(unknown_key(key))
            name, parse = spec
            if name is None:
                parse(key, raw)
                continue
            values[name] = parse(key, raw)
            written[name] = key
        for key in _CODEC_KEYS:
            if key in codec_sources:
                values["compression"] = codec_sources[key]
                break
        if column_dict:
            values["column_dictionary"] = column_dict
        values.update(bloom.fields())
        given, via_alias = translate(keywords, _FIELDS)
        for name, value in given.items():
            if name == "compression":
                value = _parse_codec(via_alias.get(name, "compression"), value)
            values[name] = value
            written.pop(name, None)
        written.update(via_alias)
        if written.get("compression_level") == ZSTD_LEVEL_KEY and values.get("compression", "snappy") != "zstd":
            # SPEC: only ZstandardCodec reads parquet.compression.codec.zstd.level: checked, then unused
            check_level(repr(ZSTD_LEVEL_KEY), "zstd", values.pop("compression_level"))
            written.pop("compression_level")
        with _keys_written(written):
            return cls(**values)


# Option fields set from keys during WriteOptions.from_conf: field name -> the key as the user wrote it, so a
# bad value is reported under the name the user knows.
_KEY_OF_FIELD: ContextVar[Mapping[str, str] | None] = ContextVar("gpuwrite_option_keys", default=None)


def _label(name: str) -> str:
    """How an error names option field `name`: the key the user wrote (quoted), else the keyword."""
    key = (_KEY_OF_FIELD.get() or {}).get(name)
    return repr(key) if key is not None else name


@contextmanager
def _keys_written(keys: Mapping[str, str]) -> Iterator[None]:
    """Report validation errors of these fields under their keys while the block runs."""
    token = _KEY_OF_FIELD.set(keys)
    try:
        yield
    finally:
        _KEY_OF_FIELD.reset(token)


def unknown_key(key: str) -> str:
    """The error for an unknown Spark / parquet-java key: the closest known key, or the keyword it looks like."""
    if key in _FIELDS or key in ALIASES:
        return (f"unknown option key {key!r}: {key} is a keyword, not a Spark / parquet-java key; pass it as "
                f"{key}=... instead of in options")
    base, hashed, column = key.partition("#")
    if hashed:  # per-column keys: the closest per-column key, for the same column
        close = suggestion(base, [*_BloomKeys.PER_COLUMN, "parquet.enable.dictionary"])
        return f"unknown option {key!r}{close[:-3] + '#' + column + close[-3:] if close else ''}"
    known = [*_KEYS, *_CODEC_KEYS, *_BloomKeys.GLOBAL]
    return f"unknown option {key!r}{suggestion(key, known) or suggestion(key, _FIELDS)}"


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    """Raise OptionError unless value is one of choices."""
    if value not in choices:
        raise OptionError(f"option {_label(name)}={value!r} is not one of {', '.join(choices)}")


def _check_positive(name: str, value: Any) -> None:
    """Raise OptionError unless value is a positive int a Java long holds (the writer keeps sizes and counts
    as 64-bit integers; a larger value would overflow there)."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise OptionError(f"option {_label(name)} must be a positive integer, got {value!r}")
    if value > LONG_MAX:
        raise OptionError(f"option {_label(name)}={value!r} is too large: it must be from 1 to {LONG_MAX} "
                          "(2**63 - 1)")


def check_level(label: str, codec: str, level: Any) -> None:
    """Raise OptionError (naming `label`) unless `level` is an integer the codec takes."""
    lo, hi = COMPRESSION_LEVELS[codec]
    if not isinstance(level, int) or isinstance(level, bool):
        raise OptionError(f"option {label} must be an integer, got {level!r}")
    if not lo <= level <= hi:
        raise OptionError(f"option {label}={level!r} is outside {codec}'s levels ({lo} to {hi})")


def _parse_codec(key: str, raw: Any) -> str:
    """Map Spark's codec names to ours; refuse the ones we cannot write."""
    text = str(raw).strip().lower()
    if text in _CODEC_ALIASES:
        return _CODEC_ALIASES[text]
    if text in ("lzo", "brotli", "lz4"):
        raise OptionError(f"option {key!r}={raw!r}: codec {text} is not supported by gpuwrite "
                          f"(use one of {', '.join(CODECS)})")
    raise OptionError(f"option {key!r}={raw!r} is not a known codec ({', '.join(CODECS)})")


def _parse_writer_version(key: str, raw: Any) -> None:
    """Only v2 pages are written: PARQUET_1_0 / v1 is an error."""
    text = str(raw).strip()
    if text.lower() in ("v2", "parquet_2_0"):
        return
    if text.lower() in ("v1", "parquet_1_0"):
        raise OptionError(f"option {key!r}={raw!r}: gpuwrite writes Parquet v2 data pages only "
                          "(use Spark's own writer for v1 pages)")
    raise OptionError(f"option {key!r}={raw!r} is not a writer version (v1, v2, PARQUET_1_0, PARQUET_2_0)")


def _ignore(key: str, raw: Any) -> None:
    """Keys Spark sets that change nothing in a single file (kept so Spark configs pass through)."""


class _BloomKeys:
    """Collects parquet.bloom.filter.* keys as ParquetOutputFormat reads them: `enabled`, `max.bytes` and
    `adaptive.enabled` globally, `enabled`, `expected.ndv`, `fpp` and `candidates.number` per `#column`."""

    GLOBAL = ("parquet.bloom.filter.enabled", "parquet.bloom.filter.max.bytes",
              "parquet.bloom.filter.adaptive.enabled")
    PER_COLUMN = ("parquet.bloom.filter.enabled", "parquet.bloom.filter.expected.ndv", "parquet.bloom.filter.fpp",
                  "parquet.bloom.filter.candidates.number")

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.columns: dict[str, bool] = {}
        self.ndv: dict[str, int] = {}
        self.fpp: dict[str, float] = {}
        self.candidates: dict[str, int] = {}
        self.keys: dict[tuple[str, str], str] = {}

    def parse(self, key: str, raw: Any) -> None:
        """Parse one key, raising OptionError naming it for an unknown key, a wrong form or a bad value."""
        base, hashed, column = key.partition("#")
        if base not in self.GLOBAL and base not in self.PER_COLUMN:
            raise OptionError(unknown_key(key))
        if hashed and base not in self.PER_COLUMN:
            raise OptionError(f"option {key!r}: {base} applies to all columns; parquet-java reads no "
                              "per-column form of it")
        if not hashed and base not in self.GLOBAL:
            raise OptionError(f"option {key!r} is read per column only: use {base}#<column.path>")
        if hashed and not column:
            raise OptionError(f"option {key!r} names no column after '#'")
        self.keys[(base, column)] = key
        if base == "parquet.bloom.filter.enabled":
            if column:
                self.columns[column] = parse_bool(key, raw)
            else:
                self.values["bloom_filter_enabled"] = parse_bool(key, raw)
        elif base == "parquet.bloom.filter.max.bytes":
            value = parse_int(key, raw)
            if not MIN_BLOOM_FILTER_BYTES <= value <= INT_MAX:
                raise OptionError(f"option {key!r} must be from {MIN_BLOOM_FILTER_BYTES} to {INT_MAX} (parquet-java "
                                  f"refuses a maximum below its {MIN_BLOOM_FILTER_BYTES}-byte minimum), got {raw!r}")
            self.values["bloom_filter_max_bytes"] = value
        elif base == "parquet.bloom.filter.adaptive.enabled":
            self.values["bloom_filter_adaptive"] = parse_bool(key, raw)
        elif base == "parquet.bloom.filter.expected.ndv":
            ndv = parse_int(key, raw)
            if not 0 < ndv <= LONG_MAX:
                raise OptionError(f"option {key!r} must be a positive integer (expected distinct values), "
                                  f"got {raw!r}")
            self.ndv[column] = ndv
        elif base == "parquet.bloom.filter.fpp":
            fpp = parse_float(key, raw)
            if not 0.0 < fpp < 1.0:
                raise OptionError(f"option {key!r} must be strictly between 0 and 1 (a false positive "
                                  f"probability), got {raw!r}")
            self.fpp[column] = fpp
        else:
            number = parse_int(key, raw)
            if not 0 < number <= INT_MAX:
                raise OptionError(f"option {key!r} must be a positive integer, got {raw!r}")
            self.candidates[column] = number

    def fields(self) -> dict[str, Any]:
        """WriteOptions fields for the keys seen; contradictions parquet-java would resolve by key order are errors."""
        out = dict(self.values)
        for column in self.ndv:
            if self.columns.get(column) is False:
                raise OptionError(f"options {self.keys[('parquet.bloom.filter.expected.ndv', column)]!r} and "
                                  f"{self.keys[('parquet.bloom.filter.enabled', column)]!r} contradict each "
                                  "other (an expected NDV enables the column's bloom filter)")
        # SPEC: ParquetProperties.Builder.withBloomFilterCandidatesNumber stores the number as the default for
        # every column, so one value must be given.
        if len(set(self.candidates.values())) > 1:
            keys = ", ".join(repr(self.keys[("parquet.bloom.filter.candidates.number", c)]) for c in self.candidates)
            raise OptionError(f"options {keys}: parquet-java applies parquet.bloom.filter.candidates.number to "
                              "every column, so the values must agree")
        if self.candidates:
            out["bloom_filter_candidates"] = next(iter(self.candidates.values()))
        if self.columns:
            out["bloom_filter_columns"] = dict(self.columns)
        if self.ndv:
            out["bloom_filter_ndv"] = dict(self.ndv)
        if self.fpp:
            out["bloom_filter_fpp"] = dict(self.fpp)
        return out


_CODEC_KEYS = ("compression", "parquet.compression", CODEC_KEY)
_KEYS: dict[str, tuple[str | None, Parser]] = {
    "parquet.block.size": ("block_size", parse_int),
    "parquet.block.row.count.limit": ("block_row_count_limit", parse_int),
    "parquet.page.size": ("page_size", parse_int),
    "parquet.dictionary.page.size": ("dictionary_page_size", parse_int),
    "parquet.enable.dictionary": ("enable_dictionary", parse_bool),
    "parquet.page.row.count.limit": ("page_row_count_limit", parse_int),
    "parquet.page.size.row.check.min": ("page_size_check_min", parse_int),
    "parquet.page.size.row.check.max": ("page_size_check_max", parse_int),
    "parquet.page.size.check.estimate": ("page_size_check_estimate", parse_bool),
    "parquet.page.value.count.threshold": ("page_value_count_threshold", parse_int),
    "parquet.page.write-checksum.enabled": ("page_checksum", parse_bool),
    "parquet.statistics.truncate.length": ("statistics_truncate_length", parse_int),
    "parquet.columnindex.truncate.length": ("column_index_truncate_length", parse_int),
    ZSTD_LEVEL_KEY: ("compression_level", parse_int),
    "parquet.writer.version": (None, _parse_writer_version),
    "parquet.summary.metadata.level": (None, _ignore),
    **SQL_KEYS,
}
_FIELDS = {f.name for f in dataclasses.fields(WriteOptions)}


def resolve_options(options: WriteOptions | Mapping[str, Any] | None, keywords: Mapping[str, Any]) -> WriteOptions:
    """Combine an options object or key mapping with keyword overrides into one WriteOptions."""
    if isinstance(options, WriteOptions):
        changes, _ = translate(keywords, _FIELDS)
        if "compression" in changes:
            changes["compression"] = _parse_codec("compression", changes["compression"])
        return options.replace(**changes) if changes else options
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options must be a WriteOptions or a mapping of keys, got {type(options).__name__}")
    return WriteOptions.from_conf(options, **keywords)
