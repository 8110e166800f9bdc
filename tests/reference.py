"""Reference side of the parity tests: compile and run RefWriter (parquet-java, tests/parity/RefWriter.java), and
decode page layouts; beside conftest.py because the bloom tests in tests/ and tests/kernels ask it too."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from gpuwrite.format.footer_reader import iter_page_headers, named, read_footer
from gpuwrite.format.thrift import read_struct

SOURCE = Path(__file__).resolve().parent / "parity" / "RefWriter.java"
MAIN_CLASS = "RefWriter"
JVM_FLAGS = ("-Dlog4j2.level=ERROR", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx1g")
TIMEOUT_S = 120


class ReferenceUnavailable(RuntimeError):
    """The reference writer cannot run here (no JDK, or no pyspark jars); the message says which."""


def reference_jar_classpath() -> str:
    """Classpath wildcard of the jars that ship inside pyspark (parquet-java 1.17, hadoop client)."""
    try:
        import pyspark
    except ImportError as e:
        raise ReferenceUnavailable("pyspark is not installed: its jars/ folder holds parquet-java") from e
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not any(jars.glob("parquet-hadoop-*.jar")):
        raise ReferenceUnavailable(f"no parquet-hadoop jar in {jars}")
    return str(jars / "*")


def _tool(name: str) -> str:
    """Path of a JDK tool on PATH, or ReferenceUnavailable naming it."""
    path = shutil.which(name)
    if path is None:
        raise ReferenceUnavailable(f"no `{name}` on PATH: the parquet-java reference writer needs a JDK 17+")
    return path


def compile_ref_writer(build_dir: Path) -> Path:
    """Compile RefWriter.java into build_dir (once: an up-to-date class is reused); returns build_dir."""
    build_dir.mkdir(parents=True, exist_ok=True)
    target = build_dir / f"{MAIN_CLASS}.class"
    if target.exists() and target.stat().st_mtime >= SOURCE.stat().st_mtime:
        return build_dir
    javac = _tool("javac")
    _tool("java")
    cmd = [javac, "-nowarn", "-d", str(build_dir), "-cp", reference_jar_classpath(), str(SOURCE)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"javac RefWriter.java failed ({done.returncode}):\n{done.stderr}")
    return build_dir


@functools.cache
def _default_class_dir() -> Path:
    """RefWriter compiled once per process into a temporary folder (when no fixture supplies one)."""
    return compile_ref_writer(Path(tempfile.mkdtemp(prefix="refwriter-")))


def write_with_parquet_java(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str],
                            options: dict[str, str], class_dir: Path | None = None) -> Path:
    """Re-write every record of input_path with parquet-java (v2 pages, same options); returns output_path."""
    class_dir = class_dir or _default_class_dir()
    classpath = os.pathsep.join([str(class_dir), reference_jar_classpath()])
    args = [f"{k}={v}" for k, v in options.items()]
    cmd = [_tool("java"), *JVM_FLAGS, "-cp", classpath, MAIN_CLASS, str(input_path), str(output_path), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"RefWriter failed ({done.returncode}) on {input_path}:\n{done.stderr[-4000:]}")
    return Path(output_path)


def bloom_probes(probes: list[str], class_dir: Path | None = None) -> list[str]:
    """Answers of parquet-java's bloom filter classes to probe lines (see RefWriter.probe), one per probe."""
    class_dir = class_dir or _default_class_dir()
    classpath = os.pathsep.join([str(class_dir), reference_jar_classpath()])
    cmd = [_tool("java"), *JVM_FLAGS, "-cp", classpath, MAIN_CLASS, "--bloom"]
    done = subprocess.run(cmd, input="\n".join(probes) + "\n", capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"RefWriter --bloom failed ({done.returncode}):\n{done.stderr[-4000:]}")
    answers = [line[2:] for line in done.stdout.splitlines() if line.startswith("= ")]
    if len(answers) != len(probes):
        raise RuntimeError(f"RefWriter --bloom answered {len(answers)} of {len(probes)} probes:\n{done.stdout[-2000:]}")
    return answers


def _page(header: dict[int, Any]) -> dict[str, Any]:
    """One page header, reduced to the fields both writers must agree on (sizes of levels included)."""
    h = named("PageHeader", header, enum_names=True)
    out: dict[str, Any] = {"type": h["type"], "uncompressed_page_size": h["uncompressed_page_size"]}
    if "dictionary_page_header" in h:
        d = h["dictionary_page_header"]
        out.update(num_values=d["num_values"], encoding=d["encoding"], is_sorted=d.get("is_sorted"))
    if "data_page_header_v2" in h:
        v2 = h["data_page_header_v2"]
        out.update({k: v2.get(k) for k in ("encoding", "num_values", "num_nulls", "num_rows",
                                           "definition_levels_byte_length", "repetition_levels_byte_length",
                                           "statistics")})
    if "data_page_header" in h:
        out["data_page_header_v1"] = h["data_page_header"]
    out["has_crc"] = "crc" in h
    return out


