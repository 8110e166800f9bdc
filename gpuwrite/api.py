"""The public front door: `ParquetWriter` (streaming, bounded memory) and `write_table` (one call).

They resolve the options, map the Arrow schema and compose the core pipeline (`writer.FileWriter`) with
Spark's footer keys (`spark.footer_keys`), so files carry what Spark's own writer puts in the footer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from .integrations.arrow import as_arrow_piece, open_input
from .options.aliases import UNSET, Unset
from .options.keywords import given, public_writer
from .options.model import WriteOptions, resolve_options
from .pipeline.progress import reporter
from .pipeline.widen import widen_piece, widen_schema
from .pipeline.writer import FileWriter, check_arrow_schema
from .result import FileResult
from .schema import FileSchema
from .spark.policy.footer_keys import spark_footer_metadata


class ParquetWriter(FileWriter):
    """Writes one Parquet v2 file from a stream of Arrow batches; row groups are flushed as they fill.

    Nothing appears at `path` until close() succeeds; on an exception inside a `with` block, or abort(),
    the temporary file is removed. `path` may be a URI or a path on `filesystem` (pyarrow or fsspec).
    """

    @public_writer
    def __init__(self, path: str | os.PathLike[str], schema: pa.Schema, *,
                 options: WriteOptions | Mapping[str, Any] | None = None, streaming: bool = False,
                 filesystem: Any = None,
                 compression: str | None | Unset = UNSET, compression_level: int | None = None,
                 row_group_size: int | None = None, block_size: int | None = None,
                 block_row_count_limit: int | None = None, data_page_size: int | None = None,
                 page_size: int | None = None, page_row_count_limit: int | None = None,
                 page_size_check_min: int | None = None, page_size_check_max: int | None = None,
                 page_size_check_estimate: bool | None = None, page_value_count_threshold: int | None = None,
                 use_dictionary: bool | str | Sequence[str] | None = None, enable_dictionary: bool | None = None,
                 column_dictionary: Mapping[str, bool] | None = None, dictionary_page_size: int | None = None,
                 write_statistics: bool | None = None, statistics_truncate_length: int | None = None,
                 column_index_truncate_length: int | None = None, page_checksum: bool | None = None,
                 timestamp_type: str | None = None, legacy_format: bool | None = None,
                 datetime_rebase: str | None = None, int96_rebase: str | None = None, time_zone: str | None = None,
                 widen_unsigned: bool | None = None, fallback_encoding: str | None = None,
                 validate: bool | None = None, device: str | None = None,
                 spark_version: str | None = None, bloom_filter_enabled: bool | None = None,
                 bloom_filter_columns: Mapping[str, bool] | Sequence[str] | None = None,
                 bloom_filter_ndv: Mapping[str, int] | None = None,
                 bloom_filter_fpp: Mapping[str, float] | None = None, bloom_filter_max_bytes: int | None = None,
                 bloom_filter_adaptive: bool | None = None, bloom_filter_candidates: int | None = None) -> None:
        """Open a writer for `schema` at `path`.

        path: the file to write (a temporary file beside it until close()): a local path, a URI (`s3://`,
        `memory://`...) or a path on `filesystem` (a pyarrow.fs.FileSystem or an fsspec filesystem). schema: the pyarrow.Schema every
        batch must have. options: a WriteOptions, or a mapping of Spark / parquet-java keys
        ({"parquet.page.size": "262144"}); the keywords below win over it. streaming: the batches arrive while
        the caller waits for more (encode pages as rows come; same bytes either way).
        """
        opts = resolve_options(options, given(locals()))
        given_schema = check_arrow_schema(schema)
        written = widen_schema(given_schema) if opts.widen_unsigned else given_schema
        self._given = given_schema if written is not given_schema else None
        file_schema = FileSchema.from_arrow(written, opts)
        key_value = spark_footer_metadata(file_schema.spark_row_metadata(), opts.spark_version,
                                          opts.datetime_rebase, opts.int96_rebase, opts.time_zone)
        super().__init__(path, file_schema, opts, key_value, streaming=streaming, filesystem=filesystem)

    def write(self, data: Any, *, more: bool = True) -> None:
        """Append rows (an Arrow table/batch, pandas DataFrame or Arrow C stream) with the writer's schema;
        see FileWriter.write. With widen_unsigned, unsigned columns are cast to their wider types first."""
        if self._given is not None:
            self._check_open()
            data = widen_piece(as_arrow_piece(data, self._given), self._given, self.schema.arrow)
        super().write(data, more=more)

    def __enter__(self) -> ParquetWriter:
        return self


@public_writer
def write_table(data: Any, path: str | os.PathLike[str], *, options: WriteOptions | Mapping[str, Any] | None = None,
                progress: bool | Callable[[int], None] | None = None, filesystem: Any = None,
                compression: str | None | Unset = UNSET, compression_level: int | None = None,
                row_group_size: int | None = None, block_size: int | None = None,
                block_row_count_limit: int | None = None, data_page_size: int | None = None,
                page_size: int | None = None, page_row_count_limit: int | None = None,
                page_size_check_min: int | None = None, page_size_check_max: int | None = None,
                page_size_check_estimate: bool | None = None, page_value_count_threshold: int | None = None,
                use_dictionary: bool | str | Sequence[str] | None = None, enable_dictionary: bool | None = None,
                column_dictionary: Mapping[str, bool] | None = None, dictionary_page_size: int | None = None,
                write_statistics: bool | None = None, statistics_truncate_length: int | None = None,
                column_index_truncate_length: int | None = None, page_checksum: bool | None = None,
                timestamp_type: str | None = None, legacy_format: bool | None = None,
                datetime_rebase: str | None = None, int96_rebase: str | None = None, time_zone: str | None = None,
                widen_unsigned: bool | None = None, fallback_encoding: str | None = None,
                validate: bool | None = None, device: str | None = None,
                spark_version: str | None = None, bloom_filter_enabled: bool | None = None,
                bloom_filter_columns: Mapping[str, bool] | Sequence[str] | None = None,
                bloom_filter_ndv: Mapping[str, int] | None = None,
                bloom_filter_fpp: Mapping[str, float] | None = None, bloom_filter_max_bytes: int | None = None,
                bloom_filter_adaptive: bool | None = None, bloom_filter_candidates: int | None = None) -> FileResult:
    """Write `data` (Arrow, pandas, or any Arrow C stream such as polars or DuckDB) to one Parquet v2 file.

    data: a pyarrow Table / RecordBatch / RecordBatchReader, a pandas DataFrame, or anything with
    __arrow_c_stream__ (polars, DuckDB); streams are read batch by batch. path: the file, a local path or a
    URI (`s3://`, `gs://`, `abfs://`, `file://`, `memory://`...), or a path on `filesystem` (a
    pyarrow.fs.FileSystem or an fsspec filesystem); nothing appears there until the whole file is written. options: a WriteOptions, or a mapping of Spark / parquet-java keys;
    the keywords below win over it. progress: True draws a bar of rows encoded on stderr; a callable gets each
    input piece's row count. Returns a FileResult (path, num_rows, size, footer).
    """
    keywords = given(locals())
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
