"""Arrow schema -> Parquet schema as Spark's SparkToParquetSchemaConverter builds it.

Each primitive Arrow field becomes one `Leaf`: its Parquet physical type and annotations, the value
representation the encoders work on (`kind`), the Spark type for the row-metadata JSON, its levels, and the
steps that lead from its top-level Arrow column to its values. Structs, lists and maps become `Group`s in
Spark's standard layout, or its legacy one under writeLegacyFormat.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal

import pyarrow as pa

from .errors import UnsupportedTypeError
from .format.enums import ConvertedType, FieldRepetitionType, Type
from .options.model import WriteOptions
from .pipeline.widen import spark_field_metadata
from .type_hints import cast_hint

# Short names for the parquet.thrift enum members used here (other modules import them from here too).
BOOLEAN, INT32, INT64, INT96 = Type.BOOLEAN, Type.INT32, Type.INT64, Type.INT96
FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY = Type.FLOAT, Type.DOUBLE, Type.BYTE_ARRAY, Type.FIXED_LEN_BYTE_ARRAY
PHYSICAL_NAMES = tuple(t.name for t in Type)  # indexed by the physical type's value
CT_UTF8, CT_DECIMAL, CT_DATE = ConvertedType.UTF8, ConvertedType.DECIMAL, ConvertedType.DATE
CT_TIMESTAMP_MILLIS, CT_TIMESTAMP_MICROS = ConvertedType.TIMESTAMP_MILLIS, ConvertedType.TIMESTAMP_MICROS
CT_INT_8, CT_INT_16 = ConvertedType.INT_8, ConvertedType.INT_16
CT_MAP, CT_MAP_KEY_VALUE, CT_LIST = ConvertedType.MAP, ConvertedType.MAP_KEY_VALUE, ConvertedType.LIST
REQUIRED, OPTIONAL, REPEATED = (FieldRepetitionType.REQUIRED, FieldRepetitionType.OPTIONAL,
                                FieldRepetitionType.REPEATED)


# How the encoders hold a leaf's values: fixed-width kinds as a NumPy array, byte kinds as offsets + data.
Kind = Literal["bool", "int32", "int64", "float", "double", "bytes", "flba", "int96"]
FIXED_KINDS: tuple[Kind, ...] = ("bool", "int32", "int64", "float", "double")


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
    physical: Type
    kind: Kind
    nullable: bool
    spark_type: str
    type_length: int = 0
    converted: ConvertedType | None = None
    logical: Logical | None = None
    decimal_precision: int = 0
    decimal_scale: int = 0
    # Nested leaves: the full path, levels, repetition of the leaf node and the Arrow steps to its values
    # (("node", optional) checks validity, ("field", i) enters a struct child, ("list", level) /
    # ("map", level) / ("fixed", level) enter list elements or map entries).
    nested_path: tuple[str, ...] = ()
    def_level: int = -1
    rep_level: int = 0
    repetition: int = -1  # a FieldRepetitionType for nested leaves; -1: from nullable
    steps: tuple[tuple[Any, ...], ...] = ()
    field_id: int | None = None  # from the Arrow field's PARQUET:field_id metadata (Iceberg ids)

    @property
    def path(self) -> tuple[str, ...]:
        """Path in the schema."""
        return self.nested_path or (self.name,)

    @cached_property
    def dotted(self) -> str:
        """Dotted column path, as used in `#column` option suffixes (asked for every page: joined once)."""
        return ".".join(self.path)

    @property
    def max_def(self) -> int:
        """Maximum definition level."""
        return self.def_level if self.def_level >= 0 else (1 if self.nullable else 0)

    @property
    def max_rep(self) -> int:
        """Maximum repetition level."""
        return self.rep_level

    @property
    def nested(self) -> bool:
        """Whether the leaf sits under a struct, list or map."""
        return len(self.path) > 1

    @property
    def def_width(self) -> int:
        """Bit width of this leaf's definition levels (0 when it has none)."""
        return self.max_def.bit_length()

    @property
    def rep_width(self) -> int:
        """Bit width of this leaf's repetition levels (0 when it has none)."""
        return self.max_rep.bit_length()

    @property
    def fixed_width(self) -> bool:
        """Whether the encoders hold the values as one fixed-width array (else offsets + bytes)."""
        return self.kind in FIXED_KINDS

    @property
    def repetition_type(self) -> FieldRepetitionType:
        """REQUIRED, OPTIONAL or REPEATED (the element of a legacy 2-level list)."""
        if self.repetition >= 0:
            return FieldRepetitionType(self.repetition)
        return OPTIONAL if self.nullable else REQUIRED

    @property
    def is_decimal(self) -> bool:
        """Whether the leaf carries a DECIMAL annotation."""
        return self.logical is not None and self.logical.kind == "DECIMAL"


