"""The gpuwrite command: write from Parquet, Arrow IPC and CSV, inspect, errors without tracebacks, the demo."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from gpuwrite.tools.cli import CSV_BLOCK_BYTES, main
from gpuwrite.tools.demo_data import store_sales_table

REPO = Path(__file__).resolve().parents[2]
GPUWRITE = REPO / ".venv" / "bin" / "gpuwrite"


@pytest.fixture(scope="module")
def table() -> pa.Table:
    """A small store_sales table: nullable ints, non-nullable keys and decimals."""
    return store_sales_table(30_000)


def _files(folder: Path) -> set[str]:
    """Names in a folder, hidden temporary files included."""
    return {p.name for p in folder.iterdir()}


def test_write_from_parquet(tmp_path: Path, table: pa.Table, capsys: pytest.CaptureFixture[str]) -> None:
    """A Parquet input read batch by batch comes back equal, and the summary line names rows and bytes."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src, row_group_size=7_000)
    assert main(["write", str(src), str(out)]) == 0
    assert pq.read_table(out).equals(table)
    summary = capsys.readouterr().out
    assert "wrote 30,000 rows" in summary and f"{out.stat().st_size:,} bytes" in summary and "MB/s" in summary


@pytest.mark.parametrize("stream", [False, True], ids=["ipc-file", "ipc-stream"])
def test_write_from_arrow_ipc(tmp_path: Path, table: pa.Table, stream: bool,
                              capsys: pytest.CaptureFixture[str]) -> None:
    """Arrow IPC files and streams (by extension) come back equal; --progress draws the bar on stderr, ending
    when every row is encoded (the row count is known for IPC files only)."""
    src, out = tmp_path / ("in.arrows" if stream else "in.arrow"), tmp_path / "out.parquet"
    opener = pa.ipc.new_stream if stream else pa.ipc.new_file
    with opener(src, table.schema) as w:
        w.write_table(table, max_chunksize=4_000)
    assert main(["write", str(src), str(out), "--progress", "--compression", "zstd"]) == 0
    assert pq.read_table(out).equals(table)
    assert pq.ParquetFile(out).metadata.row_group(0).column(0).compression == "ZSTD"
    last = capsys.readouterr().err.rstrip().splitlines()[-1]
    assert last.startswith("30,000 rows encoded") if stream else "100.0%  30,000/30,000 rows encoded" in last
    assert last.endswith("done")


def test_write_to_uris(tmp_path: Path, table: pa.Table, capsys: pytest.CaptureFixture[str]) -> None:
    """The output may be a URI: `file://` (the local path, nothing else left in the directory) and fsspec's
    `memory://`."""
    fsspec = pytest.importorskip("fsspec")
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["write", str(src), f"file://{out}/t.parquet"]) == 0
    assert pq.read_table(out / "t.parquet").equals(table) and _files(out) == {"t.parquet"}
    assert f"to file://{out}/t.parquet" in capsys.readouterr().out
    memory = fsspec.filesystem("memory")
    try:
        assert main(["write", str(src), "memory://cli-test/t.parquet"]) == 0
        assert memory.find("/cli-test") == ["/cli-test/t.parquet"]
        assert pq.read_table("/cli-test/t.parquet", filesystem=memory).equals(table)
    finally:
        memory.rm("/cli-test", recursive=True)


def test_write_sniffs_magic_without_extension(tmp_path: Path, table: pa.Table) -> None:
    """With no known extension the input's magic bytes decide: PAR1 is Parquet, ARROW1 is IPC."""
    parquet_src, ipc_src = tmp_path / "parquet.bin", tmp_path / "ipc.bin"
    pq.write_table(table, parquet_src)
    with pa.ipc.new_file(ipc_src, table.schema) as w:
        w.write_table(table)
    for src in (parquet_src, ipc_src):
        out = tmp_path / f"{src.stem}.parquet"
        assert main(["write", str(src), str(out), "--quiet"]) == 0
        assert pq.read_table(out).equals(table)


