"""`inspect`'s description of a file as text for people: a summary, every page header, or the page indexes.

`format_summary` (the default view): row groups, columns with encodings, sizes, compression ratio and
statistics in logical types, and the format in one line. `format_inspect` (`--pages`): the footer, what
the format version means, the schema and one line per page. `format_page_index` (`--index`): each chunk's column and offset index.
Each view can be limited to some columns.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import GpuwriteError
from .values import annotation, display, leaves, logical_value, type_text

_STAT_BYTES = ("min_value", "max_value", "min", "max")
_PAGE_HEADERS = ("data_page_header", "data_page_header_v2", "dictionary_page_header", "index_page_header")
_FOOTER_KEYS = ("version", "num_rows", "created_by", "key_value_metadata", "schema", "column_orders")
SPARK_SCHEMA_KEY = "org.apache.spark.sql.parquet.row.metadata"


# -- column selection -------------------------------------------------------------------------------------


def select_columns(paths: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
    """The leaf paths `wanted` names: a leaf's dotted path, or a group's (all its leaves); all when None."""
    if not wanted:
        return list(paths)
    chosen: dict[str, None] = {}
    for name in wanted:
        hits = [p for p in paths if p == name or p.startswith(name + ".")]
        if not hits:
            raise GpuwriteError(f"column {name!r} is not in the file (columns: {', '.join(paths)})")
        chosen.update(dict.fromkeys(hits))
    return [p for p in paths if p in chosen]


# -- the format version ------------------------------------------------------------------------------------


def page_types(info: dict[str, Any]) -> Counter[str]:
    """How many pages of each type the file's chunks hold."""
    return Counter(str(p["type"]) for rg in info["row_groups"] for cc in rg["columns"] for p in cc["pages"])


def version_note(version: Any, types: Counter[str]) -> str:
    """What FileMetaData.version says (little) and what the pages say (the data page format)."""
    v2, v1 = types.get("DATA_PAGE_V2", 0), types.get("DATA_PAGE", 0)
    if v2 and not v1:
        pages = ("its data pages are DATA_PAGE_V2 (Parquet v2 pages: levels stored uncompressed ahead of the "
                 "values, row and null counts in each page header), as parquet-java writes them with "
                 "parquet.writer.version=v2")
    elif v1 and not v2:
        pages = "its data pages are DATA_PAGE (v1 pages: levels compressed with the values)"
    elif v1 and v2:
        pages = f"it mixes DATA_PAGE ({v1:,}) and DATA_PAGE_V2 ({v2:,}) pages"
    else:
        pages = "it has no data pages"
    if version == 1:
        meaning = ("format version 1 is the footer's FileMetaData.version, which parquet-java (and so Spark) "
                   "sets to 1 for every file, v2 pages included (ParquetFileWriter.CURRENT_VERSION); readers "
                   "ignore it")
    elif version == 2:
        meaning = ("format version 2 is the footer's FileMetaData.version; Arrow C++ (pyarrow) sets 2 for format "
                   "versions 2.x; readers ignore it")
    else:
        meaning = f"format version {version} is the footer's FileMetaData.version, which readers ignore"
    return f"{meaning}; {pages}."


def version_line(version: Any, types: Counter[str]) -> str:
    """The summary's one line on the format: the data page format, and the footer's version field briefly
    (`--pages` explains both at length: `version_note`)."""
    v2, v1 = types.get("DATA_PAGE_V2", 0), types.get("DATA_PAGE", 0)
    pages = ("DATA_PAGE_V2 pages (Parquet v2)" if v2 and not v1 else "DATA_PAGE pages (v1)" if v1 and not v2
             else f"DATA_PAGE ({v1:,}) and DATA_PAGE_V2 ({v2:,}) pages" if v1 else "no data pages")
    writer = {1: "parquet-java's for every file", 2: "Arrow C++'s for format 2.x"}.get(version, "")
    return f"format: {pages}, footer version {version}{f' ({writer})' if writer else ''}"


# -- summary ------------------------------------------------------------------------------------------------


