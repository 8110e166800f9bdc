"""The public front door: `ParquetWriter` (streaming, bounded memory) and `write_table` (one call).

They resolve the options, map the Arrow schema and compose the core pipeline (`writer.FileWriter`) with
Spark's footer keys (`spark.footer_keys`), so files carry what Spark's own writer puts in the footer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from .integrations.arrow import open_input
from .options import WriteOptions, resolve_options
from .progress import reporter
from .result import FileResult
from .schema import FileSchema
from .spark.footer_keys import spark_footer_metadata
from .writer import FileWriter, check_arrow_schema


class ParquetWriter(FileWriter):
    """Writes one Parquet v2 file from a stream of Arrow batches; row groups are flushed as they fill.

    Nothing appears at `path` until close() succeeds; on an exception inside a `with` block, or abort(),
    the temporary file is removed. `path` may be a URI or a path on `filesystem` (pyarrow or fsspec).
    """

    def __init__(self, path: str | os.PathLike[str], schema: pa.Schema, *,
                 options: WriteOptions | dict[str, Any] | None = None, streaming: bool = False,
                 filesystem: Any = None, **keywords: Any) -> None:
        opts = resolve_options(options, keywords)
        file_schema = FileSchema.from_arrow(check_arrow_schema(schema), opts)
        key_value = spark_footer_metadata(file_schema.spark_row_metadata(), opts.spark_version,
                                          opts.datetime_rebase, opts.int96_rebase, opts.time_zone)
        super().__init__(path, file_schema, opts, key_value, streaming=streaming, filesystem=filesystem)

    def __enter__(self) -> ParquetWriter:
        return self


def write_table(data: Any, path: str | os.PathLike[str], *, options: WriteOptions | dict[str, Any] | None = None,
                progress: bool | Callable[[int], None] | None = None, filesystem: Any = None,
                **keywords: Any) -> FileResult:
    """Write `data` (Arrow, pandas, or any Arrow C stream such as polars or DuckDB) to one Parquet v2 file.

    `progress=True` draws a bar of rows encoded on stderr; a callable gets each input piece's row count.
    `path` is a local path or a URI (`s3://`, `gs://`, `abfs://`, `file://`, `memory://`...), or a path on
    `filesystem` (a pyarrow.fs.FileSystem or an fsspec filesystem); the file appears only once complete.
    """
    schema, pieces = open_input(data)
    writer = ParquetWriter(path, schema, options=options, filesystem=filesystem, **keywords)
    with reporter(progress, writer, data) as report:
        try:
            for piece in pieces:
                writer.write(piece)
                report(piece.num_rows)
        except BaseException:
            writer.abort()
            raise
        return writer.close()
