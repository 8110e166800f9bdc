"""Spark's key/value metadata in the footer, in the order parquet-java writes it.

ParquetWriteSupport.init gives the keys; InternalParquetRecordWriter copies them into a java.util.HashMap,
whose iteration order (bucket by String.hashCode, then insertion order within a bucket) is the file's order.
"""

from __future__ import annotations

SPARK_VERSION_KEY = "org.apache.spark.version"
SPARK_ROW_METADATA_KEY = "org.apache.spark.sql.parquet.row.metadata"
LEGACY_DATETIME_KEY = "org.apache.spark.legacyDateTime"
LEGACY_INT96_KEY = "org.apache.spark.legacyINT96"
TIME_ZONE_KEY = "org.apache.spark.timeZone"


def java_string_hash(text: str) -> int:
    """java.lang.String.hashCode (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _utf16_units(text: str) -> list[int]:
    """UTF-16 code units of text."""
    raw = text.encode("utf-16-be")
    return [int.from_bytes(raw[i:i + 2], "big") for i in range(0, len(raw), 2)]


def java_hashmap_order(entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Iteration order of `new HashMap<>(map)` built from entries in this order (no resize after the copy)."""
    size = len(entries)
    wanted = int(size / 0.75 + 1.0)
    capacity = 1
    while capacity < wanted:
        capacity <<= 1

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    indexed = sorted(enumerate(entries), key=lambda e: (bucket(e[1][0]), e[0]))
    return [entry for _, entry in indexed]


def spark_footer_metadata(row_metadata: str, spark_version: str, datetime_rebase: str, int96_rebase: str,
                          time_zone: str) -> list[tuple[str, str]]:
    """Spark's footer keys: version and row metadata always; the LEGACY rebase markers with the time zone."""
    entries = [(SPARK_VERSION_KEY, spark_version), (SPARK_ROW_METADATA_KEY, row_metadata)]
    if datetime_rebase == "LEGACY":
        entries.append((LEGACY_DATETIME_KEY, ""))
    if int96_rebase == "LEGACY":
        entries.append((LEGACY_INT96_KEY, ""))
    if datetime_rebase == "LEGACY" or int96_rebase == "LEGACY":
        entries.append((TIME_ZONE_KEY, time_zone))
    return java_hashmap_order(entries)
