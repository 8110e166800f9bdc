"""Parquet format layer: Thrift compact protocol, the parquet.thrift structs and enums, a footer reader."""

from gpuwrite.format.thrift import CompactWriter, ThriftDecodeError, read_struct, serialize

__all__ = ["CompactWriter", "ThriftDecodeError", "read_struct", "serialize"]
