"""The device conversion (kernels/convert/arenas.py twins, run by the stand-in device) against the CPU conversion
(columns.leaf_data): every flat type with nulls, sliced and chunked columns, decimals of every precision,
timestamp outputs and calendar rebase in several zones; errors with the CPU path's messages."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest
from convert_cases import FLAT, convert_and_check, decimals, random_table
from gpuwrite.kernels.plan.layout import CT_VIDX, ST_COL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuwrite.backends.device.convert import build_window, check_window, window_as_leafdata
from gpuwrite.backends.device.ops import Device
from gpuwrite.errors import GpuwriteError
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.schema import FileSchema

LEGACY = {"datetime_rebase": "LEGACY", "int96_rebase": "LEGACY"}
OPTIONS = [
    WriteOptions(),
    WriteOptions(legacy_format=True),
    WriteOptions(timestamp_type="TIMESTAMP_MICROS", **LEGACY, time_zone="America/Los_Angeles"),
    WriteOptions(timestamp_type="TIMESTAMP_MILLIS", **LEGACY, time_zone="Asia/Kolkata"),
    WriteOptions(**LEGACY, time_zone="Europe/Amsterdam"),
    WriteOptions(**LEGACY, time_zone="GMT+05:30"),
    WriteOptions(timestamp_type="TIMESTAMP_MICROS", **LEGACY, time_zone="+05:30"),
    WriteOptions(timestamp_type="TIMESTAMP_MILLIS", **LEGACY, time_zone="UTC"),
]
SETTINGS = settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), rows=st.sampled_from([0, 1, 2]) | st.integers(3, 600),
       chunk_rows=st.sampled_from([1, 5, 64, 4096]), chunked=st.booleans(), opts=st.sampled_from(OPTIONS))
def test_window_matches_leaf_data(seed, rows, chunk_rows, chunked, opts):
    device = Device("standin")
    window = convert_and_check(device, random_table(seed, rows, chunked), opts, chunk_rows)
    launched = {"convert_count": 1, "convert_scan": 1, "convert_write": 1} if rows else {"convert_scan": 1}
    # the run of ones (levels of optional columns without nulls), and the value indexes' masks zeroed
    indexed = any(window.cols[c, CT_VIDX] >= 0 for c in range(len(window.cols)) if c not in window.host)
    launched["fill"] = 1 + int(indexed)
    assert device.counters.by_kernel == launched  # no chunks without rows
    assert window.rows == rows


@pytest.mark.parametrize("legacy", [False, True])
def test_decimals_of_every_precision(legacy):
    rng = np.random.default_rng(7)
    arrays, names = [], []
    for p in range(1, 39):
        for wide in (False, True):
            arrays.append(decimals(p, min(p, 3), wide)(rng, 300).slice(3, 290))
            names.append(f"d{p}{'w' if wide else ''}")
    table = pa.Table.from_arrays(arrays, names=names)
    window = convert_and_check(Device("standin"), table, WriteOptions(legacy_format=legacy), 64)
    kinds = [leaf.kind for leaf in window.leaves]
    assert kinds.count("flba") == (76 if legacy else 40)


def test_large_window_in_4096_row_chunks():
    table = random_table(3, 20_000, True, names=["i32", "f64", "str", "lbin", "ts_us", "date", "dec38", "bool"])
    device = Device("standin")
    convert_and_check(device, table, WriteOptions(**LEGACY, time_zone="America/Sao_Paulo"), 4096)


def test_copies_are_one_per_buffer_and_no_more_than_the_arrow_bytes():
    table = random_table(5, 3000, False, names=["i64", "str", "bool", "ts_ns"])
    device = Device("standin")
    opts = WriteOptions()
    build_window(device, table, FileSchema.from_arrow(table.schema, opts).leaves, opts)
    assert device.counters.syncs == 0  # nothing waits for the device
    assert device.counters.launches == 5  # count, scan, write, the fill of the run of ones, the masks zeroed
    arrow_bytes = sum(c.nbytes for c in table.columns)
    tables = device.counters.h2d_copies - 1
    buffers = sum(1 for col in table.columns for b in col.chunk(0).buffers() if b is not None and b.size)
    assert tables == buffers  # validity, values, offsets, data: one copy each, plus one for the tables
    assert device.counters.h2d_bytes <= arrow_bytes + 64 * 1024


def _both_errors(table: pa.Table, opts: WriteOptions, chunk_rows: int = 3) -> tuple[str, str]:
    """The CPU path's error and the device path's, for the first column that has one."""
    leaves = FileSchema.from_arrow(table.schema, opts).leaves
    with pytest.raises(GpuwriteError) as cpu:
        for leaf in leaves:
            leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts))
    device = Device("standin")
    window = build_window(device, table, leaves, opts, chunk_rows=chunk_rows)
    with pytest.raises(GpuwriteError) as dev:
        check_window(device, window)
    return str(cpu.value), str(dev.value)


def _stamps(values: list[int | None], unit: str, tz: str | None = "UTC") -> pa.Array:
    return pa.array(values, type=pa.timestamp(unit, tz=tz))


@pytest.mark.parametrize(("values", "unit", "needle"), [
    ([0, None, 1_000, 1_500, 2_000], "ns", "sub-microsecond"),
    ([0, 9_223_372_036_855, None], "s", "timestamp[s] value out of"),
    ([-9_223_372_036_854_776, 5], "ms", "timestamp[ms] value out of"),
])
def test_timestamp_unit_errors(values, unit, needle):
    table = pa.table({"ok": pa.array([1] * len(values)), "t": _stamps(values, unit)})
    cpu, dev = _both_errors(table, WriteOptions())
    assert cpu == dev and needle in dev and "'t'" in dev


def test_nulls_and_limits_are_not_errors():
    limit = np.iinfo(np.int64).max // 1_000_000
    table = pa.table({"ns": pa.array([1_000, 7], type=pa.timestamp("ns"), mask=np.array([False, True])),
                      "s": _stamps([limit, -limit], "s")})
    convert_and_check(Device("standin"), table, WriteOptions(), 1)


def test_exception_mode_names_the_first_value_in_row_order():
    # the first offending value (row 4) is not the smallest (row 6), and they lie in different chunks
    days = pa.array([0, None, 10, -50_000, -150_000, 3, -200_000], type=pa.date32())
    micros = [0, None, -2_208_988_800_000_001, -3_000_000_000_000_000, None]
    table = pa.table({"d": days})
    cpu, dev = _both_errors(table, WriteOptions(datetime_rebase="EXCEPTION"))
    assert cpu == dev and "1559-" in dev
    table = pa.table({"t": _stamps(micros, "us")})
    cpu, dev = _both_errors(table, WriteOptions(timestamp_type="TIMESTAMP_MICROS", datetime_rebase="EXCEPTION"))
    assert cpu == dev and "-2208988800000001" in dev
    cpu, dev = _both_errors(table, WriteOptions(int96_rebase="EXCEPTION"))
    assert cpu == dev


def test_old_three_letter_zone_ids_rebase_in_their_region():
    """Spark rebases in TimeZone.getTimeZone(id): PST is America/Los_Angeles there (Python's tzdb lacks it)."""
    old = pa.table({"t": _stamps([0, -3_000_000_000_000_000, None, -2_300_000_000_000_000], "us")})
    rebased = {}
    for zone in ("PST", "America/Los_Angeles", "UTC"):
        device = Device("standin")
        opts = WriteOptions(**LEGACY, time_zone=zone, timestamp_type="TIMESTAMP_MICROS")
        window = convert_and_check(device, old, opts, 2)  # == the CPU path's
        rebased[zone] = window_as_leafdata(device, window)[0].values.tobytes()
    assert rebased["PST"] == rebased["America/Los_Angeles"] != rebased["UTC"]


def test_the_first_column_in_schema_order_is_reported():
    bad_struct = pa.StructArray.from_arrays([pa.array([1, None], type=pa.int32())], fields=[pa.field("x", pa.int32(), False)])
    table = pa.table({"a": pa.array([1, 2]), "n": bad_struct, "t": _stamps([1_500, 0], "ns")})
    cpu, dev = _both_errors(table, WriteOptions())
    assert cpu == dev and "non-nullable" in dev
    table = pa.table({"t": _stamps([1_500, 0], "ns"), "n": bad_struct})
    cpu, dev = _both_errors(table, WriteOptions())
    assert cpu == dev and "sub-microsecond" in dev


def test_every_flat_generator_is_read_on_the_device():
    # the flat types take the device path: the host converts nothing but nested leaves
    table = random_table(11, 50, False, names=list(FLAT))
    opts = WriteOptions()
    window = build_window(Device("standin"), table, FileSchema.from_arrow(table.schema, opts).leaves, opts)
    srct = window.inputs["srct"]
    assert sorted(set(srct[:, ST_COL].tolist())) == list(range(len(FLAT)))


def test_decimal_python_values_round_trip():
    # values written by pyarrow from Python decimals (not raw buffers): negative, zero, the precision's edges
    values = [decimal.Decimal("-99999.999"), None, decimal.Decimal(0), decimal.Decimal("12.5"),
              decimal.Decimal("99999.999")]
    table = pa.table({"d": pa.array(values, type=pa.decimal128(8, 3)),
                      "w": pa.array(values, type=pa.decimal256(20, 3))})
    convert_and_check(Device("standin"), table, WriteOptions(legacy_format=True), 2)
    convert_and_check(Device("standin"), table, WriteOptions(), 2)


@pytest.mark.parametrize("rows", [1, 63, 64, 65, 128, 1000])
def test_value_index_gives_the_values_before_every_row(rows: int) -> None:
    """The value index of a flat column with nulls (layout.py: per 64 rows the values before them and a mask)
    gives the planner the values before each row and after the last (`planner.value_of`): 1/32 of a word a row."""
    from gpuwrite.kernels.plan.layout import CT_COUNT
    from gpuwrite.kernels.plan.planner import value_of

    from gpuwrite.backends.device.convert import value_index

    valid = np.random.default_rng(rows).random(rows) < 0.6
    idx = np.concatenate([np.full(3, -1, np.int64), value_index(valid)])
    cols = np.full((1, CT_COUNT), -1, np.int64)
    cols[0, CT_VIDX] = 3
    assert len(idx) - 3 == 2 * (rows // 64 + 1)
    want = np.concatenate([[0], np.cumsum(valid)]).tolist()
    assert [value_of(cols, idx, 0, r) for r in range(rows + 1)] == want
