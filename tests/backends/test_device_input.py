"""Device input on the stand-in device (`backends.device.ops`, every device step its compiled CPU twin): data
exported by the stand-in producer through the Arrow C Device interface (`integrations/device_export.py`, as
pylibcudf exports) is written byte for byte as the same rows given as host Arrow, its values never copied
host <-> device; refusals name the column; the hooks (write_table, ParquetWriter.write, write_dataset, the
cudf accessor) take it. The same cases run under the simulator in tests/gpu/test_device_input.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from device_input_cases import flat_table, nested_table, write_both

import gpuwrite
from gpuwrite.backends.device.ops import standin
from gpuwrite.errors import GpuwriteError
from gpuwrite.integrations.device_data import DeviceTable
from gpuwrite.integrations.device_export import DeviceExport, StandinBuffer
from gpuwrite.integrations.device_input import open_device_input


@pytest.fixture(autouse=True)
def _on_the_standin_device() -> Iterator[None]:
    with standin():
        yield


@pytest.mark.parametrize("start,length", [(0, None), (3, 150), (61, 1)])
def test_every_flat_type_with_nulls_and_slices(tmp_path: Path, start: int, length: int | None) -> None:
    table = flat_table(240, seed=start).slice(start, length)
    device, host, writer = write_both(tmp_path, table)
    assert device == host
    c = writer._backend.device.counters
    assert c.d2d_copies > 0 and c.d2d_bytes > 0  # the values went device -> device


def test_values_never_cross_to_the_host(tmp_path: Path) -> None:
    """H2D holds the plan's tables only, D2H the file (and a few offsets): neither grows with the values."""
    table = flat_table(20_000, seed=3)
    device, host, writer = write_both(tmp_path, table)
    assert device == host
    c = writer._backend.device.counters
    assert c.h2d_bytes < table.nbytes // 20
    assert c.d2h_bytes < 1.2 * len(device)
    assert c.d2d_bytes >= table.select([n for n in table.column_names if n != "bool"]).nbytes // 2


def test_stream_of_batches_and_chunked_columns(tmp_path: Path) -> None:
    table = pa.concat_tables([flat_table(70, seed=s) for s in range(3)])
    assert len(table.to_batches()) == 3
    device, host, _ = write_both(tmp_path, table, block_size=4096, page_row_count_limit=20)
    assert device == host


def test_stream_interface(tmp_path: Path) -> None:
    table = pa.concat_tables([flat_table(50, seed=s) for s in range(2)])

    class StreamOnly:
        def __init__(self) -> None:
            self.inner = DeviceExport(table)

        def __arrow_c_device_stream__(self, requested_schema: Any = None, **kw: Any) -> Any:
            return self.inner.__arrow_c_device_stream__(requested_schema, **kw)

    out = tmp_path / "s.parquet"
    gpuwrite.write_table(StreamOnly(), out, device="gpu")
    gpuwrite.write_table(table, tmp_path / "h.parquet", device="cpu")
    assert out.read_bytes() == (tmp_path / "h.parquet").read_bytes()


def test_nested_columns(tmp_path: Path) -> None:
    table = nested_table(300, seed=1).slice(4)
    device, host, writer = write_both(tmp_path, table)
    assert device == host
    # nested leaves are converted on the host: their columns cross once (checks and conversion share the copy)
    c = writer._backend.device.counters
    nested = sum(b.size for name in ("l", "st", "los") for chunk in table.column(name).chunks
                 for b in chunk.buffers() if b is not None)
    assert c.d2h_bytes < 1.2 * len(device) + 1.5 * nested


def test_several_row_groups_and_windows(tmp_path: Path) -> None:
    table = flat_table(6000, seed=9).select(["i32", "str", "dec128", "ts_us", "bool"])
    device, host, _ = write_both(tmp_path, table, block_size=40_000, page_row_count_limit=500)
    assert device == host
    assert pq.ParquetFile(pa.BufferReader(device)).metadata.num_row_groups >= 2


