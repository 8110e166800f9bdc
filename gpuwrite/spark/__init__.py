"""Spark policy (file naming, dataset layout, footer keys) and the PySpark integration: `write_parquet` runs
gpuwrite inside Spark's tasks (mapInArrow) and commits the job on the driver as Spark does; `enable(spark)`
sends a session's DataFrameWriter Parquet writes through it (the drop-in)."""

from __future__ import annotations

from typing import Any


def write_parquet(df: Any, path: str, **kwargs: Any) -> Any:
    """Write a PySpark DataFrame with gpuwrite in Spark's tasks; see `gpuwrite.spark.job.write_parquet`."""
    from .job import write_parquet as run

    return run(df, path, **kwargs)


def enable(spark: Any) -> None:
    """Route this session's DataFrameWriter Parquet writes through gpuwrite; see `gpuwrite.spark.dropin`."""
    from .dropin import enable as run

    run(spark)


def disable(spark: Any) -> None:
    """Give this session Spark's own writers back."""
    from .dropin import disable as run

    run(spark)


def fallbacks() -> Any:
    """The writer calls that ran Spark's own writer while the drop-in was on, with their reasons."""
    from .dropin import fallbacks as run

    return run()


__all__ = ["disable", "enable", "fallbacks", "write_parquet"]
