"""`write_dataset`: a directory of Parquet files laid out as Spark writes a table.

Spark's file names, Hive partition directories (`partition_by`, partition columns left out of the files),
Spark buckets (`bucket_by=(n, columns)`: bucket id = pmod(murmur3(keys, 42), n), `_NNNNN` file suffix), rows
ordered by partition columns then bucket id as Spark's V1Writes orders them, `maxRecordsPerFile` rolling
(also in the middle of a batch), `_SUCCESS`, modes error / overwrite / append / ignore, and a staging
directory so a failed write leaves the target as it was.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .encode.murmur3 import bucket_ids
from .errors import GpuwriteError, UnsupportedTypeError
from .integrations.arrow import ArrowPiece, open_input
from .options import WriteOptions, resolve_options
from .result import FileResult
from .schema import is_nested_type
from .spark.naming import data_file_name, hive_bucket_prefix
from .spark.partitions import partition_fragment, spark_string
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
                  bucket_by: tuple[int, list[str]] | None = None, max_open_files: int = 0,
                  hive_compatible_buckets: bool = False,
                  options: WriteOptions | dict[str, Any] | None = None, **keywords: Any) -> DatasetResult:
    """Write `data` as a Spark-layout table directory; files appear only when the whole write succeeded."""
    buckets = _check_buckets(bucket_by, partition_by or [], hive_compatible_buckets)
    if not isinstance(max_records_per_file, int) or max_records_per_file < 0:
        raise GpuwriteError(f"max_records_per_file must be an integer >= 0, got {max_records_per_file!r}")
    if not isinstance(max_open_files, int) or max_open_files < 0:
        raise GpuwriteError(f"max_open_files must be an integer >= 0, got {max_open_files!r}")
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
        if partition_by or buckets:
            files = _write_partitioned(schema, pieces, list(partition_by or []), buckets, staging, job,
                                       max_records_per_file, opts, max_open_files)
        else:
            files = _write_files(schema, pieces, staging, job, max_records_per_file, opts)
        _commit(staging, target, mode, files)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    moved = [FileResult(os.path.join(target, os.path.relpath(f.path, staging)), f.num_rows, f.size, f.footer,
                        f.metadata) for f in files]
    return DatasetResult(target, job, moved)


def write_task(schema: pa.Schema, pieces: Iterator[ArrowPiece], directory: str, job: str, task: int, *,
               partition_by: list[str] | None = None, bucket_by: tuple[int, list[str]] | None = None,
               max_records_per_file: int = 0, options: WriteOptions | None = None,
               hive_compatible_buckets: bool = False, empty_file: bool = True,
               presorted: bool = False) -> list[FileResult]:
    """One Spark task's share of a dataset write: its files, named for `task` and `job`, under `directory`
    (partition directories below it), exactly as `write_dataset` lays out a whole write. `presorted`: the
    rows arrive sorted as V1Writes sorts them, so they are streamed instead of gathered and sorted."""
    opts = options or WriteOptions()
    buckets = _check_buckets(bucket_by, partition_by or [], hive_compatible_buckets)
    os.makedirs(directory, exist_ok=True)
    if partition_by or buckets:
        return _write_partitioned(schema, pieces, list(partition_by or []), buckets, directory, job,
                                  max_records_per_file, opts, task=task, presorted=presorted)
    return _write_files(schema, pieces, directory, job, max_records_per_file, opts, task=task,
                        empty_file=empty_file)


def _write_files(schema: pa.Schema, pieces: Iterator[ArrowPiece], staging: str, job: str, limit: int,
                 opts: WriteOptions, *, directory: str = "", dynamic: bool = False,
                 empty_file: bool = True, bucket: int | None = None, task: int = 0) -> list[FileResult]:
    """One task's files in `directory`: a new file each `limit` rows; one (footer-only) file for empty input."""
    results: list[FileResult] = []
    writer: ParquetWriter | None = None
    counter = 0
    folder = os.path.join(staging, directory)
    os.makedirs(folder, exist_ok=True)

    def open_next() -> ParquetWriter:
        nonlocal counter
        name = data_file_name(task, job, counter, opts.compression, dynamic=dynamic, bucket_id=bucket)
        counter += 1
        return ParquetWriter(os.path.join(folder, name), schema, options=opts)

    try:
        for new_file, piece in _slices(pieces, limit):
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


@dataclass(frozen=True)
class BucketSpec:
    """Bucketing of a dataset write: Spark's Murmur3 buckets, or Hive-compatible ones (HiveHash, file prefix)."""

    num_buckets: int
    columns: list[str]
    hive_compatible: bool = False

    def ids(self, table: pa.Table) -> np.ndarray:
        """Bucket id of every row of `table`."""
        return bucket_ids(table, self.columns, self.num_buckets, hive=self.hive_compatible)


