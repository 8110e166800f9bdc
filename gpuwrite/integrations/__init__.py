"""Adapters from the data users hold (Arrow, pandas, polars, DuckDB) to Arrow record batches."""
