"""Arrow schema -> Parquet schema as Spark's SparkToParquetSchemaConverter builds it, for flat columns.

Each supported Arrow field becomes one `Leaf`: its Parquet physical type and annotations, the value
representation the encoders work on (`kind`), and the Spark type name for the row-metadata JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa

from .errors import UnsupportedTypeError
from .options import WriteOptions

# Physical types (parquet.thrift Type).
BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY = range(8)
PHYSICAL_NAMES = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")
# Converted types used here (parquet.thrift ConvertedType).
CT_UTF8, CT_DECIMAL, CT_DATE, CT_TIMESTAMP_MILLIS, CT_TIMESTAMP_MICROS, CT_INT_8, CT_INT_16 = 0, 5, 6, 9, 10, 15, 16


@dataclass(frozen=True)
class Logical:
    """A LogicalType annotation: kind is STRING, DECIMAL, DATE, TIMESTAMP or INTEGER."""

    kind: str
    precision: int = 0
    scale: int = 0
    unit: str = ""
    adjusted_to_utc: bool = False
    bit_width: int = 0


@dataclass(frozen=True)
class Leaf:
    """One column as written: Parquet types, how values are represented for encoding, and Spark's type."""

    name: str
    index: int
    arrow_type: pa.DataType
    physical: int
    kind: str  # bool, int32, int64, float, double, bytes, flba, int96
    nullable: bool
    spark_type: str
    type_length: int = 0
    converted: int | None = None
    logical: Logical | None = None
    decimal_precision: int = 0
    decimal_scale: int = 0

    @property
    def path(self) -> tuple[str, ...]:
        """Path in the schema (one element for flat columns)."""
        return (self.name,)

    @property
    def dotted(self) -> str:
        """Dotted column path, as used in `#column` option suffixes."""
        return ".".join(self.path)

    @property
    def max_def(self) -> int:
        """Maximum definition level."""
        return 1 if self.nullable else 0

    @property
    def is_decimal(self) -> bool:
        """Whether the leaf carries a DECIMAL annotation."""
        return self.logical is not None and self.logical.kind == "DECIMAL"


def min_bytes_for_precision(precision: int) -> int:
    """Smallest n with 2**(8n-1) >= 10**precision (Spark's minBytesForPrecision)."""
    n = 1
    while 2 ** (8 * n - 1) < 10**precision:
        n += 1
    return n


def value_type(t: pa.DataType) -> pa.DataType:
    """The type whose values are written: a dictionary column's value type, else t."""
    return t.value_type if pa.types.is_dictionary(t) else t


def leaf_for_field(f: pa.Field, index: int, opts: WriteOptions) -> Leaf:
    """Map one Arrow field to its Parquet leaf, or raise UnsupportedTypeError naming column and type."""
    t = value_type(f.type)
    common = {"name": f.name, "index": index, "arrow_type": t, "nullable": f.nullable}
    if pa.types.is_boolean(t):
        return Leaf(physical=BOOLEAN, kind="bool", spark_type="boolean", **common)
    if pa.types.is_int8(t):
        return Leaf(physical=INT32, kind="int32", spark_type="byte", converted=CT_INT_8,
                    logical=Logical("INTEGER", bit_width=8), **common)
    if pa.types.is_int16(t):
        return Leaf(physical=INT32, kind="int32", spark_type="short", converted=CT_INT_16,
                    logical=Logical("INTEGER", bit_width=16), **common)
    if pa.types.is_int32(t):
        return Leaf(physical=INT32, kind="int32", spark_type="integer", **common)
    if pa.types.is_int64(t):
        return Leaf(physical=INT64, kind="int64", spark_type="long", **common)
    if pa.types.is_float32(t):
        return Leaf(physical=FLOAT, kind="float", spark_type="float", **common)
    if pa.types.is_float64(t):
        return Leaf(physical=DOUBLE, kind="double", spark_type="double", **common)
    if pa.types.is_decimal(t):
        return _decimal_leaf(f, t, common, opts)
    if pa.types.is_date32(t):
        return Leaf(physical=INT32, kind="int32", spark_type="date", converted=CT_DATE, logical=Logical("DATE"),
                    **common)
    if pa.types.is_timestamp(t):
        return _timestamp_leaf(t, common, opts)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return Leaf(physical=BYTE_ARRAY, kind="bytes", spark_type="string", converted=CT_UTF8,
                    logical=Logical("STRING"), **common)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return Leaf(physical=BYTE_ARRAY, kind="bytes", spark_type="binary", **common)
    raise UnsupportedTypeError(f"column {f.name!r}: Arrow type {f.type} is not supported by gpuwrite "
                               "(Spark has no Parquet mapping for it here)")