def test_legacy_decimals_and_int96(tmp_path: Path) -> None:
    table = flat_table(120, seed=4).select(["dec32", "dec64", "dec128", "ts_us", "tsz_ms"])
    device, host, _ = write_both(tmp_path, table, legacy_format=True, timestamp_type="INT96")
    assert device == host


def test_bloom_filters(tmp_path: Path) -> None:
    table = flat_table(200, seed=2).select(["i64", "str"])
    device, host, _ = write_both(tmp_path, table, bloom_filter_columns=["i64", "str"])
    assert device == host


def test_refusals_are_the_host_paths(tmp_path: Path) -> None:
    lossy = pa.table({"t": pa.array([1000, 1001, None], pa.timestamp("ns"))})
    with pytest.raises(GpuwriteError) as host_err:  # the GPU backend's refusal of the same host rows
        gpuwrite.write_table(lossy, tmp_path / "h.parquet", device="gpu")
    with pytest.raises(GpuwriteError) as dev_err:
        gpuwrite.write_table(DeviceExport(lossy), tmp_path / "d.parquet", device="gpu")
    assert str(dev_err.value) == str(host_err.value)
    assert not os.listdir(tmp_path)
    values = pa.py_buffer(np.array([1, 123456, 0], dtype=np.int32))
    wide = pa.table({"d": pa.Array.from_buffers(pa.decimal32(5, 0), 3, [None, values])})
    with pytest.raises(GpuwriteError) as host_err:
        gpuwrite.write_table(wide, tmp_path / "h.parquet", device="cpu")
    with pytest.raises(GpuwriteError) as dev_err:
        gpuwrite.write_table(DeviceExport(wide), tmp_path / "d.parquet", device="gpu")
    assert "column 'd', row 1" in str(dev_err.value) and "123456" in str(dev_err.value)
    assert "'d'" in str(host_err.value) and "123456" in str(host_err.value)
    schema = pa.schema([pa.field("x", pa.int32(), nullable=False)])
    nulls = pa.Table.from_arrays([pa.array([1, None, 3], pa.int32())], schema=schema)
    with pytest.raises(GpuwriteError, match="'x' is declared non-nullable.*row 1 of the batch"):
        gpuwrite.write_table(DeviceExport(nulls), tmp_path / "d.parquet", device="gpu")
    assert not os.listdir(tmp_path)


def test_sync_event_is_waited_on(tmp_path: Path) -> None:
    table = flat_table(30)
    _, _, writer = write_both(tmp_path, table, device_data=DeviceExport(table, sync_event=True))
    assert writer._backend.device.counters.event_waits == 1


def test_other_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GpuwriteError, match="CUDA device 1, but the writer runs on device 0"):
        gpuwrite.write_table(DeviceExport(flat_table(10), device_id=1), tmp_path / "x.parquet", device="gpu")
    assert not os.listdir(tmp_path)


def test_cpu_backend_takes_device_input(tmp_path: Path) -> None:
    table = flat_table(80, seed=5)
    gpuwrite.write_table(DeviceExport(table), tmp_path / "d.parquet", device="cpu")
    gpuwrite.write_table(table, tmp_path / "h.parquet", device="cpu")
    assert (tmp_path / "d.parquet").read_bytes() == (tmp_path / "h.parquet").read_bytes()


class _Vector:
    """A CUDA-array-interface column (CuPy's role) over stand-in device memory, with an optional byte mask."""

    def __init__(self, values: np.ndarray, mask: np.ndarray | None = None) -> None:
        self.buf = StandinBuffer(values.tobytes())
        self.dtype = values.dtype
        self.n = len(values)
        self.mask = None if mask is None else _Vector(mask.astype(np.uint8))

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        out = dict(self.buf.__cuda_array_interface__, shape=(self.n,), typestr=self.dtype.str, stream=1)
        if self.mask is not None:
            out["mask"] = self.mask
        return out


