"""Random Arrow tables of every flat type the device conversion reads (nulls holding garbage, sliced arrays,
chunked columns), and the check that a DeviceWindow holds what columns.leaf_data gives for the same rows."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
from gpuwrite.kernels.plan.layout import CT_DEF, CT_OFFS, CT_ROWS, CT_VALUES, CT_VBEFORE, CT_VIDX

from gpuwrite.backends.device.convert import (
    DeviceWindow,
    build_window,
    check_window,
    value_index,
    window_as_leafdata,
)
from gpuwrite.backends.device.ops import Device
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.leafdata import LeafData
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema

Gen = Callable[[np.random.Generator, int], pa.Array]
I64 = np.iinfo(np.int64)
SPECIAL32 = [0x7FC00000, 0x7FC00001, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7F800000, 0x80000000, 0x00000001]
SPECIAL64 = [0x7FF8000000000000, 0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001, 1 << 63, 1]
OLD_MICROS = (-62_000_000_000_000_000, -2_208_988_800_000_001)  # year 5 .. just before 1900 UTC
SWITCH_DAY = -141427


def nulls(rng: np.random.Generator, n: int) -> np.ndarray:
    """A null mask: none, some, most or all rows."""
    return rng.random(n) < rng.choice([0.0, 0.0, 0.25, 0.8, 1.0])


def _bitmap(mask: np.ndarray) -> pa.Buffer | None:
    """Arrow's validity bitmap for a null mask (None without nulls)."""
    return pa.py_buffer(np.packbits(~mask, bitorder="little").tobytes()) if mask.any() else None


def _mix(rng: np.random.Generator, n: int, parts: list[np.ndarray]) -> np.ndarray:
    """n values drawn from several candidate arrays."""
    pool = np.concatenate(parts)
    return pool[rng.integers(0, len(pool), n)] if len(pool) else np.zeros(n, dtype=pool.dtype)


def integers(t: pa.DataType, dtype: type) -> Gen:
    info = np.iinfo(dtype)

    def gen(rng: np.random.Generator, n: int) -> pa.Array:
        v = _mix(rng, n, [rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True),
                          np.array([info.min, info.max, 0, -1], dtype=dtype)])
        return pa.array(v, type=t, mask=nulls(rng, n))
    return gen


def floats(is32: bool) -> Gen:
    def gen(rng: np.random.Generator, n: int) -> pa.Array:
        if is32:
            bits = _mix(rng, n, [rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
                                 np.array(SPECIAL32, dtype=np.uint32)])
            return pa.array(bits.view(np.float32), mask=nulls(rng, n))
        bits = _mix(rng, n, [rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
                             np.array(SPECIAL64, dtype=np.uint64)])
        return pa.array(bits.view(np.float64), mask=nulls(rng, n))
    return gen


def booleans(rng: np.random.Generator, n: int) -> pa.Array:
    return pa.array(rng.random(n) < 0.5, mask=nulls(rng, n))


def dates(rng: np.random.Generator, n: int) -> pa.Array:
    v = _mix(rng, n, [rng.integers(-250_000, 100_000, n), np.arange(SWITCH_DAY - 12, SWITCH_DAY + 2),
                      np.array([-2**31, 2**31 - 1, 0])]).astype(np.int32)
    return pa.array(v, type=pa.date32(), mask=nulls(rng, n))


