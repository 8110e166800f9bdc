"""gpuwrite.iceberg against pyiceberg's own append: manifest metrics, partition tuples, pruning and read-back by
pyiceberg, polars and DuckDB, on a SQLite SqlCatalog."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from iceberg_helpers import canonical_rows, data_files, duckdb_read, local, polars_read
from partitioned_table import PARTITIONED, SPEC, partitioned_rows
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo, GreaterThanOrEqual
from pyiceberg.io.pyarrow import (
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

import gpuwrite.iceberg as gi
from gpuwrite.format.footer_reader import read_footer

UTC = dt.timezone.utc
METRICS = ("record_count", "value_counts", "null_value_counts", "lower_bounds", "upper_bounds")

EVERY_TYPE = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "flag", BooleanType()),
    NestedField(3, "i", IntegerType(), required=True),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DoubleType()),
    NestedField(6, "dec9", DecimalType(7, 2)),
    NestedField(7, "dec18", DecimalType(15, 3)),
    NestedField(8, "dec38", DecimalType(30, 5)),
    NestedField(9, "day", DateType()),
    NestedField(10, "ts", TimestampType()),
    NestedField(11, "tstz", TimestamptzType()),
    NestedField(12, "s", StringType()),
    NestedField(13, "b", BinaryType()),
    NestedField(14, "point", StructType(NestedField(17, "x", DoubleType(), required=True),
                                        NestedField(18, "label", StringType()))),
    NestedField(15, "tags", ListType(19, StringType(), element_required=False)),
    NestedField(16, "attrs", MapType(20, StringType(), 21, LongType(), value_required=False)),
)  # ids as a catalog assigns them (breadth first), so the rows' ids are the table's


def every_type_rows(n: int, seed: int = 0) -> pa.Table:
    """Rows of EVERY_TYPE: nulls in optional columns, NaN in floats, long strings (truncated bounds)."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        null = rng.random() < 0.1
        d = float(rng.normal() * 100) if rng.random() > 0.15 else math.nan
        rows.append({
            "id": k, "flag": None if null else bool(k % 3), "i": int(rng.integers(-1000, 1000)),
            "f": None if null else (math.nan if k % 7 == 0 else float(np.float32(rng.normal() * 10) + 50)),
            "d": None if null else d,
            "dec9": None if null else Decimal(int(rng.integers(-10**6, 10**6))).scaleb(-2),
            "dec18": Decimal(int(rng.integers(-10**14, 10**14))).scaleb(-3),
            "dec38": None if null else Decimal(f"{int(rng.integers(-10**17, 10**17)) * 10**7 + k}E-5"),
            "day": dt.date(2020, 1, 1) + dt.timedelta(days=int(rng.integers(0, 1500))),
            "ts": dt.datetime(2021, 5, 1) + dt.timedelta(seconds=int(rng.integers(0, 10**8))),
            "tstz": dt.datetime(2021, 5, 1, tzinfo=UTC) + dt.timedelta(microseconds=int(rng.integers(0, 10**14))),
            "s": None if null else f"{'zyxw'[k % 4]}-value-with-a-long-tail-{k:06d}-é€",
            "b": bytes(rng.integers(0, 256, size=int(rng.integers(0, 40)), dtype=np.uint8)),
            "point": None if k % 11 == 0 else {"x": float(k) / 3, "label": None if k % 5 == 0 else f"p{k}"},
            "tags": None if k % 9 == 0 else [f"t{k % 4}", None][: int(rng.integers(0, 3))],
            "attrs": None if k % 13 == 0 else [("a", k), ("b", None)][: int(rng.integers(0, 3))],
        })
    return pa.Table.from_pylist(rows, schema=EVERY_TYPE.as_arrow())


def _metrics(f) -> dict:
    return {name: dict(getattr(f, name)) if isinstance(getattr(f, name), dict) or hasattr(getattr(f, name), "items")
            else getattr(f, name) for name in METRICS}


