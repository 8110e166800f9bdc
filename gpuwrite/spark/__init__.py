"""Spark policy (file naming, dataset layout, footer keys) and the PySpark integration: `write_parquet` runs
gpuwrite inside Spark's tasks (mapInArrow) and commits the job on the driver as Spark does; `enable(spark)`
sends a session's DataFrameWriter Parquet writes through it (the drop-in)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .job import SparkWriteResult, write_parquet


def __getattr__(name: str) -> Any:
    """`write_parquet` and `SparkWriteResult` themselves (real signature and docstring), imported on first use:
    `gpuwrite.spark.job` imports the core, which imports this package first."""
    if name in ("write_parquet", "SparkWriteResult"):
        from . import job

        return getattr(job, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


__all__ = ["SparkWriteResult", "disable", "enable", "fallbacks", "write_parquet"]
