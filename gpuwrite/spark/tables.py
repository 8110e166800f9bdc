"""Catalog tables for the drop-in writer: what a table is (DESCRIBE ... AS JSON), and the catalog updates
Spark's InsertIntoHadoopFsRelationCommand makes after writing into one (partitions added and dropped, table
statistics, cached data), done by calling Spark's own commands in the JVM.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

SESSION_CATALOG = "spark_catalog"
_PART = re.compile(r"`((?:[^`]|``)*)`|([^.`]+)")


def name_parts(name: str) -> list[str]:
    """A multipart table name split as Spark's parser splits it (back-quoted parts may hold dots)."""
    parts, pos = [], 0
    while pos < len(name):
        match = _PART.match(name, pos)
        if match is None:
            return [name]
        parts.append(match.group(1).replace("``", "`") if match.group(1) is not None else match.group(2).strip())
        pos = match.end()
        if pos < len(name) and name[pos] == ".":
            pos += 1
    return parts


def in_session_catalog(name: str, conf: dict[str, str]) -> bool:
    """Whether `name` is a table of the session catalog (not of a catalog plugin such as `testcat.t`)."""
    parts = name_parts(name)
    if len(parts) == 3:
        return parts[0].lower() == SESSION_CATALOG
    if len(parts) == 2:
        return f"spark.sql.catalog.{parts[0]}" not in conf or parts[0].lower() == SESSION_CATALOG
    return len(parts) == 1


@dataclass(frozen=True)
class TableInfo:
    """A catalog table as DESCRIBE TABLE EXTENDED ... AS JSON shows it."""

    name: str
    kind: str  # MANAGED, EXTERNAL, VIEW, ...
    provider: str
    location: str
    columns: list[dict[str, Any]]
    partition_columns: list[str] = field(default_factory=list)
    bucket: tuple[int, list[str]] | None = None
    sort_columns: list[str] = field(default_factory=list)
    storage_properties: dict[str, str] = field(default_factory=dict)
    partitions_in_catalog: bool = False

    @property
    def column_names(self) -> list[str]:
        return [c["name"] for c in self.columns]

    @property
    def has_char_columns(self) -> bool:
        """CHAR / VARCHAR columns: Spark pads and checks lengths on write."""
        return any(c["type"].get("name") in ("char", "varchar") for c in self.columns)


def describe(spark: Any, name: str) -> TableInfo:
    """The table `name` of the session's catalog."""
    text = spark.sql(f"DESCRIBE TABLE EXTENDED {name} AS JSON").collect()[0][0]
    doc = json.loads(text)
    bucket = (int(doc["num_buckets"]), list(doc.get("bucket_columns", []))) if doc.get("num_buckets") else None
    return TableInfo(name=name, kind=str(doc.get("type", "")).upper(), provider=str(doc.get("provider", "")),
                     location=str(doc.get("location", "")), columns=list(doc.get("columns", [])),
                     partition_columns=list(doc.get("partition_columns", [])), bucket=bucket,
                     sort_columns=list(doc.get("sort_columns", [])),
                     storage_properties=dict(doc.get("storage_properties", {})),
                     partitions_in_catalog=doc.get("partition_provider") == "Catalog")


def describe_or_reason(spark: Any, name: str) -> TableInfo | str:
    """The table, or why it cannot be described (a temporary view, a table of another kind)."""
    try:
        return describe(spark, name)
    except Exception as err:  # Spark's error for this relation: the write then goes to Spark, which decides
        return f"cannot describe {name} as a table: {type(err).__name__}: {str(err).splitlines()[0][:200]}"


def parse_fragment(fragment: str) -> dict[str, str]:
    """SPEC: PartitioningUtils.parsePathFragment: `k=v/j=w` to {k: v, j: w}, names and values unescaped."""
    spec = {}
    for part in fragment.split("/"):
        key, _, value = part.partition("=")
        spec[unquote(key)] = unquote(value)
    return spec


def catalog_partitions(spark: Any, name: str) -> list[str]:
    """The table's partitions as the catalog lists them (escaped path fragments)."""
    return [row[0] for row in spark.sql(f"SHOW PARTITIONS {name}").collect()]