def _nan_truth(table: pa.Table, column: str) -> int:
    return sum(1 for v in table.column(column).to_pylist() if v is not None and math.isnan(v))


def _same_metrics_as_pyiceberg(catalog: SqlCatalog, schema: Schema, rows: pa.Table, **create) -> tuple:
    ours = catalog.create_table("db.gpuwrite", schema, **create)
    theirs = catalog.create_table("db.pyiceberg", schema, **create)
    gi.append(ours, rows)
    theirs.append(rows)
    a, b = data_files(ours), data_files(theirs)
    assert len(a) == len(b)
    for fa, fb in zip(sorted(a, key=lambda f: repr(f.partition)), sorted(b, key=lambda f: repr(f.partition)),
                      strict=True):
        assert fa.partition == fb.partition
        assert _metrics(fa) == _metrics(fb)
        assert set(fa.column_sizes) == set(fb.column_sizes)
        assert dict(fb.nan_value_counts) == {}  # pyiceberg's pyarrow path does not count NaN
    return ours, theirs


def test_every_type_nested_required_and_nan(catalog: SqlCatalog) -> None:
    rows = every_type_rows(500)
    props = {"write.metadata.metrics.column.b": "full", "write.metadata.metrics.column.dec18": "counts",
             "write.metadata.metrics.column.dec9": "none"}
    ours, theirs = _same_metrics_as_pyiceberg(catalog, EVERY_TYPE, rows, properties=props)
    (f,) = data_files(ours)
    # NaN: counted (pyiceberg counts none), never a bound.
    assert dict(f.nan_value_counts) == {4: _nan_truth(rows, "f"), 5: _nan_truth(rows, "d"), 17: 0}
    assert f.nan_value_counts[5] > 0
    upper_d = np.frombuffer(f.upper_bounds[5], dtype="<f8")[0]
    assert upper_d == max(v for v in rows.column("d").to_pylist() if v is not None and not math.isnan(v))
    # truncate(16): strings cut to 16 code points, the upper bound incremented; "full" keeps binary whole.
    assert f.lower_bounds[12].decode() == min(v for v in rows.column("s").to_pylist() if v)[:16]
    assert len(f.upper_bounds[12].decode()) == 16
    assert f.upper_bounds[13] == max(rows.column("b").to_pylist())
    assert 7 not in f.lower_bounds and 7 in f.value_counts  # counts
    assert 6 not in f.value_counts and 6 in f.column_sizes  # none
    assert 17 not in f.lower_bounds and 17 in f.value_counts  # nested columns: counts only (pyiceberg's policy)
    # Split offsets and sizes: what pyiceberg itself computes from our footer.
    path = local(f.file_path)
    stats = data_file_statistics_from_parquet_metadata(pq.read_metadata(path), compute_statistics_plan(
        ours.schema(), ours.properties), parquet_path_to_id_mapping(ours.schema()))
    assert f.split_offsets == stats.split_offsets == [4]
    assert dict(f.column_sizes) == stats.column_sizes
    assert dict(f.value_counts) == stats.value_counts
    assert f.file_size_in_bytes == Path(path).stat().st_size
    # The file: INT64 micros timestamps, ids on every node, no INT96, PLAIN booleans.
    schema = read_footer(path)[2]
    assert {e[4].decode(): e.get(9) for e in schema}["tstz"] == 11
    assert all(e.get(1) != 3 for e in schema)  # no INT96
    # Read back equal by pyiceberg, polars and DuckDB.
    expected = canonical_rows(rows, "id")
    assert canonical_rows(ours.scan().to_arrow(), "id") == expected
    assert canonical_rows(polars_read(ours), "id") == expected
    assert canonical_rows(duckdb_read(ours), "id") == expected


