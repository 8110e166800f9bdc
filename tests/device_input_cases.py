"""Tables for the device-input tests (tests/backends/test_device_input.py on the stand-in device,
tests/gpu/test_device_input.py under the simulator): every flat type with nulls, strings, decimals of every
width, times of every unit, nested columns; and the check that device input gives the host input's bytes."""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

import gpuwrite
from gpuwrite.integrations.device_export import DeviceExport


def flat_table(n: int, seed: int = 0) -> pa.Table:
    """One column per flat type the writer takes, about 20% nulls."""
    rng = np.random.default_rng(seed)
    mask = rng.random(n) < 0.2
    ints = rng.integers(-1000, 1000, n)
    words = [f"v{i % 13}" * (i % 3) for i in range(n)]
    cols: dict[str, pa.Array] = {
        "i8": pa.array(ints.astype(np.int8), mask=mask),
        "i16": pa.array(ints.astype(np.int16), mask=mask),
        "i32": pa.array(ints.astype(np.int32), mask=mask),
        "i64": pa.array(ints * 10**9, mask=mask),
        "f32": pa.array(rng.random(n).astype(np.float32), mask=mask),
        "f64": pa.array(rng.random(n), mask=mask),
        "bool": pa.array(rng.random(n) < 0.5, mask=mask),
        "str": pa.array(words, mask=mask),
        "lstr": pa.array(words, pa.large_string(), mask=mask),
        "bin": pa.array([w.encode() for w in words], pa.binary(), mask=mask),
        "lbin": pa.array([w.encode() for w in words], pa.large_binary(), mask=mask),
        "dec32": pa.array([decimal.Decimal(int(v)) / 100 for v in ints], pa.decimal32(7, 2), mask=mask),
        "dec64": pa.array([decimal.Decimal(int(v) * 10**9) / 100 for v in ints], pa.decimal64(15, 2), mask=mask),
        "dec128": pa.array([decimal.Decimal(int(v) * 10**20) / 100 for v in ints], pa.decimal128(30, 2),
                           mask=mask),
        "dec128s": pa.array([decimal.Decimal(int(v)) / 100 for v in ints], pa.decimal128(9, 2), mask=mask),
        "dec256": pa.array([decimal.Decimal(int(v)) / 10 for v in ints], pa.decimal256(20, 1), mask=mask),
        "date": pa.array((ints * 40).astype(np.int32), pa.date32(), mask=mask),
    }
    for unit, scale in (("s", 1), ("ms", 10**3), ("us", 10**6), ("ns", 10**9)):
        cols[f"ts_{unit}"] = pa.array(ints * 86_400 * scale, pa.timestamp(unit), mask=mask)
        cols[f"tsz_{unit}"] = pa.array(ints * 3_600 * scale, pa.timestamp(unit, tz="UTC"), mask=mask)
    return pa.table(cols)


def nested_table(n: int, seed: int = 0) -> pa.Table:
    """Lists, structs, lists of structs and maps, with nulls at every level."""
    rng = np.random.default_rng(seed)
    lists = [None if rng.random() < 0.15 else [None if rng.random() < 0.2 else int(x) for x in
                                                  rng.integers(0, 50, rng.integers(0, 4))] for _ in range(n)]
    structs = [None if rng.random() < 0.15 else {"a": int(rng.integers(0, 9)), "s": f"k{i % 5}"}
               for i in range(n)]
    los = [None if rng.random() < 0.1 else [{"x": int(v)} for v in rng.integers(0, 9, rng.integers(0, 3))]
           for _ in range(n)]
    return pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "l": pa.array(lists, pa.list_(pa.int32())),
                     "st": pa.array(structs, pa.struct([("a", pa.int32()), ("s", pa.string())])),
                     "los": pa.array(los, pa.list_(pa.struct([("x", pa.int64())])))})


def write_both(tmp_path: Path, table: pa.Table, device_data: Any = None, **options: Any
               ) -> tuple[bytes, bytes, gpuwrite.ParquetWriter]:
    """(bytes from device input through the GPU backend, bytes of the host table through the CPU path, the
    GPU writer)."""
    gpu, cpu = tmp_path / "device.parquet", tmp_path / "host.parquet"
    writer = gpuwrite.ParquetWriter(gpu, table.schema, device="gpu", **options)
    writer.write(DeviceExport(table) if device_data is None else device_data)
    writer.close()
    gpuwrite.write_table(table, cpu, device="cpu", **options)
    return gpu.read_bytes(), cpu.read_bytes(), writer
