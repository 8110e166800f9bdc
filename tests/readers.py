"""Read a Parquet file back with every peer reader and compare each result with the expected Arrow table.

Reader quirks handled here:
- pyarrow reads INT96 as zone-less timestamps (coerced to microseconds here); INT96 columns are exempt from the
  zoned/zone-less check for every reader.
- polars reads INT96 as saturating nanoseconds unless told microseconds, and cannot decode DELTA_BYTE_ARRAY on
  FIXED_LEN_BYTE_ARRAY (such columns are skipped and reported as "partial").
- fastparquet runs in a subprocess (segfaults on DELTA_BINARY_PACKED, crashes on nullable DELTA and on RLE
  booleans with nulls in v2 pages, misreads RLE booleans in v1 pages): unsupported columns are judged from the
  footer and skipped. Decimals, dates and INT96 are decoded from raw values (fastparquet gives lossy floats and
  overflowing datetime64[ns]); nullable ints/bools are read as object (its masked path breaks on v2 files with
  several pages per row group); pandas' arrow strings are turned off (that path drops the values of PLAIN pages
  after a dictionary fallback). Its float nulls come back as NaN and its timestamps lose the zone, so for
  fastparquet NaN and null are not told apart and zones are not checked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

PathLike = str | os.PathLike[str]

ALL_READERS: tuple[str, ...] = ("pyarrow", "duckdb", "polars", "fastparquet", "spark_vectorized", "spark_row")

FASTPARQUET_ENCODINGS = frozenset({"PLAIN", "PLAIN_DICTIONARY", "RLE_DICTIONARY", "RLE", "BIT_PACKED"})
FASTPARQUET_CODECS = frozenset({"UNCOMPRESSED", "SNAPPY", "GZIP", "BROTLI", "ZSTD", "LZ4_RAW"})
FASTPARQUET_TIMEOUT_S = 300

_FASTPARQUET_SCRIPT = r'''
import json
import sys
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    pd.options.future.infer_string = False
import fastparquet
from fastparquet import parquet_thrift as pt

path, out, wanted = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
pf = fastparquet.ParquetFile(path)
raw = {}
for se in pf.schema.root["children"].values():
    if se.type == pt.Type.INT96:
        raw[se.name] = ("int96", 0, 0, se.type, 12)
        se.type = pt.Type.FIXED_LEN_BYTE_ARRAY
        se.type_length = 12
    elif se.converted_type == pt.ConvertedType.DECIMAL or getattr(se.logicalType, "DECIMAL", None) is not None:
        raw[se.name] = ("decimal", se.precision, se.scale, se.type, se.type_length or 0)
    elif se.converted_type == pt.ConvertedType.DATE or getattr(se.logicalType, "DATE", None) is not None:
        raw[se.name] = ("date", 0, 0, se.type, 0)
    else:
        continue
    se.converted_type = None
    se.logicalType = None
pf._base_dtype = None
base = pf._dtypes()
masked = pd.core.arrays.masked.BaseMaskedDtype
dtypes = {c: np.dtype("O") if isinstance(base[c], masked) else base[c] for c in wanted}
df = pf.to_pandas(columns=wanted, index=False, dtypes=dtypes)


def as_numpy(s):
    """Values (nulls zero-filled) and validity of an integer-like series."""
    valid = ~s.isna().to_numpy()
    return np.where(valid, s.to_numpy(), 0).astype("int64"), valid


def as_bytes(s, width=0):
    """Byte strings (None for nulls) of an object series, FIXED_LEN values restored to their width."""
    return [None if (v is None or (isinstance(v, float) and v != v)) else bytes(v).ljust(width, b"\0") for v in s]


def decimal_array(s, precision, scale, physical, type_length):
    """Exact decimals from raw unscaled values (fastparquet would give lossy float64)."""
    width = 16 if precision <= 38 else 32
    typ = pa.decimal128(precision, scale) if width == 16 else pa.decimal256(precision, scale)
    n = len(s)
    data = np.zeros((n, width), dtype=np.uint8)
    if physical in (pt.Type.INT32, pt.Type.INT64):
        v, valid = as_numpy(s)
        words = np.stack([v, v >> 63] + [v >> 63] * (width // 8 - 2), axis=1).astype("<i8")
        data[:] = words.view(np.uint8).reshape(n, width)
        data[~valid] = 0
    else:
        vals = as_bytes(s, type_length)
        valid = np.array([b is not None for b in vals], dtype=bool)
        present = [b for b in vals if b is not None]
        if present and type_length and type_length <= width:
            big = np.frombuffer(b"".join(present), dtype=np.uint8).reshape(len(present), type_length)
            full = np.where(big[:, :1] >= 128, np.uint8(255), np.uint8(0)).repeat(width, axis=1)
            full[:, width - type_length:] = big
            data[valid] = full[:, ::-1]
        else:
            for i, b in enumerate(vals):
                if b is not None:
                    data[i] = np.frombuffer(
                        int.from_bytes(b, "big", signed=True).to_bytes(width, "little", signed=True), dtype=np.uint8)
    bits = np.packbits(valid, bitorder="little").tobytes()
    return pa.Array.from_buffers(typ, n, [pa.py_buffer(bits), pa.py_buffer(data.tobytes())])


def int96_array(s):
    """Microsecond timestamps from raw INT96 (fastparquet would overflow datetime64[ns])."""
    vals = as_bytes(s, 12)
    micros = []
    for b in vals:
        if b is None:
            micros.append(None)
        else:
            nanos = int.from_bytes(b[:8], "little", signed=True)
            day = int.from_bytes(b[8:12], "little", signed=True)
            micros.append((day - 2440588) * 86400000000 + nanos // 1000)
    return pa.array(micros, pa.int64()).cast(pa.timestamp("us"))


def plain_array(name, s):
    """Arrow array for a column fastparquet converted itself."""
    se = pf.schema.root["children"][name]
    if s.dtype == object:
        if se.converted_type == pt.ConvertedType.UTF8:
            return pa.array(s, pa.string(), from_pandas=True)
        if se.type in (pt.Type.BYTE_ARRAY, pt.Type.FIXED_LEN_BYTE_ARRAY):
            width = se.type_length if se.type == pt.Type.FIXED_LEN_BYTE_ARRAY else 0
            return pa.array(as_bytes(s, width), pa.binary())
    return pa.array(s, from_pandas=True)


arrays = {}
for name in df.columns:
    s = df[name]
    if name in raw:
        kind, precision, scale, physical, type_length = raw[name]
        if kind == "decimal":
            arrays[name] = decimal_array(s, precision, scale, physical, type_length)
        elif kind == "date":
            v, valid = as_numpy(s)
            arrays[name] = pa.array(v.astype("int32"), mask=~valid).cast(pa.date32())
        else:
            arrays[name] = int96_array(s)
    else:
        arrays[name] = plain_array(name, s)
table = pa.table(arrays)
with pa.OSFile(out, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
    writer.write_table(table)
'''


def read_pyarrow(path: PathLike) -> pa.Table:
    """Read with pyarrow (INT96 coerced to microseconds so years 1..9999 survive)."""
    return pq.read_table(path, coerce_int96_timestamp_unit="us")


def read_duckdb(path: PathLike) -> pa.Table:
    """Read with DuckDB's own Parquet reader (insertion order preserved) into Arrow."""
    import duckdb

    con = duckdb.connect()
    try:
        return con.read_parquet(str(path)).to_arrow_table()
    finally:
        con.close()


