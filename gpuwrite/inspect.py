"""Describe any Parquet file, footer to page headers, as plain JSON data and as text for people.

`inspect` decodes the footer and walks every column chunk's page headers with gpuwrite's own Thrift
reader, so it shows what is on disk (including files other writers made) without any Parquet library.
Enum values are named after `gpuwrite.format.enums`; values a newer spec added stay ints. Statistics keep
their raw bytes as hex and, where the physical type makes it obvious, a decoded value.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Iterable, Sequence
from typing import IO, Any

from gpuwrite.errors import GpuwriteError
from gpuwrite.format.footer_reader import iter_page_headers, named, read_footer

_FIXED_FORMATS = {"INT32": "<i", "INT64": "<q", "FLOAT": "<f", "DOUBLE": "<d", "BOOLEAN": "<?"}
_STAT_BYTES = ("min_value", "max_value", "min", "max")
_PAGE_HEADERS = ("data_page_header", "data_page_header_v2", "dictionary_page_header", "index_page_header")


def inspect(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Describe a Parquet file as JSON-ready data: footer, row groups, column chunks and every page header."""
    path = os.fspath(path)
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


def _leaves(schema: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The leaf schema elements in column order (depth-first), each with its dotted path added."""
    leaves: list[dict[str, Any]] = []
    pos = 1

    def walk(prefix: tuple[str, ...], children: int) -> None:
        nonlocal pos
        for _ in range(children):
            if pos >= len(schema):
                return
            element = schema[pos]
            pos += 1
            path = (*prefix, str(element["name"]))
            if element.get("num_children"):
                walk(path, int(element["num_children"]))
            else:
                leaves.append({**element, "path": ".".join(path)})

    if schema:
        walk((), int(schema[0].get("num_children") or 0))
    return leaves


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
        "statistics": _statistics(md.get("statistics"), physical, logical),
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
    pages, error = _pages(f, raw, cc, physical, logical)
    out["pages"] = pages
    if error is not None:
        out["page_error"] = error
    return out


def _pages(f: IO[bytes], raw: dict[int, Any], cc: dict[str, Any], physical: Any,
           logical: Any) -> tuple[list[dict[str, Any]], str | None]:
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
            pages.append(_page(offset, header, header_len, physical, logical))
            if not isinstance(header.get(3), int) or header[3] < 0:
                return pages, f"page at offset {offset} has no valid compressed_page_size"
    except (GpuwriteError, ValueError, KeyError, TypeError, OSError) as exc:
        return pages, str(exc) or type(exc).__name__
    return pages, None


def _page(offset: int, raw: dict[int, Any], header_len: int, physical: Any, logical: Any) -> dict[str, Any]:
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
                fields["statistics"] = _statistics(sub["statistics"], physical, logical)
            out[kind] = fields
    known = {"type", "uncompressed_page_size", "compressed_page_size", "crc", *_PAGE_HEADERS}
    out.update({str(k): _jsonable(v) for k, v in h.items() if k not in known})
    return out


# -- statistics --------------------------------------------------------------------------------------------


def _statistics(st: Any, physical: Any, logical: Any) -> dict[str, Any] | None:
    """Statistics with only the fields set; min/max as {'hex', 'value'} (value when it decodes)."""
    if not isinstance(st, dict):
        return None
    out: dict[str, Any] = {}
    for key, value in st.items():
        if key in _STAT_BYTES and isinstance(value, (bytes, bytearray)):
            out[str(key)] = stat_value(bytes(value), physical, logical)
        else:
            out[str(key)] = _jsonable(value)
    return out


def stat_value(raw: bytes, physical: Any, logical: Any = None) -> dict[str, Any]:
    """A PLAIN-encoded statistics value as {'hex': ..., 'value': ...}; 'value' only if the type is obvious."""
    out: dict[str, Any] = {"hex": raw.hex()}
    fmt = _FIXED_FORMATS.get(physical) if isinstance(physical, str) else None
    if fmt is None and physical == "FIXED_LEN_BYTE_ARRAY" and isinstance(logical, dict) and "FLOAT16" in logical:
        fmt = "<e"
    if fmt is not None:
        if len(raw) == struct.calcsize(fmt):
            value = struct.unpack(fmt, raw)[0]
            out["value"] = str(value) if isinstance(value, float) and not math.isfinite(value) else value
    elif physical == "BYTE_ARRAY":
        try:
            out["value"] = raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return out


# -- text --------------------------------------------------------------------------------------------------


def format_inspect(info: dict[str, Any]) -> str:
    """Render `inspect`'s description for people: footer, schema, then each chunk with one line per page."""
    lines: list[str] = []
    footer = info["footer"]
    groups = info["row_groups"]
    leaves = _leaves(footer["schema"])
    lines.append(f"file {info['path']}: {info['file_size']:,} bytes, footer {info['footer_length']:,} bytes")
    lines.append(f"format version {footer['version']}, created by {footer['created_by'] or '(not set)'}")
    lines.append(f"{_n(footer['num_rows'])} rows in {len(groups)} row group(s), {len(leaves)} leaf column(s)")
    extra = {k: v for k, v in footer.items() if k not in
             ("version", "num_rows", "created_by", "key_value_metadata", "schema", "column_orders")}
    for key, value in extra.items():
        lines.append(f"{key}: {_short(value)}")
    if footer["key_value_metadata"]:
        lines.append("key/value metadata:")
        width = max(len(str(kv["key"])) for kv in footer["key_value_metadata"])
        for kv in footer["key_value_metadata"]:
            lines.append(f"  {str(kv['key']):<{width}}  {_short(kv['value'], 90)}")
    lines.append("schema:")
    lines.extend(_schema_lines(footer["schema"]))
    orders = footer["column_orders"]
    if orders is not None:
        distinct = sorted({str(o) for o in orders})
        lines.append("column orders: " + ", ".join(f"{o} x{sum(1 for x in orders if str(x) == o)}"
                                                    for o in distinct))
    for rg in groups:
        lines.append("")
        lines.append(f"row group {rg['index']}: {_n(rg['num_rows'])} rows, {_n(rg['total_byte_size'])} bytes "
                     f"uncompressed, {_n(rg['total_compressed_size'])} compressed, offset {_n(rg['file_offset'])}")
        for cc in rg["columns"]:
            lines.extend(_chunk_lines(cc))
    return "\n".join(lines)


def _n(value: Any) -> str:
    """An int with thousands separators; '-' for a missing value."""
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _short(value: Any, limit: int = 40) -> str:
    """A value as one line, cut to `limit` characters with the full length noted."""
    text = str(value).replace("\n", "\\n")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} chars)"


