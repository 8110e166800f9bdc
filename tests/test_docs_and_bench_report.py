"""docs/options.md covers every option and its examples run; bench/report.py turns results into a table, a
chart and README sections."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuwrite import WriteOptions
from gpuwrite.options import _CODEC_KEYS, _KEYS, _BloomKeys

REPO = Path(__file__).resolve().parents[1]
OPTIONS_DOC = REPO / "docs" / "options.md"


def test_options_doc_names_every_field_and_key() -> None:
    """Each WriteOptions field has a table row, and every key the options parser accepts is named."""
    text = OPTIONS_DOC.read_text()
    rows = {m.group(1) for m in re.finditer(r"^\| `(\w+)` \|", text, re.MULTILINE)}
    fields = {f.name for f in dataclasses.fields(WriteOptions)}
    assert fields <= rows, f"fields without a row in docs/options.md: {sorted(fields - rows)}"
    keys = {*_KEYS, *_CODEC_KEYS, *_BloomKeys.GLOBAL, *_BloomKeys.PER_COLUMN}
    missing = sorted(k for k in keys if f"`{k}" not in text)
    assert not missing, f"keys not in docs/options.md: {missing}"


def test_options_doc_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The python blocks of docs/options.md run in order, and each writes what it says it writes."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    blocks = re.findall(r"```python\n(.*?)```", OPTIONS_DOC.read_text(), re.DOTALL)
    assert len(blocks) >= 8
    for block in blocks:
        exec(compile(block, str(OPTIONS_DOC), "exec"), namespace)
    import pyarrow.parquet as pq

    assert pq.ParquetFile("zstd.parquet").metadata.row_group(0).column(0).compression == "ZSTD"
    assert pq.ParquetFile("small_groups.parquet").metadata.num_row_groups == 1  # 10k rows, 8 MiB groups
    assert not pq.ParquetFile("no_dict_id.parquet").metadata.row_group(0).column(0).has_dictionary_page
    assert pq.ParquetFile("plain_fallback.parquet").metadata.row_group(0).column(0).encodings == ("PLAIN",)
    assert pq.ParquetFile("bloom.parquet").metadata.row_group(0).column(0).bloom_filter_offset is not None
    assert sorted(os.listdir("cities")) == ["_SUCCESS", "city=Kyiv", "city=Lima", "city=Oslo", "city=Pune"]


def _report() -> ModuleType:
    """bench/report.py as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_report", REPO / "bench" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(rows: int, codec: str, seconds: dict[str, float | None]) -> dict[str, Any]:
    """A result in write_bench.py's shape: seconds per writer (None: an error row)."""
    size = {"gpuwrite": 90e6, "pyarrow": 100e6, "polars": 95e6, "duckdb": 110e6}
    results = []
    for writer, s in seconds.items():
        if s is None:
            results.append({"writer": writer, "error": "ImportError: no module named duckdb"})
            continue
        results.append({"writer": writer, "median_s": s, "gb_per_s": 0.7 / s, "size_bytes": size[writer],
                        "samples_s": [s], "speed_vs_pyarrow": seconds["pyarrow"] / s,  # type: ignore[operator]
                        "size_vs_pyarrow": size[writer] / size["pyarrow"]})
    return {"rows": rows, "codec": codec, "results": results,
            "machine": {"cpu_model": "Test CPU 9000", "cpu_count": 16, "usable_cpus": 8, "platform": "Linux",
                        "python": "3.11.9", "versions": {"gpuwrite": "0.1.0", "pyarrow": "26.0.1"}}}


def test_bench_report_table_chart_and_readme(tmp_path: Path) -> None:
    """The markdown has a row per writer and run with its numbers, states the machine, names where another
    writer is faster; the chart is a PNG; README sections between the markers are replaced, the rest kept."""
    report = _report()
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"runs": [
        _run(2_880_404, "snappy", {"gpuwrite": 2.0, "pyarrow": 3.0, "polars": 1.6, "duckdb": None}),
        _run(100_000, "zstd", {"gpuwrite": 0.5, "pyarrow": 0.6, "polars": 0.55, "duckdb": 0.7})]}))
    readme = tmp_path / "docs" / "README.md"
    readme.parent.mkdir()
    readme.write_text(f"# Title\n\nbefore\n{report.START}\nold table\n{report.END}\nafter\n")
    md, png = tmp_path / "out" / "bench.md", tmp_path / "out" / "bench.png"
    md.parent.mkdir()
    assert report.main([str(results), "--markdown", str(md), "--plot", str(png), "--readme", str(readme)]) == 0
    text = md.read_text()
    assert "| 2,880,404 rows, snappy, 8 cores | **gpuwrite** | 2.000 | 0.350 | 90.0 | 1.50x | 0.90x |" in text
    assert "| 100,000 rows, zstd, 8 cores | polars | 0.550 | 1.273 | 95.0 | 1.09x | 0.95x |" in text
    assert "| 2,880,404 rows, snappy, 8 cores | duckdb | error: ImportError: no module named duckdb" in text
    assert "Test CPU 9000 (8 of 16 cores usable)" in text and "pyarrow 26.0.1" in text
    assert "Faster than gpuwrite here: polars (1.25x) at 2,880,404 rows, snappy, 8 cores." in text
    assert "![Parquet write throughput, GB/s of Arrow input](bench.png)" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000
    updated = readme.read_text()
    assert updated.startswith("# Title\n\nbefore\n") and updated.endswith(f"{report.END}\nafter\n")
    assert "old table" not in updated and "](../out/bench.png)" in updated and "**gpuwrite**" in updated


def test_bench_report_when_gpuwrite_is_fastest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A single run file (write_bench.py's own shape) prints its table, saying no writer was faster."""
    report = _report()
    results = tmp_path / "one.json"
    results.write_text(json.dumps(_run(1_000, "snappy", {"gpuwrite": 1.0, "pyarrow": 2.0, "polars": 1.5,
                                                         "duckdb": 1.2})))
    assert report.main([str(results)]) == 0
    out = capsys.readouterr().out
    assert out.count("| 1,000 rows, snappy, 8 cores |") == 4 and "No other writer was faster" in out
    with pytest.raises(ValueError, match="bench-report"):
        report.embed(tmp_path / "one.json", "x")
