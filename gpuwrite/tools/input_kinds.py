"""The inputs users bring, one small write per kind: what the cold-start bench times and the warm-up must cover.

Each kind is a function writing 10 rows (or a few small files) into a folder, built the way each library hands
its data over: pyarrow tables of every flat type (large_ and view variants, dictionary arrays, slices, chunks),
pandas frames (tz-aware timestamps, nullable integers, categoricals, object strings), polars frames
(Categorical, Enum, Datetime, String views), DuckDB relations (decimals of every width, timestamps), nested
tables with nulls at every level, and Spark's timestamp layouts (INT96, micros) with every codec and the options
that select kernels. pandas, polars and DuckDB are imported only by their own kinds (`available` says which run).
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa

ROWS = 10
CODECS = ("gzip", "zstd", "snappy", "lz4_raw", "none")


def _valid(rows: int) -> list[bool]:
    """Which rows hold a value (every third is null)."""
    return [i % 3 != 1 for i in range(rows)]


def _nullable(values: list[Any], type_: pa.DataType) -> pa.Array:
    """`values` as an Arrow array of `type_`, every third null."""
    return pa.array([v if ok else None for v, ok in zip(values, _valid(len(values)), strict=True)], type_)


def flat_table(rows: int = ROWS, nulls: bool = True) -> pa.Table:
    """Every flat Arrow type gpuwrite writes, the large_ and view variants and unsigned widths included."""
    make = _nullable if nulls else (lambda values, type_: pa.array(values, type_))
    ints = [i * 37 % 100 - 50 for i in range(rows)]
    text = [f"text {i}" for i in range(rows)]
    at = [dt.datetime(2024, 1, 1 + i % 28, i % 24, 30, 0, i) for i in range(rows)]
    columns: dict[str, pa.Array] = {
        "flag": make([i % 2 == 0 for i in range(rows)], pa.bool_()),
        "i8": make(ints, pa.int8()), "i16": make(ints, pa.int16()), "i32": make(ints, pa.int32()),
        "i64": make(ints, pa.int64()),
        "u8": make([abs(v) for v in ints], pa.uint8()), "u16": make([abs(v) for v in ints], pa.uint16()),
        "u32": make([abs(v) for v in ints], pa.uint32()), "u64": make([abs(v) for v in ints], pa.uint64()),
        "f32": make([v / 4 for v in ints], pa.float32()), "f64": make([v / 8 for v in ints], pa.float64()),
        "dec": make([decimal.Decimal(v).scaleb(-2) for v in ints], pa.decimal128(10, 2)),
        "day": make([d.date() for d in at], pa.date32()),
        "ts_s": make(at, pa.timestamp("s")), "ts_ms": make(at, pa.timestamp("ms")),
        "ts_us": make(at, pa.timestamp("us")), "ts_ns": make(at, pa.timestamp("ns")),
        "ts_tz": make(at, pa.timestamp("us", tz="Europe/Paris")),
        "s": make(text, pa.string()), "ls": make(text, pa.large_string()), "sv": make(text, pa.string_view()),
        "b": make([t.encode() for t in text], pa.binary()),
        "lb": make([t.encode() for t in text], pa.large_binary()),
        "bv": make([t.encode() for t in text], pa.binary_view()),
    }
    return pa.table(columns)


def dictionary_table(rows: int = ROWS) -> pa.Table:
    """Dictionary arrays of every index width, with string, large string and integer values."""
    words = pa.array([f"w{i % 3}" if i % 4 else None for i in range(rows)])
    return pa.table({
        f"d_{index}_{value}": pa.DictionaryArray.from_arrays(
            pa.array([(i % 3) if i % 4 else None for i in range(rows)], index),
            words.drop_null().unique().cast(value) if value != pa.int64() else pa.array([10, 20, 30], value))
        for index in (pa.int8(), pa.int16(), pa.int32(), pa.int64())
        for value in (pa.string(), pa.large_string(), pa.int64())})


def nested_table(rows: int = ROWS) -> pa.Table:
    """Lists, structs and maps with nulls at every level (the column, the list, the element, the field)."""
    def at(i: int, value: Any) -> Any:
        return None if i % 5 == 4 else value

    return pa.table({
        "ints": pa.array([at(i, [i, None, i + 1][: i % 4]) for i in range(rows)], pa.list_(pa.int64())),
        "words": pa.array([at(i, [f"w{i}", None][: i % 3]) for i in range(rows)], pa.large_list(pa.string())),
        "views": pa.array([at(i, [f"v{i}", None][: i % 3]) for i in range(rows)], pa.list_(pa.string_view())),
        "fixed": pa.array([at(i, [i, None]) for i in range(rows)], pa.list_(pa.int32(), 2)),
        "item": pa.array([at(i, {"id": i if i % 3 else None, "name": f"n{i}" if i % 2 else None,
                                 "when": dt.datetime(2024, 1, 1, i % 24)}) for i in range(rows)],
                         pa.struct([("id", pa.int32()), ("name", pa.string()),
                                    ("when", pa.timestamp("us", tz="UTC"))])),
        "tags": pa.array([at(i, [(f"k{j}", j if j % 2 else None) for j in range(i % 3)]) for i in range(rows)],
                         pa.map_(pa.string(), pa.int64())),
        "deep": pa.array([at(i, [at(i + 1, {"xs": [decimal.Decimal(i).scaleb(-1), None][: i % 3]})])
                          for i in range(rows)],
                         pa.list_(pa.struct([("xs", pa.list_(pa.decimal128(12, 1)))]))),
    })


def _write(data: Any, folder: str, name: str, **options: Any) -> None:
    """gpuwrite.write_table into folder/name.parquet."""
    import gpuwrite

    options.setdefault("widen_unsigned", True)  # pandas' UInt*, polars' UInt*, DuckDB's UTINYINT...
    gpuwrite.write_table(data, os.path.join(folder, f"{name}.parquet"), **options)


def arrow_flat(folder: str) -> None:
    """pyarrow tables of every flat type: with nulls, without, sliced, chunked, and dictionary arrays."""
    table = flat_table()
    _write(table, folder, "nulls")
    _write(flat_table(nulls=False), folder, "dense")
    _write(flat_table(ROWS * 2).slice(3, ROWS), folder, "sliced")
    _write(pa.concat_tables([flat_table(4), flat_table(6, nulls=False)]), folder, "chunked")
    _write(dictionary_table(), folder, "dictionary")


def arrow_nested(folder: str) -> None:
    """Nested tables (list/struct/map/fixed list, nulls at every level), also sliced."""
    _write(nested_table(), folder, "nested")
    _write(nested_table(ROWS * 2).slice(5, ROWS), folder, "nested_sliced")


def pandas_frames(folder: str) -> None:
    """pandas frames: tz-aware timestamps, nullable integers and booleans, categoricals, object strings."""
    import pandas as pd

    n = ROWS
    frame = pd.DataFrame({
        "at": pd.date_range("2024-03-30", periods=n, freq="7h", tz="Europe/Paris"),
        "at_utc": pd.date_range("2024-01-01", periods=n, freq="h", tz="UTC"),
        "naive": pd.date_range("2024-01-01", periods=n, freq="D"),
        "i64": pd.array([i if i % 3 else None for i in range(n)], dtype="Int64"),
        "i32": pd.array([i if i % 3 else None for i in range(n)], dtype="Int32"),
        "i8": pd.array([i if i % 3 else None for i in range(n)], dtype="Int8"),
        "u16": pd.array([i if i % 3 else None for i in range(n)], dtype="UInt16"),
        "ok": pd.array([bool(i % 2) if i % 3 else None for i in range(n)], dtype="boolean"),
        "f": pd.array([i / 2 if i % 3 else None for i in range(n)], dtype="Float64"),
        "cat": pd.Categorical([f"c{i % 3}" for i in range(n)]),
        "cat_null": pd.Categorical([f"c{i % 3}" if i % 4 else None for i in range(n)]),
        "obj": [f"s{i}" if i % 4 else None for i in range(n)],
        "text": pd.array([f"t{i}" if i % 4 else None for i in range(n)], dtype="string"),
        "x": [i * 1.5 for i in range(n)],
        "n": list(range(n)),
    })
    _write(frame, folder, "frame")
    _write(frame.set_index("n"), folder, "indexed")


def polars_frames(folder: str) -> None:
    """polars frames: Categorical, Enum, Datetime (us, ns, ms, zoned), String (views), nullable columns."""
    import polars as pl

    n = ROWS
    frame = pl.DataFrame({
        "cat": pl.Series([f"c{i % 3}" if i % 4 else None for i in range(n)], dtype=pl.Categorical),
        "enum": pl.Series([f"e{i % 2}" for i in range(n)], dtype=pl.Enum(["e0", "e1"])),
        "at": pl.datetime_range(dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 9), "1h", eager=True),
        "text": [f"s{i}" if i % 3 else None for i in range(n)],
        "i": pl.Series([i if i % 3 else None for i in range(n)], dtype=pl.Int64),
        "u": pl.Series(list(range(n)), dtype=pl.UInt32),
        "x": [i / 3 for i in range(n)],
        "day": pl.date_range(dt.date(2024, 1, 1), dt.date(2024, 1, 10), eager=True),
        "ok": [bool(i % 2) for i in range(n)],
        "dec": pl.Series([decimal.Decimal(i).scaleb(-2) for i in range(n)], dtype=pl.Decimal(10, 2)),
        "words": [[f"w{i}"] * (i % 3) for i in range(n)],
    }).with_columns(
        pl.col("at").dt.cast_time_unit("ns").alias("at_ns"),
        pl.col("at").dt.cast_time_unit("ms").alias("at_ms"),
        pl.col("at").dt.replace_time_zone("Europe/Paris").alias("at_tz"),
    )
    _write(frame, folder, "frame")


def duckdb_relations(folder: str) -> None:
    """DuckDB relations: decimals of every width (2, 4, 8, 16 bytes), timestamps of every unit, hugeints."""
    import duckdb

    con = duckdb.connect()
    relation = con.sql("""
        SELECT i::DECIMAL(4, 1) AS d4, (i * 1000)::DECIMAL(9, 2) AS d9, (i * 10^9)::DECIMAL(18, 3) AS d18,
               (i * 10^20)::DECIMAL(38, 4) AS d38, CASE WHEN i % 3 = 1 THEN NULL ELSE i::DECIMAL(15, 5) END AS dn,
               TIMESTAMP '2024-01-01' + i * INTERVAL 1 HOUR AS ts, (TIMESTAMP '2024-01-01' + i * INTERVAL 1 HOUR)::TIMESTAMPTZ AS tstz,
               (TIMESTAMP '2024-01-01')::TIMESTAMP_S AS ts_s, (TIMESTAMP '2024-01-01')::TIMESTAMP_MS AS ts_ms,
               (TIMESTAMP '2024-01-01')::TIMESTAMP_NS AS ts_ns, DATE '2024-01-01' + i::INT AS day,
               i::HUGEINT AS huge, i::UTINYINT AS u8, 'v' || i AS s, CASE WHEN i % 2 = 0 THEN NULL ELSE i END AS n,
               [i, NULL] AS xs, {'a': i, 'b': 'x' || i} AS st
        FROM range(10) t(i)""")
    _write(relation, folder, "relation")
    _write(relation.to_arrow_table(), folder, "table")


def spark_layouts(folder: str) -> None:
    """Spark's timestamp layouts (INT96 and micros) with every codec, and the options that select kernels:
    bloom filters, truncated statistics, dictionary off, no page checksums."""
    from ..pipeline.int96_zones import held_back

    table = pa.table({"id": pa.array(range(ROWS), pa.int64()),
                      "at": _nullable([dt.datetime(2024, 1, 1, i) for i in range(ROWS)], pa.timestamp("us", tz="UTC")),
                      "ntz": _nullable([dt.datetime(1500, 1, 1, i) for i in range(ROWS)], pa.timestamp("us")),
                      "s": _nullable([f"s{i}" for i in range(ROWS)], pa.string()),
                      "d": _nullable([decimal.Decimal(i).scaleb(-2) for i in range(ROWS)], pa.decimal128(9, 2))})
    with held_back():
        for codec in CODECS:
            for layout in ("INT96", "TIMESTAMP_MICROS"):
                _write(table, folder, f"{codec}_{layout}", compression=codec, timestamp_type=layout)
        _write(table, folder, "bloom", bloom_filter_enabled=True, compression="zstd")
        _write(table, folder, "truncated", statistics_truncate_length=2, compression="gzip")
        _write(table, folder, "plain", enable_dictionary=False, compression="snappy")
        _write(table, folder, "checksums", page_checksum=False, compression="lz4_raw")


OPTIONS: dict[str, dict[str, Any]] = {
    "bloom": {"bloom_filter_enabled": True}, "adaptive": {"bloom_filter_enabled": True, "bloom_filter_adaptive": True},
    "plain": {"enable_dictionary": False}, "legacy": {"legacy_format": True},
    "micros": {"timestamp_type": "TIMESTAMP_MICROS"}, "millis": {"timestamp_type": "TIMESTAMP_MILLIS"},
    "rebase": {"datetime_rebase": "LEGACY", "int96_rebase": "LEGACY"}, "iceberg": {"fallback_encoding": "plain"},
}


def with_options(folder: str) -> None:
    """The flat and nested tables, pyarrow's own and through the C stream (polars', DuckDB's buffers), with
    every option that selects kernels."""
    import warnings

    from ..errors import BloomFilterSizeWarning
    from ..pipeline.int96_zones import held_back

    tables = {"flat": flat_table(), "nested": nested_table()}
    tables.update({f"{name}_stream": pa.RecordBatchReader.from_stream(t).read_all() for name, t in tables.items()})
    with held_back(), warnings.catch_warnings():
        warnings.simplefilter("ignore", BloomFilterSizeWarning)
        for name, table in tables.items():
            for option, options in OPTIONS.items():
                _write(table, folder, f"{name}_{option}", **options)


def datasets(folder: str) -> None:
    """Partitioned and bucketed datasets (Murmur3 and HiveHash) of a polars frame and a pyarrow table."""
    import gpuwrite

    table = flat_table().drop_columns(["u8", "u16", "u32", "u64", "ts_ns", "ts_s", "ts_tz", "sv", "bv"])
    stream = pa.RecordBatchReader.from_stream(table).read_all()
    keys = ["i32", "i64", "s", "dec", "day", "ts_us", "b"]
    for name, data in (("own", table), ("stream", stream)):
        gpuwrite.write_dataset(data, os.path.join(folder, f"{name}_spark"), partition_by=["flag"], bucket_by=(4, keys))
        gpuwrite.write_dataset(data, os.path.join(folder, f"{name}_hive"), bucket_by=(4, keys),
                               hive_compatible_buckets=True)


def streamed_steps(folder: str) -> None:
    """A streaming ParquetWriter fed batches of every flat type (views aside: Arrow cannot `take` them), each a
    conversion step, into one row group: each column's pages are encoded a step at a time, its dictionary
    re-read between steps (`Dictionary.warm`), as in any write of more than a step's rows."""
    import numpy as np

    # api first: importing pipeline.window on its own is circular (backends.base imports it back)
    from ..api import ParquetWriter
    from ..pipeline.window import STREAM_CONVERT_ROWS

    table = flat_table().drop_columns(["sv", "bv"])
    batch = table.take(np.arange(STREAM_CONVERT_ROWS) % table.num_rows)
    with ParquetWriter(os.path.join(folder, "streamed.parquet"), table.schema, streaming=True,
                       widen_unsigned=True) as writer:
        for _ in range(3):
            writer.write(batch)