def test_partitioned_identity_day_truncate_bucket(catalog: SqlCatalog) -> None:
    rows = partitioned_rows(400)
    ours, theirs = _same_metrics_as_pyiceberg(catalog, PARTITIONED, rows, partition_spec=SPEC)
    files = data_files(ours)
    assert len(files) > 20
    assert {tuple(f.partition) for f in files} == {tuple(f.partition) for f in data_files(theirs)}
    assert sum(f.nan_value_counts.get(5, 0) for f in files) == _nan_truth(rows, "amount")
    for f in files:
        assert f"/region={f.partition[0]}/".replace("=None/", "=null/") in f.file_path
        stats = data_file_statistics_from_parquet_metadata(pq.read_metadata(local(f.file_path)), compute_statistics_plan(
            ours.schema(), ours.properties), parquet_path_to_id_mapping(ours.schema()))
        assert f.split_offsets == stats.split_offsets and dict(f.column_sizes) == stats.column_sizes
    # Pruning: a filter on partition sources plans only matching files, and reads the right rows.
    flt = EqualTo("region", "eu")
    planned = list(ours.scan(row_filter=flt).plan_files())
    assert 0 < len(planned) < len(files)
    assert all(t.file.partition[0] == "eu" for t in planned)
    assert ours.scan(row_filter=flt).to_arrow().num_rows == sum(1 for r in rows.column("region").to_pylist()
                                                                 if r == "eu")
    by_id = list(ours.scan(row_filter=GreaterThanOrEqual("id", 300)).plan_files())
    assert 0 < len(by_id) < len(files)
    expected = canonical_rows(rows, "id")
    assert canonical_rows(ours.scan().to_arrow(), "id") == expected
    assert canonical_rows(polars_read(ours), "id") == expected
    assert canonical_rows(duckdb_read(ours), "id") == expected


def test_row_groups_split_offsets_and_rolling_on_written_bytes(catalog: SqlCatalog) -> None:
    props = {"write.parquet.row-group-size-bytes": "32768", "write.parquet.page-size-bytes": "4096",
             "write.target-file-size-bytes": "150000", "write.parquet.compression-codec": "snappy",
             "write.parquet.page-row-limit": "100"}
    table = catalog.create_table("db.rolled", EVERY_TYPE, properties=props)
    rows = every_type_rows(6000, seed=3)
    gi.append(table, rows)
    files = data_files(table)
    assert len(files) >= 2
    assert sum(f.record_count for f in files) == 6000
    for k, f in enumerate(files):  # path order is write order (file counter first)
        path = local(f.file_path)
        meta = pq.read_metadata(path)
        assert len(f.split_offsets) == meta.num_row_groups
        if k < len(files) - 1:  # a rolled file holds several row groups; the last one holds what was left
            assert meta.num_row_groups >= 2
        assert meta.row_group(0).column(0).compression == "SNAPPY"
        stats = data_file_statistics_from_parquet_metadata(meta, compute_statistics_plan(
            table.schema(), table.properties), parquet_path_to_id_mapping(table.schema()))
        assert f.split_offsets == stats.split_offsets
        assert dict(f.column_sizes) == stats.column_sizes
    # Rolled on written bytes: every file but the last reached the target (the rows already converted when the
    # row group that reached it was written go in too: about one row group's worth of Arrow bytes at most).
    sizes = [f.file_size_in_bytes for f in sorted(files, key=lambda f: f.file_path)]
    assert all(150000 <= s < 2 * 150000 for s in sizes[:-1]), sizes
    assert canonical_rows(table.scan().to_arrow(), "id") == canonical_rows(rows, "id")
    # Pruning on the files' own bounds (no partitions): each file holds a run of ids.
    last_lower = int.from_bytes(files[-1].lower_bounds[1], "little", signed=True)
    planned = list(table.scan(row_filter=GreaterThanOrEqual("id", last_lower)).plan_files())
    assert [t.file.file_path for t in planned] == [files[-1].file_path]
    assert table.scan(row_filter=GreaterThanOrEqual("id", last_lower)).to_arrow().num_rows == 6000 - last_lower


