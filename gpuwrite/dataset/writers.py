"""The file writers of a Spark-layout write: one task's files under a directory, named as Spark names them.

`write_files` is Spark's single-directory writer (a new file every maxRecordsPerFile rows); `write_partitioned`
its dynamic partition / bucket writers (Hive directories, `_NNNNN` bucket suffix, one file counter per key), with
the concurrent-writers mode of `max_open_files` and the streaming mode for rows already in V1Writes order.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ..api import ParquetWriter
from ..errors import FileWriteError, GpuwriteError, UnsupportedTypeError, os_reason
from ..integrations.arrow import ArrowPiece
from ..options.model import WriteOptions
from ..result import FileResult
from ..schema import is_nested_type
from ..spark.policy.buckets import BucketSpec
from ..spark.policy.naming import data_file_name, hive_bucket_prefix
from ..spark.policy.ordering import Key, partition_runs, row_keys
from ..spark.policy.partitions import check_partition_column
from .partition_limit import DEFAULT_MAX_PARTITIONS, PartitionBudget, check_partition_count

__all__ = ["DEFAULT_MAX_PARTITIONS", "FileLayout", "write_files", "write_partitioned"]


@dataclass(frozen=True, kw_only=True)
class FileLayout:
    """How one task lays out its files: partition directories, buckets, rows per file, the names' task and job
    ids, the file options, and how many files may be open at once (0: sort the input first, Spark's default)."""

    job: str
    task: int = 0
    partition_by: tuple[str, ...] = ()
    buckets: BucketSpec | None = None
    max_records_per_file: int = 0
    options: WriteOptions = field(default_factory=WriteOptions)
    max_open_files: int = 0
    max_partitions: int = 0  # partition directories at most (write_dataset: 1024, as pyarrow); 0: no limit
    streaming: bool = False  # batches arrive while the task waits for more: encode pages as they come
    filesystem: Any = None  # a pyarrow FileSystem the directories are on (None: the local disk)
    zone_warning: bool = True  # warn of zoned INT96 timestamps (ParquetWriter's); Spark's tasks do not

    def make_dirs(self, directory: str) -> None:
        """Create `directory` and its parents where the files go; a local OSError (disk or inodes full, a name
        too long...) becomes a FileWriteError naming the directory and the cause."""
        if self.filesystem is not None:
            self.filesystem.create_dir(directory, recursive=True)
            return
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            err = FileWriteError(f"cannot create the directory {directory!r}: {os_reason(e)}")
            err.errno, err.strerror, err.filename = e.errno, e.strerror, directory
            raise err from e

    def open_writer(self, path: str, schema: pa.Schema) -> ParquetWriter:
        """A writer for one of the layout's files. Its batches' decimals are checked where they are converted
        (`FileWriter.check_at_conversion`): any error gives up every file of the task, so no writer needs to
        stay usable after refusing a batch."""
        writer = ParquetWriter(path, schema, options=self.options, streaming=self.streaming,
                               filesystem=self.filesystem, zone_warning=self.zone_warning)
        writer.check_at_conversion()
        writer.warn_filter_size = False  # the task warns once for all its files (write_task)
        return writer

    @property
    def partitioned(self) -> bool:
        """Whether rows go to partition directories or bucket files (Spark's dynamic writers)."""
        return bool(self.partition_by or self.buckets)


def _table(piece: ArrowPiece) -> pa.Table:
    """A piece as a table (no copy)."""
    return piece if isinstance(piece, pa.Table) else pa.Table.from_batches([piece])


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


def write_files(schema: pa.Schema, pieces: Iterator[ArrowPiece], directory: str, layout: FileLayout, *,
                empty_file: bool = True) -> list[FileResult]:
    """One task's files in `directory`: a new file each maxRecordsPerFile rows; one (footer-only) file for empty
    input when `empty_file`."""
    results: list[FileResult] = []
    writer: ParquetWriter | None = None
    counter = 0
    layout.make_dirs(directory)

    def open_next() -> ParquetWriter:
        nonlocal counter
        name = data_file_name(layout.task, layout.job, counter, layout.options.compression)
        counter += 1
        return layout.open_writer(os.path.join(directory, name), schema)

    try:
        for new_file, piece in _slices(pieces, layout.max_records_per_file):
            if new_file:
                if writer is not None:
                    results.append(writer.close())
                writer = open_next()
            assert writer is not None
            writer.write(piece)
        if writer is None and empty_file:
            writer = open_next()
        if writer is not None:
            results.append(writer.close())
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return results


class _OpenFiles:
    """Open files per (directory, bucket) with Spark's per-writer record count and file counter."""

    def __init__(self, schema: pa.Schema, root: str, layout: FileLayout) -> None:
        self.schema, self.root, self.layout = schema, root, layout
        self.limit = layout.max_records_per_file
        self.hive_prefix = bool(layout.buckets and layout.buckets.hive_compatible)
        self.budget = PartitionBudget(layout.partition_by, layout.max_partitions if layout.partition_by else 0)
        self.open: dict[Key, list[Any]] = {}  # key -> [writer, records in file, counter]
        self.next_counter: dict[Key, int] = {}  # counters of keys already closed
        self.results: list[FileResult] = []

    def _new(self, key: Key, counter: int) -> ParquetWriter:
        """A writer for file `counter` of `key`."""
        directory, bucket = key
        folder = os.path.join(self.root, directory)
        try:
            self.layout.make_dirs(folder)
        except FileWriteError as e:
            if e.errno == errno.ENAMETOOLONG:
                raise _name_too_long(self.root, directory, self.layout.partition_by, e) from e
            raise
        opts = self.layout.options
        name = data_file_name(self.layout.task, self.layout.job, counter, opts.compression, dynamic=True,
                              bucket_id=bucket)
        if self.hive_prefix and bucket is not None:
            name = hive_bucket_prefix(bucket) + name
        return self.layout.open_writer(os.path.join(folder, name), self.schema)

    def write(self, key: Key, rows: pa.Table) -> None:
        """Append rows to key's file, rolling to the next file every `limit` records."""
        if key not in self.open:
            self.budget.add(key[0])
            counter = self.next_counter.get(key, 0)
            self.open[key] = [self._new(key, counter), 0, counter]
        state = self.open[key]
        start = 0
        while start < rows.num_rows:
            if self.limit and state[1] >= self.limit:
                self.results.append(state[0].close())
                state[2] += 1
                state[0], state[1] = self._new(key, state[2]), 0
            take = rows.num_rows - start if not self.limit else min(rows.num_rows - start, self.limit - state[1])
            state[0].write(rows.slice(start, take))
            state[1] += take
            start += take

    def close(self, key: Key) -> None:
        """Finish key's open file."""
        state = self.open.pop(key, None)
        if state is not None:
            self.results.append(state[0].close())
            self.next_counter[key] = state[2] + 1

    def close_all(self) -> list[FileResult]:
        """Finish every open file; the results of all files, in the order they were finished."""
        for key in list(self.open):
            self.close(key)
        return self.results

    def abort_all(self) -> None:
        """Remove every open file."""
        for state in self.open.values():
            state[0].abort()
        self.open.clear()


def _name_too_long(root: str, directory: str, columns: tuple[str, ...], e: FileWriteError) -> FileWriteError:
    """The error for a partition directory (`directory` under `root`) whose name the file system refuses as
    too long: the partition column and its value (shortened) when one `column=value` name is over the limit,
    else the whole path."""
    folder = os.path.join(root, directory)
    try:
        limit = os.pathconf(root, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    for column, name in zip(columns, directory.split("/"), strict=False):
        size = len(os.fsencode(name))
        if size > limit:
            value = name.partition("=")[2]
            shown = value if len(value) <= 60 else f"{value[:60]}... ({len(value)} characters)"
            err = FileWriteError(f"partition column {column!r}: the value {shown!r} makes the directory name "
                                 f"'{column}=...' {size} bytes long, over the file system's limit of {limit} "
                                 "bytes per name; shorten or hash the value (or partition by another column)")
            break
    else:
        err = FileWriteError(f"cannot create the partition directory {folder!r}: the path is too long "
                             f"({os_reason(e)})")
    err.errno, err.strerror, err.filename = e.errno, e.strerror, folder
    return err


def _check_columns(schema: pa.Schema, columns: list[str], buckets: BucketSpec | None) -> None:
    """Partition and bucket columns must be in the data, distinct, atomic, and leave a data column."""
    missing = [c for c in columns + (buckets.columns if buckets else []) if c not in schema.names]
    if missing:
        raise GpuwriteError(f"partition or bucket column {missing[0]!r} is not in the data "
                            f"(columns: {schema.names})")
    if len(set(columns)) != len(columns) or len(columns) == len(schema.names):
        raise GpuwriteError(f"partition_by={columns} must name distinct columns and leave at least one data column")
    for name in columns:
        check_partition_column(name)
        t = schema.field(name).type
        if is_nested_type(t):
            # SPEC: Spark refuses complex partition columns (PartitioningUtils.validatePartitionColumn).
            raise UnsupportedTypeError(f"partition column {name!r}: type {t} cannot be a partition column "
                                       "(Spark allows only atomic types there)")


def write_partitioned(schema: pa.Schema, pieces: Iterator[ArrowPiece], root: str, layout: FileLayout, *,
                      presorted: bool = False) -> list[FileResult]:
    """Every partition's (and bucket's) files under its Hive directory below `root`, as Spark's dynamic
    writers do.

    With max_open_files > 0 rows go straight to one open file per key (Spark's concurrent writers) until
    that many files are open; the rest of the input is then sorted and written key by key, continuing the
    files already open. With 0 the whole input is sorted once (Spark's default). With `presorted` (the rows
    already come in V1Writes order, as Spark's sort delivers them) batches stream through one open file at a
    time and nothing is gathered.
    """
    columns, buckets = list(layout.partition_by), layout.buckets
    _check_columns(schema, columns, buckets)
    time_zone = layout.options.time_zone
    # the input's metadata stays (a frame's pandas metadata: each file's leaves the partition columns out)
    data_schema = pa.schema([f for f in schema if f.name not in columns], schema.metadata)
    files = _OpenFiles(data_schema, root, layout)
    try:
        if presorted:
            current: Key | None = None
            for piece in pieces:
                for directory, bucket, rows in partition_runs(_table(piece), columns, buckets, time_zone):
                    if current is not None and (directory, bucket) != current:
                        files.close(current)
                    current = (directory, bucket)
                    files.write(current, rows)
            return files.close_all()
        rest = _write_concurrent(files, pieces, columns, layout.max_open_files)
        if rest:
            table = _gather(schema, iter(rest))
            if not files.open and not files.results:  # nothing written yet: count before the first file
                check_partition_count(table, columns, layout.max_partitions)
            for directory, bucket, rows in partition_runs(table, columns, buckets, time_zone):
                files.write((directory, bucket), rows)
                files.close((directory, bucket))
        return files.close_all()
    except BaseException:
        files.abort_all()
        raise


def _write_concurrent(files: _OpenFiles, pieces: Iterator[ArrowPiece], columns: list[str],
                      max_open_files: int) -> list[ArrowPiece]:
    """Spark's concurrent writers: rows straight to one open file per key while fewer than `max_open_files`
    are open (none with 0); returns the input left over, to be sorted."""
    rest: list[ArrowPiece] = []
    concurrent = max_open_files > 0
    buckets, time_zone = files.layout.buckets, files.layout.options.time_zone
    for piece in pieces:
        if not concurrent:
            rest.append(piece)
            continue
        table = _table(piece)
        codes, keys = row_keys(table, columns, buckets, time_zone)
        new = [k for k in keys if k not in files.open]
        room = max_open_files - len(files.open)
        cut = table.num_rows
        if len(new) >= room:
            last_new = keys.index(new[room - 1])
            cut = int(np.argmax(codes == last_new)) + 1
            concurrent = False
        data = table.drop_columns(columns)
        head = codes[:cut]
        for code, key in enumerate(keys):
            rows = np.flatnonzero(head == code)
            if rows.size:
                files.write(key, data.take(rows))
        if cut < table.num_rows:
            rest.append(table.slice(cut))
    return rest


def _gather(schema: pa.Schema, pieces: Iterator[ArrowPiece]) -> pa.Table:
    """All pieces as one table (no copy of column data)."""
    tables = [_table(p) for p in pieces]
    return pa.concat_tables(tables) if tables else schema.empty_table()
