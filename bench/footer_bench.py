"""Time Thrift serialization of a many-page file's footer, page indexes and page headers.

Writes one table with gpuwrite using small pages (about 10,000 data pages over a few columns and row groups),
keeps its FileMetaData from ``FileResult.metadata``, and rebuilds every ColumnIndex, OffsetIndex and
PageHeader of the file as struct objects from the file's own bytes. Each object must serialize back to the
exact bytes in the file (so the timings are of correct output); then ``serialize()`` of the footer, of all
page indexes and of all page headers is timed, and the median of many repeats is reported.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

import gpuwrite
from gpuwrite.format import structs
from gpuwrite.format.footer_reader import FIELDS, iter_page_headers, read_footer
from gpuwrite.format.thrift import decode_struct, serialize


def make_table(rows: int) -> pa.Table:
    """Four columns (int64, nullable double, string, int32) with little repetition, so pages stay small."""
    ids = pa.array(range(rows), pa.int64())
    doubles = pa.array([None if i % 11 == 0 else i * 0.37 for i in range(rows)], pa.float64())
    names = pa.array([f"name-{(i * 7919) % 100_003:06d}" for i in range(rows)])
    small = pa.array([(i * 31) % 1000 for i in range(rows)], pa.int32())
    return pa.table({"id": ids, "x": doubles, "name": names, "k": small})


def rebuild(struct_name: str, decoded: Any) -> Any:
    """A struct object from a decoded ``{field_id: value}`` dict, using footer_reader's field table."""
    if struct_name == "Empty":
        return structs.EMPTY
    cls = getattr(structs, struct_name)
    types = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    kwargs = {}
    for fid, value in decoded.items():
        field = FIELDS[struct_name][fid]
        if field.struct is not None:
            value = ([rebuild(field.struct, v) for v in value] if isinstance(value, list)
                     else rebuild(field.struct, value))
        elif "str" in types[field.name]:
            value = [v.decode() for v in value] if isinstance(value, list) else value.decode()
        kwargs[field.name] = value
    return cls(**kwargs)


def collect(data: bytes, footer: dict[int, Any]) -> tuple[list[Any], list[Any]]:
    """Rebuilt page indexes (column then offset indexes) and page headers of every chunk, checked byte-exact."""
    indexes, headers = [], []
    for row_group in footer[4]:
        for chunk in row_group[1]:
            for name, off_id, len_id in (("ColumnIndex", 6, 7), ("OffsetIndex", 4, 5)):
                if off_id in chunk:
                    raw = data[chunk[off_id] : chunk[off_id] + chunk[len_id]]
                    obj = rebuild(name, decode_struct(raw))
                    assert serialize(obj) == raw, f"{name} does not re-encode to the file's bytes"
                    indexes.append(obj)
            for offset, header, length in iter_page_headers(data, chunk):
                obj = rebuild("PageHeader", header)
                assert serialize(obj) == data[offset : offset + length], "page header does not re-encode"
                headers.append(obj)
    return indexes, headers


def time_median(fn: Callable[[], object], repeats: int, clock: Callable[[], float]) -> tuple[float, list[float]]:
    """Median seconds of ``repeats`` calls of fn (one untimed warm-up call; GC off while timing)."""
    fn()
    samples = []
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = clock()
            fn()
            samples.append(clock() - t0)
    finally:
        gc.enable()
    return statistics.median(samples), samples


def main(argv: list[str] | None = None) -> int:
    """Build the file, check re-encoding, time the three serializations and print (and maybe save) them."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="table rows (default 200000)")
    ap.add_argument("--page-rows", type=int, default=80, help="page_row_count_limit (default 80)")
    ap.add_argument("--row-group-rows", type=int, default=50_000, help="block_row_count_limit (default 50000)")
    ap.add_argument("--repeats", type=int, default=51, help="timed repeats of each serialization (default 51)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="time.process_time (default: steadier on a shared machine) or time.perf_counter")
    ap.add_argument("--json", type=Path, help="also save the results (all samples) as JSON here")
    args = ap.parse_args(argv)

    options = gpuwrite.WriteOptions(page_row_count_limit=args.page_rows, block_row_count_limit=args.row_group_rows,
                                    page_size_check_min=1, enable_dictionary=False, compression="uncompressed")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "many_pages.parquet"
        result = gpuwrite.write_table(make_table(args.rows), path, options=options)
        data = path.read_bytes()
    meta = result.metadata
    footer_bytes = serialize(meta)
    assert data[-8 - len(footer_bytes) : -8] == footer_bytes, "FileMetaData does not re-encode to the file's footer"
    indexes, headers = collect(data, read_footer(data))
    pages = sum(len(oi.page_locations) for oi in indexes if isinstance(oi, structs.OffsetIndex))

    cases: dict[str, tuple[Callable[[], object], int, int]] = {
        "footer (FileMetaData)": (lambda: serialize(meta), 1, len(footer_bytes)),
        "page indexes (all)": (lambda: [serialize(i) for i in indexes], len(indexes),
                               sum(len(serialize(i)) for i in indexes)),
        "page headers (all)": (lambda: [serialize(h) for h in headers], len(headers),
                               sum(len(serialize(h)) for h in headers)),
    }
    print(f"file: {len(meta.row_groups)} row groups, {len(meta.row_groups[0].columns)} columns, "
          f"{pages} data pages; python {sys.version.split()[0]}; median of {args.repeats}, {args.clock} time")
    print(f"{'case':<24}{'structs':>9}{'bytes':>10}{'median ms':>12}{'min ms':>10}")
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    report: dict[str, Any] = {"pages": pages, "row_groups": len(meta.row_groups), "repeats": args.repeats,
                              "clock": args.clock, "cases": {}}
    for name, (fn, count, size) in cases.items():
        median, samples = time_median(fn, args.repeats, clock)
        print(f"{name:<24}{count:>9}{size:>10}{median * 1e3:>12.3f}{min(samples) * 1e3:>10.3f}")
        report["cases"][name] = {"structs": count, "bytes": size, "median_s": median, "samples_s": samples}
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