def read_polars(path: PathLike, columns: Sequence[str] | None = None) -> pa.Table:
    """Read with polars' own Parquet reader; INT96 columns are read as microseconds, not saturating nanoseconds."""
    import polars as pl

    int96 = _int96_columns(path)
    schema = None
    if int96:
        schema = dict(pl.read_parquet_schema(str(path)))
        for name in int96:
            schema[name] = pl.Datetime("us")
    cols = list(columns) if columns is not None else None
    return pl.read_parquet(str(path), columns=cols, schema=schema, glob=False).to_arrow()


def _column_chunks(path: PathLike) -> Iterator[pq.ColumnChunkMetaData]:
    """Every column chunk of every row group in the file's footer."""
    md = pq.read_metadata(path)
    for rg in range(md.num_row_groups):
        group = md.row_group(rg)
        for i in range(group.num_columns):
            yield group.column(i)


def polars_unsupported_columns(path: PathLike) -> dict[str, str]:
    """Top-level columns polars cannot decode (DELTA_BYTE_ARRAY on FIXED_LEN_BYTE_ARRAY), with the reason."""
    out: dict[str, str] = {}
    for col in _column_chunks(path):
        top = col.path_in_schema.split(".")[0]
        if col.physical_type == "FIXED_LEN_BYTE_ARRAY" and "DELTA_BYTE_ARRAY" in col.encodings:
            out.setdefault(top, "DELTA_BYTE_ARRAY on FIXED_LEN_BYTE_ARRAY (polars: not yet supported)")
    return out


