"""Data files of one partition run: gpuwrite writes them at the table's data locations, rolling to a new file
once a file's written bytes reach the target size (not its Arrow size, as pyiceberg's bin packing does)."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pyarrow as pa
from pyiceberg.io import FileIO
from pyiceberg.partitioning import PartitionKey
from pyiceberg.table.locations import LocationProvider

from ..pipeline.views import piece_bytes
from ..pipeline.writer import FileWriter
from ..result import FileResult
from ..schema import FileSchema
from .profile import IcebergProfile

SLICE_ROWS = 64 * 1024  # at most this many rows handed to the writer between size checks


def local_path(location: str) -> str | None:
    """The local path of a `file:` URI or plain path; None for remote storage."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return parsed.path if parsed.scheme else location
    return None


@dataclass
class WrittenFile:
    """A data file written for the table: where it lives, its partition key and what the writer returned."""

    location: str
    key: PartitionKey | None
    result: FileResult


@dataclass
class DataFileWriter:
    """Writes runs of rows into data files named as Iceberg's OutputFileFactory does; removes them on failure."""

    schema: FileSchema
    profile: IcebergProfile
    locations: LocationProvider
    io: FileIO
    key_value: list[tuple[str, str]]
    write_uuid: uuid.UUID = field(default_factory=uuid.uuid4)
    written: list[WrittenFile] = field(default_factory=list)
    _counter: int = 0

    def _next_location(self, key: PartitionKey | None) -> str:
        name = f"{self._counter:05d}-0-{self.write_uuid}.parquet"
        self._counter += 1
        return self.locations.new_data_location(data_file_name=name, partition_key=key)

    def write_run(self, rows: pa.Table, key: PartitionKey | None) -> None:
        """Write `rows` (one partition) into one or more files of about the target size."""
        slices = _slices(rows, self.profile.options.block_size)
        pending = next(slices, None)
        while pending is not None:
            location = self._next_location(key)
            path = local_path(location)
            staged = path or os.path.join(tempfile.mkdtemp(prefix="gpuwrite-iceberg-"), "data.parquet")
            if path is not None:
                os.makedirs(os.path.dirname(path), exist_ok=True)
            with FileWriter(staged, self.schema, self.profile.options, self.key_value, lookahead=1) as writer:
                while pending is not None:
                    writer.write(pending)
                    pending = next(slices, None)
                    if writer.bytes_written >= self.profile.target_file_size:
                        break
                result = writer.close()
            if path is None:
                self._upload(staged, location)
            self.written.append(WrittenFile(location, key, result))

    def _upload(self, staged: str, location: str) -> None:
        """Copy a file staged locally to remote storage through the table's FileIO."""
        try:
            with open(staged, "rb") as src, self.io.new_output(location).create(overwrite=False) as dst:
                shutil.copyfileobj(src, dst, 8 << 20)
        finally:
            shutil.rmtree(os.path.dirname(staged), ignore_errors=True)

    def remove_all(self) -> None:
        """Delete every file this writer wrote (a failed write commits nothing and leaves nothing)."""
        for f in self.written:
            path = local_path(f.location)
            try:
                if path is not None:
                    os.remove(path)
                else:
                    self.io.delete(f.location)
            except FileNotFoundError:
                pass
        self.written.clear()


def _slices(rows: pa.Table, block_size: int) -> Iterator[pa.Table]:
    """The run in slices of about a quarter row group of Arrow bytes (at most SLICE_ROWS rows), so the size
    is checked a few times per row group."""
    step = max(1, min(SLICE_ROWS, rows.num_rows * (block_size // 4) // max(piece_bytes(rows), 1)))
    for start in range(0, rows.num_rows, step):
        yield rows.slice(start, step)
