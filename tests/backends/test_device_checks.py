"""Decimal precision and UTF-8 checked on the device (backends/device/checks.py) for the GPU backend, on the
stand-in device: the same refusals as the CPU path's batch checks (column, row of the file), nothing left at
the path, validate=False writing what the CPU path writes, and the host batch check reading no values."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from value_check_cases import decimals, strings

import gpuwrite
from gpuwrite.backends.device.ops import standin
from gpuwrite.errors import ValueCheckError


@pytest.fixture(autouse=True)
def _on_the_standin_device() -> Iterator[None]:
    with standin():
        yield


def _table(bad_dec: list[int], bad_str: list[int], n: int = 400, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"k": pa.array(np.arange(n)), "d": decimals(rng, n, 7, bad_dec),
                     "w": decimals(rng, n, 30, [], width=256), "s": strings(rng, n, bad_str),
                     "ls": strings(rng, n, [], large=True)})


def _write(path: Path, table: pa.Table, device: str, **opts: object) -> None:
    gpuwrite.write_table(table, path, device=device, **opts)


@pytest.mark.parametrize("where, column", [(([123], []), "d"), (([], [77]), "s"), (([300], [299]), "d")])
def test_refused_like_the_cpu_path(tmp_path: Path, where: tuple[list[int], list[int]], column: str) -> None:
    table = _table(*where)
    row = (where[0] or where[1])[0]
    with pytest.raises(ValueCheckError) as cpu:
        _write(tmp_path / "cpu.parquet", table, "cpu")
    with pytest.raises(ValueCheckError) as gpu:
        _write(tmp_path / "gpu.parquet", table, "gpu")
    for err in (cpu, gpu):
        assert f"column {column!r}" in str(err.value) and f"row {row} of the file" in str(err.value)
    assert str(cpu.value).split(": ", 1)[1] == str(gpu.value).split(": ", 1)[1]  # the same description
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing left behind


def test_a_bad_value_in_a_later_row_group_names_its_file_row(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    small = {"block_size": 8 * 1024, "page_size": 1024}
    _write(tmp_path / "clean.parquet", _table([], [], n=4000), "gpu", **small)
    assert pq.ParquetFile(tmp_path / "clean.parquet").metadata.num_row_groups >= 3  # row 3900 is in a later one
    with pytest.raises(ValueCheckError, match="column 'd', row 3900 of the file"):
        _write(tmp_path / "gpu.parquet", _table([3900], [], n=4000), "gpu", **small)
    assert not (tmp_path / "gpu.parquet").exists()


def test_clean_values_and_validate_false_write_what_the_cpu_writes(tmp_path: Path) -> None:
    for table, opts in ((_table([], []), {}), (_table([5], [6]), {"validate": False})):
        _write(tmp_path / "cpu.parquet", table, "cpu", **opts)
        _write(tmp_path / "gpu.parquet", table, "gpu", **opts)
        assert (tmp_path / "cpu.parquet").read_bytes() == (tmp_path / "gpu.parquet").read_bytes()


def test_the_gpu_writers_batch_check_reads_no_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the GPU backend the host check of a batch skips the decimal and UTF-8 passes (the device does them)."""
    from gpuwrite.pipeline import validate

    calls: list[str] = []
    for name in ("_first_wide_decimal", "_first_bad_utf8"):
        real = getattr(validate, name)
        monkeypatch.setattr(validate, name, lambda arr, start, _n=name, _f=real: calls.append(_n) or _f(arr, start))
    table = _table([], [])
    _write(tmp_path / "gpu.parquet", table, "gpu")
    assert calls == []
    _write(tmp_path / "cpu.parquet", table, "cpu")
    assert "_first_wide_decimal" in calls and "_first_bad_utf8" in calls