def format_summary(info: dict[str, Any], columns: Sequence[str] | None = None) -> str:
    """The default view: file, format, metadata keys, a line per column over all row groups, the row groups."""
    footer, groups = info["footer"], info["row_groups"]
    schema_leaves = {leaf["path"]: leaf for leaf in leaves(footer["schema"])}
    chosen = select_columns(list(schema_leaves), columns)
    compressed = sum(cc["total_compressed_size"] or 0 for rg in groups for cc in rg["columns"])
    uncompressed = sum(cc["total_uncompressed_size"] or 0 for rg in groups for cc in rg["columns"])
    codecs = sorted({str(cc["codec"]) for rg in groups for cc in rg["columns"]})
    lines = [f"file {info['path']}: {size_text(info['file_size'])} ({info['file_size']:,} bytes), "
             f"{_n(footer['num_rows'])} rows in {len(groups)} row group(s), {len(schema_leaves)} column(s)",
             f"created by {footer['created_by'] or '(not set)'}",
             f"compression {', '.join(codecs) or '-'}: {size_text(uncompressed)} of pages -> "
             f"{size_text(compressed)} ({_ratio(uncompressed, compressed)})",
             version_line(footer["version"], page_types(info))]
    lines.extend(_key_lines(footer["key_value_metadata"]))
    lines.append("")
    rows = [["column", "type", "encodings", "compressed", "uncompressed", "ratio", "nulls", "min", "max"]]
    for path in chosen:
        rows.append(_column_row(path, schema_leaves[path], groups))
    lines.extend(table_lines(rows, numeric={3, 4, 5, 6}))
    lines.append("")
    rows = [["row group", "rows", "offset", "compressed", "uncompressed", "ratio"]]
    for rg in groups:
        picked = [cc for cc in rg["columns"] if cc["path"] in chosen]
        comp = sum(cc["total_compressed_size"] or 0 for cc in picked)
        unc = sum(cc["total_uncompressed_size"] or 0 for cc in picked)
        rows.append([str(rg["index"]), _n(rg["num_rows"]), _n(rg["file_offset"]), size_text(comp), size_text(unc),
                     _ratio(unc, comp)])
    lines.extend(table_lines(rows, numeric={0, 1, 2, 3, 4, 5}))
    if len(chosen) < len(schema_leaves):
        lines.append(f"(sizes of the {len(chosen)} column(s) shown)")
    return "\n".join(lines)


def _key_lines(kvs: list[dict[str, Any]]) -> list[str]:
    """Key/value metadata, one short line each; Spark's schema JSON by its length only."""
    if not kvs:
        return []
    out = ["key/value metadata:"]
    width = max(len(str(kv["key"])) for kv in kvs)
    for kv in kvs:
        value = kv["value"]
        shown = (f"(Spark's schema as JSON, {len(str(value)):,} chars)" if kv["key"] == SPARK_SCHEMA_KEY
                 else _short(value, 70))
        out.append(f"  {str(kv['key']):<{width}}  {shown}")
    return out


def _column_row(path: str, leaf: dict[str, Any], groups: list[dict[str, Any]]) -> list[str]:
    """One column over every row group: type, encodings, sizes, nulls, min and max in its logical type."""
    chunks = [cc for rg in groups for cc in rg["columns"] if cc["path"] == path]
    encodings: dict[str, None] = {}
    nulls: int | None = 0
    low = high = None
    for cc in chunks:
        encodings.update(dict.fromkeys(str(e) for e in cc["encodings"]))
        st = cc.get("statistics") or {}
        nulls = nulls + st["null_count"] if nulls is not None and isinstance(st.get("null_count"), int) else None
        for which in ("min", "max"):
            value = _stat_logical(st, which, cc["physical_type"], leaf)
            if value is None:
                continue
            try:
                if which == "min" and (low is None or value < low):
                    low = value
                if which == "max" and (high is None or value > high):
                    high = value
            except TypeError:
                continue
    comp = sum(cc["total_compressed_size"] or 0 for cc in chunks)
    unc = sum(cc["total_uncompressed_size"] or 0 for cc in chunks)
    return [path, type_text(leaf), ", ".join(encodings), size_text(comp), size_text(unc), _ratio(unc, comp),
            _n(nulls), _cell(low), _cell(high)]


def _stat_logical(st: dict[str, Any], which: str, physical: Any, leaf: dict[str, Any]) -> Any:
    """min or max of chunk statistics as a comparable logical value (min_value preferred to legacy min)."""
    entry = st.get(f"{which}_value") or st.get(which)
    if not isinstance(entry, dict) or "hex" not in entry:
        return None
    value = logical_value(bytes.fromhex(entry["hex"]), physical, leaf)
    return None if isinstance(value, float) and value != value else value


def _cell(value: Any) -> str:
    """A min/max cell: text quoted, others as their logical text, cut to 24 characters."""
    if value is None:
        return "-"
    if isinstance(value, (str, bytes)):  # text and bytes are cut; numbers and times never are
        return cut(repr(value) if isinstance(value, str) else display(value) or "-", 24)
    return display(value) or "-"


