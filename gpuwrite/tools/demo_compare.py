"""The writers `gpuwrite demo` times gpuwrite against (pyarrow, polars, DuckDB): each writes the same Arrow table
to a Parquet file, its first file read back value by value, then all are timed in interleaved rounds; and the
table of results the demo prints."""

from __future__ import annotations

import gc
import importlib
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

PEERS = ("pyarrow", "polars", "duckdb")
"""The other writers, in the order the demo lists them; pyarrow is a core dependency, the others the [demo] extra."""

INSTALL_HINT = "pip install 'gpuwrite[demo]'"


@dataclass
class Contender:
    """One writer in the comparison: name and version, write(path), its file's path, what it measured, and the
    error that dropped it (None while it runs)."""

    name: str
    version: str
    write: Callable[[str], object]
    path: str
    warmed: bool = False
    samples: list[float] = field(default_factory=list)
    size: int = 0
    error: str | None = None
    close: Callable[[], object] | None = None


def peer_codec(name: str, codec: str) -> str:
    """The name a peer writer gives gpuwrite's codec (pyarrow: 'none' for uncompressed; polars: 'lz4' for
    LZ4_RAW, which is the codec it writes under that name)."""
    if name == "pyarrow":
        return {"uncompressed": "none"}.get(codec, codec)
    if name == "polars":
        return {"lz4_raw": "lz4"}.get(codec, codec)
    return codec


def prepare(name: str, table: pa.Table, codec: str, path: str) -> Contender | str:
    """The named peer ready to write `table` to `path` (converted to its own in-memory format here, outside any
    timing), or why it cannot run here (not installed); only the file write is timed later."""
    if name not in PEERS:
        raise ValueError(f"unknown writer {name!r} (known: {', '.join(PEERS)})")
    try:
        module: Any = importlib.import_module(name)
    except ImportError:
        return f"{name} is not installed here ({INSTALL_HINT} adds it); skipped"
    version = str(getattr(module, "__version__", "?"))
    compression = peer_codec(name, codec)
    if name == "pyarrow":
        import pyarrow.parquet as pq

        return Contender(name, version, lambda p: pq.write_table(table, p, data_page_version="2.0",
                                                                 compression=compression), path)
    if name == "polars":
        frame = module.from_arrow(table)
        return Contender(name, version, lambda p: frame.write_parquet(p, compression=compression), path)
    con = module.connect()  # duckdb: a native table, as DuckDB writes from its own storage
    con.register("arrow_input", table)
    con.execute("CREATE TABLE demo AS SELECT * FROM arrow_input")
    con.unregister("arrow_input")
    options = f"FORMAT parquet, COMPRESSION {compression}, PARQUET_VERSION v2"
    return Contender(name, version,
                     lambda p: con.execute(f"COPY demo TO '{p.replace(chr(39), chr(39) * 2)}' ({options})"),
                     path, close=con.close)


def settings(name: str, codec: str) -> str:
    """How the demo calls a peer writer, for the report."""
    compression = peer_codec(name, codec)
    return {"pyarrow": f'pq.write_table(data_page_version="2.0", compression="{compression}")',
            "polars": f'DataFrame.write_parquet(compression="{compression}")',
            "duckdb": f"COPY ... (FORMAT parquet, COMPRESSION {compression}, PARQUET_VERSION v2)"}[name]


def verify(path: str, table: pa.Table) -> None:
    """Raise unless pyarrow reads back from `path` every row and value of `table` (cast to its types: polars and
    DuckDB write every column nullable); one column at a time, so the check holds one column in memory."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    names = file.schema_arrow.names
    if file.metadata.num_rows != table.num_rows or names != table.column_names:
        raise ValueError(f"read back {file.metadata.num_rows:,} rows with columns {names}, wrote "
                         f"{table.num_rows:,} rows with columns {table.column_names}")
    differ = [n for n in names
              if not file.read(columns=[n])[n].cast(table.schema.field(n).type).equals(table[n])]
    if differ:
        raise ValueError(f"read back values that differ from the input in {', '.join(differ)}")


def _write(contender: Contender) -> float:
    """Write once to the contender's path (a fresh file), after a garbage collection; the seconds it took (the
    file's size is kept on the contender)."""
    if os.path.exists(contender.path):
        os.remove(contender.path)
    gc.collect()
    start = time.perf_counter()
    contender.write(contender.path)
    seconds = time.perf_counter() - start
    contender.size = os.path.getsize(contender.path)
    return seconds


def _drop(contender: Contender, exc: BaseException) -> None:
    """Take a failed contender out of the rounds, keeping why."""
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    contender.error = text if len(text) <= 200 else text[:197] + "..."


def run_rounds(contenders: Sequence[Contender], table: pa.Table, rounds: int) -> None:
    """One untimed warm-up write for each contender not yet warmed, its file read back and checked against
    `table`; then `rounds` timed rounds, each contender once per round in an order that rotates by one, so drift
    in the machine's state hits every writer alike. A contender that fails is dropped with its error."""
    for contender in contenders:
        if contender.warmed:
            continue
        try:
            _write(contender)
            verify(contender.path, table)
            contender.warmed = True
        except Exception as exc:
            _drop(contender, exc)
    for index in range(rounds):
        shift = index % max(len(contenders), 1)
        for contender in [*contenders[shift:], *contenders[:shift]]:
            if contender.error is not None:
                continue
            try:
                contender.samples.append(_write(contender))
            except Exception as exc:
                _drop(contender, exc)


def results_table(contenders: Sequence[Contender], input_bytes: int) -> list[str]:
    """The result lines: per writer its median seconds, MB/s of Arrow input, time against the first contender
    (gpuwrite), file size and every run; a dropped writer gets its error."""
    rows = [["writer", "median s", "MB/s", "vs gpuwrite", "file MB", "runs (s)"]]
    failed: list[str] = []
    subject = statistics.median(contenders[0].samples) if contenders and contenders[0].samples else None
    for c in contenders:
        if c.error is not None or not c.samples:
            failed.append(f"  {c.name} {c.version}: dropped: {c.error or 'no timed run'}")
            continue
        median = statistics.median(c.samples)
        if c is contenders[0] or subject is None:
            relative = "-"
        elif median >= subject:
            relative = f"{median / subject:.2f}x slower"
        else:
            relative = f"{subject / median:.2f}x faster"
        rows.append([f"{c.name} {c.version}", f"{median:.3f}", f"{input_bytes / 1e6 / median:,.0f}", relative,
                     f"{c.size / 1e6:,.1f}", ", ".join(f"{s:.2f}" for s in c.samples)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  " + "  ".join(cell.ljust(widths[i]) if i in (0, 5) else cell.rjust(widths[i])
                              for i, cell in enumerate(r)).rstrip() for r in rows]
    return lines + failed
