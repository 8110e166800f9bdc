"""Write options read the way Spark's Parquet writer reads them: session conf, Hadoop conf, writer options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import OptionError
from .sql_keys import MAX_RECORDS_KEY, SESSION_KEYS, TIME_ZONE_KEY

HADOOP_PREFIX = "spark.hadoop."


def writer_conf(session_conf: Mapping[str, str], hadoop_conf: Mapping[str, str],
                options: Mapping[str, Any] | None) -> tuple[dict[str, str], int]:
    """The gpuwrite option keys for one write, and maxRecordsPerFile.

    Precedence as in Spark: DataFrameWriter options over Hadoop `parquet.*` keys over the session conf (the
    codec: `compression` option, then `parquet.compression`, then `spark.sql.parquet.compression.codec`).
    """
    conf: dict[str, str] = {k: str(v) for k, v in session_conf.items() if k in SESSION_KEYS and v is not None}
    for key, value in hadoop_conf.items():
        if key.startswith("parquet."):
            conf[key] = str(value)
    max_records = int(session_conf.get(MAX_RECORDS_KEY) or 0)
    for key, value in (options or {}).items():
        if key == "maxRecordsPerFile":
            max_records = int(value)
        elif key in ("compression", "timeZone") or key.startswith("parquet.") or key.startswith("spark.sql."):
            conf[TIME_ZONE_KEY if key == "timeZone" else key] = str(value)
        else:
            raise OptionError(f"unknown Parquet write option {key!r} (gpuwrite.spark takes 'compression', "
                              f"'maxRecordsPerFile', 'timeZone', parquet.* and spark.sql.* keys)")
    if max_records < 0:
        raise OptionError(f"maxRecordsPerFile must be >= 0, got {max_records}")
    return conf, max_records


def session_conf(spark: Any) -> tuple[dict[str, str], dict[str, str]]:
    """(SQL conf values Spark would use, `spark.hadoop.parquet.*` keys without their prefix) of a session."""
    sql = {}
    for key in (*SESSION_KEYS, MAX_RECORDS_KEY):
        value = spark.conf.get(key, None)
        if value is not None:
            sql[key] = value
    hadoop = {}
    for key, value in spark.sparkContext.getConf().getAll():
        if key.startswith(HADOOP_PREFIX + "parquet."):
            hadoop[key[len(HADOOP_PREFIX):]] = value
    return sql, hadoop