def test_overwrite_with_filter(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.over", PARTITIONED, partition_spec=SPEC)
    rows = partitioned_rows(200)
    gi.append(table, rows)
    replacement = partitioned_rows(30).set_column(1, "region", pa.array(["eu"] * 30))
    gi.overwrite(table, replacement, overwrite_filter=EqualTo("region", "eu"))
    back = table.scan().to_arrow()
    kept = [r for r in rows.to_pylist() if r["region"] != "eu"]
    assert back.num_rows == len(kept) + 30
    assert sorted(back.filter(pa.compute.equal(back["region"], "eu"))["id"].to_pylist()) == list(range(30))
    gi.overwrite(table, replacement)
    assert table.scan().to_arrow().num_rows == 30


@pytest.mark.parametrize("codec", ["zstd", "gzip", "uncompressed"])
def test_table_codec_property(catalog: SqlCatalog, codec: str) -> None:
    table = catalog.create_table(f"db.codec_{codec}", PARTITIONED,
                                 properties={"write.parquet.compression-codec": codec})
    gi.append(table, partitioned_rows(50))
    (f,) = data_files(table)
    assert pq.read_metadata(local(f.file_path)).row_group(0).column(0).compression == codec.upper().replace(
        "UNCOMPRESSED", "UNCOMPRESSED")


DELTA = {"DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY"}


def _file_encodings(path: str) -> set[str]:
    """Every encoding a file's chunks list (ColumnMetaData.encodings and encoding_stats) or a data page uses."""
    from pages import pages_of

    from gpuwrite.format.footer_reader import named

    found: set[str] = set()
    for rg in read_footer(path)[4]:
        for cc in rg[1]:
            meta = named("ColumnMetaData", cc[3], enum_names=True)
            found |= set(meta["encodings"]) | {s["encoding"] for s in meta.get("encoding_stats", [])}
    for rg in pages_of(path):
        for chunk in rg:
            found |= {p["data_page_header_v2"]["encoding"] for p in chunk if p["type"] == "DATA_PAGE_V2"}
    return found


def test_plain_fallback_for_iceberg_readers_before_1_11(catalog: SqlCatalog) -> None:
    """The table property `gpuwrite.fallback-encoding=plain` (or the keyword): values stay PLAIN or dictionary-
    encoded, never DELTA_*; the metrics are still pyiceberg's and the table reads back equal everywhere."""
    rows = every_type_rows(1500, seed=8)
    small = {"write.parquet.dict-size-bytes": "2048", "write.parquet.page-size-bytes": "4096"}
    ours, _ = _same_metrics_as_pyiceberg(catalog, EVERY_TYPE, rows,
                                         properties={**small, "gpuwrite.fallback-encoding": "plain"})
    (f,) = data_files(ours)
    found = _file_encodings(local(f.file_path))
    assert not found & DELTA
    assert {"PLAIN", "RLE_DICTIONARY"} <= found  # dictionaries that overflowed fell back to PLAIN
    expected = canonical_rows(rows, "id")
    assert canonical_rows(ours.scan().to_arrow(), "id") == expected
    assert canonical_rows(pq.read_table(local(f.file_path)), "id") == expected
    assert canonical_rows(polars_read(ours), "id") == expected
    assert canonical_rows(duckdb_read(ours), "id") == expected
    # Without the property the same write falls back to DELTA_*; the keyword sets and overrides it.
    plain_kw = catalog.create_table("db.keyword", EVERY_TYPE, properties=small)
    default = catalog.create_table("db.default", EVERY_TYPE, properties=small)
    gi.append(plain_kw, rows, fallback_encoding="plain")
    gi.append(default, rows)
    assert not _file_encodings(local(data_files(plain_kw)[0].file_path)) & DELTA
    assert _file_encodings(local(data_files(default)[0].file_path)) & DELTA
    gi.overwrite(ours, rows, fallback_encoding="delta")
    assert _file_encodings(local(data_files(ours)[0].file_path)) & DELTA
