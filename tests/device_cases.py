"""Shared inputs of the device pipeline tests: windows of random columns, laid out on a given device."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from gpuwrite.backends.device.ops import Device
from gpuwrite.backends.device.window import DeviceWindow, window_from_leafdata
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.leafdata import LeafData
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema, Leaf


def random_table(rows: int, seed: int, distinct: int = 50) -> pa.Table:
    """Columns of every dictionary kind with nulls, repeats and NaNs (few distinct values, so entries repeat)."""
    rng = np.random.default_rng(seed)
    mask = rng.random(rows) < 0.1
    ints = rng.integers(-distinct, distinct, rows)
    floats = rng.choice(np.array([0.0, -0.0, np.nan, 1.5, -2.25, np.inf]), rows)
    words = [b"" if i % 7 == 0 else bytes(rng.integers(97, 100, i % 5 + 1).astype(np.uint8)) for i in ints]
    return pa.table({
        "i32": pa.array(ints.astype(np.int32), mask=mask),
        "i64": pa.array(ints * 10**12, mask=mask),
        "f32": pa.array(floats.astype(np.float32)),
        "f64": pa.array(floats, mask=mask),
        "s": pa.array([w.decode() for w in words], mask=mask),
        "b": pa.array(words, pa.binary()),
        "dec": pa.array([None if m else int(v) for v, m in zip(ints, mask, strict=True)], pa.decimal128(30, 2)),
        "flag": pa.array(ints % 2 == 0, mask=mask),
    })


def leaves_and_data(table: pa.Table, opts: WriteOptions) -> tuple[Sequence[Leaf], list[LeafData]]:
    """The table's leaves and their host conversion."""
    schema = FileSchema.from_arrow(table.schema, opts)
    return schema.leaves, [leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts)) for leaf in schema.leaves]


def device_window(device: Device, table: pa.Table, opts: WriteOptions) -> tuple[Sequence[Leaf], list[LeafData],
                                                                                   DeviceWindow]:
    """The table's leaves, host data, and its window on `device`."""
    leaves, datas = leaves_and_data(table, opts)
    return leaves, datas, window_from_leafdata(device, leaves, datas, opts)
