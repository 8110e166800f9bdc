"""The `gpuwrite` command: write a file as Parquet v2, inspect a Parquet file or dataset, warm the kernel cache,
run the demo benchmark, or clean what interrupted writes left behind."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from .._version import __version__
from ..api import ParquetWriter
from ..backends import kernel_cache
from ..errors import GpuwriteError, OptionError
from ..filesystems import user_path
from ..inspection.dataset import format_dataset, preview
from ..inspection.file import inspect
from ..inspection.text import format_inspect, format_page_index, format_summary
from ..options.aliases import suggestion
from ..options.model import TIMESTAMP_TYPES, WriteOptions
from ..pipeline.progress import ProgressBar
from .csv_input import CSV_BLOCK_BYTES, CsvSettings, parse_delimiter, parse_null_values
from .demo_data import DEMO_ROWS
from .input_files import Source, input_kind, open_source
from .schema_text import parse_schema_text

__all__ = ["CSV_BLOCK_BYTES", "Source", "input_kind", "main", "open_source"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
_PATH_ARGS = ("input", "output", "file", "path", "out")  # the subcommands' path arguments
PARQUET_EXTENSIONS = (".parquet", ".parq", ".pq")  # and none
HANDLED_ERRORS = (GpuwriteError, TypeError, ValueError, OSError, pa.ArrowException)


class CliError(GpuwriteError):
    """A usage problem found by the command itself (bad size, unreadable input kind); exits with 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the gpuwrite command line with `argv` (default sys.argv[1:]); returns the exit status."""
    parser = _parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            parser.error(_unrecognized(parser, args.command, extra))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    for name in _PATH_ARGS:  # `~` as the shell expands it, for quoted paths and --out=~/x
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, user_path(getattr(args, name)))
    try:
        status: int = args.run(args)
        return status
    except KeyboardInterrupt:
        print("gpuwrite: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except HANDLED_ERRORS as exc:
        print(f"gpuwrite: error: {_error_message(exc)}", file=sys.stderr)
        return EXIT_USAGE


def _unrecognized(parser: argparse.ArgumentParser, command: str | None, extra: list[str]) -> str:
    """argparse's 'unrecognized arguments' message, with the closest flag of the command for each unknown one."""
    flags: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            flags = [f for a in action.choices[command]._actions for f in a.option_strings]
    parts = [arg + suggestion(arg.partition("=")[0], flags) if arg.startswith("--") else arg for arg in extra]
    return f"unrecognized arguments: {' '.join(parts)}"