class JvmCatalog:
    """Spark's own catalog commands, reached through the classic session's JVM (Spark Connect has none)."""

    def __init__(self, spark: Any, name: str) -> None:
        self.spark = spark
        self.jss = spark._jsparkSession
        self.jvm = spark._jvm
        parts = name_parts(name)
        if len(parts) == 3:
            parts = parts[1:]
        self.ident = self.jvm.org.apache.spark.sql.catalyst.TableIdentifier(
            parts[-1], self._some(parts[0]) if len(parts) == 2 else self._none())
        self.catalog = self.jss.sessionState().catalog()

    def _none(self) -> Any:
        return getattr(getattr(self.jvm.scala, "None$"), "MODULE$")

    def _some(self, value: Any) -> Any:
        return self.jvm.scala.Some(value)

    def _spec(self, spec: dict[str, str]) -> Any:
        java = self.jvm.java.util.HashMap()
        for key, value in spec.items():
            java.put(key, value)
        return self.jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(java)

    def _seq(self, items: list[Any]) -> Any:
        return self.jvm.org.apache.spark.api.python.PythonUtils.toSeq(self.jvm.java.util.ArrayList(items))

    def custom_locations(self, location: str, partition_columns: list[str]) -> bool:
        """Whether some partition lives elsewhere than `<table>/<fragment>` (Spark writes those there)."""
        utils = self.jvm.org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
        table_path = self.jvm.org.apache.hadoop.fs.Path(location)
        columns = self._seq(list(partition_columns))
        it = self.catalog.listPartitions(self.ident, self._none()).iterator()
        while it.hasNext():
            p = it.next()
            default = utils.generatePartitionPath(p.spec(), columns, table_path).toUri()
            if not p.location().equals(default):
                return True
        return False

    def add_partitions(self, specs: list[dict[str, str]]) -> None:
        """SPEC: AlterTableAddPartitionCommand(table, specs, ifNotExists = true)."""
        if specs:
            pairs = [self.jvm.scala.Tuple2(self._spec(s), self._none()) for s in specs]
            cmd = self.jvm.org.apache.spark.sql.execution.command.AlterTableAddPartitionCommand(
                self.ident, self._seq(pairs), True)
            cmd.run(self.jss)

    def drop_partitions(self, specs: list[dict[str, str]]) -> None:
        """SPEC: AlterTableDropPartitionCommand(table, specs, ifExists, purge = false, retainData = true)."""
        if specs:
            cmd = self.jvm.org.apache.spark.sql.execution.command.AlterTableDropPartitionCommand(
                self.ident, self._seq([self._spec(s) for s in specs]), True, False, True)
            cmd.run(self.jss)

    def update_stats(self) -> None:
        """SPEC: CommandUtils.updateTableStats (sizes recomputed, or stale statistics removed)."""
        meta = self.catalog.getTableMetadata(self.ident)
        self.jvm.org.apache.spark.sql.execution.command.CommandUtils.updateTableStats(self.jss, meta)


def refresh_after_insert(spark: Any, info: TableInfo, before: list[str], written: set[str],
                         static_overwrite: bool) -> None:
    """The catalog updates InsertIntoHadoopFsRelationCommand makes after writing into a table.

    SPEC: refreshUpdatedPartitions: partitions written and not known before are added; with a static
    overwrite, partitions known before and not written again are dropped (their files are gone); then the
    table's statistics are updated and its cached data refreshed.
    """
    jvm = JvmCatalog(spark, info.name)
    if info.partition_columns and info.partitions_in_catalog:
        known = {frozenset(parse_fragment(f).items()) for f in before}
        new = [parse_fragment(f) for f in sorted(written)]
        jvm.add_partitions([s for s in new if frozenset(s.items()) not in known])
        if static_overwrite:
            kept = {frozenset(s.items()) for s in new}
            jvm.drop_partitions([parse_fragment(f) for f in before
                                 if frozenset(parse_fragment(f).items()) not in kept])
    jvm.update_stats()
    spark.catalog.refreshTable(info.name)

