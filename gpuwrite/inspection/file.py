"""Describe any Parquet file, footer to page headers and page indexes, as plain JSON data.

`inspect` decodes the footer, walks every column chunk's page headers and reads its column and offset
indexes with gpuwrite's own Thrift reader, so it shows what is on disk (including files other writers made)
without any Parquet library. Enum values are named after `gpuwrite.format.enums`; values a newer spec added
stay ints. Statistics keep their raw bytes as hex, the physical value where obvious, and the logical value
as text (`inspect_values`). A directory is described as a dataset (`inspect_dataset`). The text views are
in `inspect_text`.
"""

from __future__ import annotations

import math
import os
import struct
from typing import IO, Any

from gpuwrite.errors import GpuwriteError
from gpuwrite.format.footer_reader import iter_page_headers, named, read_footer
from gpuwrite.format.thrift import decode_struct

from .dataset import inspect_dataset
from .text import format_inspect, format_summary
from .values import leaves as _leaves
from .values import stat_value

__all__ = ["format_inspect", "format_summary", "inspect", "stat_value"]

_STAT_BYTES = ("min_value", "max_value", "min", "max")
_PAGE_HEADERS = ("data_page_header", "data_page_header_v2", "dictionary_page_header", "index_page_header")


def inspect(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Describe a Parquet file as JSON-ready data: footer, row groups, column chunks, every page header and
    the page indexes; a directory as a dataset (files, partitions, rows, sizes: see `inspect_dataset`). A
    leading `~` is the home directory."""
    path = os.path.expanduser(os.fspath(path))
    if os.path.isdir(path):
        return inspect_dataset(path)
    with open(path, "rb") as f:
        raw = read_footer(f)
        size = f.seek(0, os.SEEK_END)
        f.seek(size - 8)
        footer_length: int = struct.unpack("<I", f.read(4))[0]
        meta = named("FileMetaData", raw, enum_names=True)
        schema = [_schema_element(e) for e in meta.get("schema") or []]
        leaves = _leaves(schema)
        row_groups = [_row_group(f, i, rg_raw, rg, leaves)
                      for i, (rg_raw, rg) in enumerate(zip(raw.get(4) or [], meta.get("row_groups") or [], strict=True))]
    footer: dict[str, Any] = {
        "version": meta.get("version"),
        "num_rows": meta.get("num_rows"),
        "created_by": _text(meta.get("created_by")),
        "key_value_metadata": _key_values(meta.get("key_value_metadata")),
        "schema": schema,
        "column_orders": _column_orders(meta.get("column_orders")),
    }
    known = {"version", "num_rows", "created_by", "key_value_metadata", "schema", "column_orders", "row_groups"}
    footer.update({str(k): _jsonable(v) for k, v in meta.items() if k not in known})
    info = {"path": path, "file_size": size, "footer_length": footer_length, "footer": footer,
            "row_groups": row_groups}
    result: dict[str, Any] = _jsonable(info)
    return result


# -- footer ------------------------------------------------------------------------------------------------


def _text(value: Any) -> Any:
    """Thrift strings arrive as bytes: UTF-8 text (undecodable bytes replaced); other values unchanged."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return value


def _jsonable(value: Any) -> Any:
    """Make decoded Thrift data plain JSON: str keys, bytes as text (or hex if not UTF-8), finite floats."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return {"hex": bytes(value).hex()}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _key_values(entries: Any) -> list[dict[str, Any]]:
    """Key/value metadata as a list of {key, value} (a list: keys may repeat and order may matter)."""
    return [{"key": _text(e.get("key")), "value": _text(e.get("value"))} for e in entries or []]


def _column_orders(orders: Any) -> list[Any] | None:
    """Each leaf's column order as its union member name (TYPE_ORDER, IEEE_754_TOTAL_ORDER, ...)."""
    if orders is None:
        return None
    return [next(iter(o), None) if isinstance(o, dict) and len(o) == 1 else _jsonable(o) for o in orders]


def _schema_element(e: dict[str, Any]) -> dict[str, Any]:
    """One schema node with its name, physical type, repetition and annotations."""
    out = {
        "name": _text(e.get("name")),
        "type": e.get("type"),
        "type_length": e.get("type_length"),
        "repetition": e.get("repetition_type"),
        "num_children": e.get("num_children"),
        "converted_type": e.get("converted_type"),
        "scale": e.get("scale"),
        "precision": e.get("precision"),
        "field_id": e.get("field_id"),
        "logical_type": _jsonable(e.get("logicalType")),
    }
    known = {"name", "type", "type_length", "repetition_type", "num_children", "converted_type", "scale",
             "precision", "field_id", "logicalType"}
    out.update({str(k): _jsonable(v) for k, v in e.items() if k not in known})
    return out


# -- row groups and column chunks --------------------------------------------------------------------------


def _row_group(f: IO[bytes], index: int, raw: dict[int, Any], rg: dict[str, Any],
               leaves: list[dict[str, Any]]) -> dict[str, Any]:
    """One row group: sizes, offsets and its column chunks."""
    columns = []
    for j, (cc_raw, cc) in enumerate(zip(raw.get(1) or [], rg.get("columns") or [], strict=True)):
        leaf = leaves[j] if j < len(leaves) else None
        columns.append(_column_chunk(f, cc_raw, cc, leaf))
    out = {
        "index": index,
        "num_rows": rg.get("num_rows"),
        "total_byte_size": rg.get("total_byte_size"),
        "total_compressed_size": rg.get("total_compressed_size"),
        "file_offset": rg.get("file_offset"),
        "ordinal": rg.get("ordinal"),
        "sorting_columns": _jsonable(rg.get("sorting_columns")),
        "columns": columns,
    }
    known = {"num_rows", "total_byte_size", "total_compressed_size", "file_offset", "ordinal",
             "sorting_columns", "columns"}
    out.update({str(k): _jsonable(v) for k, v in rg.items() if k not in known})
    return out


def _column_chunk(f: IO[bytes], raw: dict[int, Any], cc: dict[str, Any],
                  leaf: dict[str, Any] | None) -> dict[str, Any]:
    """One column chunk: metadata, statistics decoded for its type, and its page headers."""
    md: dict[str, Any] = cc.get("meta_data") or {}
    physical = md.get("type")
    logical = leaf.get("logical_type") if leaf else None
    path = ".".join(_text(p) for p in md.get("path_in_schema") or []) or (leaf or {}).get("path")
    out: dict[str, Any] = {
        "path": path,
        "physical_type": physical,
        "codec": md.get("codec"),
        "encodings": list(md.get("encodings") or []),
        "encoding_stats": _jsonable(md.get("encoding_stats")),
        "num_values": md.get("num_values"),
        "total_compressed_size": md.get("total_compressed_size"),
        "total_uncompressed_size": md.get("total_uncompressed_size"),
        "file_path": _text(cc.get("file_path")),
        "file_offset": cc.get("file_offset"),
        "data_page_offset": md.get("data_page_offset"),
        "dictionary_page_offset": md.get("dictionary_page_offset"),
        "index_page_offset": md.get("index_page_offset"),
        "offset_index_offset": cc.get("offset_index_offset"),
        "offset_index_length": cc.get("offset_index_length"),
        "column_index_offset": cc.get("column_index_offset"),
        "column_index_length": cc.get("column_index_length"),
        "bloom_filter_offset": md.get("bloom_filter_offset"),
        "bloom_filter_length": md.get("bloom_filter_length"),
        "statistics": _statistics(md.get("statistics"), physical, logical, leaf),
        "size_statistics": _jsonable(md.get("size_statistics")),
        "key_value_metadata": _key_values(md.get("key_value_metadata")) if "key_value_metadata" in md else None,
    }
    known_md = {"type", "codec", "encodings", "encoding_stats", "num_values", "total_compressed_size",
                "total_uncompressed_size", "data_page_offset", "dictionary_page_offset", "index_page_offset",
                "bloom_filter_offset", "bloom_filter_length", "statistics", "size_statistics",
                "key_value_metadata", "path_in_schema"}
    out.update({str(k): _jsonable(v) for k, v in md.items() if k not in known_md})
    known_cc = {"meta_data", "file_path", "file_offset", "offset_index_offset", "offset_index_length",
                "column_index_offset", "column_index_length"}
    out.update({str(k): _jsonable(v) for k, v in cc.items() if k not in known_cc})
    pages, error = _pages(f, raw, cc, physical, leaf)
    out["pages"] = pages
    if error is not None:
        out["page_error"] = error
    out["column_index"], out["offset_index"] = _page_indexes(f, cc, physical, leaf)
    return out


def _pages(f: IO[bytes], raw: dict[int, Any], cc: dict[str, Any], physical: Any,
           leaf: dict[str, Any] | None) -> tuple[list[dict[str, Any]], str | None]:
    """Walk a chunk's page headers from its lowest offset past the magic (writers leave some 0); keep errors."""
    if cc.get("file_path"):
        return [], f"column chunk data is in another file ({_text(cc['file_path'])})"
    if not isinstance(raw.get(3), dict):
        return [], "column chunk has no meta_data (encrypted column?)"
    md = dict(raw[3])
    offsets = [o for o in (md.get(9), md.get(11)) if isinstance(o, int) and o >= len(b"PAR1")]
    if offsets:
        md[9] = min(offsets)
    md.pop(11, None)
    pages: list[dict[str, Any]] = []
    try:
        for offset, header, header_len in iter_page_headers(f, md):
            pages.append(_page(offset, header, header_len, physical, leaf))
            if not isinstance(header.get(3), int) or header[3] < 0:
                return pages, f"page at offset {offset} has no valid compressed_page_size"
    except (GpuwriteError, ValueError, KeyError, TypeError, OSError) as exc:
        return pages, str(exc) or type(exc).__name__
    return pages, None


def _page(offset: int, raw: dict[int, Any], header_len: int, physical: Any,
          leaf: dict[str, Any] | None) -> dict[str, Any]:
    """One page header: where it is, its type, sizes, crc and its kind's header fields."""
    h = named("PageHeader", raw, enum_names=True)
    crc = h.get("crc")
    out: dict[str, Any] = {
        "offset": offset,
        "type": h.get("type"),
        "header_size": header_len,
        "compressed_page_size": h.get("compressed_page_size"),
        "uncompressed_page_size": h.get("uncompressed_page_size"),
        "crc": crc & 0xFFFFFFFF if isinstance(crc, int) else crc,
    }
    for kind in _PAGE_HEADERS:
        sub = h.get(kind)
        if isinstance(sub, dict):
            fields = {str(k): _jsonable(v) for k, v in sub.items() if k != "statistics"}
            if "statistics" in sub:
                fields["statistics"] = _statistics(sub["statistics"], physical, None, leaf)
            out[kind] = fields
    known = {"type", "uncompressed_page_size", "compressed_page_size", "crc", *_PAGE_HEADERS}
    out.update({str(k): _jsonable(v) for k, v in h.items() if k not in known})
    return out


# -- statistics and page indexes ------------------------------------------------------------------------


def _statistics(st: Any, physical: Any, logical: Any, leaf: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Statistics with only the fields set; min/max as {'hex', 'value', 'display'} (see stat_value)."""
    if not isinstance(st, dict):
        return None
    if logical is None and leaf is not None:
        logical = leaf.get("logical_type")
    out: dict[str, Any] = {}
    for key, value in st.items():
        if key in _STAT_BYTES and isinstance(value, (bytes, bytearray)):
            out[str(key)] = stat_value(bytes(value), physical, logical, leaf)
        else:
            out[str(key)] = _jsonable(value)
    return out


def _page_indexes(f: IO[bytes], cc: dict[str, Any], physical: Any,
                  leaf: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The chunk's ColumnIndex (per-page min/max decoded like statistics) and OffsetIndex, when it has them."""
    column_index = offset_index = None
    try:
        raw = _read_at(f, cc.get("column_index_offset"), cc.get("column_index_length"))
        if raw is not None:
            ci = named("ColumnIndex", decode_struct(raw), enum_names=True)
            logical = leaf.get("logical_type") if leaf else None
            for key in ("min_values", "max_values"):
                ci[key] = [stat_value(bytes(v), physical, logical, leaf) for v in ci.get(key) or []]
            column_index = _jsonable(ci)
        raw = _read_at(f, cc.get("offset_index_offset"), cc.get("offset_index_length"))
        if raw is not None:
            offset_index = _jsonable(named("OffsetIndex", decode_struct(raw)))
    except (GpuwriteError, ValueError, KeyError, TypeError, OSError) as exc:
        return {"error": str(exc) or type(exc).__name__}, offset_index
    return column_index, offset_index


def _read_at(f: IO[bytes], offset: Any, length: Any) -> bytes | None:
    """`length` bytes at `offset`, or None when either is unset."""
    if not isinstance(offset, int) or not isinstance(length, int) or length <= 0:
        return None
    f.seek(offset)
    return f.read(length)
