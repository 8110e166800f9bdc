"""pyarrow's other `pq.write_table` / `pq.ParquetWriter` keywords: what gpuwrite does with each.

A keyword is accepted with pyarrow's meaning where gpuwrite can honour it (translated to WriteOptions fields,
or nothing when it asks for what gpuwrite writes anyway), and refused otherwise with a sentence saying what
gpuwrite writes instead: a known pyarrow keyword is never an "unknown option" pointing at an unrelated one.
`row_group_size`, `data_page_size`, `use_dictionary`, `write_statistics` and `compression` are in `aliases`;
`allow_truncated_timestamps` and `compression_level` are WriteOptions fields of the same name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from ..errors import OptionError

# SPEC: pyarrow's BloomFilterOptions defaults (pq.write_table's bloom_filter_options)
PYARROW_BLOOM_NDV = 1_048_576
PYARROW_BLOOM_FPP = 0.05

Fields = dict[str, Any]
Rule = Callable[[Any, Mapping[str, Any]], Fields]
V2_ONLY = ("gpuwrite writes Parquet format 2 files with DATA_PAGE_V2 pages only, as parquet-java does with "
           "PARQUET_2_0 (parquet.writer.version=v2, Spark's layout)")


def _refuse(name: str, value: Any, instead: str) -> OptionError:
    """The refusal of `name=value`: what gpuwrite does instead."""
    return OptionError(f"option {name}={value!r} is not supported: {instead}")


def _bool(name: str, value: Any) -> bool:
    """`value` when it is a bool, else an OptionError naming the keyword."""
    if not isinstance(value, bool):
        raise OptionError(f"option {name} must be True or False, got {value!r}")
    return value


def _only(name: str, accepted: bool | str, instead: str) -> Rule:
    """A keyword gpuwrite takes only with the value it writes anyway (`accepted`; False also as an empty list
    or dict, for the keywords pyarrow also gives columns or settings): others are refused."""
    def rule(value: Any, keywords: Mapping[str, Any]) -> Fields:
        empty = accepted is False and isinstance(value, (Mapping, list, tuple, AbstractSet)) and not value
        if not (empty or value is accepted or (isinstance(accepted, str) and value == accepted)):
            raise _refuse(name, value, instead)
        return {}
    return rule


def _refused(name: str, instead: str) -> Rule:
    """A keyword gpuwrite cannot honour with any value."""
    def rule(value: Any, keywords: Mapping[str, Any]) -> Fields:
        raise _refuse(name, value, instead)
    return rule


def _field(field: str) -> Rule:
    """A keyword that is another name for one WriteOptions field."""
    return lambda value, keywords: {field: value}


def _version(value: Any, keywords: Mapping[str, Any]) -> Fields:
    """version: the Parquet format version pyarrow writes ('1.0', '2.4', '2.6')."""
    if value in ("2.4", "2.6"):
        return {}  # gpuwrite's types are all in format 2.4; the footer's version field stays parquet-java's 1
    if value == "1.0":
        raise _refuse("version", value, f"{V2_ONLY}; format 1.0 lacks the logical types Spark's schema uses "
                      "(TIMESTAMP_NTZ among them): write such files with pyarrow")
    raise OptionError(f"option version={value!r} is not a Parquet format version pyarrow writes ('1.0', '2.4', "
                      "'2.6'); gpuwrite writes what '2.6' means, so leave it out")


def _data_page_version(value: Any, keywords: Mapping[str, Any]) -> Fields:
    """data_page_version: pyarrow's data page format ('1.0' DATA_PAGE, '2.0' DATA_PAGE_V2)."""
    if value == "2.0":
        return {}
    if value == "1.0":
        raise _refuse("data_page_version", value, f"{V2_ONLY}; v1 pages are not written")
    raise OptionError(f"option data_page_version={value!r} is not one of '1.0', '2.0' (gpuwrite writes '2.0')")


def _int96(value: Any, keywords: Mapping[str, Any]) -> Fields:
    """use_deprecated_int96_timestamps: True is INT96 (timestamp_type); False is INT64, in coerce_timestamps'
    unit when it is given, else microseconds."""
    if _bool("use_deprecated_int96_timestamps", value):
        return {"timestamp_type": "INT96"}
    return {} if keywords.get("coerce_timestamps") is not None else {"timestamp_type": "TIMESTAMP_MICROS"}


_COERCED = {"us": "TIMESTAMP_MICROS", "ms": "TIMESTAMP_MILLIS"}


def _coerce(value: Any, keywords: Mapping[str, Any]) -> Fields:
    """coerce_timestamps: 'us' / 'ms' is timestamp_type TIMESTAMP_MICROS / _MILLIS (pyarrow: INT96 wins)."""
    if value not in _COERCED:
        raise _refuse("coerce_timestamps", value, "timestamps are written as Spark writes them: INT96 (the "
                      "default), or INT64 microseconds ('us') or milliseconds ('ms') for timestamps with a time "
                      "zone (timestamp_type); timestamps without one are INT64 microseconds (TIMESTAMP_NTZ)")
    return {} if keywords.get("use_deprecated_int96_timestamps") is True else {"timestamp_type": _COERCED[value]}


