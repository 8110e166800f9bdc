"""Decimals sent to a task as their unscaled longs, and read back there as decimal64: the same values, a cheaper
transfer.

For each decimal of each row, Spark's ArrowWriter (the JVM side of `mapInArrow`) builds a java.math.BigDecimal
and Arrow's DecimalVector turns it into 16 bytes through a BigInteger; a long column is a plain store. A Spark
decimal of precision <= 18 holds its unscaled value as a long, and catalyst's `UnscaledValue` hands that long on
(the optimizer's DecimalAggregates rule sums small decimals that way). So the job sends such columns as
`UnscaledValue(col)` under their own names, and the task gives each back its type as decimal64(precision,
scale) over the very buffers it received, which the writer compacts as it compacts decimal128's low words:
the files are the same bytes.

`UnscaledValue` is not a registered SQL function: it is built through the session's JVM (py4j), so only classic
sessions send unscaled decimals; under Spark Connect, or where the classes are not found, decimals travel as
Spark sends them. Columns the task reads as values (partition, bucket and sort columns) are left as they are.
`spark.gpuwrite.python.unscaledDecimals=false` turns it off.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator
from typing import Any

import pyarrow as pa

log = logging.getLogger(__name__)

MAX_PRECISION = 18  # SPEC: Decimal.MAX_LONG_DIGITS: a Decimal of at most 18 digits keeps its unscaled long

Unscaled = tuple[int, int, int]  # (column index, precision, scale)
# Building the projection costs the driver ~15-20 ms (py4j calls and the analysis of a new Dataset), a fixed cost
# that a small write notices; the JVM saves ~25 ns of CPU a decimal value. Sent unscaled from this many values
# (Spark's estimate) on.
MIN_VALUES = 1_000_000


def unscaled_columns(schema: Any, kept: Collection[str]) -> tuple[Unscaled, ...]:
    """The top-level decimal columns of a Spark schema (a StructType) of precision <= 18, but those named in
    `kept` (compared without case: excluding a column too many only leaves it as Spark sends it)."""
    from pyspark.sql.types import DecimalType

    keep = {name.lower() for name in kept}
    return tuple((i, f.dataType.precision, f.dataType.scale) for i, f in enumerate(schema.fields)
                 if isinstance(f.dataType, DecimalType) and f.dataType.precision <= MAX_PRECISION
                 and f.name.lower() not in keep)


def estimated_rows(df: Any) -> float | None:
    """Spark's estimate of a classic DataFrame's rows: its analyzed plan's sizeInBytes over the size of a row
    (SPEC: EstimationUtils.getSizePerRow: 8 bytes plus each field's defaultSize), None when it cannot say."""
    try:
        jdf = df._jdf
        size = jdf.queryExecution().analyzed().stats().sizeInBytes()  # a Scala BigInt, which py4j gives as an int
        size = int(size if isinstance(size, int) else size.toString())
        return size / (8 + int(jdf.schema().defaultSize()))
    except Exception:
        return None


def worth_sending(df: Any, columns: tuple[Unscaled, ...]) -> bool:
    """Whether the projection's fixed cost is likely paid back: Spark estimates at least MIN_VALUES values in
    `columns` (an unknown size, which Spark reports as the largest, counts as large)."""
    rows = estimated_rows(df)
    return rows is None or rows * len(columns) >= MIN_VALUES


def send_unscaled(df: Any, columns: tuple[Unscaled, ...]) -> Any | None:
    """`df` with `columns` replaced, in place and under their names, by their unscaled longs, or None when this
    session cannot build them (Spark Connect, or no such JVM classes): the caller then sends `df`. Three py4j
    calls a column (no more: each costs a round trip to the JVM, which a small write notices)."""
    jdf = getattr(df, "_jdf", None)
    if jdf is None or not columns:
        return None
    try:
        from pyspark.sql.classic.column import Column

        jvm = df.sparkSession._jvm
        expressions = jvm.org.apache.spark.sql.classic.ExpressionUtils
        unscaled_value = jvm.org.apache.spark.sql.catalyst.expressions.UnscaledValue
        attribute = jvm.org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
        names = [df.schema.fields[i].name for i, _, _ in columns]
        return df.withColumns({name: Column(expressions.column(unscaled_value(attribute.quoted(name))))
                               for name in names})
    except Exception as err:  # py4j errors, a Spark without these classes: send the decimals as they are
        log.info("gpuwrite: decimals sent as Spark sends them (unscaled longs unavailable: %s: %s)",
                 type(err).__name__, err)
        return None


def as_decimals(batches: Iterator[pa.RecordBatch], columns: tuple[Unscaled, ...]) -> Iterator[pa.RecordBatch]:
    """The task's batches with each unscaled column given its decimal type back, as decimal64(precision,
    scale) over the same buffers (nothing is copied)."""
    if not columns:
        yield from batches
        return
    types = [(i, pa.decimal64(precision, scale)) for i, precision, scale in columns]
    schema: pa.Schema | None = None
    for batch in batches:
        arrays = list(batch.columns)
        for i, decimal in types:
            got = arrays[i]
            if got.type != pa.int64():
                raise TypeError(f"column {batch.schema.names[i]!r} was sent as {got.type}, not as the int64 "
                                f"unscaled values of decimal({decimal.precision},{decimal.scale})")
            arrays[i] = pa.Array.from_buffers(decimal, len(got), got.buffers(), got.null_count, got.offset)
        if schema is None:
            fields = list(batch.schema)
            for i, decimal in types:
                fields[i] = fields[i].with_type(decimal)
            schema = pa.schema(fields, metadata=batch.schema.metadata)
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)
