"""Spark's output file names (HadoopMapReduceCommitProtocol.getFilename, FileFormatDataWriter)."""

from __future__ import annotations

from ...encode.compress import EXTENSIONS


def file_extension(codec: str) -> str:
    """Codec extension plus `.parquet` (CompressionCodecName.getExtension), e.g. `.snappy.parquet`."""
    return EXTENSIONS[codec] + ".parquet"


def data_file_name(task: int, job_uuid: str, file_counter: int, codec: str, *, dynamic: bool = False,
                   bucket_id: int | None = None) -> str:
    """`part-00000-<uuid>-c000.snappy.parquet`; partitioned/bucketed writers use `.c000` and `_00003`."""
    if task < 0 or file_counter < 0:
        raise ValueError(f"task and file counter must be >= 0, got {task}, {file_counter}")
    bucket = "" if bucket_id is None else f"_{bucket_id:05d}"
    sep = "." if dynamic or bucket_id is not None else "-"
    return f"part-{task:05d}-{job_uuid}{bucket}{sep}c{file_counter:03d}{file_extension(codec)}"


def hive_bucket_prefix(bucket_id: int) -> str:
    """Hive-compatible bucket files start with `00003_0_` (BucketingUtils / V1WritesUtils)."""
    return f"{bucket_id:05d}_0_"
