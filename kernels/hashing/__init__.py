"""Hashes: parquet-java's XXH64 bloom filters, Spark's Murmur3 and HiveHash, Iceberg's partition transforms."""