KINDS: dict[str, tuple[Callable[[str], None], str | None]] = {
    "options": (with_options, None),
    "datasets": (datasets, None),
    "streamed steps": (streamed_steps, None),
    "pyarrow flat": (arrow_flat, None),
    "pyarrow nested": (arrow_nested, None),
    "pandas": (pandas_frames, "pandas"),
    "polars": (polars_frames, "polars"),
    "duckdb": (duckdb_relations, "duckdb"),
    "spark layouts": (spark_layouts, None),
}


def _pandas_frame(column: str) -> Any:
    """A 10-row pandas frame of one kind: tz-aware timestamps, nullable integers or categoricals."""
    import pandas as pd

    n = ROWS
    make = {"tz": lambda: pd.date_range("2024-03-30", periods=n, freq="7h", tz="Europe/Paris"),
            "nullable": lambda: pd.array([i if i % 3 else None for i in range(n)], dtype="Int64"),
            "category": lambda: pd.Categorical([f"c{i % 3}" if i % 4 else None for i in range(n)])}
    return pd.DataFrame({column: make[column](), "n": range(n)})


def _polars_frame(column: str) -> Any:
    """A 10-row polars frame of one kind: Categorical or Datetime."""
    import polars as pl

    n = ROWS
    make = {"category": lambda: pl.Series([f"c{i % 3}" if i % 4 else None for i in range(n)], dtype=pl.Categorical),
            "datetime": lambda: pl.datetime_range(dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 9), "1h",
                                                  eager=True)}
    return pl.DataFrame({column: make[column](), "n": range(n)})