def timestamps(unit: str, tz: str | None) -> Gen:
    factor = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}[unit]
    limit = I64.max // factor - (1000 if unit == "ns" else 0)  # ns: whole micros stay in range

    def gen(rng: np.random.Generator, n: int) -> pa.Array:
        old = rng.integers(*OLD_MICROS, n) // factor
        mask = nulls(rng, n)
        v = _mix(rng, n, [rng.integers(-limit, limit, n), old, np.array([-limit, limit, 0, -1])])
        if unit == "ns":
            v = (v // 1000) * 1000  # whole microseconds; the null slots below keep sub-microsecond garbage
            v[mask] += 7
        return pa.array(v, type=pa.timestamp(unit, tz=tz), mask=mask)
    return gen


def decimals(precision: int, scale: int, wide: bool) -> Gen:
    width = 32 if wide else 16
    t = pa.decimal256(precision, scale) if wide else pa.decimal128(precision, scale)
    top = 10**precision - 1

    def gen(rng: np.random.Generator, n: int) -> pa.Array:
        mask = nulls(rng, n)
        raw = rng.integers(0, 2**62, (n, 3), dtype=np.int64)
        values = [(int(a) << 62 | int(b)) % (2 * top + 1) - top for a, b in raw[:, :2]]
        values = [v if r % 5 else (top, -top, 0, -1, 1)[r % 4] for v, r in zip(values, raw[:, 2], strict=True)]
        data = b"".join(v.to_bytes(width, "little", signed=True) for v in values)
        return pa.Array.from_buffers(t, n, [_bitmap(mask), pa.py_buffer(data)], null_count=int(mask.sum()))
    return gen


def binaries(t: pa.DataType) -> Gen:
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    text = pa.types.is_large_string(t) or pa.types.is_string(t)

    def gen(rng: np.random.Generator, n: int) -> pa.Array:
        mask = nulls(rng, n)
        lens = np.where(rng.random(n) < 0.05, rng.integers(0, 300, n), rng.integers(0, 9, n))
        offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64 if large else np.int32)
        data = rng.integers(97, 123, int(offsets[-1])) if text else rng.integers(0, 256, int(offsets[-1]))
        bufs = [_bitmap(mask), pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.astype(np.uint8).tobytes())]
        return pa.Array.from_buffers(t, n, bufs, null_count=int(mask.sum()))  # null slots hold bytes
    return gen


def views(t: pa.DataType) -> Gen:
    def gen(rng: np.random.Generator, n: int) -> pa.Array:
        words = ["", "a", "view", "x" * 20, "long enough to be out of line"]
        values = [words[i] for i in rng.integers(0, len(words), n)]
        if pa.types.is_binary_view(t):
            return pa.array([w.encode() for w in values], type=t, mask=nulls(rng, n))
        return pa.array(values, type=t, mask=nulls(rng, n))
    return gen


def dictionaries(value: pa.DataType) -> Gen:
    def gen(rng: np.random.Generator, n: int) -> pa.Array:
        words = pa.array(["red", "green", "", "blue"]) if pa.types.is_string(value) else \
            pa.array([5, -7, 1 << 30], type=value)
        return pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, len(words), n).astype(np.int32),
                                                       mask=nulls(rng, n)), words)
    return gen


def nested_lists(rng: np.random.Generator, n: int) -> pa.Array:
    values = [None if rng.random() < 0.2 else [int(x) for x in rng.integers(-9, 9, rng.integers(0, 4))]
              for _ in range(n)]
    return pa.array(values, type=pa.list_(pa.int32()))


def nested_structs(rng: np.random.Generator, n: int) -> pa.Array:
    child = binaries(pa.string())(rng, n)
    stamps = timestamps("us", "UTC")(rng, n)
    return pa.StructArray.from_arrays([child, stamps], names=["s", "t"], mask=pa.array(nulls(rng, n)))


FLAT: dict[str, Gen] = {
    "bool": booleans, "i8": integers(pa.int8(), np.int8), "i16": integers(pa.int16(), np.int16),
    "i32": integers(pa.int32(), np.int32), "i64": integers(pa.int64(), np.int64), "f32": floats(True),
    "f64": floats(False), "date": dates, "ts_s": timestamps("s", "UTC"), "ts_ms": timestamps("ms", "Europe/Paris"),
    "ts_us": timestamps("us", "UTC"), "ts_ns": timestamps("ns", "UTC"), "ntz_ms": timestamps("ms", None),
    "ntz_ns": timestamps("ns", None), "dec9": decimals(9, 2, False), "dec18": decimals(18, 0, False),
    "dec38": decimals(38, 10, False), "dec256": decimals(30, 5, True), "dec256_9": decimals(7, 7, True),
    "str": binaries(pa.string()), "bin": binaries(pa.binary()), "lstr": binaries(pa.large_string()),
    "lbin": binaries(pa.large_binary()), "vstr": views(pa.string_view()), "vbin": views(pa.binary_view()),
    "dstr": dictionaries(pa.string()), "dint": dictionaries(pa.int64()),
}
NESTED: dict[str, Gen] = {"list": nested_lists, "struct": nested_structs}


