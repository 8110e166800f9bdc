"""docs/options.md covers every option and its examples run; bench/report.py turns results into a table, a
chart and README sections."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuwrite import WriteOptions
from gpuwrite.options.model import _CODEC_KEYS, _KEYS, _BloomKeys

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
    batches = pq.ParquetFile("batches.parquet").metadata
    assert [batches.row_group(i).num_rows for i in range(batches.num_row_groups)] == [4_000, 4_000, 2_000]
    assert pq.read_table("stamps.parquet").column("at")[0].value == 1_700_000_000_123_456  # micros, cut


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
    readme.write_text(f"# Title\n\nbefore, between `{report.START}` and `{report.END}`\n{report.START}\nold table\n"
                      f"{report.END}\nafter\n")
    md, png = tmp_path / "out" / "bench.md", tmp_path / "out" / "bench.png"
    md.parent.mkdir()
    assert report.main([str(results), "--markdown", str(md), "--plot", str(png), "--readme", str(readme)]) == 0
    text = md.read_text()
    assert "| 2,880,404 rows, snappy, 8 cores | **gpuwrite** | 2.000 | 0.350 | 90.0 | 1.50x | 0.90x | - |" in text
    assert "| 100,000 rows, zstd, 8 cores | polars | 0.550 | 1.273 | 95.0 | 1.09x | 0.95x | - |" in text
    assert "| 2,880,404 rows, snappy, 8 cores | duckdb | error: ImportError: no module named duckdb" in text
    assert "Test CPU 9000 (8 of 16 cores usable)" in text and "pyarrow 26.0.1" in text
    assert "Faster than gpuwrite here: polars (1.25x) at 2,880,404 rows, snappy, 8 cores." in text
    assert "![Parquet write speed and file size relative to pyarrow](bench.png)" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000
    updated = readme.read_text()
    assert updated.startswith(f"# Title\n\nbefore, between `{report.START}` and `{report.END}`\n{report.START}\n")
    assert updated.endswith(f"{report.END}\nafter\n")
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


def _bench(name: str) -> ModuleType:
    """A bench/ script as a module, registered under its own name (write_bench loads its siblings by name)."""
    import sys

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_bench_tables_have_their_shapes() -> None:
    """The five tables: store_sales' schema, 5,000 names and 3..12-word texts, 64 doubles and 16 int64
    counters, lists of 0..5 structs and maps of distinct keys, sensor readings; the same seed, the same table."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tables = _bench("tables")
    from gpuwrite.tools.demo_data import STORE_SALES_SCHEMA

    assert tables.store_sales(500, 1).schema == STORE_SALES_SCHEMA
    s = tables.strings(20_000, 3)
    assert s.num_rows == 20_000 and s.column_names == ["url", "name", "comment", "status", "sku", "amount"]
    assert 1_000 < len(pc.unique(s["name"])) <= tables.NAMES and len(pc.unique(s["status"])) == 4
    assert len(pc.unique(s["sku"])) == 20_000 and pc.all(pc.starts_with(s["url"], "https://")).as_py()
    words = pc.list_value_length(pc.split_pattern(s["comment"], " "))
    assert pc.min(words).as_py() == 3 and pc.max(words).as_py() == 12
    assert s.equals(tables.strings(20_000, 3)) and not s.equals(tables.strings(20_000, 4))
    w = tables.wide(1_000, 3)
    assert w.num_columns == tables.WIDE_COLUMNS + tables.WIDE_COUNTERS
    assert w.schema.types == [pa.float64()] * tables.WIDE_COLUMNS + [pa.int64()] * tables.WIDE_COUNTERS
    assert w["d003"].null_count > 0 and len(pc.unique(w["d002"])) <= 100
    assert all(pc.all(pc.greater_equal(pc.pairwise_diff(w[f"n{i:02d}"].combine_chunks()).slice(1), 0)).as_py() for i in range(16))
    t = tables.timeseries(10_000, 3)
    assert t.column_names == ["ts", "sensor_id", "value", "status"] and t.equals(tables.timeseries(10_000, 3))
    assert t.schema.types == [pa.timestamp("us"), pa.int32(), pa.float32(), pa.string()]
    assert len(pc.unique(t["sensor_id"])) == tables.SENSORS and pc.count_distinct(t["status"]).as_py() == 4
    n = tables.nested(5_000, 3)
    lengths = pc.list_value_length(n["items"])
    assert pc.min(lengths).as_py() == 0 and pc.max(lengths).as_py() == 5
    assert n.schema.field("attrs").type == pa.map_(pa.string(), pa.int64())
    assert all(len(set(k for k, _ in m)) == len(m) for m in n["attrs"].to_pylist()[:500])


