"""Progress while writing: a bar of rows encoded (not read) that ends with the write, `progress=True` in
`write_table`, the first-run compile notice, and short reprs of results."""

from __future__ import annotations

import io
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pytest
from numba.core.event import Event, EventStatus

import gpuwrite
from gpuwrite.backends import kernel_cache
from gpuwrite.pipeline.progress import ProgressBar, known_rows
from gpuwrite.pipeline.window import MIN_CONVERT_BYTES


def test_bar_counts_encoded_rows_not_read_rows() -> None:
    """All rows read but none encoded is 0%; the bar says how many were read; it ends at 100% with 'done'."""
    stream = io.StringIO()
    encoded = [0]
    bar = ProgressBar(10, stream, delay_s=0.0)
    bar.interval_s = 0.01
    bar.start(lambda: encoded[0])
    bar.advance(10)
    time.sleep(0.1)
    encoded[0] = 4
    time.sleep(0.1)
    encoded[0] = 10
    bar.finish("done")
    lines = stream.getvalue().splitlines()
    assert any("0.0%  0/10 rows encoded (10 read)" in line for line in lines)
    assert any("40.0%  4/10 rows encoded (10 read)" in line for line in lines)
    assert lines[-1].startswith("[" + "#" * ProgressBar.WIDTH + "] 100.0%  10/10 rows encoded")
    assert lines[-1].endswith("done") and "read)" not in lines[-1]
    shares = [float(line.split("%")[0].split("]")[1]) for line in lines]
    assert shares == sorted(shares)  # never goes back


def test_bar_stays_quiet_for_quick_work_and_moves_while_busy() -> None:
    """Nothing is drawn before the delay; once it passes, the ticker redraws while no rows move."""
    quiet = io.StringIO()
    bar = ProgressBar(5, quiet, delay_s=5.0)
    bar.start(lambda: 5)
    bar.finish("done")
    assert quiet.getvalue() == ""
    busy = io.StringIO()
    bar = ProgressBar(None, busy, delay_s=0.0)
    bar.interval_s = 0.02
    bar.start(lambda: 0)
    time.sleep(0.2)
    bar.finish("failed")
    lines = busy.getvalue().splitlines()
    assert len(lines) >= 4 and lines[0].startswith("0 rows encoded") and lines[-1].endswith("failed")
    assert len({line.split("rows/s")[1] for line in lines}) > 1  # the elapsed time moves


def test_writer_reports_rows_encoded(tmp_path: Path) -> None:
    """FileWriter.rows_encoded lags the rows written until row groups are encoded, and equals them at close.

    The CPU backend converts (and encodes) once a step of Arrow data is waiting (`MIN_CONVERT_BYTES`), so the
    input spans several steps."""
    rows = 3 * MIN_CONVERT_BYTES // 8
    table = pa.table({"a": pa.array(np.random.default_rng(0).integers(0, 1 << 62, rows))})
    with gpuwrite.ParquetWriter(tmp_path / "x.parquet", table.schema, block_size=4 << 20) as writer:
        seen = []
        for batch in table.to_batches(max_chunksize=rows // 12):
            writer.write(batch)
            seen.append(writer.rows_encoded)
        result = writer.close()
        assert writer.rows_encoded == result.num_rows == rows
    assert len(result.footer.row_groups) > 3
    assert seen == sorted(seen) and seen[0] == 0 and 0 < seen[-1] < rows


def test_write_table_progress_true_and_callback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """progress=True draws the bar on stderr, ending at all rows encoded; a callable still gets row counts."""
    table = pa.table({"a": pa.array(range(3_000), pa.int32()), "s": pa.array([str(i % 7) for i in range(3_000)])})
    gpuwrite.write_table(table, tmp_path / "bar.parquet", progress=True)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "100.0%  3,000/3,000 rows encoded" in last and last.endswith("done")
    counts: list[int] = []
    gpuwrite.write_table(pa.Table.from_batches(table.to_batches(max_chunksize=1_000)), tmp_path / "cb.parquet",
                         progress=counts.append)
    assert sum(counts) == 3_000 and capsys.readouterr().err == ""


def test_known_rows() -> None:
    """Row counts known without reading: Arrow tables and pandas frames; not for an unknown stream."""
    import pandas as pd

    assert known_rows(pa.table({"a": [1, 2]})) == 2
    assert known_rows(pd.DataFrame({"a": [1, 2, 3]})) == 3
    assert known_rows(iter([1])) is None


def _compile_event(module: str, status: EventStatus) -> Event:
    """A numba:compile event for a dispatcher whose function lives in `module`."""
    fn = SimpleNamespace(__module__=module)
    return Event("numba:compile", status, data={"dispatcher": SimpleNamespace(py_func=fn)})


def test_compile_notice_once_and_only_for_gpuwrite(capsys: pytest.CaptureFixture[str]) -> None:
    """The first gpuwrite kernel compile prints one line; later ones, other packages' and claimed ones do not."""
    watch = kernel_cache.CompileWatch()
    watch.notify(_compile_event("mypackage.fast", EventStatus.START))
    watch.notify(_compile_event("mypackage.fast", EventStatus.END))
    assert capsys.readouterr().err == "" and watch.compiled == 0
    for _ in range(3):
        watch.notify(_compile_event("gpuwrite.kernels.encode.rle", EventStatus.START))
        assert watch.active == 1
        watch.notify(_compile_event("gpuwrite.kernels.encode.rle", EventStatus.END))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "compiling kernels, first run only" in err and "gpuwrite warmup" in err
    assert watch.compiled == 3 and watch.active == 0
    claimed = kernel_cache.CompileWatch()
    claimed.claim()
    claimed.notify(_compile_event("gpuwrite.kernels.encode.rle", EventStatus.START))
    assert capsys.readouterr().err == ""


def test_result_reprs_are_short(tmp_path: Path) -> None:
    """Printing a FileResult, its footer or a DatasetResult is one short line, without Spark's schema JSON."""
    table = pa.table({f"column_{i}": pa.array(range(50), pa.int64()) for i in range(40)} | {"p": ["x"] * 50})
    result = gpuwrite.write_table(table, tmp_path / "wide.parquet")
    text = repr(result)
    assert text == (f"FileResult(path={str(tmp_path / 'wide.parquet')!r}, num_rows=50, size={result.size:,} bytes, "
                    "row_groups=1, columns=41)")
    footer = repr(result.footer)
    assert len(footer) < 250 and '"fields"' not in footer and "org.apache.spark.version" in footer
    assert len(str(result.footer.key_value_metadata)) > 2_000  # what used to be printed
    dataset = gpuwrite.write_dataset(table, tmp_path / "ds", partition_by=["p"])
    assert repr(dataset) == (f"DatasetResult(path={str(tmp_path / 'ds')!r}, files=1, num_rows=50, "
                             f"size={dataset.files[0].size:,} bytes, job_uuid={dataset.job_uuid!r})")
