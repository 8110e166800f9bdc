"""Which DataFrameWriter calls gpuwrite takes, and why the others go to Spark's own writer.

`WriterState` is what a drop-in writer recorded (mode, format, options, partitionBy, bucketBy, sortBy,
clusterBy). The checks here name, for a write gpuwrite must not take, the reason it goes to Spark: another
format, a writer Spark would refuse (Spark then raises its own error), a committer gpuwrite does not emulate,
or something gpuwrite cannot write. Pure policy over plain values and the session's conf.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from .conf import lower_keys

ENABLED_KEY = "spark.gpuwrite.enabled"
GC_FREEZE_KEY = "spark.gpuwrite.python.gcFreeze"  # "false": tasks leave their workers' collector alone (worker_gc)
QUICK_ACK_KEY = "spark.gpuwrite.python.quickAck"  # "false": tasks leave their workers' socket alone (socket_acks)
UNSCALED_KEY = "spark.gpuwrite.python.unscaledDecimals"  # "false": decimals travel as Spark sends them (unscaled)
DEFAULT_SOURCE_KEY = "spark.sql.sources.default"
V1_SOURCES_KEY = "spark.sql.sources.useV1SourceList"
CASE_SENSITIVE_KEY = "spark.sql.caseSensitive"
# SPEC: DataSource.backwardCompatibilityMap and the short name: the names that mean Spark's Parquet source.
PARQUET_NAMES = frozenset(["parquet", "org.apache.spark.sql.parquet", "org.apache.spark.sql.parquet.defaultsource",
                           "org.apache.spark.sql.execution.datasources.parquet",
                           "org.apache.spark.sql.execution.datasources.parquet.defaultsource",
                           "org.apache.spark.sql.execution.datasources.parquet.parquetfileformat"])
# The commit protocol gpuwrite reproduces (commit.py): Spark's defaults. Anything else goes to Spark.
COMMITTER_DEFAULTS = {
    "spark.sql.sources.commitProtocolClass":
        "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol",
    "spark.sql.parquet.output.committer.class": "org.apache.parquet.hadoop.ParquetOutputCommitter",
    "mapreduce.fileoutputcommitter.algorithm.version": "1",
    "mapreduce.fileoutputcommitter.marksuccessfuljobs": "true",
    "parquet.summary.metadata.level": "NONE",
}
MODE_NAMES = {"overwrite": "overwrite", "append": "append", "ignore": "ignore", "error": "error",
              "errorifexists": "error", "default": "error"}  # SPEC: DataFrameWriter.mode(String)


@dataclass
class WriterState:
    """What a DataFrameWriter was told before its terminal call."""

    mode: str = "error"
    source: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    partition_by: list[str] | None = None
    bucket_by: tuple[int, list[str]] | None = None
    sort_by: list[str] | None = None
    cluster_by: list[str] | None = None

    def option(self, key: str, value: str) -> None:
        """Record an option; a later key that differs only in case replaces the earlier one (Spark's map)."""
        for old in [k for k in self.options if k.lower() == key.lower()]:
            del self.options[old]
        self.options[key] = value

    def get_option(self, key: str) -> str | None:
        """An option by Spark's case-insensitive lookup."""
        return lower_keys(self.options).get(key.lower())


def is_parquet(source: str | None) -> bool:
    """Whether a format name means Spark's Parquet source."""
    return source is not None and source.strip().lower() in PARQUET_NAMES


def source_of(state: WriterState, conf: Mapping[str, str]) -> str:
    """The data source a write uses: format(), else spark.sql.sources.default."""
    return state.source or conf.get(DEFAULT_SOURCE_KEY, "parquet")


def _switch(conf: Mapping[str, str], key: str) -> bool:
    """A spark.gpuwrite.* switch: true unless set false (any case)."""
    return conf.get(key, "true").strip().lower() != "false"


def enabled(conf: Mapping[str, str]) -> bool:
    """spark.gpuwrite.enabled, read at each write."""
    return _switch(conf, ENABLED_KEY)


def freezes_worker_objects(conf: Mapping[str, str]) -> bool:
    """spark.gpuwrite.python.gcFreeze: whether a write's tasks freeze their worker's objects (`worker_gc`)."""
    return _switch(conf, GC_FREEZE_KEY)


def acks_quickly(conf: Mapping[str, str]) -> bool:
    """spark.gpuwrite.python.quickAck: whether a write's tasks acknowledge the JVM's segments at once while they
    receive (`socket_acks`)."""
    return _switch(conf, QUICK_ACK_KEY)


def sends_unscaled(conf: Mapping[str, str]) -> bool:
    """spark.gpuwrite.python.unscaledDecimals: whether a write's decimals of up to 18 digits are sent to its
    tasks as their unscaled longs (`unscaled`)."""
    return _switch(conf, UNSCALED_KEY)


def source_problem(source: str, conf: Mapping[str, str]) -> str | None:
    """Why a write with this source is not gpuwrite's."""
    if not is_parquet(source):
        return f"format {source!r} is not Parquet"
    v1 = [s.strip().lower() for s in conf.get(V1_SOURCES_KEY, "parquet").split(",")]
    if "parquet" not in v1:
        return f"{V1_SOURCES_KEY} leaves out parquet: Spark writes it through its DataSource V2 path"
    return None


def committer_problem(conf: Mapping[str, str], options: Mapping[str, str]) -> str | None:
    """A commit protocol or committer setting gpuwrite does not reproduce (conf, Hadoop keys or options)."""
    lowered = lower_keys(options)
    for key, default in COMMITTER_DEFAULTS.items():
        value = lowered.get(key.lower()) or conf.get(key) or conf.get("spark.hadoop." + key)
        if value is not None and value.strip().lower() != default.lower():
            return f"{key}={value}: gpuwrite commits as Spark's default committer does"
    if any(str(v).lower() == "true" for k, v in lowered.items() if k == "parquet.enable.summary-metadata"):
        return "parquet.enable.summary-metadata=true asks for summary files gpuwrite does not write"
    return None


def local_path(path: str) -> str | None:
    """The local file-system path of a Spark path (`/x`, `x`, `file:/x`, `file:///x`), or None for a path on
    another file system. Relative paths resolve against the working directory, as Hadoop's local one does."""
    parsed = urlparse(path)
    if parsed.scheme in ("", "file") and not (parsed.scheme == "" and parsed.netloc):
        local = parsed.path if parsed.scheme == "file" else path
        return os.path.abspath(local) if local else None
    if len(parsed.scheme) == 1:  # a Windows drive letter
        return os.path.abspath(path)
    return None


def resolve_columns(names: Sequence[str], columns: Sequence[str], case_sensitive: bool) -> list[str] | None:
    """`names` as the data's own column names (Spark's resolver), or None when one is missing or ambiguous."""
    out = []
    for name in names:
        hits = [c for c in columns if (c == name if case_sensitive else c.lower() == name.lower())]
        if len(hits) != 1:
            return None
        out.append(hits[0])
    return out


def layout_problem(state: WriterState, columns: Sequence[str], conf: Mapping[str, str],
                   table: bool) -> str | None:
    """Writer settings Spark refuses or gpuwrite does not write (Spark then raises or writes them itself)."""
    case_sensitive = conf.get(CASE_SENSITIVE_KEY, "false").lower() == "true"
    keys = columns if case_sensitive else [c.lower() for c in columns]
    if len(set(keys)) != len(keys):
        return "the DataFrame has duplicate column names: Spark's writer raises"
    if state.cluster_by:
        return "clusterBy: clustered tables are Spark's"
    if state.sort_by and not state.bucket_by:
        return "sortBy without bucketBy: Spark's writer raises"
    if state.bucket_by and not table:
        return "bucketBy outside saveAsTable: Spark's writer raises"
    parts = resolve_columns(state.partition_by or [], columns, case_sensitive)
    if parts is None or len(set(parts)) != len(parts) or (parts and len(parts) == len(columns)):
        return "partitionBy names a missing, repeated or every column: Spark's writer raises"
    if state.bucket_by:
        num, names = state.bucket_by
        bucket = resolve_columns(names, columns, case_sensitive)
        sort = resolve_columns(state.sort_by or [], columns, case_sensitive)
        if bucket is None or sort is None or not 0 < num <= int(conf.get("spark.sql.sources.bucketing.maxBuckets",
                                                                             "100000")):
            return "bucketBy / sortBy name a missing column or a bad bucket count: Spark's writer raises"
        if set(bucket + sort) & set(parts):
            return "a bucket or sort column is also a partition column: Spark's writer raises"
    return None


def partition_type_problem(state: WriterState, schema: Any, conf: Mapping[str, str]) -> str | None:
    """A partition column of a type Spark refuses there (SPEC: PartitioningUtils.validatePartitionColumn:
    atomic types only)."""
    types = {f.name: f.dataType.simpleString() for f in schema.fields}
    for name in resolved(state, list(types), conf).partition_by or []:
        if types[name].split("<")[0] in ("array", "map", "struct", "variant"):
            return f"partition column {name!r} has type {types[name]}: Spark's writer raises"
    return None


def resolved(state: WriterState, columns: Sequence[str], conf: Mapping[str, str]) -> WriterState:
    """The state with partition, bucket and sort columns spelled as the data spells them."""
    case_sensitive = conf.get(CASE_SENSITIVE_KEY, "false").lower() == "true"

    def names(given: Sequence[str] | None) -> list[str] | None:
        return None if given is None else resolve_columns(given, columns, case_sensitive)

    bucket = state.bucket_by
    return WriterState(mode=state.mode, source=state.source, options=dict(state.options),
                       partition_by=names(state.partition_by),
                       bucket_by=(bucket[0], names(bucket[1]) or []) if bucket else None,
                       sort_by=names(state.sort_by), cluster_by=state.cluster_by)


def same_type(a: Any, b: Any) -> bool:
    """Whether two Spark types are equal but for nullability (what a position-resolved insert needs no
    cast for)."""
    return bool(a.simpleString() == b.simpleString())