def _annotation(element: dict[str, Any]) -> str:
    """A schema node's logical type (or converted type) as text, e.g. DECIMAL(7,2) or TIMESTAMP(MICROS,UTC)."""
    logical = element.get("logical_type")
    if isinstance(logical, dict) and len(logical) == 1:
        name, params = next(iter(logical.items()))
        if str(name).isdigit():
            return f"logical type #{name} (unknown to this reader)"
        if name == "DECIMAL" and isinstance(params, dict):
            return f"DECIMAL({params.get('precision')},{params.get('scale')})"
        if name in ("TIMESTAMP", "TIME") and isinstance(params, dict):
            unit = params.get("unit")
            unit_name = next(iter(unit)) if isinstance(unit, dict) and unit else "?"
            utc = "UTC" if params.get("isAdjustedToUTC") else "local"
            return f"{name}({unit_name},{utc})"
        if name == "INTEGER" and isinstance(params, dict):
            return f"INTEGER({params.get('bitWidth')},{'signed' if params.get('isSigned') else 'unsigned'})"
        return str(name)
    if logical is not None:
        return _short(logical)
    converted = element.get("converted_type")
    if converted == "DECIMAL":
        return f"DECIMAL({element.get('precision')},{element.get('scale')}) (converted type)"
    return f"{converted} (converted type)" if converted is not None else ""


def _schema_lines(schema: list[dict[str, Any]]) -> list[str]:
    """The schema tree, indented by depth, one node a line."""
    rows: list[list[str]] = []
    stack: list[int] = []
    for i, e in enumerate(schema):
        depth = len(stack)
        if stack:
            stack[-1] -= 1
        if e.get("num_children"):
            stack.append(int(e["num_children"]))
        while stack and stack[-1] == 0:
            stack.pop()
        name = "  " * depth + str(e["name"])
        if i == 0 or e.get("num_children"):
            kind = f"group ({e.get('num_children') or 0} children)"
        else:
            kind = str(e["type"]) + (f"({e['type_length']})" if e.get("type_length") else "")
        note = [_annotation(e)]
        if e.get("field_id") is not None:
            note.append(f"field_id={e['field_id']}")
        rows.append([name, str(e.get("repetition") or ""), kind, " ".join(n for n in note if n)])
    return ["  " + line for line in _table(rows)]