def _error_message(exc: BaseException) -> str:
    """One line for an error: 'path: reason' for OS errors, else the exception's own message."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    # the API's way out, as this command spells it
    return str(exc).strip().replace("pass widen_unsigned=True", "pass --widen-unsigned") or type(exc).__name__


def _parser() -> argparse.ArgumentParser:
    """The argument parser with the write, inspect, demo and clean subcommands."""
    parser = argparse.ArgumentParser(prog="gpuwrite", description="Parquet v2 files that Spark reads as its own.")
    parser.add_argument("--version", action="version", version=f"gpuwrite {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    w = sub.add_parser("write", help="write a Parquet, Arrow IPC or CSV file as Parquet v2",
                       description="Stream IN (Parquet, Arrow IPC/Feather or CSV, chosen by extension, else by its "
                                   "magic bytes) into a Parquet v2 file at OUT. Flags win over --option keys.")
    w.add_argument("input", metavar="IN", help="input file: .parquet, .arrow/.feather/.ipc or .csv")
    w.add_argument("output", metavar="OUT", help="Parquet file to write, a path or a URI (s3://, gs://, abfs://, "
                   "file://, memory://...); it appears only when complete")
    w.add_argument("--compression", metavar="C",
                   help="uncompressed (or none), snappy (default), gzip, zstd or lz4_raw")
    w.add_argument("--compression-level", metavar="N", type=int, help="zstd (default 3) or gzip (default 6) level")
    w.add_argument("--option", metavar="KEY=VALUE", action="append", default=[],
                   help="a Spark / parquet-java key such as parquet.page.size=1048576 (repeatable)")
    w.add_argument("--row-group-size", metavar="ROWS", type=_rows,
                   help="rows per row group at most, as pyarrow's row_group_size (parquet.block.row.count.limit)")
    w.add_argument("--row-group-bytes", metavar="BYTES", type=_size,
                   help="row group size in bytes (parquet.block.size, default 128M); K, M, G suffixes allowed")
    w.add_argument("--data-page-size", "--page-size", metavar="BYTES", type=_size, dest="data_page_size",
                   help="page size in bytes, as pyarrow's data_page_size (parquet.page.size, default 1M)")
    w.add_argument("--no-dictionary", action="store_true", help="do not dictionary-encode any column")
    w.add_argument("--widen-unsigned", action="store_true",
                   help="write unsigned integer columns as the next wider signed type (uint64: decimal(20,0))")
    w.add_argument("--device", choices=["auto", "cpu", "gpu"], default=None,
                   help="encode on the GPU or the CPU (default auto: the GPU when there is one)")
    w.add_argument("--timestamp-type", metavar="T", type=str.upper,
                   help=f"timestamp physical type: {', '.join(TIMESTAMP_TYPES)} (default INT96, as Spark)")
    w.add_argument("--any-extension", action="store_true",
                   help=f"write OUT even when its extension is not Parquet's ({', '.join(PARQUET_EXTENSIONS)} "
                        "or none)")
    w.add_argument("--quiet", action="store_true", help="print nothing on success")
    w.add_argument("--progress", action="store_true", help="show the progress bar even when stderr is not a TTY")
    c = w.add_argument_group("CSV input")
    c.add_argument("--delimiter", metavar="CHAR", type=_delimiter,
                   help="field delimiter: one character, or tab, comma, semicolon, pipe, space (default: tab for "
                        ".tsv, else comma)")
    c.add_argument("--schema", metavar="SCHEMA",
                   help="types of the columns it names, the others inferred: Spark DDL ('a INT, b DECIMAL(10,2), "
                        "c STRING NOT NULL') or pyarrow's ('a: int32, b: decimal128(10, 2)')")
    c.add_argument("--null-values", metavar="LIST", action="append",
                   help="comma-separated texts read as null, in string columns too (default: pyarrow's: empty, "
                        "NA, NULL, null, NaN, ...); repeatable; '' is the empty text")
    w.set_defaults(run=_cmd_write)

    i = sub.add_parser("inspect", help="describe a Parquet file or a dataset directory",
                       description="Describe any Parquet file: a summary by default (row groups, columns, "
                                   "encodings, sizes, statistics in logical types), every page header with "
                                   "--pages, the page indexes with --index, the first rows with --head. A "
                                   "directory gets a dataset summary (files, partitions, rows, sizes).")
    i.add_argument("file", metavar="PATH", help="a Parquet file, or a directory of them")
    i.add_argument("--pages", action="store_true", help="footer, schema and every page header")
    i.add_argument("--index", action="store_true",
                   help="each chunk's column index (per-page min/max, null pages, boundary order) and offset index")
    i.add_argument("--column", metavar="NAME", action="append",
                   help="only this column (a dotted leaf path, or a group for all its leaves); repeatable")
    i.add_argument("--head", metavar="N", type=_positive_int, help="also print the first N rows")
    i.add_argument("--json", action="store_true", help="print the full description as JSON")
    i.set_defaults(run=_cmd_inspect)

    k = sub.add_parser("warmup", help="compile gpuwrite's CPU kernels now, so no later write waits for them",
                       description="Compile (or load) every CPU kernel into numba's on-disk cache: at "
                                   "NUMBA_CACHE_DIR if set, else beside the installed package when writable, "
                                   "else in the user's cache directory. Run it once per install, e.g. when "
                                   "building a Docker image or a Spark executor image, with the "
                                   "NUMBA_CACHE_DIR the writes will use.")
    k.add_argument("--quiet", action="store_true", help="print only errors")
    k.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                   help="gpu: also fill numba-cuda's cache with every CUDA kernel a GPU write launches (needs an "
                        "NVIDIA GPU with numba-cuda and CuPy: pip install 'gpuwrite[gpu]')")
    k.set_defaults(run=_cmd_warmup)

    d = sub.add_parser("demo", help="write TPC-DS store_sales, verify it, and time it against pyarrow, polars "
                                    "and DuckDB",
                       description="Generate store_sales, write it with gpuwrite, read it back with pyarrow and "
                                   "check every value, then time gpuwrite, pyarrow, polars and DuckDB (those "
                                   "installed; pip install 'gpuwrite[demo]') writing the same table, "
                                   "interleaved, each writer's file read back and checked.")
    d.add_argument("--rows", metavar="N", type=_positive_int, default=DEMO_ROWS,
                   help=f"rows to generate (default {DEMO_ROWS:,}, TPC-DS scale factor 1)")
    d.add_argument("--compression", metavar="C", default="snappy", help="codec for every writer (default snappy)")
    d.add_argument("--out", metavar="PATH", help="write gpuwrite's file here and keep it (default: a temp file)")
    d.add_argument("--keep", action="store_true", help="keep gpuwrite's temporary file and print its path")
    d.set_defaults(run=_cmd_demo)

    cl = sub.add_parser("clean", help="list, or with --force remove, what interrupted writes left at PATH",
                       description="Find what killed or failed gpuwrite writes left at PATH (a dataset directory or "
                                   "a file path) and below it: staging directories of jobs that are no longer "
                                   "running, write_dataset's beside a table and Spark jobs' in its _temporary (an "
                                   "overwrite interrupted half-way is undone: the old table comes back), "
                                   "retired ones (.done: what a finished write could not delete, or was deleting "
                                   "when it died), empty _temporary directories, "
                                   "lock files no one holds, and temp files of single-file writes untouched for "
                                   "--older-than seconds. Running jobs' files are never touched. Without --force "
                                   "it only lists what it would do.")
    cl.add_argument("path", metavar="PATH")
    cl.add_argument("-f", "--force", action="store_true", help="clean (default: only list)")
    cl.add_argument("--older-than", metavar="SECONDS", type=float, default=None,
                   help="age after which a temp file (or a staging directory with no owner record) counts as "
                        "abandoned (default 3600)")
    cl.set_defaults(run=_cmd_clean)
    return parser


def _size(text: str) -> int:
    """Parse a byte size: an integer with an optional K, M or G suffix (powers of 1024)."""
    match = re.fullmatch(r"\s*(\d+)\s*([kmg]?)(i?b)?\s*", text, re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size in bytes (e.g. 1048576, 512K, 128M, 1G)")
    return int(match.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[match.group(2).lower()]


def _rows(text: str) -> int:
    """Parse a row count (--row-group-size); a size suffix is refused, pointing at --row-group-bytes."""
    if re.fullmatch(r"\s*\d+\s*([kmg]i?b?|b)\s*", text, re.IGNORECASE):
        raise argparse.ArgumentTypeError(f"{text!r}: --row-group-size counts rows, as pyarrow's row_group_size; "
                                         "for a size in bytes use --row-group-bytes")
    return _positive_int(text)


def _delimiter(text: str) -> str:
    """Parse --delimiter."""
    try:
        return parse_delimiter(text)
    except GpuwriteError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_int(text: str) -> int:
    """Parse a positive integer (underscores and commas allowed, as in 2_880_404)."""
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# -- write --------------------------------------------------------------------------------------------------


def _write_options(args: argparse.Namespace) -> WriteOptions:
    """WriteOptions from --option keys, then the flags (which win), validated before any input is read."""
    conf: dict[str, str] = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"--option {item!r} is not KEY=VALUE")
        conf[key.strip()] = value.strip()
    keywords: dict[str, Any] = {"compression": args.compression, "compression_level": args.compression_level,
                                "row_group_size": args.row_group_size, "block_size": args.row_group_bytes,
                                "data_page_size": args.data_page_size, "timestamp_type": args.timestamp_type,
                                "device": args.device}
    if args.no_dictionary:
        keywords["enable_dictionary"] = False
    if args.widen_unsigned:
        keywords["widen_unsigned"] = True
    return WriteOptions.from_conf(conf, **{k: v for k, v in keywords.items() if v is not None})


def _csv_settings(args: argparse.Namespace, options: WriteOptions) -> CsvSettings:
    """CSV reading from the flags (a Spark DDL TIMESTAMP takes the write's session time zone)."""
    schema = parse_schema_text(args.schema, options.time_zone) if args.schema else None
    nulls = parse_null_values(args.null_values) if args.null_values is not None else None
    return CsvSettings(delimiter=args.delimiter, schema=schema, null_values=nulls)


def _cmd_write(args: argparse.Namespace) -> int:
    """`gpuwrite write IN OUT`: stream IN through ParquetWriter into OUT and print a one-line summary."""
    if not args.any_extension:
        _check_output_name(args.output)
    options = _write_options(args)
    settings = _csv_settings(args, options)
    start = time.perf_counter()
    arrow_bytes = 0
    with contextlib.ExitStack() as stack:
        source = open_source(args.input, stack, settings)
        if (args.delimiter or args.schema or args.null_values is not None) and source.kind != "CSV":
            raise CliError(f"--delimiter, --schema and --null-values apply to CSV input; {args.input} is "
                           f"{source.kind}")
        show = args.progress or (not args.quiet and sys.stderr.isatty())
        bar = ProgressBar(source.total_rows, sys.stderr, delay_s=0.0 if args.progress else 0.5) if show else None
        outcome = "failed"
        try:
            with ParquetWriter(args.output, source.schema, options=options) as writer:
                if bar is not None:
                    bar.start(lambda: writer.rows_encoded)
                for batch in source.batches:
                    writer.write(batch)
                    arrow_bytes += batch.nbytes
                    if bar is not None:
                        bar.advance(batch.num_rows)
                if bar is not None:
                    bar.note = "writing the last row group and the footer"
                result = writer.close()
            outcome = "done"
        finally:
            if bar is not None:
                bar.finish(outcome)
    seconds = time.perf_counter() - start
    if not args.quiet:
        print(f"wrote {result.num_rows:,} rows from {source.kind} {args.input} to {args.output}: "
              f"{result.size:,} bytes in {seconds:.2f} s ({arrow_bytes / 1e6 / seconds:.1f} MB/s of Arrow input, "
              f"{result.size / 1e6 / seconds:.1f} MB/s written)")
    return EXIT_OK


def _check_output_name(output: str) -> None:
    """Refuse an OUT whose extension says another format (`out.csv`): the file would be Parquet all the same."""
    name = output.rstrip("/").rsplit("/", 1)[-1]
    ext = os.path.splitext(name)[1]
    if ext and ext.lower() not in PARQUET_EXTENSIONS:
        raise CliError(f"OUT {output} ends in {ext}, but gpuwrite writes Parquet: name it {name[:-len(ext)]}.parquet "
                       f"(gpuwrite write IN OUT reads IN and writes OUT), or pass --any-extension to write Parquet "
                       f"there anyway")


# -- inspect ------------------------------------------------------------------------------------------------


def _cmd_inspect(args: argparse.Namespace) -> int:
    """`gpuwrite inspect PATH`: a summary (default), every page (--pages), the page indexes (--index), the
    first rows (--head) or JSON, of a file; a dataset summary of a directory."""
    if not os.path.exists(args.file):
        raise FileNotFoundError(2, "No such file or directory", args.file)
    is_dir = os.path.isdir(args.file)
    if is_dir and (args.pages or args.index or args.column):
        raise CliError(f"{args.file} is a directory: --pages, --index and --column describe one file")
    try:
        info = inspect(args.file)
    except GpuwriteError as exc:
        raise CliError(f"{args.file}: not a readable Parquet file: {exc}") from exc
    if args.json:
        print(json.dumps(_only_columns(info, args.column), indent=2, allow_nan=False))
    elif is_dir:
        print(format_dataset(info))
    else:
        views = [format_inspect] if args.pages else []
        views += [format_page_index] if args.index else []
        for view in views or [format_summary]:
            print(view(info, args.column))
    if args.head:
        print()
        readable = [f["path"] for f in info["files"]] if is_dir else None
        print("\n".join(preview(args.file, args.head, _top_level(info, args.column), readable)))
    return EXIT_OK


def _only_columns(info: dict[str, Any], columns: list[str] | None) -> dict[str, Any]:
    """The description with only the chunks of the chosen columns (all when none are chosen)."""
    if not columns or info.get("kind") == "dataset":
        return info
    from ..inspection.text import select_columns
    from ..inspection.values import leaves

    chosen = set(select_columns([leaf["path"] for leaf in leaves(info["footer"]["schema"])], columns))
    groups = [{**rg, "columns": [cc for cc in rg["columns"] if cc["path"] in chosen]} for rg in info["row_groups"]]
    return {**info, "row_groups": groups}


def _top_level(info: dict[str, Any], columns: list[str] | None) -> list[str] | None:
    """The top-level columns (what a row preview selects) holding the chosen leaves."""
    if not columns:
        return None
    return list(dict.fromkeys(name.split(".")[0] for name in columns))


# -- warmup -------------------------------------------------------------------------------------------------


def _cmd_warmup(args: argparse.Namespace) -> int:
    """`gpuwrite warmup`: compile or load every CPU kernel (and with --device gpu every CUDA kernel), with a
    one-line notice and a moving step bar."""
    from .warmup import warmup

    if args.device == "gpu":
        from ..backends import resolve_device

        try:
            resolve_device("gpu")
        except GpuwriteError as exc:
            print(f"gpuwrite warmup --device gpu needs a GPU the GPU backend can use, and found none: {exc}",
                  file=sys.stderr)
            return EXIT_FAILED

    kernel_cache.install()
    bar = None if args.quiet else ProgressBar(None, sys.stderr, delay_s=0.0, unit="steps", verb="done")
    if bar is None:
        kernel_cache.WATCH.claim()  # quiet: no compile notice either
    done = [0]

    def report(step: int, of: int, label: str) -> None:
        done[0] = step
        if bar is None:
            return
        if step == 0:
            print(f"gpuwrite warmup: compiling CPU kernels into numba's cache at {kernel_cache.cache_dir()} "
                  "(once per install; later runs load them)", file=sys.stderr, flush=True)
            bar.total = of
            bar.start(lambda: done[0])
        bar.note = label

    outcome = "failed"
    try:
        result = warmup(report)
        done[0] = result.steps
        outcome = "done"
    finally:
        if bar is not None:
            bar.note = ""
            bar.finish(outcome)
    if not args.quiet:
        print(f"gpuwrite warmup: {result.compiled} kernel signature(s) compiled, {result.loaded} loaded from the "
              f"cache, in {result.seconds:.1f} s; cache: {result.cache_dir}")
    if args.device == "gpu":
        from .warmup import warmup_gpu

        gpu = warmup_gpu()
        if not args.quiet:
            print(f"gpuwrite warmup --device gpu: {gpu.compiled} CUDA kernel signature(s) compiled, {gpu.loaded} "
                  f"loaded from the cache, in {gpu.seconds:.1f} s; cache: {gpu.cache_dir}")
    return EXIT_OK


# -- clean --------------------------------------------------------------------------------------------------


def _cmd_clean(args: argparse.Namespace) -> int:
    """List the leftovers at a path; with --force clean the stale ones."""
    from ..dataset.leftovers import STALE_AGE_S, clean, find
    from ..dataset.publish import interrupted

    older_than = STALE_AGE_S if args.older_than is None else args.older_than
    items = find(args.path, older_than)
    for item in items:
        if not item.stale:
            print(f"keep     {item.kind:7} {item.path}  ({item.why})")
            continue
        action = "restore" if item.kind in ("staging", "job") and interrupted(item.path) else "remove"
        if args.force:
            outcome = clean(item, older_than)
            print(f"{outcome:8} {item.kind:7} {item.path}  ({item.why})")
        else:
            print(f"{action:8} {item.kind:7} {item.path}  ({item.why})")
    if not items:
        print(f"nothing to clean at {args.path}")
    elif not args.force and any(i.stale for i in items):
        print("dry run: nothing was changed; add --force to clean", file=sys.stderr)
    return EXIT_OK


# -- demo ---------------------------------------------------------------------------------------------------


def _cmd_demo(args: argparse.Namespace) -> int:
    """`gpuwrite demo`: write store_sales with gpuwrite, verify it, and time it against the other writers."""
    from .demo import run

    return run(args.rows, args.compression, args.out, args.keep)


if __name__ == "__main__":
    sys.exit(main())
