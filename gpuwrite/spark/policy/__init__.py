"""Spark's format policy, pure and without pyspark: file names, footer keys, Hive partition directories,
bucket ids and their hashes, save modes and V1Writes' row order. The dataset writer and the PySpark
integration both build on it; it imports neither."""
