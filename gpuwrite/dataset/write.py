"""`write_dataset`: a directory of Parquet files laid out as Spark writes a table.

Spark's file names, Hive partition directories (`partition_by`, partition columns left out of the files),
Spark buckets (`bucket_by=(n, columns)`: bucket id = pmod(murmur3(keys, 42), n), `_NNNNN` file suffix), rows
ordered by partition columns then bucket id as Spark's V1Writes orders them, `maxRecordsPerFile` rolling
(also in the middle of a batch), `_SUCCESS`, modes error / overwrite / append / ignore. The target is checked
first (`target`), files are written in a staging directory beside it and committed under the target's lock
(`publish`), so a failed or killed write leaves the table as it was and concurrent writers get a clear outcome;
what killed jobs left is cleaned by the next write (`leftovers`). Missing parent directories are created, as
pyarrow's write_dataset and Spark create them (and removed again if the write fails). `write_task` is one Spark
task's share of it.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..api import writer_entry
from ..assemble.bloom import warn_if_filters_outweigh_data
from ..errors import GpuwriteError
from ..filesystems import local_path
from ..integrations.arrow import ArrowPiece, open_input
from ..integrations.device_data import DeviceTable
from ..options.aliases import column_list
from ..options.keywords import WriteKeywords
from ..options.model import WriteOptions, resolve_options
from ..result import FileResult
from ..spark.policy.buckets import parse_bucket_by
from ..spark.policy.modes import should_write
from . import publish
from .leftovers import recover_dead, report_left
from .lock import TargetLock
from .staging import Staging
from .target import Target, make_parents, remove_parents, resolve_target
from .writers import DEFAULT_MAX_PARTITIONS, FileLayout, write_files, write_partitioned

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:  # 3.10: only type checkers read it (the annotations are not evaluated at runtime)
    from typing_extensions import Unpack


@dataclass(frozen=True)
class DatasetResult:
    """A written dataset: its directory, the files written (in order) and the job id in their names;
    `leftovers`: directories of this write (its staging directory with an overwritten table's old files) that
    could not be deleted, each also warned about (`errors.LeftoverWarning`); the next write removes them."""

    path: str
    job_uuid: str
    files: list[FileResult] = field(default_factory=list)
    leftovers: tuple[str, ...] = ()

    @property
    def num_rows(self) -> int:
        """Rows over all files."""
        return sum(f.num_rows for f in self.files)

    def __repr__(self) -> str:
        """One line: where, files, rows and bytes (`.files` lists each FileResult)."""
        left = f", leftovers={list(self.leftovers)!r}" if self.leftovers else ""
        return (f"DatasetResult(path={self.path!r}, files={len(self.files)}, num_rows={self.num_rows:,}, "
                f"size={sum(f.size for f in self.files):,} bytes, job_uuid={self.job_uuid!r}{left})")


def _begin(target: Target, mode: str) -> bool:
    """Under the target's lock: clean what dead jobs left there, then apply the save mode; False means nothing
    is to be written (mode ignore found a table)."""
    with TargetLock(target.real):
        recover_dead(target.real)
        return should_write(target.given, mode, os.path.isdir(target.real))


@writer_entry
def write_dataset(data: Any, path: str | os.PathLike[str], *, mode: str = "error",
                  max_records_per_file: int = 0, partition_by: str | Sequence[str] | None = None,
                  partition_cols: str | Sequence[str] | None = None,
                  bucket_by: tuple[int, str | Sequence[str]] | None = None, max_open_files: int = 0,
                  max_partitions: int = DEFAULT_MAX_PARTITIONS, hive_compatible_buckets: bool = False,
                  options: WriteOptions | Mapping[str, Any] | None = None, filesystem: Any = None,
                  **keywords: Unpack[WriteKeywords]) -> DatasetResult:
    """Write `data` as a Spark-layout table directory; files appear only when the whole write succeeded, and
    whatever fails, the table that was there stays as it was (see `publish`).

    data: what write_table takes. path: the table directory, a local path, a URI (`s3://`, `memory://`...) or a
    path on `filesystem` (pyarrow or fsspec): see `remote_dataset` for what is atomic there. mode: "error" (default: refuse an existing
    table), "overwrite", "append" or "ignore", as Spark's DataFrameWriter.mode. partition_by (or pyarrow's
    name partition_cols): a column name or a list of them; Hive directories col=value, the columns left out
    of the files. bucket_by: (number of buckets, column or columns), Spark's Murmur3 buckets
    (hive_compatible_buckets=True: HiveHash). max_records_per_file: rows per file at most (0, default: no
    limit; Spark's maxRecordsPerFile). max_open_files: files open at once before the rest is sorted (0,
    default: sort first; Spark's maxConcurrentOutputFileWriters). max_partitions: partition directories the
    write may create at most (default 1024, as pyarrow's write_dataset): more is an error naming the columns
    and the count, raised before any file is written. options and the keywords below: as write_table.
    Returns a DatasetResult (path, files, num_rows).
    """
    partition_by = _partition_columns(partition_by, partition_cols)
    buckets = parse_bucket_by(bucket_by, partition_by, hive_compatible_buckets)
    if not isinstance(max_records_per_file, int) or max_records_per_file < 0:
        raise GpuwriteError(f"max_records_per_file must be an integer >= 0, got {max_records_per_file!r}")
    if not isinstance(max_open_files, int) or max_open_files < 0:
        raise GpuwriteError(f"max_open_files must be an integer >= 0, got {max_open_files!r}")
    if not isinstance(max_partitions, int) or isinstance(max_partitions, bool) or max_partitions <= 0:
        raise GpuwriteError(f"max_partitions must be a positive integer, got {max_partitions!r}")
    opts = resolve_options(options, keywords)
    local = local_path(path, filesystem)
    if local is None:
        from .remote import write_remote

        return write_remote(data, os.fspath(path), filesystem, mode, lambda job, fs: FileLayout(
            job=job, partition_by=tuple(partition_by), buckets=buckets, filesystem=fs,
            max_records_per_file=max_records_per_file, options=opts, max_open_files=max_open_files,
            max_partitions=max_partitions))
    target = resolve_target(local, mode, parents=True)
    created = make_parents(target)
    try:
        return _write_local(data, target, mode, layout_for=lambda job: FileLayout(
            job=job, partition_by=tuple(partition_by), buckets=buckets, max_records_per_file=max_records_per_file,
            options=opts, max_open_files=max_open_files, max_partitions=max_partitions))
    except BaseException:
        remove_parents(created)
        raise


def _write_local(data: Any, target: Target, mode: str, layout_for: Callable[[str], FileLayout]) -> DatasetResult:
    """write_dataset on the local disk, its parent directory there: staged, committed under the lock, the
    staging directory retired (what of it cannot be deleted is warned about and reported in the result)."""
    if not _begin(target, mode):
        return DatasetResult(target.given, "")
    schema, pieces = open_input(data)
    job = str(uuid.uuid4())
    stage = Staging.create(target.real, job)
    try:
        files = write_task(schema, pieces, stage.new, layout_for(job))
        with TargetLock(target.real):
            recover_dead(target.real)
            published = publish.commit(stage, target.real, mode)
    finally:
        left = stage.discard()  # after a commit: the old files moved aside; the lock is already released
        if left is not None:
            report_left(left, target.given)
    if not published:
        return DatasetResult(target.given, "", leftovers=() if left is None else (left[0],))
    root = target.display
    return DatasetResult(target.given, job, [FileResult(os.path.join(root, os.path.relpath(f.path, stage.new)),
                                                        f.num_rows, f.size, f.summary, f.metadata) for f in files],
                         () if left is None else (left[0],))


def _partition_columns(partition_by: Any, partition_cols: Any) -> list[str]:
    """partition_by or its pyarrow name partition_cols, as a list (a string is one column)."""
    if partition_by is not None and partition_cols is not None:
        raise GpuwriteError("partition_by and partition_cols are the same option (pyarrow's name); give one of them")
    chosen = partition_cols if partition_by is None else partition_by
    name = "partition_by" if partition_cols is None else "partition_cols"
    return [] if chosen is None else column_list(name, chosen)


def write_task(schema: pa.Schema, pieces: Iterator[ArrowPiece], directory: str, layout: FileLayout, *,
               empty_file: bool = True, presorted: bool = False) -> list[FileResult]:
    """One Spark task's share of a dataset write: its files, named for the layout's task and job, under
    `directory` (partition directories below it), exactly as `write_dataset` lays out a whole write.
    `empty_file`: no rows still give one footer-only file (unpartitioned). `presorted`: the rows arrive sorted
    as V1Writes sorts them, so they are streamed instead of gathered and sorted."""
    layout.make_dirs(directory)
    if layout.partitioned:
        # partition and bucket ids are found on the host: device input is copied there (not yet on the device)
        pieces = (p.to_host() if isinstance(p, DeviceTable) else p for p in pieces)
        files = write_partitioned(schema, pieces, directory, layout, presorted=presorted)
    else:
        files = write_files(schema, pieces, directory, layout, empty_file=empty_file)
    warn_if_filters_outweigh_data([f.metadata for f in files], f"this dataset write ({len(files)} files)")
    return files