def _value_text(v: Any) -> str:
    """A statistics value for a line of text: the decoded value, else 0x and (cut) hex."""
    if isinstance(v, dict) and "value" in v:
        return _short(repr(v["value"]) if isinstance(v["value"], str) else v["value"], 24)
    if isinstance(v, dict) and "hex" in v:
        return "0x" + _short(v["hex"], 24)
    return _short(v, 24)


def _stats_text(st: dict[str, Any] | None) -> str:
    """Statistics as 'nulls=.. min=.. max=..' (min_value/max_value preferred over the legacy fields)."""
    if not st:
        return ""
    parts = []
    if "null_count" in st:
        parts.append(f"nulls={_n(st['null_count'])}")
    for which in ("min", "max"):
        key = f"{which}_value" if f"{which}_value" in st else which
        if key in st:
            parts.append(f"{key}={_value_text(st[key])}")
    parts.extend(f"{k}={_short(v, 24)}" for k, v in st.items()
                 if k not in ("null_count", *_STAT_BYTES))
    return " ".join(parts)


def _chunk_lines(cc: dict[str, Any]) -> list[str]:
    """One column chunk: a head line, encodings and statistics, then a table with a line per page."""
    lines = [f"  column {cc['path']}: {cc['physical_type']} {cc['codec']}, {_n(cc['num_values'])} values, "
             f"{_n(cc['total_compressed_size'])} bytes ({_n(cc['total_uncompressed_size'])} uncompressed)"]
    offsets = [f"{k.removesuffix('_offset').replace('_', ' ')} {_n(cc[k])}"
               for k in ("dictionary_page_offset", "data_page_offset", "index_page_offset",
                         "column_index_offset", "offset_index_offset", "bloom_filter_offset")
               if cc.get(k) is not None]
    lines.append(f"    offsets: {', '.join(offsets)}")
    enc = f"    encodings: {', '.join(str(e) for e in cc['encodings'])}"
    if cc.get("encoding_stats"):
        enc += "; pages: " + ", ".join(f"{s.get('page_type')}/{s.get('encoding')} x{s.get('count')}"
                                       for s in cc["encoding_stats"])
    lines.append(enc)
    if cc.get("statistics"):
        lines.append(f"    statistics: {_stats_text(cc['statistics'])}")
    rows = [["page", "offset", "type", "header", "compressed", "uncompressed", "crc", "values", "nulls",
             "rows", "encoding", "details"]]
    for i, p in enumerate(cc["pages"]):
        rows.append(_page_row(i, p))
    if len(rows) > 1:
        lines.extend("    " + line for line in _table(rows, numeric={1, 3, 4, 5, 7, 8, 9}))
    if cc.get("page_error"):
        lines.append(f"    page walk stopped: {cc['page_error']}")
    return lines


def _page_row(index: int, p: dict[str, Any]) -> list[str]:
    """The cells of one page's line."""
    crc = p.get("crc")
    head: dict[str, Any] = {}
    for kind in _PAGE_HEADERS:
        if isinstance(p.get(kind), dict):
            head = p[kind]
            break
    details = []
    if "data_page_header_v2" in p:
        details.append(f"levels rep={head.get('repetition_levels_byte_length')} "
                       f"def={head.get('definition_levels_byte_length')}")
        if head.get("is_compressed") is not None:
            details.append(f"is_compressed={head['is_compressed']}")
    elif "data_page_header" in p:
        details.append(f"levels rep={head.get('repetition_level_encoding')} "
                       f"def={head.get('definition_level_encoding')}")
    elif "dictionary_page_header" in p and head.get("is_sorted") is not None:
        details.append(f"is_sorted={head['is_sorted']}")
    if head.get("statistics"):
        details.append(_stats_text(head["statistics"]))
    return [str(index), _n(p.get("offset")), str(p.get("type")), _n(p.get("header_size")),
            _n(p.get("compressed_page_size")), _n(p.get("uncompressed_page_size")),
            f"{crc:08x}" if isinstance(crc, int) else "-", _n(head.get("num_values")),
            _n(head.get("num_nulls")), _n(head.get("num_rows")), str(head.get("encoding", "-")),
            " ".join(details)]


def _table(rows: Sequence[Sequence[str]], numeric: Iterable[int] = ()) -> list[str]:
    """Align cells in columns: numbers right, text left; trailing spaces trimmed."""
    right = set(numeric)
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    out = []
    for r in rows:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
        out.append("  ".join(cells).rstrip())
    return out