def test_write_from_csv_with_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CSV is read as pyarrow infers it; flags set the codec, page size and dictionary use."""
    src, out = tmp_path / "in.csv", tmp_path / "out.parquet"
    n = 5_000
    data = pa.table({"id": pa.array(range(n), pa.int64()), "price": pa.array([i / 4 for i in range(n)]),
                     "name": pa.array([f"item {i % 37}" if i % 11 else None for i in range(n)])})
    pacsv.write_csv(data, src)
    expected = pacsv.read_csv(src)
    argv = ["write", str(src), str(out), "--quiet", "--compression", "gzip", "--page-size", "4K",
            "--no-dictionary", "--option", "parquet.page.row.count.limit=1000"]
    assert main(argv) == 0
    assert capsys.readouterr().out == ""
    assert pq.read_table(out).equals(expected)
    col = pq.ParquetFile(out).metadata.row_group(0).column(0)
    assert col.compression == "GZIP" and not col.has_dictionary_page


def test_bad_option_is_an_error_and_leaves_nothing(tmp_path: Path, table: pa.Table,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A v1 writer version exits 2 with one line naming the option, no traceback, and no file at OUT."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    before = _files(tmp_path)
    assert main(["write", str(src), str(out), "--option", "parquet.writer.version=v1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuwrite: error: ") and "parquet.writer.version" in err
    assert "Traceback" not in err and err.count("\n") == 1
    assert not out.exists() and _files(tmp_path) == before


def test_missing_input_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing input exits 2 naming the file, and writes nothing."""
    out = tmp_path / "out.parquet"
    assert main(["write", str(tmp_path / "missing.csv"), str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuwrite: error: ") and "missing.csv" in err and "No such file" in err
    assert _files(tmp_path) == set()


def test_unknown_input_kind_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An input with neither a known extension nor Parquet/Arrow magic exits 2."""
    src = tmp_path / "data.bin"
    src.write_bytes(b"hello, world\n")
    assert main(["write", str(src), str(tmp_path / "out.parquet")]) == 2
    assert "cannot tell what kind of file" in capsys.readouterr().err
    assert _files(tmp_path) == {"data.bin"}


def test_failure_mid_stream_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A CSV whose later block does not fit the inferred type fails after rows were written: no file at OUT."""
    src, out = tmp_path / "late.csv", tmp_path / "out.parquet"
    rows = CSV_BLOCK_BYTES // 2 + 1_000
    src.write_bytes(b"n\n" + b"7\n" * rows + b"not a number\n")
    assert main(["write", str(src), str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuwrite: error: ") and "Traceback" not in err
    assert _files(tmp_path) == {"late.csv"}


def test_inspect_text_and_json(tmp_path: Path, table: pa.Table, capsys: pytest.CaptureFixture[str]) -> None:
    """inspect prints a summary with a line per column; --pages one line per page; --json the same description
    as parseable JSON."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    assert main(["write", str(src), str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["inspect", str(out)]) == 0
    summary = capsys.readouterr().out
    assert "created by gpuwrite" in summary and "DATA_PAGE_V2" in summary
    assert sum(1 for line in summary.splitlines() if line.startswith("ss_")) == table.num_columns
    assert main(["inspect", str(out), "--pages"]) == 0
    text = capsys.readouterr().out
    assert "DATA_PAGE_V2" in text and "ss_ticket_number" in text and "created by gpuwrite" in text
    assert main(["inspect", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["footer"]["num_rows"] == table.num_rows
    chunks = [c for rg in info["row_groups"] for c in rg["columns"]]
    assert len(chunks) == table.num_columns * len(info["row_groups"])
    assert {p["type"] for c in chunks for p in c["pages"]} <= {"DATA_PAGE_V2", "DICTIONARY_PAGE"}
    assert sum(len(c["pages"]) for c in chunks) == text.count("DATA_PAGE_V2  ") + text.count("DICTIONARY_PAGE  ")


def test_inspect_not_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """inspect on a file that is not Parquet exits 2 with a one-line message."""
    src = tmp_path / "x.csv"
    src.write_text("a,b\n1,2\n")
    assert main(["inspect", str(src)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuwrite: error: ") and "not a readable Parquet file" in err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """No command, or a malformed size, is a usage error (exit 2) rather than an exception."""
    assert main([]) == 2
    assert main(["write", "a.csv", "b.parquet", "--page-size", "12x"]) == 2
    assert "not a size in bytes" in capsys.readouterr().err


def test_write_flags_named_and_sized_as_pyarrow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--row-group-size counts rows (pyarrow's row_group_size), --row-group-bytes is parquet.block.size,
    --data-page-size (or --page-size) bytes, --compression none is uncompressed, --compression-level sets the level:
    the same bytes as the API's keywords."""
    table = pa.table({"a": pa.array(range(3_000), pa.int64()), "s": [f"value {i * 7_919}" for i in range(3_000)]})
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    out = tmp_path / "rows.parquet"
    assert main(["write", str(src), str(out), "--quiet", "--row-group-size", "1_000", "--compression", "none",
                 "--data-page-size", "4K"]) == 0
    meta = pq.read_metadata(out)
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [1_000] * 3
    assert meta.row_group(0).column(0).compression == "UNCOMPRESSED"
    gpuwrite_api = __import__("gpuwrite")
    gpuwrite_api.write_table(table, tmp_path / "api.parquet", row_group_size=1_000, compression=None,
                             data_page_size=4_096)
    assert out.read_bytes() == (tmp_path / "api.parquet").read_bytes()
    by_bytes = tmp_path / "bytes.parquet"
    assert main(["write", str(src), str(by_bytes), "--quiet", "--row-group-bytes", "8K", "--page-size", "4K",
                 "--compression", "zstd", "--compression-level", "7"]) == 0
    gpuwrite_api.write_table(table, tmp_path / "api2.parquet", block_size=8_192, page_size=4_096,
                             compression="zstd", compression_level=7)
    assert by_bytes.read_bytes() == (tmp_path / "api2.parquet").read_bytes()
    assert pq.read_metadata(by_bytes).num_row_groups > 1


def test_row_group_size_with_a_size_suffix_points_at_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    """A byte size given to --row-group-size (its old meaning) is refused, pointing at --row-group-bytes."""
    assert main(["write", "a.parquet", "b.parquet", "--row-group-size", "128M"]) == 2
    assert "--row-group-size counts rows" in capsys.readouterr().err


def test_unknown_flag_suggests_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    """A misspelt flag is a usage error naming the closest flag of the command."""
    assert main(["write", "a.parquet", "b.parquet", "--row-group-sise", "10"]) == 2
    assert "unrecognized arguments: --row-group-sise (did you mean '--row-group-size'?) 10" in capsys.readouterr().err
    assert main(["inspect", "a.parquet", "--colunm", "x"]) == 2
    assert "(did you mean '--column'?)" in capsys.readouterr().err


def test_widen_unsigned_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unsigned input is refused with the flag that fixes it; --widen-unsigned writes it widened."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"u": pa.array([0, 2**32 - 1], pa.uint32())}), src)
    assert main(["write", str(src), str(out)]) == 2
    assert "cast it to int64" in (err := capsys.readouterr().err) and "pass --widen-unsigned" in err
    assert not out.exists()
    assert main(["write", str(src), str(out), "--quiet", "--widen-unsigned"]) == 0
    back = pq.read_table(out)
    assert back.column("u").type == pa.int64() and back.column("u").to_pylist() == [0, 2**32 - 1]


def test_demo_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """demo writes, verifies, and times gpuwrite against pyarrow, polars and DuckDB in one table; --out keeps
    gpuwrite's file."""
    out = tmp_path / "demo.parquet"
    assert main(["demo", "--rows", "20000", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "verified             yes" in text and "every value equals the input" in text
    assert "first write (cold)" in text and "RLE_DICTIONARY" in text
    header = next(line for line in text.splitlines() if line.lstrip().startswith("writer "))
    assert header.split() == ["writer", "median", "s", "MB/s", "vs", "gpuwrite", "file", "MB", "runs", "(s)"]
    rows = {line.split()[0]: line.split() for line in text.splitlines()[text.splitlines().index(header) + 1:]
            if line.strip() and line.split()[0] in ("gpuwrite", "pyarrow", "polars", "duckdb")}
    assert set(rows) == {"gpuwrite", "pyarrow", "polars", "duckdb"}
    assert rows["gpuwrite"][4] == "-" and all(rows[w][5] in ("slower", "faster") for w in ("pyarrow", "polars"))
    assert rows["gpuwrite"][5] == f"{out.stat().st_size / 1e6:.1f}"
    assert pq.read_table(out).equals(store_sales_table(20_000))


def test_demo_console_script(tmp_path: Path) -> None:
    """The installed `gpuwrite` script runs the demo end to end and exits 0."""
    if not GPUWRITE.exists():
        pytest.skip(f"{GPUWRITE} is not installed")
    done = subprocess.run([str(GPUWRITE), "demo", "--rows", "5000"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "verified             yes" in done.stdout


def test_device_flag(tmp_path: Path, table: pa.Table, capsys: pytest.CaptureFixture[str]) -> None:
    """--device cpu writes; --device gpu on a machine without a GPU exits 2 naming what is missing."""
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(table, src)
    assert main(["write", str(src), str(out), "--device", "cpu", "--quiet"]) == 0
    assert pq.read_table(out).num_rows == table.num_rows
    out.unlink()
    assert main(["write", str(src), str(out), "--device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert "device='gpu'" in err and "GPU backend cannot run here" in err
    assert not out.exists()


@pytest.mark.parametrize("out", ["out.csv", "out.parquet.json", "s3://bucket/out.txt"])
def test_output_extension_that_is_not_parquet_is_refused(tmp_path: Path, table: pa.Table, out: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`gpuwrite write a.parquet out.csv` wrote Parquet into out.csv without a word: it exits 2 naming OUT and
    the flag that writes it anyway, before reading anything; nothing is written."""
    src = tmp_path / "a.parquet"
    pq.write_table(table, src)
    target = out if "://" in out else str(tmp_path / out)
    assert main(["write", str(src), target]) == 2
    err = capsys.readouterr().err
    assert f"OUT {target} ends in " in err and "gpuwrite writes Parquet" in err and "--any-extension" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet"]


@pytest.mark.parametrize("out", ["out.parquet", "out.PARQ", "out.pq", "out"])
def test_parquet_extensions_and_the_override(tmp_path: Path, table: pa.Table, out: str) -> None:
    """.parquet, .parq, .pq (any case) and no extension are written; --any-extension writes any name."""
    src = tmp_path / "a.parquet"
    pq.write_table(table, src)
    assert main(["write", str(src), str(tmp_path / out), "--quiet"]) == 0
    assert pq.read_table(tmp_path / out).num_rows == table.num_rows
    assert main(["write", str(src), str(tmp_path / "out.csv"), "--any-extension", "--quiet"]) == 0
    assert pq.read_table(tmp_path / "out.csv").num_rows == table.num_rows


def test_tilde_paths(tmp_path: Path, table: pa.Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """A quoted `~/...` (which the shell leaves alone) is the home directory for write and inspect."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    pq.write_table(table, tmp_path / "a.parquet")
    assert main(["write", "~/a.parquet", "~/b.parquet", "--quiet"]) == 0
    assert pq.read_table(tmp_path / "b.parquet").num_rows == table.num_rows
    assert main(["inspect", "~/b.parquet"]) == 0
    assert not (tmp_path / "~").exists()
