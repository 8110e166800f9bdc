"""The assembler's row-group write (assemble/file.py): a large row group's chunk metadata, statistics and
indexes are built on a helper thread while the writer's thread writes its bytes, with the same file, and a
failure on either side raised with nothing left behind."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuwrite
import gpuwrite.assemble.file as assemble_file
from gpuwrite.backends.device.ops import standin
from gpuwrite.errors import FileWriteError
from gpuwrite.tools.demo_data import store_sales_table


@pytest.fixture(autouse=True)
def _on_the_standin_device() -> Iterator[None]:
    with standin():  # the GPU backend hands whole row groups to write_row_group (the CPU one stages chunks)
        yield


def _threads_describing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads `_described` runs on, from now."""
    names: list[str] = []
    real = assemble_file.FileAssembler._described

    def described(self: assemble_file.FileAssembler, *args: object) -> object:
        names.append(threading.current_thread().name)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(assemble_file.FileAssembler, "_described", described)
    return names


def test_a_large_row_groups_metadata_is_built_beside_its_write(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    table = store_sales_table(20_000)
    names = _threads_describing(monkeypatch)
    monkeypatch.setattr(assemble_file, "DESCRIBE_BESIDE_BYTES", 1 << 40)
    gpuwrite.write_table(table, tmp_path / "inline.parquet", device="gpu")
    assert set(names) == {threading.current_thread().name}
    names.clear()
    monkeypatch.setattr(assemble_file, "DESCRIBE_BESIDE_BYTES", 1)
    gpuwrite.write_table(table, tmp_path / "beside.parquet", device="gpu", block_size=256 << 10)
    assert len(names) >= 2 * table.num_columns  # several row groups, every chunk described
    assert {n.startswith("gpuwrite-describe") for n in names} == {True}
    gpuwrite.write_table(table, tmp_path / "beside1.parquet", device="gpu")
    gpuwrite.write_table(table, tmp_path / "cpu.parquet", device="cpu")
    assert (tmp_path / "beside1.parquet").read_bytes() == (tmp_path / "inline.parquet").read_bytes() \
        == (tmp_path / "cpu.parquet").read_bytes()


def test_a_failed_write_beside_the_metadata_is_named_and_leaves_nothing(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuwrite.assemble.sink as sink_module

    def full(fd: int, buffers: list[memoryview]) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(assemble_file, "DESCRIBE_BESIDE_BYTES", 1)
    monkeypatch.setattr(sink_module.os, "writev", full)
    with pytest.raises(FileWriteError, match="No space left") as err:
        gpuwrite.write_table(store_sales_table(5_000), tmp_path / "f.parquet", device="gpu")
    assert "f.parquet" in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_a_failure_building_the_metadata_is_raised_and_leaves_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: assemble_file.FileAssembler, *args: object) -> object:
        raise ValueError("statistics could not be built")

    monkeypatch.setattr(assemble_file, "DESCRIBE_BESIDE_BYTES", 1)
    monkeypatch.setattr(assemble_file.FileAssembler, "_described", broken)
    with pytest.raises(ValueError, match="statistics could not be built"):
        gpuwrite.write_table(store_sales_table(5_000), tmp_path / "f.parquet", device="gpu")
    assert list(tmp_path.iterdir()) == []