@dataclass(frozen=True)
class Group:
    """A struct, list or map node (or the repeated group inside a list or map)."""

    name: str
    repetition: FieldRepetitionType
    children: tuple[Group | Leaf, ...]
    converted: ConvertedType | None = None  # LIST, MAP or MAP_KEY_VALUE
    logical: str | None = None  # "LIST" or "MAP"
    field_id: int | None = None  # from the Arrow field's PARQUET:field_id metadata (Iceberg ids)


FIELD_ID_KEY = b"PARQUET:field_id"


def field_id_of(f: pa.Field, dotted: str) -> int | None:
    """The field id in an Arrow field's `PARQUET:field_id` metadata (as pyarrow and pyiceberg write it), or None."""
    raw = (f.metadata or {}).get(FIELD_ID_KEY)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        raise UnsupportedTypeError(f"column {dotted!r}: PARQUET:field_id metadata {raw!r} is not an integer") from None


def min_bytes_for_precision(precision: int) -> int:
    """Smallest n with 2**(8n-1) >= 10**precision (Spark's minBytesForPrecision)."""
    n = 1
    while 2 ** (8 * n - 1) < 10**precision:
        n += 1
    return n


@dataclass(frozen=True)
class SchemaOptions:
    """The write options that shape the Parquet schema (the rest shape only the bytes of the values)."""

    legacy_format: bool  # SPEC: SQLConf.PARQUET_WRITE_LEGACY_FORMAT: FLBA decimals, Spark 1.4 lists and maps
    timestamp_type: str  # SPEC: SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE: how zoned timestamps are stored

    @classmethod
    def of(cls, opts: WriteOptions) -> SchemaOptions:
        """The projection of `opts`, built once per schema."""
        return cls(opts.legacy_format, opts.timestamp_type)


def value_type(t: pa.DataType) -> pa.DataType:
    """The type whose values are written: a dictionary column's value type, else t."""
    return t.value_type if pa.types.is_dictionary(t) else t


def leaf_for_field(f: pa.Field, index: int, shape: SchemaOptions, path: str | None = None) -> Leaf:
    """Map one Arrow field to its Parquet leaf, or raise UnsupportedTypeError naming column and type, and the
    cast that fixes it (`path`: the dotted column path the hint names, default the field's name)."""
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
        return _decimal_leaf(f, t, common, shape.legacy_format)
    if pa.types.is_date32(t):
        return Leaf(physical=INT32, kind="int32", spark_type="date", converted=CT_DATE, logical=Logical("DATE"),
                    **common)
    if pa.types.is_timestamp(t):
        return _timestamp_leaf(t, common, shape.timestamp_type)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return Leaf(physical=BYTE_ARRAY, kind="bytes", spark_type="string", converted=CT_UTF8,
                    logical=Logical("STRING"), **common)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return Leaf(physical=BYTE_ARRAY, kind="bytes", spark_type="binary", **common)
    raise UnsupportedTypeError(f"column {f.name!r}: Arrow type {f.type} is not supported by gpuwrite "
                               f"(Spark has no Parquet mapping for it here){cast_hint(t, path or f.name)}")


_LISTS = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)


def is_nested_type(t: pa.DataType) -> bool:
    """Struct, list, large list, fixed-size list or map."""
    return pa.types.is_struct(t) or pa.types.is_map(t) or any(f(t) for f in _LISTS)


