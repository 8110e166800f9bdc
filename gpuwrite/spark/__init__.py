"""Spark policy: file naming and dataset layout as Spark writes them (no kernels, no Parquet bytes here)."""
