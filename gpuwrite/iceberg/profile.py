"""The Iceberg profile: the write options an Iceberg table asks for, from its `write.*` properties.

SPEC: Iceberg's Parquet writer (org.apache.iceberg.parquet.Parquet.WriteBuilder, TableProperties): INT64
TIMESTAMP(MICROS) timestamps (adjusted to UTC for timestamptz), standard (3-level) lists and maps, field ids on
every node, the table's codec, page, dictionary and row-group sizes, page row limit and bloom filter columns;
files rolled at `write.target-file-size-bytes` of bytes written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import GpuwriteError
from ..options.model import FALLBACK_ENCODINGS, WriteOptions
from ..options.sql_keys import SQL_KEYS

TARGET_FILE_SIZE = "write.target-file-size-bytes"
DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024  # SPEC: TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT
DEFAULT_CODEC = "zstd"  # SPEC: TableProperties.PARQUET_COMPRESSION_DEFAULT (since Iceberg 1.4; pyiceberg's too)
DEFAULT_DICT_SIZE = 2 * 1024 * 1024  # SPEC: TableProperties.PARQUET_DICT_SIZE_BYTES_DEFAULT
# gpuwrite's own table property: "plain" keeps values PLAIN / dictionary-encoded (no DELTA_*) for readers that
# cannot decode DELTA_* (Iceberg's vectorized reader before 1.11); the `fallback_encoding` keyword overrides it.
FALLBACK_PROPERTY = "gpuwrite.fallback-encoding"
BLOOM_ENABLED = "write.parquet.bloom-filter-enabled.column."
BLOOM_FPP = "write.parquet.bloom-filter-fpp.column."
# Table property -> the parquet-java key it sets (SPEC: Parquet.WriteBuilder passes them to ParquetProperties).
_INT_PROPERTIES = {
    "write.parquet.row-group-size-bytes": "parquet.block.size",
    "write.parquet.page-size-bytes": "parquet.page.size",
    "write.parquet.page-row-limit": "parquet.page.row.count.limit",
    "write.parquet.dict-size-bytes": "parquet.dictionary.page.size",
    "write.parquet.row-group-limit": "parquet.block.row.count.limit",  # pyiceberg's rows-per-row-group limit
    "write.parquet.bloom-filter-max-bytes": "parquet.bloom.filter.max.bytes",
}
# What Iceberg fixes, whatever the caller asks: option -> (required value, why).
_FIXED = {
    "timestamp_type": ("TIMESTAMP_MICROS", "Iceberg stores timestamps as INT64 TIMESTAMP(MICROS); INT96 and "
                                           "millisecond timestamps cannot be read back as Iceberg types"),
    "legacy_format": (False, "Iceberg reads the standard 3-level list and map layout only"),
    "datetime_rebase": ("CORRECTED", "Iceberg stores proleptic Gregorian values, never rebased"),
}


class IcebergWriteError(GpuwriteError):
    """An Iceberg write that cannot be done as asked (options, schema, table format, commit); nothing is committed."""


@dataclass(frozen=True)
class IcebergProfile:
    """Resolved settings of one Iceberg write: gpuwrite options and the byte size at which a file is rolled."""

    options: WriteOptions
    target_file_size: int


def _int_property(props: Mapping[str, str], key: str) -> int:
    """A positive integer table property, or IcebergWriteError naming it."""
    raw = props[key]
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise IcebergWriteError(f"table property {key!r}={raw!r} is not an integer") from None
    if value <= 0:
        raise IcebergWriteError(f"table property {key!r}={raw!r} must be positive")
    return value


def options_from_properties(props: Mapping[str, str]) -> dict[str, Any]:
    """parquet-java option keys for a table's `write.parquet.*` properties (Iceberg's defaults where unset)."""
    fmt = props.get("write.format.default", "parquet").lower()
    if fmt != "parquet":
        raise IcebergWriteError(f"table property 'write.format.default'={fmt!r}: gpuwrite writes Parquet data files "
                                "only")
    codec = props.get("write.parquet.compression-codec", DEFAULT_CODEC).lower()
    out: dict[str, Any] = {"parquet.compression": "uncompressed" if codec == "none" else codec,
                           "parquet.dictionary.page.size": DEFAULT_DICT_SIZE}
    level = props.get("write.parquet.compression-level")
    if level is not None and codec == "zstd":
        out["parquet.compression.codec.zstd.level"] = level
    for prop, key in _INT_PROPERTIES.items():
        if prop in props:
            out[key] = _int_property(props, prop)
    for prop, value in props.items():
        if prop.startswith(BLOOM_ENABLED):
            out[f"parquet.bloom.filter.enabled#{prop[len(BLOOM_ENABLED):]}"] = value
        elif prop.startswith(BLOOM_FPP):
            out[f"parquet.bloom.filter.fpp#{prop[len(BLOOM_FPP):]}"] = value
    return out


def resolve_profile(props: Mapping[str, str], options: Mapping[str, Any] | None = None,
                    **keywords: Any) -> IcebergProfile:
    """The profile for a table with properties `props`; `options` (gpuwrite / parquet-java keys) and `keywords`
    override the table's properties, except what Iceberg fixes: asking for INT96 or millisecond timestamps, the
    legacy layout or a calendar rebase is an error naming the option."""
    asked = {k: v for k, v in keywords.items() if v is not None}
    conf = dict(options or {})
    for key in list(conf):
        spec = SQL_KEYS.get(key)
        if spec is not None and spec[0] in _FIXED:
            asked.setdefault(spec[0], spec[1](key, conf.pop(key)))
    for name, (required, why) in _FIXED.items():
        if name in asked and asked[name] != required:
            raise IcebergWriteError(f"option {name}={asked[name]!r} cannot be used for an Iceberg table: {why}")
    table_keywords: dict[str, Any] = {}
    if FALLBACK_PROPERTY in props and keywords.get("fallback_encoding") is None:
        fallback = str(props[FALLBACK_PROPERTY]).strip().lower()
        if fallback not in FALLBACK_ENCODINGS:
            raise IcebergWriteError(f"table property {FALLBACK_PROPERTY!r}={props[FALLBACK_PROPERTY]!r} is not one of "
                                    f"{', '.join(FALLBACK_ENCODINGS)}")
        table_keywords["fallback_encoding"] = fallback
    try:
        merged = WriteOptions.from_conf({**options_from_properties(props), **conf},
                                        **{**keywords, **table_keywords, **_FIXED_VALUES})
    except GpuwriteError as err:
        raise IcebergWriteError(f"Iceberg write options: {err}") from err
    target = _int_property(props, TARGET_FILE_SIZE) if TARGET_FILE_SIZE in props else DEFAULT_TARGET_FILE_SIZE
    return IcebergProfile(merged, target)


_FIXED_VALUES = {name: value for name, (value, _) in _FIXED.items()}
