"""The public front door: `ParquetWriter` (streaming, bounded memory) and `write_table` (one call).

They resolve the options, map the Arrow schema and compose the core pipeline (`writer.FileWriter`) with
Spark's footer keys (`spark.footer_keys`), so files carry what Spark's own writer puts in the footer, and with
pyarrow's `pandas` key when the input carries one (`integrations.pandas_metadata`), so pandas reads the frame
back as it was.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import pyarrow as pa

from .accessors import register_if_imported
from .errors import OptionError
from .integrations.arrow import ArrowPiece, as_arrow_piece, open_input
from .integrations.pandas_metadata import PandasFooter
from .options.keywords import WriteKeywords, public_writer
from .options.model import WriteOptions, resolve_options
from .pipeline.int96_zones import warn_zoned_int96
from .pipeline.nullability import conform
from .pipeline.progress import reporter
from .pipeline.widen import widen_piece, widen_schema
from .pipeline.writer import FileWriter, KeyValue, check_arrow_schema
from .result import FileResult
from .schema import FileSchema
from .spark.policy.footer_keys import spark_footer_metadata

if sys.version_info >= (3, 11):
    from typing import Unpack
elif TYPE_CHECKING:  # 3.10: only type checkers read it (the annotations are not evaluated at runtime)
    from typing_extensions import Unpack


P = ParamSpec("P")
R = TypeVar("R")


def writer_entry(fn: Callable[P, R]) -> Callable[P, R]:
    """A public writer entry point (`public_writer`): each call first gives pandas / cudf DataFrames
    `df.gpuwrite` if that library was imported after gpuwrite (a look-up in sys.modules when not)."""
    return public_writer(fn, before=register_if_imported)


class ParquetWriter(FileWriter):
    """Writes one Parquet v2 file from a stream of Arrow batches; row groups are flushed as they fill.

    Nothing appears at `path` until close() succeeds; on an exception inside a `with` block, or abort(),
    the temporary file is removed. `path` may be a URI or a path on `filesystem` (pyarrow or fsspec).
    """

    @writer_entry
    def __init__(self, path: str | os.PathLike[str], schema: pa.Schema, *,
                 options: WriteOptions | Mapping[str, Any] | None = None, streaming: bool = False,
                 filesystem: Any = None, zone_warning: bool = True,
                 **keywords: Unpack[WriteKeywords]) -> None:
        """Open a writer for `schema` at `path`.

        path: the file to write (a temporary file beside it until close()): a local path, a URI (`s3://`,
        `memory://`...) or a path on `filesystem` (a pyarrow.fs.FileSystem or an fsspec filesystem). schema: the pyarrow.Schema every
        batch must have. options: a WriteOptions, or a mapping of Spark / parquet-java keys
        ({"parquet.page.size": "262144"}); the keywords below win over it. streaming: the batches arrive while
        the caller waits for more (encode pages as rows come; same bytes either way). zone_warning: warn, once
        per process, when a zoned timestamp column is written as INT96 (Spark's default; the Spark integration,
        whose users chose Spark's semantics, turns it off).

        A schema with pyarrow's `pandas` metadata (`pa.Schema.from_pandas(df)`, a table from a frame) puts it in
        the footer, made to describe the file, so `pandas.read_parquet` gives the frames back with their index
        and dtypes (`integrations.pandas_metadata`).
        """
        opts = resolve_options(options, keywords)
        given_schema = check_arrow_schema(schema)
        written = widen_schema(given_schema, opts.widen_unsigned, opts.allow_truncated_timestamps)
        self._given = given_schema if written is not given_schema else None
        file_schema = FileSchema.from_arrow(written, opts)
        key_value = spark_footer_metadata(file_schema.spark_row_metadata(), opts.spark_version,
                                          opts.datetime_rebase, opts.int96_rebase, opts.time_zone)
        self._pandas = PandasFooter.of(given_schema, file_schema)
        if zone_warning:
            warn_zoned_int96(file_schema, pandas=self._pandas is not None)
        super().__init__(path, file_schema, opts, key_value, streaming=streaming, filesystem=filesystem)

    def footer_key_value(self) -> KeyValue:
        """Spark's keys, then the `pandas` key (and `ARROW:schema`) for the rows written, when the schema had one."""
        if self._pandas is None:
            return self.key_value
        return [*self.key_value, *self._pandas.entries(self.rows_written, self.top_level_encodings())]

    def _piece(self, data: Any) -> ArrowPiece:
        """The batch as FileWriter takes it; with widen_unsigned (allow_truncated_timestamps), read with the given
        schema and its unsigned (nanosecond timestamp) columns cast to their written types first."""
        if self._given is None:
            return super()._piece(data)
        piece = conform(as_arrow_piece(data, self._given), self._given)  # nullability as given, then widened
        return super()._piece(widen_piece(piece, self._given, self.schema.arrow,
                                          self.options.allow_truncated_timestamps))

    def write(self, data: Any, row_group_size: int | None = None, *, more: bool = True) -> None:
        """Append rows (see FileWriter.write). Without `row_group_size` they join the open row group, which
        ends where parquet-java's would (block_size, the writer's row_group_size), across calls. With it, as
        pyarrow's ParquetWriter.write: the open row group ends first, these rows go into row groups of at
        most `row_group_size` rows (fewer when block_size ends one first), and the last of them ends with them."""
        if row_group_size is None:
            super().write(data, more=more)
            return
        if not isinstance(row_group_size, int) or isinstance(row_group_size, bool) or row_group_size <= 0:
            raise OptionError(f"option row_group_size must be a positive integer, got {row_group_size!r}")
        self._check_open()
        piece = as_arrow_piece(data, self._given or self.schema.arrow, getattr(self._backend, "device", None))
        if piece.num_rows == 0:
            super().write(piece, more=more)  # checked, nothing written
            return
        self.end_row_group()
        for start in range(0, piece.num_rows, row_group_size):
            super().write(piece.slice(start, row_group_size))
            self.end_row_group()

    def write_table(self, table: Any, row_group_size: int | None = None) -> None:
        """pyarrow's name for write(): append a table (or anything write() takes); `row_group_size` as in
        pyarrow (see write): without it, the rows join the open row group instead of starting their own."""
        self.write(table, row_group_size)

    def write_batch(self, batch: Any, row_group_size: int | None = None) -> None:
        """pyarrow's name for write() with a RecordBatch (or anything write() takes); `row_group_size` as in
        write_table."""
        self.write(batch, row_group_size)

    def __enter__(self) -> ParquetWriter:
        return self


@writer_entry
def write_table(data: Any, path: str | os.PathLike[str], *, options: WriteOptions | Mapping[str, Any] | None = None,
                progress: bool | Callable[[int], None] | None = None, filesystem: Any = None,
                **keywords: Unpack[WriteKeywords]) -> FileResult:
    """Write `data` (Arrow, pandas, or any Arrow C stream such as polars or DuckDB) to one Parquet v2 file.

    data: a pyarrow Table / RecordBatch / RecordBatchReader, a pandas DataFrame, or anything with
    __arrow_c_stream__ (polars, DuckDB); streams are read batch by batch. path: the file, a local path or a
    URI (`s3://`, `gs://`, `abfs://`, `file://`, `memory://`...), or a path on `filesystem` (a
    pyarrow.fs.FileSystem or an fsspec filesystem); nothing appears there until the whole file is written. options: a WriteOptions, or a mapping of Spark / parquet-java keys;
    the keywords below win over it. progress: True draws a bar of rows encoded on stderr; a callable gets each
    input piece's row count. Returns a FileResult (path, num_rows, size, footer).
    """
    schema, pieces = open_input(data)
    writer = ParquetWriter(path, schema, options=options, filesystem=filesystem, **keywords)
    with reporter(progress, writer, data) as report:
        try:
            held = None  # each piece is written once the next exists: the last one is written knowing it is
            for piece in pieces:
                if held is not None:
                    writer.write(held)
                    report(held.num_rows)
                held = piece
            if held is not None:
                writer.write(held, more=False)
                report(held.num_rows)
        except BaseException:
            writer.abort()
            raise
        return writer.close()


def release_memory() -> int:
    """Give back now the memory gpuwrite keeps for the next write: the host conversion buffers (else freed
    `RETAIN_SECONDS` after the last write, longer for a process whose writes come further apart) and, where it ran on a GPU, the unused blocks of CuPy's pools; the
    bytes released (host and device)."""
    from .pipeline.buffers import release_memory as release_host

    released = release_host()
    if "gpuwrite.backends.device.ops" in sys.modules:
        from .backends.device.ops import release_pools

        released += release_pools()
    return released
