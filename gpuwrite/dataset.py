"""`write_dataset`: a directory of Parquet files laid out as Spark writes a table.

So far: non-partitioned, non-bucketed output with Spark's file names, `maxRecordsPerFile` rolling (also in
the middle of a batch), `_SUCCESS`, modes error / overwrite / append / ignore, and a staging directory so a
failed write leaves the target as it was.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .errors import GpuwriteError
from .integrations.arrow import ArrowPiece, open_input
from .options import WriteOptions, resolve_options
from .result import FileResult
from .spark.naming import data_file_name
from .writer import ParquetWriter

MODES = ("error", "errorifexists", "overwrite", "append", "ignore")
SUCCESS = "_SUCCESS"


@dataclass(frozen=True)
class DatasetResult:
    """A written dataset: its directory, the files written (in order) and the job id in their names."""

    path: str
    job_uuid: str
    files: list[FileResult] = field(default_factory=list)

    @property
    def num_rows(self) -> int:
        """Rows over all files."""
        return sum(f.num_rows for f in self.files)


def _slices(pieces: Iterator[ArrowPiece], limit: int) -> Iterator[tuple[bool, ArrowPiece]]:
    """Yield (starts_new_file, piece) so that no file gets more than `limit` rows (0 = no limit)."""
    in_file = 0
    first = True
    for piece in pieces:
        start = 0
        while start < piece.num_rows:
            if limit and in_file == limit:
                in_file = 0
                first = True
            take = piece.num_rows - start if not limit else min(piece.num_rows - start, limit - in_file)
            yield first, piece.slice(start, take)
            first = False
            in_file += take
            start += take


def _prepare_target(path: str, mode: str) -> bool:
    """Apply the save mode before writing; False means nothing is to be written (mode ignore)."""
    if mode not in MODES:
        raise GpuwriteError(f"mode={mode!r} is not one of {', '.join(MODES)}")
    if os.path.exists(path) and not os.path.isdir(path):
        raise GpuwriteError(f"cannot write a dataset at {path!r}: it is a file")
    exists = os.path.isdir(path)
    if exists and mode in ("error", "errorifexists"):
        raise GpuwriteError(f"path {path!r} already exists (mode='error'); use mode='overwrite' or 'append'")
    if exists and mode == "ignore":
        return False
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise GpuwriteError(f"cannot write {path!r}: directory {parent!r} does not exist")
    return True


def write_dataset(data: Any, path: str | os.PathLike[str], *, mode: str = "error",
                  max_records_per_file: int = 0, partition_by: list[str] | None = None,
                  bucket_by: tuple[int, list[str]] | None = None,
                  options: WriteOptions | dict[str, Any] | None = None, **keywords: Any) -> DatasetResult:
    """Write `data` as a Spark-layout table directory; files appear only when the whole write succeeded."""
    if partition_by or bucket_by:
        raise GpuwriteError("partition_by and bucket_by are not implemented yet in write_dataset")
    if not isinstance(max_records_per_file, int) or max_records_per_file < 0:
        raise GpuwriteError(f"max_records_per_file must be an integer >= 0, got {max_records_per_file!r}")
    opts = resolve_options(options, keywords)
    target = os.fspath(path)
    if not _prepare_target(target, mode):
        return DatasetResult(target, "")
    schema, pieces = open_input(data)
    job = str(uuid.uuid4())
    staging = os.path.join(os.path.dirname(os.path.abspath(target)),
                           f".{os.path.basename(target)}.gpuwrite-staging-{job[:8]}")
    os.makedirs(staging)
    try:
        files = _write_files(schema, pieces, staging, job, max_records_per_file, opts)
        _commit(staging, target, mode, files)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    moved = [FileResult(os.path.join(target, os.path.basename(f.path)), f.num_rows, f.size, f.footer, f.metadata)
             for f in files]
    return DatasetResult(target, job, moved)


def _write_files(schema: pa.Schema, pieces: Iterator[ArrowPiece], staging: str, job: str, limit: int,
                 opts: WriteOptions) -> list[FileResult]:
    """Task 0's files: a new file each `limit` rows; one (footer-only) file when the input is empty."""
    results: list[FileResult] = []
    writer: ParquetWriter | None = None
    counter = 0
    try:
        for new_file, piece in _slices(pieces, limit):
            if new_file:
                if writer is not None:
                    results.append(writer.close())
                name = data_file_name(0, job, counter, opts.compression)
                writer = ParquetWriter(os.path.join(staging, name), schema, options=opts)
                counter += 1
            assert writer is not None
            writer.write(piece)
        if writer is None:
            writer = ParquetWriter(os.path.join(staging, data_file_name(0, job, 0, opts.compression)), schema,
                                   options=opts)
        results.append(writer.close())
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return results


def _commit(staging: str, target: str, mode: str, files: list[FileResult]) -> None:
    """Move the staged files into place and write `_SUCCESS` (overwrite clears the old table first)."""
    if mode == "overwrite" and os.path.isdir(target):
        shutil.rmtree(target)
    os.makedirs(target, exist_ok=True)
    for f in files:
        os.replace(f.path, os.path.join(target, os.path.basename(f.path)))
    with open(os.path.join(target, SUCCESS), "wb"):
        pass
    os.rmdir(staging)
