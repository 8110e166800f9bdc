"""Input files for `gpuwrite write`: Parquet, Arrow IPC (file or stream) or CSV, opened as a stream of batches.

The kind comes from the file's extension, else from its magic bytes. CSV reading (delimiter, column types,
null markers, located conversion errors) is in `csv_input`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

from ..errors import GpuwriteError
from .csv_input import CsvSettings, CsvSource

PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
IPC_SUFFIXES = (".arrow", ".feather", ".ipc", ".arrows")
CSV_SUFFIXES = (".csv", ".tsv")
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zst", ".lz4")
IPC_STREAM_MARKER = b"\xff\xff\xff\xff"
PARQUET_BATCH_ROWS = 128 * 1024


class InputKindError(GpuwriteError):
    """An input whose kind cannot be told from its name or its first bytes."""


@dataclass
class Source:
    """An opened input: its schema, its batches (read lazily), its row count if known, and what it is."""

    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]
    total_rows: int | None
    kind: str


def input_kind(path: str) -> str:
    """'parquet', 'ipc' or 'csv' for an input path: by extension, else by the file's magic bytes."""
    name = path.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(tuple(s + suffix for s in CSV_SUFFIXES)):
            name = name.removesuffix(suffix)
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(IPC_SUFFIXES):
        return "ipc"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"ARROW1") or head.startswith(IPC_STREAM_MARKER):
        return "ipc"
    raise InputKindError(f"cannot tell what kind of file {path!r} is (no PAR1 or ARROW1 magic): name it .parquet, "
                         ".arrow/.feather/.ipc or .csv")


def open_source(path: str, stack: contextlib.ExitStack, csv_settings: CsvSettings | None = None) -> Source:
    """Open `path` as a stream of record batches; files it opens are closed by `stack`."""
    if not os.path.exists(path):
        raise FileNotFoundError(2, "No such file or directory", path)
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory (give one file)", path)
    kind = input_kind(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        pf = stack.enter_context(pq.ParquetFile(path))
        return Source(pf.schema_arrow, pf.iter_batches(batch_size=PARQUET_BATCH_ROWS), pf.metadata.num_rows,
                      "Parquet")
    if kind == "ipc":
        source = stack.enter_context(pa.memory_map(path))
        if source.read(6) == b"ARROW1":
            source.seek(0)
            reader = pa.ipc.open_file(source)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
            return Source(reader.schema, batches, reader.count_rows(), "Arrow IPC file")
        source.seek(0)
        stream = stack.enter_context(pa.ipc.open_stream(source))
        return Source(stream.schema, iter(stream), None, "Arrow IPC stream")
    csv_source = CsvSource(path, csv_settings or CsvSettings(), stack)
    return Source(csv_source.schema, csv_source.batches(), None, "CSV")