def _duckdb_decimals() -> Any:
    """A 10-row DuckDB relation of decimals of every storage width (2, 4, 8 and 16 bytes), one nullable."""
    import duckdb

    return duckdb.connect().sql(
        "SELECT i::DECIMAL(4, 1) AS d4, (i * 1000)::DECIMAL(9, 2) AS d9, (i * 10^9)::DECIMAL(18, 3) AS d18, "
        "(i * 10^20)::DECIMAL(38, 4) AS d38, CASE WHEN i % 3 = 1 THEN NULL ELSE i::DECIMAL(15, 5) END AS dn "
        "FROM range(10) t(i)")


def _spark(layout: str, codec: str) -> Callable[[str], None]:
    """A 10-row write of Spark's timestamp layout `layout` compressed with `codec`."""
    def run(folder: str) -> None:
        from ..pipeline.int96_zones import held_back

        table = pa.table({"id": pa.array(range(ROWS), pa.int64()),
                          "at": _nullable([dt.datetime(2024, 1, 1, i) for i in range(ROWS)],
                                          pa.timestamp("us", tz="UTC"))})
        with held_back():
            _write(table, folder, "spark", compression=codec, timestamp_type=layout)
    return run


# The "Must show" kinds, one fresh process each in bench/cold_start.py: (write, the library it needs).
COLD_START: dict[str, tuple[Callable[[str], None], str | None]] = {
    "pyarrow flat types": (lambda folder: _write(flat_table(), folder, "flat"), None),
    "pandas tz-aware": (lambda folder: _write(_pandas_frame("tz"), folder, "frame"), "pandas"),
    "pandas nullable ints": (lambda folder: _write(_pandas_frame("nullable"), folder, "frame"), "pandas"),
    "pandas categoricals": (lambda folder: _write(_pandas_frame("category"), folder, "frame"), "pandas"),
    "polars Categorical": (lambda folder: _write(_polars_frame("category"), folder, "frame"), "polars"),
    "polars Datetime": (lambda folder: _write(_polars_frame("datetime"), folder, "frame"), "polars"),
    "duckdb decimals": (lambda folder: _write(_duckdb_decimals(), folder, "relation"), "duckdb"),
    "nested": (lambda folder: _write(nested_table(), folder, "nested"), None),
    **{f"spark {layout} {codec}": (_spark(layout, codec), None)
       for layout in ("INT96", "TIMESTAMP_MICROS") for codec in ("gzip", "zstd")},
}


def available(kind: str) -> bool:
    """Whether the library a kind (of KINDS or COLD_START) needs is installed."""
    needs = {**KINDS, **COLD_START}[kind][1]
    return needs is None or importlib.util.find_spec(needs) is not None