def _bloom(value: Any, keywords: Mapping[str, Any]) -> Fields:
    """bloom_filter_options: {column: True | False | {"ndv": n, "fpp": p}}, pyarrow's defaults where a
    column's dict leaves one out (ndv 1048576, fpp 0.05)."""
    if not isinstance(value, Mapping) or not all(isinstance(c, str) and c for c in value):
        raise OptionError(f"option bloom_filter_options must map column paths to True, False or "
                          f"{{'ndv': n, 'fpp': p}}, got {value!r}")
    columns: dict[str, bool] = {}
    ndv: dict[str, int] = {}
    fpp: dict[str, float] = {}
    for column, spec in value.items():
        if spec is False:
            columns[column] = False
            continue
        if spec is True:
            spec = {}
        if not isinstance(spec, Mapping) or set(spec) - {"ndv", "fpp"}:
            raise OptionError(f"option bloom_filter_options[{column!r}] must be True, False or a dict with "
                              f"'ndv' and / or 'fpp', got {spec!r}")
        columns[column] = True
        ndv[column] = spec.get("ndv", PYARROW_BLOOM_NDV)
        fpp[column] = spec.get("fpp", PYARROW_BLOOM_FPP)
    return {"bloom_filter_columns": columns, "bloom_filter_ndv": ndv, "bloom_filter_fpp": fpp}


def _none_or_empty(name: str, instead: str) -> Rule:
    """A keyword gpuwrite takes only empty (a mapping or list naming nothing)."""
    def rule(value: Any, keywords: Mapping[str, Any]) -> Fields:
        if isinstance(value, (Mapping, list, tuple, AbstractSet)) and not value:
            return {}
        raise _refuse(name, value, instead)
    return rule


def _ignored(value: Any, keywords: Mapping[str, Any]) -> Fields:
    """A keyword pyarrow itself ignores."""
    return {}


def _time_utc(value: Any, keywords: Mapping[str, Any]) -> Fields:
    """write_time_adjusted_to_utc: only TIME columns read it, and gpuwrite refuses those (Spark has no TIME)."""
    _bool("write_time_adjusted_to_utc", value)
    return {}


_NO_BSS = ("gpuwrite encodes values as parquet-java's v2 writers do: dictionary first, then DELTA_BINARY_PACKED / "
           "DELTA_BYTE_ARRAY or PLAIN (fallback_encoding); BYTE_STREAM_SPLIT is not among them")
_ENCODINGS = ("gpuwrite chooses each column's encodings as parquet-java does; turn the dictionary off per "
              "column with use_dictionary=[columns] or column_dictionary, and choose PLAIN over DELTA_* with "
              "fallback_encoding='plain'")

# pyarrow keyword -> (the WriteOptions fields it can set, how it translates)
RULES: dict[str, tuple[tuple[str, ...], Rule]] = {
    "version": ((), _version),
    "data_page_version": ((), _data_page_version),
    "use_deprecated_int96_timestamps": (("timestamp_type",), _int96),
    "coerce_timestamps": (("timestamp_type",), _coerce),
    "flavor": ((), _only("flavor", "spark", "pyarrow's one flavor is 'spark', and gpuwrite always writes "
                         "Spark's layout (INT96 timestamps unless timestamp_type says otherwise)")),
    "dictionary_pagesize_limit": (("dictionary_page_size",), _field("dictionary_page_size")),
    "write_page_checksum": (("page_checksum",), _field("page_checksum")),
    "max_rows_per_page": (("page_row_count_limit",), _field("page_row_count_limit")),
    "bloom_filter_options": (("bloom_filter_columns", "bloom_filter_ndv", "bloom_filter_fpp"), _bloom),
    "write_page_index": ((), _only("write_page_index", True, "gpuwrite writes a column index and an offset "
                                   "index for every column chunk, as Spark's writer does")),
    "store_schema": ((), _only("store_schema", False, "gpuwrite stores Spark's schema in the footer "
                               "(org.apache.spark.sql.parquet.row.metadata), not Arrow's (ARROW:schema); "
                               "readers take Arrow types from the Parquet schema")),
    "use_compliant_nested_type": ((), _only("use_compliant_nested_type", True, "lists are written as Spark "
                                            "writes them: the spec's three levels with an 'element' field (or "
                                            "Spark 1.4's layout with legacy_format=True)")),
    "store_decimal_as_integer": ((), _only("store_decimal_as_integer", True, "decimals are written as Spark "
                                           "writes them: INT32 / INT64 up to 18 digits, FIXED_LEN_BYTE_ARRAY above "
                                           "(all FIXED_LEN_BYTE_ARRAY with legacy_format=True)")),
    "use_byte_stream_split": ((), _only("use_byte_stream_split", False, _NO_BSS)),
    "column_encoding": ((), _none_or_empty("column_encoding", _ENCODINGS)),
    "sorting_columns": ((), _none_or_empty("sorting_columns", "gpuwrite records no sort order in row groups "
                                           "(Spark's writer does not); sort the rows before writing: readers "
                                           "prune by statistics and the column index either way")),
    "encryption_properties": ((), _none_or_empty("encryption_properties", "gpuwrite does not encrypt files "
                                                 "(Parquet modular encryption); encrypt at the storage layer")),
    "write_batch_size": ((), _refused("write_batch_size", "gpuwrite checks page sizes where parquet-java does, "
                                      "every page_size_check_min to page_size_check_max rows; bound pages with "
                                      "data_page_size or max_rows_per_page (page_row_count_limit)")),
    "use_content_defined_chunking": ((), _only("use_content_defined_chunking", False, "pages end where "
                                               "parquet-java ends them (data_page_size, max_rows_per_page)")),
    "write_time_adjusted_to_utc": ((), _time_utc),
    "writer_engine_version": ((), _ignored),
}
PYARROW_KEYWORDS: dict[str, tuple[str, ...]] = {name: fields for name, (fields, _) in RULES.items()}


def pyarrow_fields(name: str, value: Any, keywords: Mapping[str, Any]) -> Fields:
    """The WriteOptions fields pyarrow keyword `name=value` sets (`keywords`: all given, for the keywords read
    together); an OptionError saying what gpuwrite does instead when it cannot honour it."""
    return RULES[name][1](value, keywords)
