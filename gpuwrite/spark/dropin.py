"""`gpuwrite.spark.enable(spark)` / `disable(spark)`: DataFrameWriter's Parquet writes in a session go through
gpuwrite, with Spark's semantics; everything else runs Spark's own writer, each fallback logged and counted.

While at least one session is enabled, the DataFrame class's `write` property and `writeTo` method are
replaced by ones that look at the DataFrame's session: an enabled session gets the drop-in writers
(`readwriter`, `readwriter_v2`), any other session Spark's own. Disabling the last session puts Spark's
originals back. `spark.gpuwrite.enabled` (session conf, read at each write) pauses the drop-in without
disabling it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from ..errors import GpuwriteError

log = logging.getLogger("gpuwrite.spark")

_LOCK = threading.RLock()
_SESSIONS: dict[str, Any] = {}  # session key -> session
_ORIGINALS: dict[type, dict[str, Any]] = {}  # patched DataFrame class -> its own `write` / `writeTo`
_FALLBACKS: list[Fallback] = []


@dataclass(frozen=True)
class Fallback:
    """A DataFrameWriter call that ran Spark's own writer, and why."""

    call: str
    reason: str


def record_fallback(call: str, reason: str) -> None:
    """Log and count one fallback to Spark's writer (`grep 'gpuwrite.spark fallback'` finds them)."""
    with _LOCK:
        _FALLBACKS.append(Fallback(call, reason))
    log.warning("gpuwrite.spark fallback to Spark's writer (%s): %s", call, reason)


def fallbacks() -> list[Fallback]:
    """Every fallback so far in this process, oldest first."""
    with _LOCK:
        return list(_FALLBACKS)


def clear_fallbacks() -> None:
    """Forget the fallbacks counted so far."""
    with _LOCK:
        _FALLBACKS.clear()


def is_connect(spark: Any) -> bool:
    """Whether `spark` is a Spark Connect session."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _session_key(spark: Any) -> str:
    """A key naming one Spark session (not its Python wrapper object)."""
    if is_connect(spark):
        return f"connect:{spark.session_id}"
    return f"classic:{spark._jsparkSession.sessionUUID()}"


def connect_problem(spark: Any) -> str | None:
    """What a Connect session lacks for the drop-in, or None (classic sessions lack nothing)."""
    if not is_connect(spark):
        return None
    return ("this is a Spark Connect session: gpuwrite.spark commits each job in the driver process, which "
            "under Connect is the client; it needs the output paths and the session catalog's JVM, which the "
            "client does not have. Use a classic SparkSession (or gpuwrite.spark.write_parquet on a client "
            "that shares the cluster's file system)")


def _dataframe_classes(spark: Any) -> list[type]:
    """The DataFrame classes whose `write` / `writeTo` to patch for this kind of session."""
    from pyspark.sql.classic.dataframe import DataFrame

    return [DataFrame]


def enable(spark: Any) -> None:
    """Send this session's DataFrameWriter Parquet writes through gpuwrite (other sessions are untouched)."""
    problem = connect_problem(spark)
    if problem:
        raise GpuwriteError(f"gpuwrite.spark.enable cannot take this session: {problem}")
    from .conf import all_conf
    from .workers import use_driver_python

    use_driver_python(spark, all_conf(spark))  # local mode: workers run this interpreter (workers.py)
    with _LOCK:
        for cls in _dataframe_classes(spark):
            _patch(cls)
        _SESSIONS[_session_key(spark)] = spark


def disable(spark: Any) -> None:
    """Give this session Spark's own writers back; the last one disabled restores Spark's classes."""
    with _LOCK:
        _SESSIONS.pop(_session_key(spark), None)
        if not _SESSIONS:
            for cls in list(_ORIGINALS):
                _unpatch(cls)


def is_enabled(spark: Any) -> bool:
    """Whether `enable` is on for this session (the conf switch is read at each write)."""
    with _LOCK:
        return bool(_SESSIONS) and _session_key(spark) in _SESSIONS


def _patch(cls: type) -> None:
    """Replace `cls.write` and `cls.writeTo` with session-aware versions (once)."""
    if cls in _ORIGINALS:
        return
    own = {"write": cls.__dict__["write"], "writeTo": cls.__dict__["writeTo"]}
    _ORIGINALS[cls] = own

    def write(df: Any) -> Any:
        if is_enabled(df.sparkSession):
            from .readwriter import DataFrameWriter

            return DataFrameWriter(df)
        return own["write"].__get__(df, type(df))

    def writeTo(df: Any, table: str) -> Any:
        if is_enabled(df.sparkSession):
            from .readwriter_v2 import DataFrameWriterV2

            return DataFrameWriterV2(df, table)
        return own["writeTo"](df, table)

    write.__doc__ = own["write"].__doc__
    writeTo.__doc__ = own["writeTo"].__doc__
    patched: dict[str, Any] = {"write": property(write), "writeTo": writeTo}
    for name, value in patched.items():
        setattr(cls, name, value)


def _unpatch(cls: type) -> None:
    """Put Spark's own `write` / `writeTo` back on `cls`."""
    own = _ORIGINALS.pop(cls)
    for name, value in own.items():
        setattr(cls, name, value)


def spark_writer(df: Any) -> Any:
    """Spark's own DataFrameWriter for `df`, whether or not the drop-in is on."""
    with _LOCK:
        own = _ORIGINALS.get(type(df)) or next((o for c, o in _ORIGINALS.items() if isinstance(df, c)), None)
    return own["write"].__get__(df, type(df)) if own else df.write


def spark_writer_v2(df: Any, table: str) -> Any:
    """Spark's own DataFrameWriterV2 for `df`, whether or not the drop-in is on."""
    with _LOCK:
        own = _ORIGINALS.get(type(df)) or next((o for c, o in _ORIGINALS.items() if isinstance(df, c)), None)
    return own["writeTo"](df, table) if own else df.writeTo(table)