def read_bloom_filter(data: bytes, md: dict[str, Any]) -> tuple[dict[str, Any], bytes] | None:
    """A chunk's bloom filter (named header, bitset bytes) from ColumnMetaData, or None when it has none.

    Checks that bloom_filter_length, when set, covers exactly the header and the bitset.
    """
    if "bloom_filter_offset" not in md:
        assert "bloom_filter_length" not in md, "bloom_filter_length without bloom_filter_offset"
        return None
    start = md["bloom_filter_offset"]
    raw, end = read_struct(data, start)
    header = named("BloomFilterHeader", raw)
    bitset = data[end:end + header["numBytes"]]
    assert len(bitset) == header["numBytes"], "bloom filter bitset runs past the end of the file"
    if "bloom_filter_length" in md:
        assert md["bloom_filter_length"] == end - start + header["numBytes"], "bloom_filter_length mismatch"
    return header, bitset


def _bloom(data: bytes, md: dict[str, Any]) -> dict[str, Any] | None:
    """A chunk's bloom filter as both writers must agree on it: header fields, length, header and bitset bytes
    (the bitset as its size and SHA-256, with the number of set bits to make differences readable)."""
    found = read_bloom_filter(data, md)
    if found is None:
        return None
    header, bitset = found
    start = md["bloom_filter_offset"]
    return {
        "header": header,
        "header_bytes": data[start:start + md.get("bloom_filter_length", len(bitset)) - len(bitset)].hex(),
        "bloom_filter_length": md.get("bloom_filter_length"),
        "bitset_bytes": len(bitset),
        "bitset_set_bits": int.from_bytes(bitset, "little").bit_count(),
        "bitset_sha256": hashlib.sha256(bitset).hexdigest(),
    }


def _chunk(data: bytes, cc: dict[int, Any]) -> dict[str, Any]:
    """The layout of one column chunk: metadata fields, its pages, and its column / offset index."""
    md = named("ColumnMetaData", cc[3], enum_names=True)
    pages = [_page(h) for _, h, _ in iter_page_headers(data, cc)]
    dictionary = [p for p in pages if p["type"] == "DICTIONARY_PAGE"]
    column_index = named("ColumnIndex", read_struct(data, cc[6])[0], enum_names=True) if 6 in cc else None
    offset_index = None
    if 4 in cc:
        oi = named("OffsetIndex", read_struct(data, cc[4])[0])
        offset_index = {"first_row_index": [loc["first_row_index"] for loc in oi["page_locations"]],
                        "unencoded_byte_array_data_bytes": oi.get("unencoded_byte_array_data_bytes")}
    return {
        "path": ".".join(p.decode() for p in md["path_in_schema"]),
        "type": md["type"],
        "codec": md["codec"],
        "encodings": frozenset(md["encodings"]),
        "encoding_stats": [(s["page_type"], s["encoding"], s["count"]) for s in md.get("encoding_stats", [])],
        "has_dictionary_page": bool(dictionary),
        "dictionary_page_offset_set": "dictionary_page_offset" in md,
        "dictionary_num_values": dictionary[0]["num_values"] if dictionary else None,
        "dictionary_page": dictionary[0] if dictionary else None,
        "data_pages": [p for p in pages if p["type"] != "DICTIONARY_PAGE"],
        "statistics": md.get("statistics"),
        "num_values": md["num_values"],
        "column_index": column_index,
        "offset_index": offset_index,
        "size_statistics": md.get("size_statistics"),
        "bloom_filter": _bloom(data, md),
    }


def chunk_layout(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Per row group: {num_rows, columns: [chunk layout per column in schema order]}."""
    data = Path(path).read_bytes()
    footer = read_footer(data)
    return [{"num_rows": rg[3], "columns": [_chunk(data, cc) for cc in rg[1]]} for rg in footer.get(4, [])]


def file_layout(path: str | os.PathLike[str]) -> dict[str, Any]:
    """File-level metadata both writers must agree on: schema elements, column orders, row count, version."""
    footer = named("FileMetaData", read_footer(path), enum_names=True)
    return {k: footer.get(k) for k in ("version", "schema", "num_rows", "column_orders")}