def test_write_bench_runs_every_table_and_charts_it(tmp_path: Path) -> None:
    """A tiny interleaved run: every table, every writer but Spark, timed samples, sizes, ratios to each peer,
    a JSON report.py reads, and the chart beside it; an unknown or failing writer is an error row."""
    bench = _bench("write_bench")
    out = tmp_path / "wb.json"
    assert bench.main(["--rows", "400", "--repeats", "2", "--writers", "gpuwrite,pyarrow,polars,duckdb",
                       "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [r["dataset"] for r in data["runs"]] == ["store_sales", "strings", "wide", "nested", "timeseries"]
    for run in data["runs"]:
        assert run["rows"] == 400 and run["input_bytes"] > 0
        by_name = {r["writer"]: r for r in run["results"]}
        assert set(by_name) == {"gpuwrite", "pyarrow", "polars", "duckdb"}
        for name, row in by_name.items():
            assert "median_s" in row, row
            assert len(row["samples_s"]) == len(row["cpu_samples_s"]) == 2 and row["size_bytes"] > 0
            assert row["median_cpu_s"] >= 0
            assert row["min_s"] == min(row["samples_s"]) and row["max_s"] == max(row["samples_s"])
            assert row["spread"] == pytest.approx(row["max_s"] / row["median_s"]) and row["spread"] >= 1
            assert set(row["vs"]) == set(by_name) - {name}
            peer = by_name["polars"] if name != "polars" else by_name["duckdb"]
            other = "polars" if name != "polars" else "duckdb"
            assert row["vs"][other]["speed"] == pytest.approx(peer["median_s"] / row["median_s"])
            assert row["vs"][other]["size"] == pytest.approx(row["size_bytes"] / peer["size_bytes"])
        assert by_name["pyarrow"]["speed_vs_pyarrow"] == 1.0
    png = out.with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = _report().markdown(_report().load_runs([out]))
    assert "| nested: 400 rows, snappy" in text and "**gpuwrite**" in text
    cpu = next(r for r in data["runs"][0]["results"] if r["writer"] == "gpuwrite")["median_cpu_s"]
    assert f"| {cpu:.3f} |" in text

    import pyarrow as pa

    writers = bench.make_writers(pa.table({"x": [1, 2]}), "snappy", ["pyarrow", "nonesuch"])
    assert writers[1].write is None and "unknown writer 'nonesuch'" in (writers[1].error or "")
    broken = bench.Writer("broken", write=lambda path: open(path, "wb").write(b"not parquet"))
    bench.run_rounds([broken], pa.table({"x": [1]}), 1, str(tmp_path))
    assert broken.write is None and broken.error and not broken.samples
    assert bench.summarise([broken], 10)[0] == {"writer": "broken", "error": broken.error}


def test_write_bench_decodes_each_writers_last_file_after_every_timed_round(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds check row counts only; each writer's last file is decoded in full once every round is timed (no
    long pause before the first timed round), and a writer whose file fails that is an error without timings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    bench = _bench("write_bench")
    events: list[tuple[str, object]] = []
    check = bench.check_output

    def recording(path: str, num_rows: int, full: bool) -> int:
        events.append(("check", (os.path.basename(path), full)))
        if full and "bad" in path:
            raise ValueError("does not decode")
        return check(path, num_rows, full)

    def writer(name: str) -> object:
        def write(path: str) -> None:
            events.append(("write", name))
            pq.write_table(pa.table({"x": [1, 2, 3]}), path)
        return bench.Writer(name, write=write)

    monkeypatch.setattr(bench, "check_output", recording)
    good, bad = writer("good"), writer("bad")
    bench.run_rounds([good, bad], pa.table({"x": [1, 2, 3]}), 3, str(tmp_path))
    last_write = max(i for i, (kind, _) in enumerate(events) if kind == "write")
    full = [i for i, (kind, what) in enumerate(events) if kind == "check" and what[1]]  # type: ignore[index]
    assert len(full) == 2 and min(full) > last_write
    assert len(good.samples) == 3 and good.error is None
    assert bad.samples == [] and "does not decode" in (bad.error or "")
    assert not list(tmp_path.iterdir())  # every file removed


def test_memory_bench_streams_and_states_its_bound(tmp_path: Path) -> None:
    """A tiny streamed write through gpuwrite, pyarrow and the stream alone, each in its own process: peak
    RSS, the row groups written and the bound of three row groups + a batch + the generator are reported."""
    memory = _bench("memory_bench")
    out = tmp_path / "mem.json"
    assert memory.main(["--rows", "30000", "--batch-rows", "10000", "--cases", "stream", "--out", str(out),
                        "--tmp", str(tmp_path)]) == 0
    rows = {r["tool"]: r for r in json.loads(out.read_text())["results"]}
    assert set(rows) == {"gpuwrite", "pyarrow", "none"} and not any("error" in r for r in rows.values())
    assert rows["none"]["file_size"] == 0 and "bound" not in rows["none"]
    for tool in ("gpuwrite", "pyarrow"):
        row = rows[tool]
        assert row["peak_rss"] >= row["rss_before"] > 0 and row["file_size"] > 0
        assert row["row_group_rows"] >= 1 and row["row_group_raw_bytes"] > 0
        assert row["bound"] == (row["rss_before"] + 3 * row["row_group_raw_bytes"] + row["batch_raw_bytes"]
                                + rows["none"]["peak_rss"] - rows["none"]["rss_before"])
        assert row["within_bound"] == (row["peak_rss"] <= row["bound"])
    assert rows["pyarrow"]["row_groups"] == 3  # pyarrow's ParquetWriter: a row group per batch


def test_memory_bench_groups_samples_rss_and_fails_on_growth(tmp_path: Path) -> None:
    """The groups case streams small row groups and reports RSS samples, flat here; growth after the first
    quarter of the samples is reported as not flat (and makes the run fail)."""
    memory = _bench("memory_bench")
    out = tmp_path / "groups.json"
    # in a process of its own, as a user's script runs it: the test process's heap holds what earlier tests
    # allocated and freed, which moves RSS by tens of MB whichever writer runs
    done = subprocess.run([sys.executable, str(REPO / "bench" / "memory_bench.py"), "--cases", "groups", "--tools",
                           "gpuwrite", "--groups-rows", "400000", "--group-rows", "20000", "--batch-rows", "10000",
                           "--groups-every", "2", "--out", str(out), "--tmp", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = json.loads(out.read_text())["results"]
    assert row["flat"] is True and row["row_groups"] == 20 and len(row["samples"]) == 10
    assert [rows for rows, _ in row["samples"]] == list(range(40_000, 400_001, 40_000))
    mb = 1 << 20
    assert memory.growth([[1, 100 * mb], [2, 100 * mb], [3, 120 * mb], [4, 140 * mb]])["flat"] is True
    assert memory.growth([[1, 100 * mb], [2, 100 * mb], [3, 200 * mb], [4, 300 * mb]])["flat"] is False


def test_wide_bench_times_both_writers_per_column_count(tmp_path: Path) -> None:
    """Each column count is written by gpuwrite and pyarrow: both times, the ratio and the time per column."""
    wide = _bench("wide_bench")
    out = tmp_path / "wide.json"
    assert wide.main(["--columns", "30,60", "--rows", "2", "--repeats", "1", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["results"]
    assert [r["columns"] for r in rows] == [30, 60]
    for row in rows:
        assert row["gpuwrite_s"] > 0 and row["pyarrow_s"] > 0
        assert row["ratio"] == pytest.approx(row["gpuwrite_s"] / row["pyarrow_s"], abs=0.01, rel=0.01)
    assert wide.wide_table(3, 2).column_names == ["c0", "c1", "c2"]


def test_memory_bench_stream_is_lazy() -> None:
    """The stream is a RecordBatchReader that generates a batch only when it is read."""
    memory = _bench("memory_bench")
    reader = memory.stream_reader(10**12, 1_000)  # a trillion rows: only lazy generation can return
    first = reader.read_next_batch()
    assert first.num_rows == 1_000 and reader.schema.names[0] == "ss_sold_date_sk"


def test_cold_start_reports_a_fresh_process(tmp_path: Path) -> None:
    """The 10-row write and `gpuwrite demo`, each in a fresh process with the cache as installed: seconds,
    CPU seconds, kernel signatures compiled and loaded (from the demo's own 'first write (cold)' line)."""
    cold = _bench("cold_start")
    out = tmp_path / "cold.json"
    assert cold.main(["--cases", "default", "--repeats", "1", "--demo-rows", "2000", "--out", str(out)]) == 0
    (case,) = json.loads(out.read_text())["results"]
    assert case["case"] == "default" and set(case["programs"]) == {"write10", "demo"}
    write10 = case["programs"]["write10"]["runs"][0]
    assert "error" not in write10, write10
    assert write10["write_s"] > 0 and write10["import_s"] > 0 and write10["process_s"] >= write10["write_s"]
    assert write10["compiled"] + write10["loaded"] > 0  # the write used kernels: compiled or loaded
    demo = case["programs"]["demo"]["runs"][0]
    assert "error" not in demo, demo
    assert demo["first_write_s"] > 0 and demo["compiled"] + demo["loaded"] > 0 and demo["note"]
    assert cold.DEMO_FIRST.search("  first write (cold)   1.25 s   numba compiled 3 kernel signature(s)")


def test_cold_start_times_each_input_kind_in_a_fresh_process(tmp_path: Path) -> None:
    """`--programs kinds`: the issue's input kinds each in a fresh process (the kind's library imported first),
    seconds from `import gpuwrite` to the end of the write and the signatures compiled, named, then a table."""
    cold = _bench("cold_start")
    kinds = cold.cold_start_kinds()
    assert {"pyarrow flat types", "nested", "spark INT96 gzip", "spark TIMESTAMP_MICROS zstd"} <= set(kinds)
    assert all(kinds[k] == lib for k, lib in (("pandas tz-aware", "pandas"), ("polars Datetime", "polars"),
                                               ("duckdb decimals", "duckdb")) if k in kinds)
    only = {"spark INT96 zstd": None}
    cold.cold_start_kinds = lambda: only  # one kind: the child is what is tested
    out = tmp_path / "kinds.json"
    assert cold.main(["--cases", "default", "--programs", "kinds", "--repeats", "1", "--out", str(out)]) == 0
    (case,) = json.loads(out.read_text())["results"]
    (run,) = case["programs"]["kinds"]["spark INT96 zstd"]["runs"]
    assert "error" not in run, run
    assert run["kind"] == "spark INT96 zstd" and run["total_in_process_s"] >= run["write_s"] > 0
    assert run["compiled"] + run["loaded"] > 0 and (run["compiled"] == 0) == (run["signatures"] == [])


def test_house_bench_counts_stops_rooms_climbs_and_returns() -> None:
    """The walk summary: a stop per change of module, rooms by package, a climb back up the flow order, a return
    to a room already left."""
    house = _bench("house_bench")
    walk = [["gpuwrite.api", "write_table"], ["gpuwrite.pipeline.writer", "write"],
            ["gpuwrite.pipeline.writer", "_drive"], ["gpuwrite.backends.cpu", "encode"],
            ["gpuwrite.pipeline.plan", "events"], ["gpuwrite.assemble.file", "write"]]
    summary = house.walk_summary(walk)
    assert summary["stops"] == 5 and summary["rooms"] == 4
    assert summary["climbs"] == 1 and summary["returns"] == 1  # backends -> pipeline climbs back to a room left
    assert summary["path"] == "gpuwrite > pipeline > backends > pipeline > assemble"


def test_step_profile_charges_kernels_and_steps_then_unwraps() -> None:
    """bench/step_profile.py: the kernels and Python steps of a write get self thread-CPU time and calls, and
    every wrapped name is the original again afterwards (later writes are not profiled)."""
    import gpuwrite.encode.chunk as chunk

    profiler = _bench("step_profile")
    encode_page, delta_encode = chunk.ChunkEncoder.encode_page, chunk.delta_encode
    profile, cpu, wall = profiler.run("strings", 3000, 2)
    assert len(cpu) == len(wall) == 2 and min(wall) > 0
    assert profile.calls["encode.chunk.ChunkEncoder.encode_page"] > 0
    assert any(label.startswith("K ") and profile.calls[label] > 0 for label in profile.seconds)
    assert all(seconds >= -1e-6 for seconds in profile.seconds.values())
    assert "encode.chunk.ChunkEncoder.encode_page" in profiler.report(profile, 2, 50)
    assert chunk.ChunkEncoder.encode_page is encode_page and chunk.delta_encode is delta_encode


def test_step_profile_splits_each_threads_cpu_by_phase() -> None:
    """bench/step_profile.py --threads: the calls' self CPU is charged to their thread and phase (the main
    thread's before the first pool job, during, after the last), the phases adding up to nearly the profile's
    total (a pool thread's call that ends after its write returned is in no write); the unprofiled per-thread
    CPU names the main thread."""
    profiler = _bench("step_profile")
    profile, _, _ = profiler.run("wide", 3000, 2, threads=True)
    phases, busiest = profiler.thread_phases(profile)
    assert len(busiest) == 2 and "before" in phases["MainThread"]
    charged = sum(sec for thread in phases.values() for labels in thread.values() for sec in labels.values())
    assert 0.9 * sum(profile.seconds.values()) <= charged <= sum(profile.seconds.values()) + 1e-9
    assert "critical path" in profiler.thread_report(profile, 2, 3)
    assert "MainThread" in profiler.thread_cpu_report(profiler.thread_cpu("wide", 3000, 2))


def test_gpu_model_counts_each_row_group_from_the_trace() -> None:
    """bench/gpu_model.py's per-row-group launches and syncs: a row group's events from its window's load (a
    grown window loads again under its index), its bytes' wait (the one before its "write", made while the next
    row group runs) counted to it."""
    spec = importlib.util.spec_from_file_location("bench_gpu_model", REPO / "bench" / "gpu_model.py")
    assert spec is not None and spec.loader is not None
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    events = [("launch", "fill"), ("load", "0"), ("launch", "plan"), ("wait", "plan"), ("h2d", ""),
              ("load", "0"), ("launch", "plan"), ("wait", "plan"), ("load", "1"), ("launch", "plan"),
              ("wait", "row group bytes"), ("write", "0"), ("wait", "plan"), ("wait", "row group bytes"),
              ("write", "1")]
    assert model.row_group_counts(events, 2) == [{"launches": 3, "syncs": 3}, {"launches": 1, "syncs": 2}]


def test_step_profile_reads_thread_clocks_without_their_descriptors() -> None:
    """bench/step_profile.py's per-thread CPU clock is made from the thread's kernel id (the clock
    time.pthread_getcpuclockid gives a live thread), so a thread that ends after it was listed is skipped (None)
    instead of its freed pthread descriptor being read (CI once died of SIGSEGV there)."""
    profiler = _bench("step_profile")
    main = threading.main_thread()
    clock, start = profiler._cpu_clock(main)
    assert clock == time.pthread_getcpuclockid(main.ident) and start > 0
    worker = threading.Thread(target=lambda: sum(range(100_000)))
    worker.start()
    worker.join()
    deadline = time.monotonic() + 5
    while profiler._cpu_clock(worker) != (None, 0.0) and time.monotonic() < deadline:
        time.sleep(0.01)  # join returns as the thread's last Python code ends; the kernel thread exits just after
    assert profiler._cpu_clock(worker) == (None, 0.0)
