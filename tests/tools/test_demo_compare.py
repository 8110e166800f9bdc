"""The demo's comparison: each peer writes the same table with the codec asked for, files are checked value by
value, rounds interleave and drop a failing writer, a writer not installed is skipped, and the result table."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpuwrite.tools.demo import run
from gpuwrite.tools.demo_compare import PEERS, Contender, prepare, results_table, run_rounds, verify
from gpuwrite.tools.demo_data import store_sales_table


@pytest.fixture(scope="module")
def table() -> pa.Table:
    """A small store_sales table: non-nullable keys, nulls and decimals, as the demo writes."""
    return store_sales_table(3_000)


@pytest.mark.parametrize("codec, written", [("zstd", "ZSTD"), ("lz4_raw", "LZ4"), ("uncompressed", "UNCOMPRESSED")])
@pytest.mark.parametrize("name", PEERS)
def test_each_peer_writes_the_table_with_the_codec(tmp_path: Path, table: pa.Table, name: str, codec: str,
                                                   written: str) -> None:
    """pyarrow, polars and DuckDB write the same rows and values under gpuwrite's codec name, to the path given
    (a quote in it included)."""
    path = str(tmp_path / "it's.parquet")
    peer = prepare(name, table, codec, path)
    assert isinstance(peer, Contender) and peer.name == name and peer.version not in ("", "?")
    try:
        peer.write(peer.path)
    finally:
        if peer.close is not None:
            peer.close()
    verify(path, table)
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == written


def test_a_writer_not_installed_is_skipped_with_how_to_add_it(table: pa.Table, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer whose module cannot be imported is a sentence naming it and the extra that installs it."""
    monkeypatch.setitem(sys.modules, "polars", None)
    said = prepare("polars", table, "snappy", str(tmp_path / "p.parquet"))
    assert said == "polars is not installed here (pip install 'gpuwrite[demo]' adds it); skipped"
    with pytest.raises(ValueError, match="unknown writer 'fastparquet'"):
        prepare("fastparquet", table, "snappy", str(tmp_path / "f.parquet"))


def test_verify_refuses_other_values_or_rows(tmp_path: Path, table: pa.Table) -> None:
    """A file whose rows or values differ from the input does not pass."""
    short, changed = tmp_path / "short.parquet", tmp_path / "changed.parquet"
    pq.write_table(table.slice(1), short)
    with pytest.raises(ValueError, match="read back 2,999 rows"):
        verify(str(short), table)
    other = table.set_column(10, "ss_quantity", pa.array([7] * table.num_rows, pa.int32()))
    pq.write_table(other, changed)
    with pytest.raises(ValueError, match="differ from the input in ss_quantity$"):
        verify(str(changed), table)


def test_rounds_interleave_warm_up_once_and_drop_a_failing_writer(tmp_path: Path, table: pa.Table) -> None:
    """Each writer not yet warmed writes once untimed (its file checked), then once per round in an order that
    rotates; a writer whose file does not read back as the input is dropped with why, before any timed round."""
    order: list[str] = []

    def writer(name: str, data: pa.Table) -> Contender:
        def write(path: str) -> None:
            order.append(name)
            pq.write_table(data, path)
        return Contender(name, "1", write, str(tmp_path / f"{name}.parquet"), warmed=name == "a")

    a, b, c = writer("a", table), writer("b", table), writer("bad", table.slice(5))
    run_rounds([a, b, c], table, 3)
    assert order == ["b", "bad", "a", "b", "b", "a", "a", "b"]
    assert len(a.samples) == len(b.samples) == 3 and not c.samples
    assert c.error is not None and "read back 2,995 rows" in c.error
    assert a.size == (tmp_path / "a.parquet").stat().st_size > 0


def test_results_table_compares_with_gpuwrite() -> None:
    """Median seconds, MB/s of input, time against the first writer, file MB and the runs, aligned; a dropped
    writer is named with its error."""
    ours = Contender("gpuwrite", "0.1.0", print, "g", samples=[0.5, 0.4, 0.6], size=104_049_609)
    slow = Contender("pyarrow", "26.0.1", print, "p", samples=[2.0, 2.2, 1.9], size=128_476_941)
    fast = Contender("polars", "2.1.0", print, "l", samples=[0.25, 0.3, 0.2], size=153_400_000)
    gone = Contender("duckdb", "1.5.5", print, "d", error="IOException: disk full")
    lines = results_table([ours, slow, fast, gone], 700_000_000)
    assert [line.split() for line in lines[1:4]] == [
        ["gpuwrite", "0.1.0", "0.500", "1,400", "-", "104.0", "0.50,", "0.40,", "0.60"],
        ["pyarrow", "26.0.1", "2.000", "350", "4.00x", "slower", "128.5", "2.00,", "2.20,", "1.90"],
        ["polars", "2.1.0", "0.250", "2,800", "2.00x", "faster", "153.4", "0.25,", "0.30,", "0.20"]]
    assert lines[4] == "  duckdb 1.5.5: dropped: IOException: disk full"
    right = lines[0].index("median s") + len("median s")  # numbers end under their heading
    assert lines[1].index("0.500") + 5 == lines[2].index("2.000") + 5 == right


def test_demo_run_says_which_writers_it_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Without polars and DuckDB the demo says so, times gpuwrite and pyarrow, and --keep keeps only gpuwrite's
    file."""
    monkeypatch.setitem(sys.modules, "polars", None)
    monkeypatch.setitem(sys.modules, "duckdb", None)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert run(4_000, "zstd", None, keep=True) == 0
    text = capsys.readouterr().out
    assert "polars is not installed here (pip install 'gpuwrite[demo]' adds it); skipped" in text
    assert "duckdb is not installed here" in text
    table = text[text.index("  writer "):text.index("per column")]
    assert [line.split()[0] for line in table.strip().splitlines()] == ["writer", "gpuwrite", "pyarrow"]
    (kept,) = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert kept.name == "store_sales.gpuwrite.parquet" and f"kept at {kept}" in text
    assert pq.read_table(kept).equals(store_sales_table(4_000))