def test_cuda_array_columns(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    ints = rng.integers(-50, 50, 500).astype(np.int32)
    floats = rng.random(500)
    flags = rng.random(500) < 0.3
    valid = rng.random(500) > 0.1
    data = {"i": _Vector(ints, valid), "f": _Vector(floats), "b": _Vector(flags)}
    host = pa.table({"i": pa.array(ints, mask=~valid), "f": pa.array(floats), "b": pa.array(flags)})
    device, expected, writer = write_both(tmp_path, host, device_data=data)
    assert device == expected
    assert writer._backend.device.counters.event_waits == 3  # each column's stream


def test_write_dataset_partitioned_and_bucketed(tmp_path: Path) -> None:
    from gpuwrite.dataset.write import write_dataset

    table = flat_table(300, seed=6).select(["i8", "i32", "str", "dec64"])
    table = table.set_column(0, "p", pa.array(np.arange(300, dtype=np.int32) % 3))
    for name, data in (("device", DeviceExport(table)), ("host", table)):
        write_dataset(data, tmp_path / name, partition_by=["p"], bucket_by=(4, ["i32"]), device="gpu")
    for name, data in (("device1", DeviceExport(table)), ("host1", table)):
        write_dataset(data, tmp_path / name, device="gpu")
    for a, b in (("device", "host"), ("device1", "host1")):
        files_a = sorted(p.relative_to(tmp_path / a) for p in (tmp_path / a).rglob("*.parquet"))
        files_b = sorted(p.relative_to(tmp_path / b) for p in (tmp_path / b).rglob("*.parquet"))
        assert [f.parent for f in files_a] == [f.parent for f in files_b] and files_a
        for fa, fb in zip(files_a, files_b, strict=True):
            assert (tmp_path / a / fa).read_bytes() == (tmp_path / b / fb).read_bytes()


class _FakeCudfColumn:
    def __init__(self, arr: pa.Array) -> None:
        self.arr = arr

    def to_pylibcudf(self, mode: str) -> DeviceExport:
        assert mode == "read"
        return DeviceExport(self.arr)


class _FakeCudfFrame:
    """The parts of a cudf DataFrame the accessor uses; to_arrow fails (it must not be called)."""

    def __init__(self, table: pa.Table) -> None:
        self.columns = table.column_names
        self._columns = [_FakeCudfColumn(c.combine_chunks()) for c in table.columns]

    def to_arrow(self, **kw: Any) -> pa.Table:
        raise AssertionError("to_arrow was called")


_FakeCudfFrame.__module__ = "cudf.core.dataframe"
_FakeCudfFrame.__name__ = "DataFrame"


def test_cudf_accessor_never_calls_to_arrow(tmp_path: Path) -> None:
    from gpuwrite.accessors import GpuwriteAccessor

    table = flat_table(90, seed=7)
    GpuwriteAccessor(_FakeCudfFrame(table)).to_parquet(tmp_path / "d.parquet", device="gpu")
    gpuwrite.write_table(table, tmp_path / "h.parquet", device="cpu")
    assert (tmp_path / "d.parquet").read_bytes() == (tmp_path / "h.parquet").read_bytes()
    GpuwriteAccessor(_FakeCudfFrame(table.select(["i32", "str"]))).to_dataset(tmp_path / "ds", device="gpu")
    assert pq.read_table(tmp_path / "ds").num_rows == 90


def test_import_reads_metadata_only() -> None:
    """Opening device input reads no values: one sync for the string columns' offsets, nothing uploaded."""
    table = flat_table(1000)
    schema, pieces = open_device_input(DeviceExport(table))
    piece = next(pieces)
    assert isinstance(piece, DeviceTable) and schema == table.schema and piece.num_rows == 1000
    c = piece.device.counters
    assert (c.h2d_bytes, c.syncs) == (0, 1) and c.d2h_bytes <= 16 * 4
    assert piece.to_host().equals(table)
