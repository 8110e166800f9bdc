"""Write options read the way Spark's Parquet writer reads them: session conf, Hadoop conf, writer options.

Works on classic and Spark Connect sessions alike: everything is read through `spark.conf` (a classic session's
SQL conf holds the SparkConf's entries, `spark.hadoop.*` included), never through `sparkContext`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from ..errors import OptionError
from ..options.sql_keys import MAX_RECORDS_KEY, SESSION_KEYS

F = TypeVar("F", bound=Callable[..., Any])
HADOOP_PREFIX = "spark.hadoop."
MAX_RECORDS_OPTION = "maxrecordsperfile"  # SPEC: FileFormatWriter reads options("maxRecordsPerFile"), any case
OVERWRITE_MODE_OPTION = "partitionoverwritemode"  # SPEC: DataSourceUtils.PARTITION_OVERWRITE_MODE
OVERWRITE_MODE_KEY = "spark.sql.sources.partitionOverwriteMode"


def lower_keys(options: Mapping[str, Any] | None) -> dict[str, str]:
    """Writer options as Spark's CaseInsensitiveMap sees them (later keys win, None values dropped)."""
    return {str(k).lower(): str(v) for k, v in (options or {}).items() if v is not None}


def writer_conf(session_conf: Mapping[str, str], hadoop_conf: Mapping[str, str],
                options: Mapping[str, Any] | None) -> tuple[dict[str, str], int]:
    """The gpuwrite option keys for one write, and maxRecordsPerFile.

    Precedence as in Spark: DataFrameWriter options over Hadoop `parquet.*` keys over the session conf (the
    codec: `compression` option, then `parquet.compression`, then `spark.sql.parquet.compression.codec`).
    Options Spark's Parquet writer does not read are ignored, as Spark ignores them: the `spark.sql.*` keys
    a write consults come from the session only (SPEC: ParquetUtils.prepareWrite sets them into the Hadoop conf
    from the session's SQLConf, over any option of the same name).
    """
    conf: dict[str, str] = {k: str(v) for k, v in session_conf.items() if k in SESSION_KEYS and v is not None}
    for key, value in hadoop_conf.items():
        # SPEC: ParquetUtils.prepareWrite sets parquet.compression from ParquetOptions (options, then the
        # session codec), so a Hadoop-level parquet.compression never reaches the writer.
        if key.startswith("parquet.") and key != "parquet.compression":
            conf[key] = str(value)
    max_records = int(session_conf.get(MAX_RECORDS_KEY) or 0)
    for key, value in (options or {}).items():
        if value is None:
            continue
        lower = key.lower()
        if lower == MAX_RECORDS_OPTION:
            max_records = int(value)
        elif lower in ("compression", "parquet.compression"):  # SPEC: ParquetOptions (case-insensitive map)
            conf[lower] = str(value)
        elif key.startswith("parquet."):  # Hadoop conf keys: case-sensitive, as Configuration is
            conf[key] = str(value)
    if max_records < 0:
        raise OptionError(f"maxRecordsPerFile must be >= 0, got {max_records}")
    return conf, max_records


_SNAPSHOT: ContextVar[dict[int, dict[str, str]] | None] = ContextVar("gpuwrite_conf_snapshot", default=None)
# the values of keys a session does not set (their defaults, each a JVM call), read once per snapshot
_DEFAULTS: ContextVar[dict[tuple[int, str], str | None] | None] = ContextVar("gpuwrite_conf_defaults",
                                                                               default=None)


@contextmanager
def conf_snapshot() -> Iterator[None]:
    """Read each session's conf once for the block (one write): every JVM round trip costs the driver time.
    Nested blocks share the outer one's reads."""
    token = _SNAPSHOT.set(_SNAPSHOT.get() if _SNAPSHOT.get() is not None else {})
    defaults = _DEFAULTS.set(_DEFAULTS.get() if _DEFAULTS.get() is not None else {})
    try:
        yield
    finally:
        _DEFAULTS.reset(defaults)
        _SNAPSHOT.reset(token)


def _unset_value(spark: Any, key: str) -> str | None:
    """`spark.conf.get(key, None)` for a key the session does not set (once per snapshot)."""
    cache = _DEFAULTS.get()
    if cache is None:
        return spark.conf.get(key, None)  # type: ignore[no-any-return]
    if (id(spark), key) not in cache:
        cache[(id(spark), key)] = spark.conf.get(key, None)
    return cache[(id(spark), key)]


def with_conf_snapshot(fn: F) -> F:
    """Run `fn` inside `conf_snapshot()`."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with conf_snapshot():
            return fn(*args, **kwargs)

    return run  # type: ignore[return-value]


def all_conf(spark: Any) -> dict[str, str]:
    """Every conf entry of a session that `spark.conf` shows (classic or Connect)."""
    cache = _SNAPSHOT.get()
    if cache is not None:
        if id(spark) not in cache:
            cache[id(spark)] = _read_all(spark)
        return dict(cache[id(spark)])
    return _read_all(spark)


def _read_all(spark: Any) -> dict[str, str]:
    """`spark.conf.getAll`, whichever form this PySpark gives it."""
    fast = _read_all_at_once(spark)
    if fast is not None:
        return fast
    everything = getattr(spark.conf, "getAll", None)
    if isinstance(everything, Mapping):
        return {str(k): str(v) for k, v in everything.items() if v is not None}
    if callable(everything):  # older RuntimeConfig: a method
        return {str(k): str(v) for k, v in everything().items() if v is not None}
    return {}


def _read_all_at_once(spark: Any) -> dict[str, str] | None:
    """A classic session's conf in one JVM call (the JVM's map as JSON, by the Jackson Spark ships); None where
    that is not available (Spark Connect, another JVM). PySpark's `getAll` iterates the Java map over Py4J, a
    round trip per entry: over a hundred per write, a tenth of a second on a loaded driver."""
    jconf = getattr(getattr(spark, "conf", None), "_jconf", None)
    jvm = getattr(spark, "_jvm", None)
    if jconf is None or jvm is None:
        return None
    try:
        text = jvm.com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(jconf.getAllAsJava())
        entries = json.loads(text)
    except Exception:  # no Jackson, or an older RuntimeConfig: iterate as PySpark does
        return None
    if not isinstance(entries, dict):
        return None
    return {str(k): str(v) for k, v in entries.items() if v is not None}


def session_conf(spark: Any) -> tuple[dict[str, str], dict[str, str]]:
    """(SQL conf values Spark would use, Hadoop `parquet.*` keys) of a session.

    SPEC: SessionState.newHadoopConf: the Hadoop conf is the SparkContext's (`spark.hadoop.*` keys, prefix
    dropped) with every SQL conf entry of the session set over it, so a session-level `parquet.*` key counts.
    """
    everything = all_conf(spark)
    sql = {}
    for key in (*SESSION_KEYS, MAX_RECORDS_KEY, OVERWRITE_MODE_KEY):
        value = everything[key] if key in everything else _unset_value(spark, key)
        if value is not None:
            sql[key] = value
    hadoop = {k[len(HADOOP_PREFIX):]: v for k, v in everything.items() if k.startswith(HADOOP_PREFIX + "parquet.")}
    hadoop.update({k: v for k, v in everything.items() if k.startswith("parquet.")})
    return sql, hadoop