def column(rng: np.random.Generator, gen: Gen, rows: int, chunked: bool) -> pa.ChunkedArray:
    """`rows` rows of one column: one sliced array, or several chunks (some empty, some sliced)."""
    cuts = np.sort(rng.integers(0, rows + 1, rng.integers(0, 4))) if chunked else np.zeros(0, np.int64)
    bounds = np.concatenate(([0], cuts, [rows])).astype(int)
    pieces = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        skip = int(rng.integers(0, 20))
        pieces.append(gen(rng, b - a + skip + int(rng.integers(0, 3))).slice(skip, b - a))
    return pa.chunked_array(pieces, type=pieces[0].type)


def random_table(seed: int, rows: int, chunked: bool, names: list[str] | None = None) -> pa.Table:
    """A table with a column per generator named (default: every flat type and the nested ones)."""
    rng = np.random.default_rng(seed)
    gens = {**FLAT, **NESTED}
    names = list(gens) if names is None else names
    return pa.Table.from_arrays([column(rng, gens[n], rows, chunked) for n in names], names=names)


def assert_leaf_equal(got: LeafData, want: LeafData, name: str) -> None:
    """Same rows, validity, values (bit for bit), value bytes and nested levels / indexes."""
    assert got.num_rows == want.num_rows, name
    assert (got.valid is None) == (want.valid is None), name
    if want.valid is not None:
        assert np.array_equal(got.valid, want.valid), name
    if want.values is not None:
        assert got.values is not None and got.values.dtype == want.values.dtype, (name, got.values, want.values)
        assert got.values.tobytes() == want.values.tobytes(), name
    else:
        assert got.offsets is not None and got.data is not None and want.offsets is not None, name
        assert np.array_equal(np.diff(got.offsets), np.diff(want.offsets)), name
        assert got.data.tobytes() == want.byte_data[want.offsets[0]:want.offsets[-1]].tobytes(), name
    for field in ("rep", "dfn", "row_entry", "values_before"):
        a, b = getattr(got, field), getattr(want, field)
        assert (a is None) == (b is None), (name, field)
        if b is not None:
            assert np.array_equal(a, b), (name, field)


def convert_and_check(device: Device, table: pa.Table, opts: WriteOptions, chunk_rows: int) -> DeviceWindow:
    """build_window == columns.leaf_data for every leaf, and the arenas' levels and row -> values index."""
    leaves = FileSchema.from_arrow(table.schema, opts).leaves
    window = build_window(device, table, leaves, opts, chunk_rows=chunk_rows)
    check_window(device, window)
    got = window_as_leafdata(device, window)
    idx = device.download(window.arenas["idx"])
    lev = device.download(window.arenas["lev"])
    for c, leaf in enumerate(leaves):
        want = leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts))
        assert_leaf_equal(got[c], want, leaf.dotted)
        row = [int(x) for x in window.cols[c]]
        assert row[CT_ROWS] == want.num_rows and row[CT_VALUES] == want.num_values, leaf.dotted
        if row[CT_VBEFORE] >= 0:
            continue
        assert (row[CT_DEF] >= 0) == (want.valid is not None) == (row[CT_VIDX] >= 0), leaf.dotted
        if want.valid is not None:
            assert np.array_equal(lev[row[CT_DEF]:row[CT_DEF] + want.num_rows], want.def_levels), leaf.dotted
            expected = value_index(want.valid)
            assert idx[row[CT_VIDX]:row[CT_VIDX] + len(expected)].tolist() == expected.tolist(), leaf.dotted
        if row[CT_OFFS] >= 0:
            offsets = idx[row[CT_OFFS]:row[CT_OFFS] + want.num_values + 1]
            assert (np.diff(offsets) >= 0).all() and offsets[-1] <= window.sizes["dat"], leaf.dotted
    return window
