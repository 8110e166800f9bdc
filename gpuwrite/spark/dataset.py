"""`write_dataset`: a directory of Parquet files laid out as Spark writes a table.

Spark's file names, Hive partition directories (`partition_by`, partition columns left out of the files),
Spark buckets (`bucket_by=(n, columns)`: bucket id = pmod(murmur3(keys, 42), n), `_NNNNN` file suffix), rows
ordered by partition columns then bucket id as Spark's V1Writes orders them, `maxRecordsPerFile` rolling
(also in the middle of a batch), `_SUCCESS`, modes error / overwrite / append / ignore. The target is checked
first (`target`), files are written in a staging directory beside it and committed under the target's lock
(`publish`), so a failed or killed write leaves the table as it was and concurrent writers get a clear outcome;
what killed jobs left is cleaned by the next write (`leftovers`). `write_task` is one Spark task's share of it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..errors import GpuwriteError
from ..filesystems import local_path
from ..integrations.arrow import ArrowPiece, open_input
from ..options import WriteOptions, resolve_options
from ..result import FileResult
from . import publish
from .buckets import parse_bucket_by
from .leftovers import recover_dead
from .lock import TargetLock
from .modes import should_write
from .staging import Staging
from .target import Target, resolve_target
from .writers import FileLayout, write_files, write_partitioned


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

    def __repr__(self) -> str:
        """One line: where, files, rows and bytes (`.files` lists each FileResult)."""
        return (f"DatasetResult(path={self.path!r}, files={len(self.files)}, num_rows={self.num_rows:,}, "
                f"size={sum(f.size for f in self.files):,} bytes, job_uuid={self.job_uuid!r})")


def _begin(target: Target, mode: str) -> bool:
    """Under the target's lock: clean what dead jobs left there, then apply the save mode; False means nothing
    is to be written (mode ignore found a table)."""
    with TargetLock(target.real):
        recover_dead(target.real)
        return should_write(target.given, mode, os.path.isdir(target.real))


def write_dataset(data: Any, path: str | os.PathLike[str], *, mode: str = "error",
                  max_records_per_file: int = 0, partition_by: list[str] | None = None,
                  bucket_by: tuple[int, list[str]] | None = None, max_open_files: int = 0,
                  hive_compatible_buckets: bool = False,
                  options: WriteOptions | dict[str, Any] | None = None, filesystem: Any = None,
                  **keywords: Any) -> DatasetResult:
    """Write `data` as a Spark-layout table directory; files appear only when the whole write succeeded, and
    whatever fails, the table that was there stays as it was (see `publish`). `path` may be a URI (`s3://`,
    `memory://`...) or a path on `filesystem` (pyarrow or fsspec): see `remote_dataset` for what is atomic
    there."""
    buckets = parse_bucket_by(bucket_by, partition_by or [], hive_compatible_buckets)
    if not isinstance(max_records_per_file, int) or max_records_per_file < 0:
        raise GpuwriteError(f"max_records_per_file must be an integer >= 0, got {max_records_per_file!r}")
    if not isinstance(max_open_files, int) or max_open_files < 0:
        raise GpuwriteError(f"max_open_files must be an integer >= 0, got {max_open_files!r}")
    opts = resolve_options(options, keywords)
    local = local_path(path, filesystem)
    if local is None:
        from .remote_dataset import write_remote

        return write_remote(data, os.fspath(path), filesystem, mode, lambda job, fs: FileLayout(
            job=job, partition_by=tuple(partition_by or ()), buckets=buckets, filesystem=fs,
            max_records_per_file=max_records_per_file, options=opts, max_open_files=max_open_files))
    target = resolve_target(local, mode)
    if not _begin(target, mode):
        return DatasetResult(target.given, "")
    schema, pieces = open_input(data)
    job = str(uuid.uuid4())
    layout = FileLayout(job=job, partition_by=tuple(partition_by or ()), buckets=buckets,
                        max_records_per_file=max_records_per_file, options=opts, max_open_files=max_open_files)
    stage = Staging.create(target.real, job)
    try:
        files = write_task(schema, pieces, stage.new, layout)
        with TargetLock(target.real):
            recover_dead(target.real)
            published = publish.commit(stage, target.real, mode)
    finally:
        stage.discard()  # after a commit: the old files moved aside; the lock is already released
    if not published:
        return DatasetResult(target.given, "")
    root = target.display
    return DatasetResult(target.given, job, [FileResult(os.path.join(root, os.path.relpath(f.path, stage.new)),
                                                        f.num_rows, f.size, f.footer, f.metadata) for f in files])


def write_task(schema: pa.Schema, pieces: Iterator[ArrowPiece], directory: str, layout: FileLayout, *,
               empty_file: bool = True, presorted: bool = False) -> list[FileResult]:
    """One Spark task's share of a dataset write: its files, named for the layout's task and job, under
    `directory` (partition directories below it), exactly as `write_dataset` lays out a whole write.
    `empty_file`: no rows still give one footer-only file (unpartitioned). `presorted`: the rows arrive sorted
    as V1Writes sorts them, so they are streamed instead of gathered and sorted."""
    layout.make_dirs(directory)
    if layout.partitioned:
        return write_partitioned(schema, pieces, directory, layout, presorted=presorted)
    return write_files(schema, pieces, directory, layout, empty_file=empty_file)
