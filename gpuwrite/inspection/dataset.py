"""`inspect` on a directory: a dataset summary (files, Hive partitions, Spark buckets, rows, sizes, schemas,
the commit marker), from each file's footer only; and `preview`, the first rows of a file or a directory.

Data files are the files whose names start with neither `_` nor `.` (Spark's and Hive's rule for hidden
files: `_SUCCESS`, `_temporary`, `.crc` checksums), found in directories that do not start with them either.
"""

from __future__ import annotations

import os
import re
import statistics
from typing import Any
from urllib.parse import unquote

from ..errors import GpuwriteError
from ..format.footer_reader import named, read_footer
from .text import cut, size_text, table_lines
from .values import leaves

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # SPEC: ExternalCatalogUtils.DEFAULT_PARTITION_NAME
_BUCKET = re.compile(r"_(\d{5})(?:\.c\d{3})?\.[^/]*$")  # SPEC: BucketingUtils.bucketIdGenerator (`_00003`)
_HIVE_BUCKET = re.compile(r"^(\d{5})_0_")
FILES_SHOWN = 20


def _hidden(name: str) -> bool:
    """Spark's and Hive's hidden names: they start with '_' or '.'."""
    return name.startswith(("_", "."))


def data_files(root: str) -> list[str]:
    """Every data file under `root`, as paths relative to it, sorted."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        rel = os.path.relpath(folder, root)
        found.extend(os.path.normpath(os.path.join(rel, f)) for f in files if not _hidden(f))
    return sorted(found)


def _partition(rel: str) -> dict[str, str | None]:
    """The Hive partition values in a relative path ('year=2020/x.parquet' -> {'year': '2020'})."""
    out: dict[str, str | None] = {}
    for part in rel.split(os.sep)[:-1]:
        key, sep, value = part.partition("=")
        if sep:
            out[unquote(key)] = None if value == DEFAULT_PARTITION else unquote(value)
    return out


def _bucket(name: str) -> int | None:
    """The bucket id in a Spark (`..._00003.c000.snappy.parquet`) or Hive (`00003_0_...`) bucket file name."""
    match = _BUCKET.search(name) or _HIVE_BUCKET.search(name)
    return int(match.group(1)) if match else None


def _footer(path: str) -> dict[str, Any]:
    """Rows, row groups, writer and the leaf columns (path and type) from one file's footer."""
    with open(path, "rb") as f:
        raw = read_footer(f)
    meta = named("FileMetaData", {k: v for k, v in raw.items() if k != 4}, enum_names=True)
    schema = [{"name": (e.get("name") or b"").decode("utf-8", "replace") if isinstance(e.get("name"), bytes)
               else e.get("name"), "type": e.get("type"), "num_children": e.get("num_children")}
              for e in meta.get("schema") or []]
    created = meta.get("created_by")
    return {"num_rows": meta.get("num_rows") or 0, "row_groups": len(raw.get(4) or []),
            "created_by": created.decode("utf-8", "replace") if isinstance(created, bytes) else created,
            "columns": [f"{leaf['path']}: {leaf['type']}" for leaf in leaves(schema)]}


def inspect_dataset(root: str) -> dict[str, Any]:
    """Describe a directory of Parquet files as JSON-ready data (see the module docstring)."""
    entries = sorted(os.listdir(root))
    files: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    schemas: dict[tuple[str, ...], int] = {}
    for rel in data_files(root):
        full = os.path.join(root, rel)
        try:
            footer = _footer(full)
        except (GpuwriteError, ValueError, OSError) as exc:
            errors.append({"path": rel, "error": str(exc) or type(exc).__name__})
            continue
        key = tuple(footer.pop("columns"))
        schemas[key] = schemas.get(key, 0) + 1
        files.append({"path": rel, "size": os.path.getsize(full), **footer, "partition": _partition(rel),
                      "bucket": _bucket(os.path.basename(rel))})
    keys: dict[str, set[str | None]] = {}
    for f in files:
        for k, v in f["partition"].items():
            keys.setdefault(k, set()).add(v)
    buckets = {f["bucket"] for f in files if f["bucket"] is not None}
    return {
        "path": root, "kind": "dataset", "num_files": len(files), "num_rows": sum(f["num_rows"] for f in files),
        "size": sum(f["size"] for f in files), "row_groups": sum(f["row_groups"] for f in files),
        "partitions": {k: sorted(v, key=lambda x: (x is None, x or "")) for k, v in keys.items()},
        "partition_directories": len({os.path.dirname(f["path"]) for f in files if f["partition"]}),
        "buckets": len(buckets) if buckets else None, "success": "_SUCCESS" in entries,
        "hidden": [e for e in entries if _hidden(e)],
        "schemas": [{"columns": list(k), "files": n} for k, n in schemas.items()],
        "files": files, "errors": errors,
    }


