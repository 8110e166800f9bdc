"""Spark's `spark.sql.*` keys a Parquet write reads, with the WriteOptions field each sets and its parser.

`options.py` consults `SQL_KEYS` beside parquet-java's `parquet.*` keys; `conf.py` reads `SESSION_KEYS` from
a session. Pure: no pyspark import.
"""

from __future__ import annotations

from .values import Parser, parse_bool, parse_str, parse_upper_choice

# SPEC: SQLConf.ParquetOutputTimestampType
TIMESTAMP_TYPES = ("INT96", "TIMESTAMP_MICROS", "TIMESTAMP_MILLIS")
# SPEC: LegacyBehaviorPolicy (CORRECTED is Spark's default on write)
REBASE_MODES = ("CORRECTED", "LEGACY", "EXCEPTION")

CODEC_KEY = "spark.sql.parquet.compression.codec"  # the codec after `compression` and `parquet.compression`
TIME_ZONE_KEY = "spark.sql.session.timeZone"
MAX_RECORDS_KEY = "spark.sql.files.maxRecordsPerFile"

# SPEC: ParquetWriteSupport / ParquetFileFormat.prepareWrite: the session keys that shape a file's bytes.
SQL_KEYS: dict[str, tuple[str, Parser]] = {
    "spark.sql.parquet.outputTimestampType": ("timestamp_type", parse_upper_choice(TIMESTAMP_TYPES)),
    "spark.sql.parquet.writeLegacyFormat": ("legacy_format", parse_bool),
    "spark.sql.parquet.datetimeRebaseModeInWrite": ("datetime_rebase", parse_upper_choice(REBASE_MODES)),
    "spark.sql.parquet.int96RebaseModeInWrite": ("int96_rebase", parse_upper_choice(REBASE_MODES)),
    TIME_ZONE_KEY: ("time_zone", parse_str),
}

# Session (SQL) conf keys Spark's ParquetWriteSupport / ParquetFileFormat consult on write.
SESSION_KEYS = (CODEC_KEY, *SQL_KEYS)