def fastparquet_unsupported_columns(path: PathLike) -> dict[str, str]:
    """Top-level columns fastparquet cannot be trusted to read, each with the reason, judged from the footer."""
    out: dict[str, str] = {}
    for col in _column_chunks(path):
        top = col.path_in_schema.split(".")[0]
        encodings = set(col.encodings)
        reason = None
        if "." in col.path_in_schema:
            reason = "nested column"
        elif encodings - FASTPARQUET_ENCODINGS:
            reason = f"{'/'.join(sorted(encodings - FASTPARQUET_ENCODINGS))} encoding"
        elif col.physical_type == "BOOLEAN" and "RLE" in encodings and "PLAIN" not in encodings:
            reason = "RLE-encoded BOOLEAN values (misread in v1 pages, crash in v2 pages with nulls)"
        elif col.compression not in FASTPARQUET_CODECS:
            reason = f"{col.compression} compression"
        if reason is not None:
            out.setdefault(top, reason)
    return out


def fastparquet_can_read(path: PathLike) -> bool:
    """Whether every column uses only encodings/codecs fastparquet reads correctly (from the footer)."""
    return not fastparquet_unsupported_columns(path)


def run_fastparquet(path: PathLike, columns: Sequence[str] | None = None) -> tuple[pa.Table | None, str]:
    """Read with fastparquet in a subprocess; (table, "ok") or (None, why it failed)."""
    if columns is None:
        columns = pq.read_schema(path).names
    with tempfile.TemporaryDirectory(prefix="fastparquet-") as tmp:
        out = Path(tmp) / "out.arrow"
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _FASTPARQUET_SCRIPT, str(path), str(out), json.dumps(list(columns))],
                capture_output=True, text=True, timeout=FASTPARQUET_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return None, f"fastparquet timed out after {FASTPARQUET_TIMEOUT_S}s"
        if proc.returncode != 0:
            if proc.returncode < 0:
                status = f"killed by {signal.Signals(-proc.returncode).name}"
            else:
                status = f"exit status {proc.returncode}"
            tail = proc.stderr.strip().splitlines()[-1:] or [""]
            return None, f"fastparquet crashed ({status}): {tail[0]}"
        with pa.memory_map(str(out)) as source:
            table = pa.ipc.open_file(source).read_all()
        return table.combine_chunks(), "ok"


def read_fastparquet(path: PathLike, columns: Sequence[str] | None = None) -> pa.Table | None:
    """Read with fastparquet in a subprocess; None (with a warning giving the reason) if it cannot."""
    table, reason = run_fastparquet(path, columns)
    if table is None:
        warnings.warn(f"fastparquet could not read {path}: {reason}", stacklevel=2)
    return table