def _check_buckets(bucket_by: tuple[int, list[str]] | None, partition_by: list[str],
                   hive_compatible: bool = False) -> BucketSpec | None:
    """Validate `bucket_by=(num_buckets, columns)` as Spark does."""
    if bucket_by is None:
        return None
    try:
        num, columns = bucket_by
    except (TypeError, ValueError):
        raise GpuwriteError(f"bucket_by must be (num_buckets, [columns]), got {bucket_by!r}") from None
    columns = [columns] if isinstance(columns, str) else list(columns)
    if not isinstance(num, int) or isinstance(num, bool) or not 0 < num <= 100_000:
        raise GpuwriteError(f"bucket_by: number of buckets must be an integer in 1..100000, got {num!r}")
    if not columns:
        raise GpuwriteError("bucket_by: at least one bucket column is needed")
    both = sorted(set(columns) & set(partition_by))
    if both:
        raise GpuwriteError(f"bucket_by column {both[0]!r} is also a partition column; Spark refuses that")
    return BucketSpec(num, columns, hive_compatible)


_BUCKET_KEY = "__gpuwrite_bucket_id__"


def _partition_runs(table: pa.Table, columns: list[str], buckets: BucketSpec | None,
                    time_zone: str) -> Iterator[tuple[str, int | None, pa.Table]]:
    """(directory, bucket id, rows) per run, in Spark's V1Writes order: sorted by the partition columns (nulls
    first, empty strings taken as null as Spark's Empty2Null does), then by bucket id."""
    keys = []
    for name in columns:
        col = table.column(name)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = pc.if_else(pc.equal(col, ""), pa.scalar(None, col.type), col)
        keys.append(col)
    names = list(columns)
    if buckets is not None:
        keys.append(pa.array(buckets.ids(table)))
        names.append(_BUCKET_KEY)
    key_table = pa.table(keys, names=names)
    order = pc.sort_indices(key_table, sort_keys=[(c, "ascending", "at_start") for c in names])
    key_sorted = key_table.take(order)
    data_sorted = table.drop_columns(columns).take(order)
    n = table.num_rows
    change = np.zeros(n, dtype=bool)
    if n:
        change[0] = True
    for name in names:
        col = key_sorted.column(name).combine_chunks()
        if n > 1:
            a, b = col.slice(0, n - 1), col.slice(1)
            differs = pc.fill_null(pc.not_equal(a, b), True).to_numpy(zero_copy_only=False)
            both_null = pc.and_(a.is_null(), b.is_null()).to_numpy(zero_copy_only=False)
            change[1:] |= differs & ~both_null
    starts = list(np.flatnonzero(change)) + [n]
    for start, end in zip(starts, starts[1:], strict=False):
        parts = [partition_fragment(name, spark_string(key_sorted.column(name)[start].as_py(),
                                                       key_sorted.column(name).type, time_zone))
                 for name in columns]
        bucket = key_sorted.column(_BUCKET_KEY)[start].as_py() if buckets is not None else None
        yield "/".join(parts), bucket, data_sorted.slice(start, end - start)


class _OpenFiles:
    """Open files per (directory, bucket) with Spark's per-writer record count and file counter."""

    def __init__(self, schema: pa.Schema, staging: str, job: str, limit: int, opts: WriteOptions,
                 hive_prefix: bool = False, task: int = 0) -> None:
        self.schema, self.staging, self.job, self.limit, self.opts = schema, staging, job, limit, opts
        self.task = task
        self.hive_prefix = hive_prefix
        self.open: dict[tuple[str, int | None], list[Any]] = {}  # key -> [writer, records in file, counter]
        self.next_counter: dict[tuple[str, int | None], int] = {}  # counters of keys already closed
        self.results: list[FileResult] = []

    def _new(self, key: tuple[str, int | None], counter: int) -> ParquetWriter:
        """A writer for file `counter` of `key`."""
        directory, bucket = key
        folder = os.path.join(self.staging, directory)
        os.makedirs(folder, exist_ok=True)
        name = data_file_name(self.task, self.job, counter, self.opts.compression, dynamic=True, bucket_id=bucket)
        if self.hive_prefix and bucket is not None:
            name = hive_bucket_prefix(bucket) + name
        return ParquetWriter(os.path.join(folder, name), self.schema, options=self.opts)

    def write(self, key: tuple[str, int | None], rows: pa.Table) -> None:
        """Append rows to key's file, rolling to the next file every `limit` records."""
        if key not in self.open:
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

    def close(self, key: tuple[str, int | None]) -> None:
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