class _Converter:
    """Builds the Parquet nodes, leaves and Spark types of one top-level field, depth first."""

    def __init__(self, index: int, shape: SchemaOptions) -> None:
        self.index = index
        self.shape = shape
        self.leaves: list[Leaf] = []

    def convert(self, f: pa.Field, name: str, path: tuple[str, ...], d: int, r: int,
                steps: tuple[tuple[Any, ...], ...], *,
                repetition: FieldRepetitionType | None = None) -> tuple[Group | Leaf, Any]:
        """The node for field `f` (written as `name`) below `path`, with its Spark type."""
        t = value_type(f.type)
        here = (*path, name)
        rep = repetition if repetition is not None else (OPTIONAL if f.nullable else REQUIRED)
        optional = rep == OPTIONAL
        d_here = d + (1 if optional else 0)
        steps = (*steps, ("node", optional))
        dotted = ".".join(here)
        fid = field_id_of(f, dotted)
        if pa.types.is_dictionary(f.type) and is_nested_type(t):
            raise UnsupportedTypeError(f"column {dotted!r}: dictionary-encoded {t} is not supported")
        if pa.types.is_struct(t):
            if t.num_fields == 0:
                raise UnsupportedTypeError(f"column {dotted!r}: an empty struct has no Parquet representation "
                                           "(Spark refuses it too)")
            children, fields = [], []
            for i in range(t.num_fields):
                child = t.field(i)
                node, spark = self.convert(child, child.name, here, d_here, r, (*steps, ("field", i)))
                children.append(node)
                fields.append({"name": child.name, "type": spark, "nullable": child.nullable,
                               "metadata": spark_field_metadata(child)})
            return Group(name, rep, tuple(children), field_id=fid), {"type": "struct", "fields": fields}
        if any(is_list(t) for is_list in _LISTS):
            elem = t.value_field
            kind = "fixed" if pa.types.is_fixed_size_list(t) else "list"
            inner = (*steps, (kind, r + 1) if kind == "list" else (kind, r + 1, t.list_size))
            legacy = self.shape.legacy_format
            if not legacy:
                node, spark = self.convert(elem, "element", (*here, "list"), d_here + 1, r + 1, inner)
                group = Group(name, rep, (Group("list", REPEATED, (node,)),), CT_LIST, "LIST", fid)
            elif elem.nullable:
                node, spark = self.convert(elem, "array", (*here, "bag"), d_here + 1, r + 1, inner)
                group = Group(name, rep, (Group("bag", REPEATED, (node,)),), CT_LIST, "LIST", fid)
            else:  # SPEC: Spark's legacy 2-level list: the element itself is the repeated field
                node, spark = self.convert(elem, "array", here, d_here + 1, r + 1, inner, repetition=REPEATED)
                group = Group(name, rep, (node,), CT_LIST, "LIST", fid)
            return group, {"type": "array", "elementType": spark, "containsNull": elem.nullable}
        if pa.types.is_map(t):
            key, item = t.key_field, t.item_field
            inner = (*steps, ("map", r + 1))
            kv = (*here, "key_value")
            knode, kspark = self.convert(key, "key", kv, d_here + 1, r + 1, (*inner, ("field", 0)),
                                         repetition=REQUIRED)
            vnode, vspark = self.convert(item, "value", kv, d_here + 1, r + 1, (*inner, ("field", 1)))
            entries = Group("key_value", REPEATED, (knode, vnode),
                            CT_MAP_KEY_VALUE if self.shape.legacy_format else None)
            return (Group(name, rep, (entries,), CT_MAP, "MAP", fid),
                    {"type": "map", "keyType": kspark, "valueType": vspark, "valueContainsNull": item.nullable})
        if pa.types.is_union(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
            raise UnsupportedTypeError(f"column {dotted!r}: Arrow type {t} is not supported by gpuwrite "
                                       "(Spark has no Parquet mapping for it)")
        if pa.types.is_null(t) and not f.nullable:  # a map whose keys are typed null (DuckDB's MAP())
            raise UnsupportedTypeError(f"column {dotted!r}: Arrow type null is not supported by gpuwrite (Spark has "
                                       "no Parquet mapping for it, and a map's keys can never be null); cast the "
                                       "keys to the type they stand for, e.g. string")
        try:
            leaf = leaf_for_field(pa.field(name, f.type, f.nullable), self.index, self.shape, dotted)
        except UnsupportedTypeError as err:
            if len(here) == 1:
                raise
            raise UnsupportedTypeError(str(err).replace(f"column {name!r}", f"column {dotted!r}", 1)) from None
        if len(here) > 1:
            leaf = replace(leaf, nested_path=here, def_level=d_here, rep_level=r, repetition=rep, steps=steps,
                           nullable=rep == OPTIONAL)
        if fid is not None:
            leaf = replace(leaf, field_id=fid)
        self.leaves.append(leaf)
        return leaf, leaf.spark_type


def _decimal_leaf(f: pa.Field, t: pa.DataType, common: dict, legacy_format: bool) -> Leaf:
    """DECIMAL on INT32 / INT64 / FIXED_LEN_BYTE_ARRAY by precision, as Spark (all FLBA in legacy format)."""
    p, s = t.precision, t.scale
    if p > 38:
        raise UnsupportedTypeError(f"column {f.name!r}: {t} has precision {p}; Spark decimals allow at most 38")
    if s < 0:
        raise UnsupportedTypeError(f"column {f.name!r}: {t} has a negative scale, which Spark does not allow")
    dec = {"converted": CT_DECIMAL, "logical": Logical("DECIMAL", precision=p, scale=s),
           "decimal_precision": p, "decimal_scale": s, "spark_type": f"decimal({p},{s})"}
    if p <= 9 and not legacy_format:
        return Leaf(physical=INT32, kind="int32", **dec, **common)
    if p <= 18 and not legacy_format:
        return Leaf(physical=INT64, kind="int64", **dec, **common)
    return Leaf(physical=FIXED_LEN_BYTE_ARRAY, kind="flba", type_length=min_bytes_for_precision(p), **dec, **common)


def _timestamp_leaf(t: pa.TimestampType, common: dict, timestamp_type: str) -> Leaf:
    """Zoned timestamps follow outputTimestampType (INT96 by default); zone-less ones are Spark's TIMESTAMP_NTZ."""
    if t.tz is None:
        return Leaf(physical=INT64, kind="int64", spark_type="timestamp_ntz", converted=CT_TIMESTAMP_MICROS,
                    logical=Logical("TIMESTAMP", unit="MICROS", adjusted_to_utc=False), **common)
    if timestamp_type == "INT96":
        return Leaf(physical=INT96, kind="int96", spark_type="timestamp", **common)
    if timestamp_type == "TIMESTAMP_MILLIS":
        return Leaf(physical=INT64, kind="int64", spark_type="timestamp", converted=CT_TIMESTAMP_MILLIS,
                    logical=Logical("TIMESTAMP", unit="MILLIS", adjusted_to_utc=True), **common)
    return Leaf(physical=INT64, kind="int64", spark_type="timestamp", converted=CT_TIMESTAMP_MICROS,
                logical=Logical("TIMESTAMP", unit="MICROS", adjusted_to_utc=True), **common)


SCHEMA_MEMO = 32  # schemas whose mapping `FileSchema.from_arrow` keeps


@dataclass(frozen=True)
class FileSchema:
    """The Arrow schema being written and its Parquet leaves."""

    arrow: pa.Schema
    leaves: tuple[Leaf, ...]
    roots: tuple[Group | Leaf, ...] = ()
    spark_types: tuple[Any, ...] = ()

    @classmethod
    def from_arrow(cls, schema: pa.Schema, opts: WriteOptions) -> FileSchema:
        """Map every field (nested ones to groups); unsupported types are refused naming the column path.

        The mapping is kept for the process (the last `SCHEMA_MEMO` schemas, keyed by their IPC bytes, which hold
        every field's type, nullability and metadata, and by the options that shape it): a program writing many
        files of one schema (a dataset's partitions, a job's tasks) maps it once, not 10 us a column a file."""
        shape = SchemaOptions.of(opts)
        key = (schema.serialize().to_pybytes(), shape)
        with _MAPPED_LOCK:
            found = _MAPPED.get(key)
            if found is not None:
                _MAPPED.move_to_end(key)
                return found  # (its `arrow` equals `schema`, metadata included: the same IPC bytes)
        mapped = cls._map(schema, shape)  # (an unsupported type raises here, and nothing is kept)
        with _MAPPED_LOCK:
            _MAPPED[key] = mapped
            if len(_MAPPED) > SCHEMA_MEMO:
                _MAPPED.popitem(last=False)
        return mapped

    @classmethod
    def _map(cls, schema: pa.Schema, shape: SchemaOptions) -> FileSchema:
        """`from_arrow` without the memo."""
        names = [f.name for f in schema]
        if not names:
            raise UnsupportedTypeError("the schema has no columns: a Parquet file needs at least one column")
        dupes = sorted(n for n, times in Counter(names).items() if times > 1)  # linear: wide schemas
        if dupes:
            raise UnsupportedTypeError(f"duplicate column name {dupes[0]!r}: Parquet column paths must be unique")
        leaves: list[Leaf] = []
        roots, spark_types = [], []
        for i, f in enumerate(schema):
            conv = _Converter(i, shape)
            node, spark = conv.convert(f, f.name, (), 0, 0, ())
            roots.append(node)
            spark_types.append(spark)
            leaves.extend(conv.leaves)
        return cls(schema, tuple(leaves), tuple(roots), tuple(spark_types))

    def spark_row_metadata(self) -> str:
        """Spark's StructType JSON for org.apache.spark.sql.parquet.row.metadata (compact, Spark's key order)."""
        return self._spark_row_json

    @cached_property
    def _spark_row_json(self) -> str:
        """`spark_row_metadata`, built once per schema (a memoized schema's files share it)."""
        fields = [{"name": f.name, "type": spark, "nullable": f.nullable, "metadata": spark_field_metadata(f)}
                  for f, spark in zip(self.arrow, self.spark_types, strict=True)]
        return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"), ensure_ascii=False)


_MAPPED: OrderedDict[tuple[bytes, SchemaOptions], FileSchema] = OrderedDict()
_MAPPED_LOCK = threading.Lock()  # (writers in several threads share the memo)