def _decimal_leaf(f: pa.Field, t: pa.DataType, common: dict, opts: WriteOptions) -> Leaf:
    """DECIMAL on INT32 / INT64 / FIXED_LEN_BYTE_ARRAY by precision, as Spark (all FLBA in legacy format)."""
    p, s = t.precision, t.scale
    if p > 38:
        raise UnsupportedTypeError(f"column {f.name!r}: {t} has precision {p}; Spark decimals allow at most 38")
    if s < 0:
        raise UnsupportedTypeError(f"column {f.name!r}: {t} has a negative scale, which Spark does not allow")
    dec = {"converted": CT_DECIMAL, "logical": Logical("DECIMAL", precision=p, scale=s),
           "decimal_precision": p, "decimal_scale": s, "spark_type": f"decimal({p},{s})"}
    if p <= 9 and not opts.legacy_format:
        return Leaf(physical=INT32, kind="int32", **dec, **common)
    if p <= 18 and not opts.legacy_format:
        return Leaf(physical=INT64, kind="int64", **dec, **common)
    return Leaf(physical=FIXED_LEN_BYTE_ARRAY, kind="flba", type_length=min_bytes_for_precision(p), **dec, **common)


def _timestamp_leaf(t: pa.TimestampType, common: dict, opts: WriteOptions) -> Leaf:
    """Zoned timestamps follow outputTimestampType (INT96 by default); zone-less ones are Spark's TIMESTAMP_NTZ."""
    if t.tz is None:
        return Leaf(physical=INT64, kind="int64", spark_type="timestamp_ntz", converted=CT_TIMESTAMP_MICROS,
                    logical=Logical("TIMESTAMP", unit="MICROS", adjusted_to_utc=False), **common)
    if opts.timestamp_type == "INT96":
        return Leaf(physical=INT96, kind="int96", spark_type="timestamp", **common)
    if opts.timestamp_type == "TIMESTAMP_MILLIS":
        return Leaf(physical=INT64, kind="int64", spark_type="timestamp", converted=CT_TIMESTAMP_MILLIS,
                    logical=Logical("TIMESTAMP", unit="MILLIS", adjusted_to_utc=True), **common)
    return Leaf(physical=INT64, kind="int64", spark_type="timestamp", converted=CT_TIMESTAMP_MICROS,
                logical=Logical("TIMESTAMP", unit="MICROS", adjusted_to_utc=True), **common)


@dataclass(frozen=True)
class FileSchema:
    """The Arrow schema being written and its Parquet leaves."""

    arrow: pa.Schema
    leaves: tuple[Leaf, ...]

    @classmethod
    def from_arrow(cls, schema: pa.Schema, opts: WriteOptions) -> FileSchema:
        """Map every field; flat schemas only for now (nested types are refused by name)."""
        names = [f.name for f in schema]
        if not names:
            raise UnsupportedTypeError("the schema has no columns: a Parquet file needs at least one column")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise UnsupportedTypeError(f"duplicate column name {dupes[0]!r}: Parquet column paths must be unique")
        return cls(schema, tuple(leaf_for_field(f, i, opts) for i, f in enumerate(schema)))

    def spark_row_metadata(self) -> str:
        """Spark's StructType JSON for org.apache.spark.sql.parquet.row.metadata (compact, Spark's key order)."""
        fields = [{"name": leaf.name, "type": leaf.spark_type, "nullable": leaf.nullable, "metadata": {}}
                  for leaf in self.leaves]
        return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"), ensure_ascii=False)