def _row_keys(table: pa.Table, columns: list[str], buckets: BucketSpec | None,
              time_zone: str) -> tuple[np.ndarray, list[tuple[str, int | None]]]:
    """Per row, the index of its (directory, bucket) key; keys in order of first appearance."""
    n = table.num_rows
    composite = np.zeros(n, dtype=np.int64)
    parts: list[tuple[pa.Array, pa.DataType]] = []
    for name in columns:
        col = table.column(name).combine_chunks()
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = pc.if_else(pc.equal(col, ""), pa.scalar(None, col.type), col)
        encoded = pc.dictionary_encode(col, null_encoding="encode")
        codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        composite = composite * (len(encoded.dictionary) + 1) + codes
        parts.append((encoded.dictionary, col.type))
    if buckets is not None:
        composite = composite * buckets.num_buckets + buckets.ids(table)
    uniques, first, inverse = np.unique(composite, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    keys = []
    for u in order:
        row = int(first[u])
        fragments = [partition_fragment(name, spark_string(table.column(name)[row].as_py(), typ, time_zone))
                     for name, (_, typ) in zip(columns, parts, strict=True)]
        bucket = int(buckets.ids(table.slice(row, 1))[0]) if buckets else None
        keys.append(("/".join(fragments), bucket))
    return rank[inverse.reshape(-1)], keys


def _write_partitioned(schema: pa.Schema, pieces: Iterator[ArrowPiece], columns: list[str],
                       buckets: BucketSpec | None, staging: str, job: str, limit: int,
                       opts: WriteOptions, max_open_files: int = 0, task: int = 0,
                       presorted: bool = False) -> list[FileResult]:
    """Every partition's (and bucket's) files under its Hive directory, as Spark's dynamic writers do.

    With max_open_files > 0 rows go straight to one open file per key (Spark's concurrent writers) until
    that many files are open; the rest of the input is then sorted and written key by key, continuing the
    files already open. With 0 the whole input is sorted once (Spark's default). With `presorted` (the rows
    already come in V1Writes order, as Spark's sort delivers them) batches stream through one open file at a
    time and nothing is gathered.
    """
    missing = [c for c in columns + (buckets.columns if buckets else []) if c not in schema.names]
    if missing:
        raise GpuwriteError(f"partition or bucket column {missing[0]!r} is not in the data "
                            f"(columns: {schema.names})")
    if len(set(columns)) != len(columns) or len(columns) == len(schema.names):
        raise GpuwriteError(f"partition_by={columns} must name distinct columns and leave at least one data column")
    for name in columns:
        t = schema.field(name).type
        if is_nested_type(t):
            # SPEC: Spark refuses complex partition columns (PartitioningUtils.validatePartitionColumn).
            raise UnsupportedTypeError(f"partition column {name!r}: type {t} cannot be a partition column "
                                       "(Spark allows only atomic types there)")
    data_schema = pa.schema([f for f in schema if f.name not in columns])
    files = _OpenFiles(data_schema, staging, job, limit, opts, hive_prefix=bool(buckets and buckets.hive_compatible),
                       task=task)
    try:
        if presorted:
            current: tuple[str, int | None] | None = None
            for piece in pieces:
                table = piece if isinstance(piece, pa.Table) else pa.Table.from_batches([piece])
                for directory, bucket, rows in _partition_runs(table, columns, buckets, opts.time_zone):
                    if current is not None and (directory, bucket) != current:
                        files.close(current)
                    current = (directory, bucket)
                    files.write(current, rows)
            return files.close_all()
        rest: list[ArrowPiece] = []
        concurrent = max_open_files > 0
        for piece in pieces:
            if not concurrent:
                rest.append(piece)
                continue
            table = piece if isinstance(piece, pa.Table) else pa.Table.from_batches([piece])
            codes, keys = _row_keys(table, columns, buckets, opts.time_zone)
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
        if rest:
            for directory, bucket, rows in _partition_runs(_gather(schema, iter(rest)), columns, buckets,
                                                           opts.time_zone):
                files.write((directory, bucket), rows)
                files.close((directory, bucket))
        return files.close_all()
    except BaseException:
        files.abort_all()
        raise


def _gather(schema: pa.Schema, pieces: Iterator[ArrowPiece]) -> pa.Table:
    """All pieces as one table (no copy of column data)."""
    tables = [p if isinstance(p, pa.Table) else pa.Table.from_batches([p]) for p in pieces]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _commit(staging: str, target: str, mode: str, files: list[FileResult]) -> None:
    """Move the staged files into place and write `_SUCCESS` (overwrite clears the old table first)."""
    if mode == "overwrite" and os.path.isdir(target):
        shutil.rmtree(target)
    os.makedirs(target, exist_ok=True)
    for f in files:
        final = os.path.join(target, os.path.relpath(f.path, staging))
        os.makedirs(os.path.dirname(final), exist_ok=True)
        os.replace(f.path, final)
    with open(os.path.join(target, SUCCESS), "wb"):
        pass
    shutil.rmtree(staging)