def read_spark(spark: Any, path: PathLike, vectorized: bool) -> pa.Table:
    """Read with Spark's vectorized or row-based (parquet-mr) Parquet reader, collected with toArrow()."""
    key = "spark.sql.parquet.enableVectorizedReader"
    previous = spark.conf.get(key)
    spark.conf.set(key, "true" if vectorized else "false")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
            return spark.read.parquet(str(Path(path).resolve())).toArrow()
    finally:
        spark.conf.set(key, previous)


def _int96_columns(path: PathLike) -> list[str]:
    """Names of the INT96 columns in the file."""
    schema = pq.read_metadata(path).schema
    return [schema.column(i).path for i in range(len(schema)) if schema.column(i).physical_type == "INT96"]


def _kind(t: pa.DataType) -> str:
    """Value family used to decide how two columns are compared."""
    if pa.types.is_dictionary(t):
        return _kind(t.value_type)
    checks: list[tuple[Callable[[pa.DataType], bool], str]] = [
        (pa.types.is_null, "null"), (pa.types.is_boolean, "bool"), (pa.types.is_integer, "int"),
        (pa.types.is_floating, "float"), (pa.types.is_decimal, "decimal"), (pa.types.is_date, "date"),
        (pa.types.is_timestamp, "timestamp"),
        (lambda x: pa.types.is_string(x) or pa.types.is_large_string(x) or pa.types.is_string_view(x), "string"),
        (lambda x: pa.types.is_binary(x) or pa.types.is_large_binary(x) or pa.types.is_binary_view(x)
         or pa.types.is_fixed_size_binary(x), "binary"),
    ]
    for check, kind in checks:
        if check(t):
            return kind
    return "other"