def format_dataset(info: dict[str, Any]) -> str:
    """The dataset summary as text."""
    files = info["files"]
    lines = [f"dataset {info['path']}: {info['num_files']:,} file(s), {size_text(info['size'])} "
             f"({info['size']:,} bytes), {info['num_rows']:,} rows in {info['row_groups']:,} row group(s)"]
    leftovers = [h for h in info["hidden"] if h != "_SUCCESS"]
    commit = "_SUCCESS present (a committed Spark-style write)" if info["success"] else "no _SUCCESS marker"
    lines.append(commit + (f"; hidden entries: {', '.join(leftovers)}" if leftovers else ""))
    if "_temporary" in info["hidden"]:
        lines.append("  _temporary is left from a job that did not finish (or is still running)")
    if info["partitions"]:
        parts = [f"{k} ({len(v)} value{'s' if len(v) != 1 else ''}: {_values(v)})" for k, v in info["partitions"].items()]
        lines.append(f"partitions: {', '.join(parts)}; {info['partition_directories']:,} partition directories")
    if info["buckets"]:
        lines.append(f"buckets: {info['buckets']} bucket id(s) in the file names")
    if files:
        sizes = [f["size"] for f in files]
        rows = [f["num_rows"] for f in files]
        lines.append(f"file sizes: smallest {size_text(min(sizes))}, median {size_text(statistics.median(sizes))}, "
                     f"largest {size_text(max(sizes))}; rows per file: {min(rows):,} to {max(rows):,}")
    if len(info["schemas"]) == 1:
        lines.append(f"schema: the same {len(info['schemas'][0]['columns'])} column(s) in every file")
    elif info["schemas"]:
        lines.append(f"schema: {len(info['schemas'])} different schemas:")
        for s in info["schemas"]:
            lines.append(f"  {s['files']:,} file(s): {', '.join(s['columns'])}")
    for e in info["errors"]:
        lines.append(f"not readable as Parquet: {e['path']}: {e['error']}")
    if files:
        lines.append("")
        shown = files[:FILES_SHOWN]
        title = f"files ({len(shown)} of {len(files):,}):" if len(files) > len(shown) else "files:"
        lines.append(title)
        table = [["file", "rows", "size", "row groups"]]
        table.extend([f["path"], f"{f['num_rows']:,}", size_text(f["size"]), str(f["row_groups"])] for f in shown)
        lines.extend("  " + line for line in table_lines(table, numeric={1, 2, 3}))
    return "\n".join(lines)


def _values(values: list[str | None], limit: int = 5) -> str:
    """Some partition values, with '...' when there are more."""
    shown = ["null" if v is None else v for v in values[:limit]]
    return ", ".join(shown) + (", ..." if len(values) > limit else "")


def preview(path: str, rows: int, columns: list[str] | None = None, files: list[str] | None = None) -> list[str]:
    """The first `rows` rows of a file or a directory (Hive partitions as columns) as lines of a table; for a
    directory, `files` (relative paths, e.g. inspect_dataset's readable ones) limits what is read."""
    import pyarrow.dataset as ds

    # INT96 read as microseconds: pyarrow's default (nanoseconds) wraps around before 1677 and after 2262.
    parquet = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="us"))
    if os.path.isdir(path):
        sources = [os.path.join(path, f) for f in (files if files is not None else data_files(path))]
        dataset = ds.dataset(sources, format=parquet, partitioning="hive", partition_base_dir=path)
    else:
        dataset = ds.dataset(path, format=parquet)
    names = [n for n in dataset.schema.names if not columns or n in columns]
    table = dataset.head(rows, columns=names)
    cells = [names] + [[_cell(v) for v in row.values()] for row in table.to_pylist()]
    lines = table_lines(cells)
    return lines + [f"({table.num_rows:,} row(s) shown)"]


def _cell(value: Any, limit: int = 30) -> str:
    """One preview cell: null, or the value as text cut to `limit` characters."""
    if value is None:
        return "null"
    return cut("0x" + value.hex() if isinstance(value, bytes) else str(value), limit)
