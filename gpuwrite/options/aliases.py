"""pyarrow's names for write options, translated to WriteOptions fields, and "did you mean" for unknown names.

pyarrow's `pq.write_table` keywords mean what they mean there: `row_group_size` counts rows (parquet-java's
`parquet.block.row.count.limit`; `block_size` stays the byte size), `data_page_size` is `page_size` in bytes,
`use_dictionary` is a bool or the list of columns to dictionary-encode, `write_statistics=True` is what gpuwrite
always does, and `compression=None` writes uncompressed. `column_list` reads a string as one column name, where
a list of names is expected (so `partition_by="year"` is `["year"]`, not the columns y, e, a, r). pyarrow's
other keywords (`version`, `coerce_timestamps`, `store_schema`...) are accepted or explained in
`pyarrow_keywords`.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from ..errors import OptionError
from .pyarrow_keywords import PYARROW_KEYWORDS, pyarrow_fields


class Unset(enum.Enum):
    """The default of `compression` in the public signatures: not given, so the `options` keys decide (else
    snappy). It exists because `compression=None` means uncompressed, as in pyarrow."""

    UNSET = "unset"

    def __repr__(self) -> str:
        return "UNSET"


UNSET = Unset.UNSET

# alias -> the WriteOptions field(s) it sets, for the "give one of" conflict check
ALIASES: dict[str, tuple[str, ...]] = {
    "row_group_size": ("block_row_count_limit",),
    "data_page_size": ("page_size",),
    "use_dictionary": ("enable_dictionary", "column_dictionary"),
    "write_statistics": (),
    **PYARROW_KEYWORDS,
}


def suggestion(name: str, known: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest known name (difflib), or '' when none is close."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def column_list(name: str, value: Any) -> list[str]:
    """A list of column names from a list, tuple or set of strings, or one string (one column)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, AbstractSet)) and all(isinstance(c, str) for c in value):
        return list(value)
    raise OptionError(f"option {name} must be a column name or a list of column names, got {value!r}")


def translate(keywords: Mapping[str, Any], fields: AbstractSet[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Keywords as WriteOptions fields: pyarrow's aliases translated, `compression=None` as uncompressed, not
    given values (None, UNSET) dropped; unknown names raise OptionError with the closest known name. Also
    returns, for fields set through an alias, the alias (so errors name what the user wrote)."""
    out: dict[str, Any] = {}
    sources: dict[str, str] = {}  # field -> the keyword that set it
    for name, value in keywords.items():
        if name not in fields and name not in ALIASES:
            raise OptionError(f"unknown option {name!r}{suggestion(name, [*fields, *ALIASES])}")
        if value is UNSET:
            continue
        if name == "compression" and value is None:
            out[name] = "uncompressed"  # pyarrow's compression=None
        elif name == "compression" and isinstance(value, Mapping):
            raise OptionError("option compression: a codec per column is not supported (parquet-java writes one "
                              "codec for the whole file); give one codec name")
        elif value is None:
            continue
        elif name in ALIASES:
            for field, field_value in _alias(name, value, keywords).items():
                _set(out, sources, name, field, field_value)
        else:
            _set(out, sources, name, name, value)
    return out, {field: name for field, name in sources.items() if field != name}


def _set(out: dict[str, Any], sources: dict[str, str], name: str, field: str, value: Any) -> None:
    """out[field] = value, unless an alias and the field it stands for were both given."""
    if field in sources and sources[field] != name:
        raise OptionError(f"options {sources[field]!r} and {name!r} set the same thing ({field}); give one of them")
    sources[field] = name
    out[field] = value


def _alias(name: str, value: Any, keywords: Mapping[str, Any]) -> dict[str, Any]:
    """The WriteOptions fields one pyarrow keyword sets (`keywords`: every keyword given)."""
    if name in PYARROW_KEYWORDS:
        return pyarrow_fields(name, value, keywords)
    if name == "row_group_size":
        return {"block_row_count_limit": value}
    if name == "data_page_size":
        return {"page_size": value}
    if name == "use_dictionary":
        if isinstance(value, bool):
            return {"enable_dictionary": value}
        columns = column_list("use_dictionary", value)
        return {"enable_dictionary": False, "column_dictionary": dict.fromkeys(columns, True)}
    # write_statistics
    if value is True:
        return {}
    if value is False or isinstance(value, (str, Sequence, AbstractSet)):
        raise OptionError(f"option write_statistics={value!r} is not supported: gpuwrite writes min/max/null "
                          "statistics, column and offset indexes for every column, as Spark's writer does "
                          "(a small statistics_truncate_length keeps them short)")
    raise OptionError(f"option write_statistics must be True, got {value!r}")