def _flatten(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    """One contiguous plain array: chunks joined, dictionaries decoded, extension types unwrapped."""
    if isinstance(col, pa.ChunkedArray):
        chunks = [_flatten(c) for c in col.chunks] or [_flatten(pa.array([], type=col.type))]
        if _kind(chunks[0].type) in ("string", "binary"):
            target = pa.large_string() if _kind(chunks[0].type) == "string" else pa.large_binary()
            chunks = [c.cast(target) for c in chunks]
        return pa.concat_arrays(chunks) if len(chunks) > 1 else chunks[0]
    if isinstance(col.type, pa.ExtensionType):
        col = col.storage
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return col


def _kinds_compatible(a: pa.DataType, e: pa.DataType) -> bool:
    """Whether a reader's type is a legitimate rendering of the expected type."""
    ka, ke = _kind(a), _kind(e)
    if ka == ke or "null" in (ka, ke):
        return True
    pair = {ka, ke}
    if pair == {"int", "decimal"}:
        dec = a if ka == "decimal" else e
        return dec.scale == 0
    return False


def _float_bits(arr: pa.Array, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Raw IEEE bits (nulls as 0) and NaN mask of a float array at the given width."""
    ftype = pa.float64() if width == 64 else pa.float32()
    vals = pc.fill_null(arr.cast(ftype), 0).to_numpy(zero_copy_only=False)
    return vals.view(np.int64 if width == 64 else np.int32), np.isnan(vals)


def _values_equal(a: pa.Array, e: pa.Array) -> np.ndarray:
    """Element-wise equality of two non-null-aligned arrays (result at null positions is meaningless)."""
    ka, ke = _kind(a.type), _kind(e.type)
    if "null" in (ka, ke):
        return np.ones(len(e), dtype=bool)
    if ka == ke == "float":
        width = 64 if 64 in (a.type.bit_width, e.type.bit_width) else 32
        abits, anan = _float_bits(a, width)
        ebits, enan = _float_bits(e, width)
        return (abits == ebits) | (anan & enan)
    if ka == ke == "int" and pa.types.is_signed_integer(a.type) == pa.types.is_signed_integer(e.type):
        target = pa.int64() if pa.types.is_signed_integer(e.type) else pa.uint64()
        av = pc.fill_null(a.cast(target), 0).to_numpy()
        ev = pc.fill_null(e.cast(target), 0).to_numpy()
        return av == ev
    if {ka, ke} <= {"int", "decimal"}:
        scale = max(getattr(a.type, "scale", 0), getattr(e.type, "scale", 0))
        target = pa.decimal256(76, scale)
        return pc.fill_null(pc.equal(a.cast(target), e.cast(target)), True).to_numpy(zero_copy_only=False)
    if ka == ke == "date":
        av = pc.fill_null(a.cast(pa.date32()).cast(pa.int32()), 0).to_numpy()
        ev = pc.fill_null(e.cast(pa.date32()).cast(pa.int32()), 0).to_numpy()
        return av == ev
    if ka == ke == "timestamp":
        return _timestamp_us(a) == _timestamp_us(e)
    if ka == ke and ka in ("string", "binary"):
        target = pa.large_string() if ka == "string" else pa.large_binary()
        return pc.fill_null(pc.equal(a.cast(target), e.cast(target)), True).to_numpy(zero_copy_only=False)
    if ka == ke == "bool":
        return pc.fill_null(pc.equal(a, e), True).to_numpy(zero_copy_only=False)
    if a.type != e.type:
        a = a.cast(e.type)
    return np.array([x == y for x, y in zip(a.to_pylist(), e.to_pylist(), strict=True)], dtype=bool)


def _timestamp_us(arr: pa.Array) -> np.ndarray:
    """The instant (UTC for zoned, wall clock for zone-less) as int64 microseconds since the epoch."""
    us = arr.cast(pa.timestamp("us", tz=arr.type.tz), safe=False)
    return pc.fill_null(us.cast(pa.int64()), 0).to_numpy()


def _show(arr: pa.Array, i: int) -> str:
    """Readable rendering of one value, keeping -0.0 and NaN visible."""
    try:
        return repr(arr[i].as_py())
    except (ValueError, OverflowError, pa.ArrowException):
        return str(arr[i])


def _column_mismatch(
    name: str, actual_col: pa.ChunkedArray, expected_col: pa.ChunkedArray, reader_name: str, ignore_tz: bool,
    nan_as_null: bool,
) -> str | None:
    """Why one column differs, naming reader, column and first differing row; None when equal."""
    atype, etype = actual_col.type, expected_col.type
    actual, expected = _flatten(actual_col), _flatten(expected_col)
    if not _kinds_compatible(actual.type, expected.type):
        return f"{reader_name}: column {name!r} has type {atype}, expected {etype}"
    if (not ignore_tz and _kind(atype) == _kind(etype) == "timestamp"
            and (actual.type.tz is None) != (expected.type.tz is None)):
        return (f"{reader_name}: column {name!r} has type {atype}, expected {etype} "
                "(zoned vs zone-less: isAdjustedToUTC differs)")
    avalid = actual.is_valid().to_numpy(zero_copy_only=False)
    evalid = expected.is_valid().to_numpy(zero_copy_only=False)
    if nan_as_null and _kind(atype) == _kind(etype) == "float":
        avalid = avalid & ~np.isnan(pc.fill_null(actual.cast(pa.float64()), 0).to_numpy(zero_copy_only=False))
        evalid = evalid & ~np.isnan(pc.fill_null(expected.cast(pa.float64()), 0).to_numpy(zero_copy_only=False))
    bad = avalid != evalid
    both = avalid & evalid
    if both.any():
        bad |= both & ~_values_equal(actual, expected)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return (f"{reader_name}: column {name!r} differs at row {i} ({int(bad.sum())} of {len(bad)} rows differ): "
            f"got {_show(actual, i)}, expected {_show(expected, i)} (reader type {atype}, expected type {etype})")


def table_mismatches(
    actual: pa.Table, expected: pa.Table, reader_name: str, *, ignore_tz: bool | Iterable[str] = False,
    nan_as_null: bool = False,
) -> list[str]:
    """Every difference between a reader's table and the expected one, after normalising legitimate changes."""
    if actual.column_names != expected.column_names:
        return [f"{reader_name}: columns {actual.column_names}, expected {expected.column_names}"]
    if actual.num_rows != expected.num_rows:
        return [f"{reader_name}: {actual.num_rows} rows, expected {expected.num_rows}"]
    tz_exempt = set(expected.column_names) if ignore_tz is True else set(ignore_tz or ())
    problems = []
    for i, name in enumerate(expected.column_names):
        problem = _column_mismatch(name, actual.column(i), expected.column(i), reader_name, name in tz_exempt,
                                   nan_as_null)
        if problem is not None:
            problems.append(problem)
    return problems


def assert_tables_equal(
    actual: pa.Table, expected: pa.Table, reader_name: str, *, ignore_tz: bool | Iterable[str] = False,
    nan_as_null: bool = False,
) -> None:
    """Assert a reader's table equals the expected one column by column, naming reader, column and row."""
    problems = table_mismatches(actual, expected, reader_name, ignore_tz=ignore_tz, nan_as_null=nan_as_null)
    assert not problems, "\n".join(problems)


def _read_columns(reader: str, path: PathLike, names: list[str], spark: Any) -> pa.Table:
    """One reader's table (only the named columns where the reader has limits); raises when it fails."""
    if reader == "fastparquet":
        table, reason = run_fastparquet(path, names)
        if table is None:
            raise RuntimeError(reason)
        return table
    if reader == "polars":
        return read_polars(path, names)
    if reader.startswith("spark"):
        return read_spark(spark, path, vectorized=reader == "spark_vectorized")
    if reader == "duckdb":
        return read_duckdb(path)
    return read_pyarrow(path)


def _check_reader(reader: str, path: PathLike, expected: pa.Table, spark: Any) -> tuple[str, list[str]]:
    """Run one reader on the columns it can decode and compare; (status, problems)."""
    if reader.startswith("spark") and spark is None:
        return "skipped: no SparkSession given", []
    unsupported = READER_LIMITS[reader](path) if reader in READER_LIMITS else {}
    names = [n for n in expected.column_names if n not in unsupported]
    skipped = "; ".join(f"{n}: {r}" for n, r in unsupported.items())
    if not names:
        return f"skipped: {skipped}", []
    try:
        table = _read_columns(reader, path, names, spark)
    except Exception as exc:
        why = f"{type(exc).__name__}: {exc}"
        return f"failed: {why}", [f"{reader}: could not read {path}: {why}"]
    fastparquet = reader == "fastparquet"
    problems = table_mismatches(table, expected.select(names), reader,
                                ignore_tz=True if fastparquet else _int96_columns(path), nan_as_null=fastparquet)
    if problems:
        return "mismatch", problems
    if unsupported:
        return f"partial: compared {len(names)} of {expected.num_columns} columns; {skipped}", []
    return "ok", []


READER_LIMITS: dict[str, Callable[[PathLike], dict[str, str]]] = {
    "fastparquet": fastparquet_unsupported_columns,
    "polars": polars_unsupported_columns,
}


def assert_readers_agree(
    path: PathLike, expected: pa.Table, spark: Any = None, readers: Sequence[str] = ALL_READERS
) -> dict[str, str]:
    """Read path with each reader and assert all equal expected; reader -> "ok" | "partial: ..." | "skipped: ..."."""
    unknown = set(readers) - set(ALL_READERS)
    if unknown:
        raise ValueError(f"unknown readers {sorted(unknown)}; choose from {ALL_READERS}")
    results: dict[str, str] = {}
    problems: list[str] = []
    for reader in readers:
        results[reader], found = _check_reader(reader, path, expected, spark)
        problems += found
    summary = ", ".join(f"{r}: {status}" for r, status in results.items())
    assert not problems, f"readers disagree with the expected table ({summary}):\n" + "\n".join(problems)
    return results
