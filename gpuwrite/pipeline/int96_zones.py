"""The notice, once per process, that a zoned timestamp column is written as INT96 (Spark's default), which keeps
the instant but not the zone for readers other than Spark and pandas.

SPEC: Spark's `spark.sql.parquet.outputTimestampType` defaults to INT96 (SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE),
and gpuwrite follows Spark's defaults so its files stay byte-identical to what Spark's settings give. An INT96
value is a UTC instant with no annotation: Spark reads it in its session zone, pandas gets the zone back from
the file's `pandas` metadata (pyarrow's `_add_any_metadata`), but pyarrow tables, DuckDB and polars read
zone-less timestamps. `timestamp_type="TIMESTAMP_MICROS"` writes INT64 with isAdjustedToUTC=true, read by every
reader as a UTC instant. docs/compatibility.md says what each reader sees.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import pyarrow as pa

from ..schema import INT96, FileSchema


class Int96ZoneWarning(UserWarning):
    """A zoned timestamp column is written as INT96, which readers other than Spark and pandas read zone-less."""


_warned = False  # once per process: a job writing many files (a dataset, a loop) is told once
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def zoned_int96_columns(schema: FileSchema) -> list[tuple[str, pa.DataType]]:
    """(dotted path, Arrow type) of every leaf written as INT96 from a timestamp with a time zone."""
    return [(leaf.dotted, leaf.arrow_type) for leaf in schema.leaves
            if leaf.physical == INT96 and pa.types.is_timestamp(leaf.arrow_type) and leaf.arrow_type.tz]


def _caller_level() -> int:
    """The `stacklevel` that points a warning raised by our caller at the first frame outside gpuwrite (the
    user's call, whichever entry point and accessor it went through)."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def warn_zoned_int96(schema: FileSchema, *, pandas: bool) -> None:
    """Warn (the first time in this process) when `schema` writes a zoned timestamp as INT96, naming the column
    and the option that keeps the zone; `pandas`: the file carries pandas metadata, which restores the zone
    for pandas."""
    global _warned
    if _warned:
        return
    zoned = zoned_int96_columns(schema)
    if not zoned:
        return
    _warned = True
    path, t = zoned[0]
    more = f" (and {len(zoned) - 1} more)" if len(zoned) > 1 else ""
    readers = ("pandas reads the zone back from the file's pandas metadata; pyarrow tables, DuckDB and polars read"
               if pandas else "pyarrow, DuckDB, polars and pandas read")
    warnings.warn(
        f"gpuwrite: column {path!r} ({t}){more} is written as INT96, Spark's default timestamp type "
        f"(spark.sql.parquet.outputTimestampType=INT96): Spark reads it in its session time zone, {readers} "
        "zone-less UTC timestamps. Pass timestamp_type=\"TIMESTAMP_MICROS\" (the Spark key "
        "spark.sql.parquet.outputTimestampType) to write UTC-adjusted timestamps every reader reads as instants. "
        "Shown once per process.", Int96ZoneWarning, stacklevel=_caller_level())


@contextmanager
def held_back() -> Iterator[None]:
    """No notice for the writes inside (gpuwrite's own sample writes, as `gpuwrite warmup` makes), without using up
    the process's one notice: a user's write afterwards is still told."""
    global _warned
    before, _warned = _warned, True
    try:
        yield
    finally:
        _warned = before