def cut(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters (ending in '...' when cut)."""
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- page index ---------------------------------------------------------------------------------------------


def format_page_index(info: dict[str, Any], columns: Sequence[str] | None = None) -> str:
    """Each chunk's column index (per-page min/max in logical types, null pages, boundary order) beside its
    offset index (first row, offset, size)."""
    schema_leaves = [leaf["path"] for leaf in leaves(info["footer"]["schema"])]
    chosen = select_columns(schema_leaves, columns)
    lines: list[str] = []
    for rg in info["row_groups"]:
        for cc in rg["columns"]:
            if cc["path"] not in chosen:
                continue
            lines.extend(_index_lines(rg["index"], cc))
    return "\n".join(lines) if lines else "no column chunks"


def _index_lines(group: int, cc: dict[str, Any]) -> list[str]:
    """One chunk's page index as a head line and a table with a line per page."""
    ci, oi = cc.get("column_index"), cc.get("offset_index")
    head = f"row group {group}, column {cc['path']}:"
    if not ci and not oi:
        return [f"{head} no page index", ""]
    if ci and "error" in ci:
        return [f"{head} page index unreadable: {ci['error']}", ""]
    locations = (oi or {}).get("page_locations") or []
    null_pages = (ci or {}).get("null_pages") or []
    pages = max(len(locations), len(null_pages))
    order = f"boundary order {ci.get('boundary_order', '-')}" if ci else "offset index only (no column index)"
    lines = [f"{head} {pages:,} page(s), {order}"]
    rows = [["page", "first row", "offset", "size", "nulls", "null page", "min", "max"]]
    counts = (ci or {}).get("null_counts") or []
    for i in range(pages):
        loc = locations[i] if i < len(locations) else {}
        null_page = null_pages[i] if i < len(null_pages) else None
        rows.append([str(i), _n(loc.get("first_row_index")), _n(loc.get("offset")),
                     _n(loc.get("compressed_page_size")), _n(counts[i] if i < len(counts) else None),
                     "-" if null_page is None else ("yes" if null_page else "no"),
                     "" if null_page else _index_value(ci, "min_values", i),
                     "" if null_page else _index_value(ci, "max_values", i)])
    lines.extend("  " + line for line in table_lines(rows, numeric={0, 1, 2, 3, 4}))
    lines.append("")
    return lines


def _index_value(ci: dict[str, Any] | None, key: str, i: int) -> str:
    """A column-index min or max as its logical text."""
    values = (ci or {}).get(key) or []
    return _value_text(values[i]) if i < len(values) else "-"


# -- every page ---------------------------------------------------------------------------------------------


def format_inspect(info: dict[str, Any], columns: Sequence[str] | None = None) -> str:
    """Render `inspect`'s description for people: footer, schema, then each chunk with one line per page."""
    lines: list[str] = []
    footer = info["footer"]
    groups = info["row_groups"]
    leaf_paths = [leaf["path"] for leaf in leaves(footer["schema"])]
    chosen = select_columns(leaf_paths, columns)
    lines.append(f"file {info['path']}: {info['file_size']:,} bytes, footer {info['footer_length']:,} bytes")
    lines.append(f"format version {footer['version']}, created by {footer['created_by'] or '(not set)'}")
    lines.extend(textwrap.wrap(version_note(footer["version"], page_types(info)), 110, initial_indent="  ",
                               subsequent_indent="  "))
    lines.append(f"{_n(footer['num_rows'])} rows in {len(groups)} row group(s), {len(leaf_paths)} leaf column(s)")
    extra = {k: v for k, v in footer.items() if k not in _FOOTER_KEYS}
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
            if cc["path"] in chosen:
                lines.extend(_chunk_lines(cc))
    return "\n".join(lines)


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
        note = [annotation(e)]
        if e.get("field_id") is not None:
            note.append(f"field_id={e['field_id']}")
        rows.append([name, str(e.get("repetition") or ""), kind, " ".join(n for n in note if n)])
    return ["  " + line for line in table_lines(rows)]


def _value_text(v: Any) -> str:
    """A statistics value for a line of text: its logical value, else the physical one, else 0x and hex."""
    if isinstance(v, dict) and "display" in v:
        text = v["display"]
        if isinstance(v.get("value"), str) and v["value"] == text:
            return cut(repr(text), 24)
        return cut(text, 24) if text.startswith("0x") else text
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
        lines.extend("    " + line for line in table_lines(rows, numeric={1, 3, 4, 5, 7, 8, 9}))
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


# -- cells --------------------------------------------------------------------------------------------------


def _n(value: Any) -> str:
    """An int with thousands separators; '-' for a missing value."""
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _short(value: Any, limit: int = 40) -> str:
    """A value as one line, cut to `limit` characters with the full length noted."""
    text = str(value).replace("\n", "\\n")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} chars)"


def size_text(n: int | float | None) -> str:
    """Bytes for people: 812 B, 12.3 KB, 104.0 MB, 1.25 GB (powers of 1000, as file managers show)."""
    if n is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.{2 if unit == 'GB' else 1}f} {unit}"
    return f"{int(n)} B"


def _ratio(uncompressed: int, compressed: int) -> str:
    """Compression ratio as 'N.NNx' ('-' when there is nothing)."""
    return f"{uncompressed / compressed:.2f}x" if compressed else "-"


def table_lines(rows: Sequence[Sequence[str]], numeric: Iterable[int] = ()) -> list[str]:
    """Align cells in columns: numbers right, text left; trailing spaces trimmed."""
    right = set(numeric)
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    out = []
    for r in rows:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
        out.append("  ".join(cells).rstrip())
    return out
