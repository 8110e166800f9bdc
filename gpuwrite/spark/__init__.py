"""Spark policy (file naming, dataset layout, footer keys) and the PySpark integration: `write_parquet` runs
gpuwrite inside Spark's tasks (mapInArrow) and commits the job on the driver as Spark does."""

from __future__ import annotations

from typing import Any


def write_parquet(df: Any, path: str, **kwargs: Any) -> Any:
    """Write a PySpark DataFrame with gpuwrite in Spark's tasks; see `gpuwrite.spark.job.write_parquet`."""
    from .job import write_parquet as run

    return run(df, path, **kwargs)


__all__ = ["write_parquet"]
