"""Values a reader would fail on later are refused before encoding, naming column and row, and a refused batch
leaves the writer usable with its rows intact (issue 12)."""

from __future__ import annotations

import time
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuwrite
from gpuwrite import GpuwriteError, OptionError
from gpuwrite.assemble.pages import data_page_header
from gpuwrite.errors import SchemaMismatchError, ValueCheckError
from gpuwrite.page_model import EncodedPage, PageSections, PageSpan
from gpuwrite.pipeline.validate import MAX_VALUE_BYTES


def _nines(n: int, sign: int = 1, plus: int = 0) -> Decimal:
    """sign * (10**n - 1 + plus), built exactly (Decimal arithmetic would round to 28 digits)."""
    return Decimal(sign * (10**n - 1 + plus))


def _wide(values: list, precision: int, scale: int = 0) -> pa.Array:
    """decimal128(precision, scale) values that may not fit the precision (as a cast without checks gives)."""
    return pa.array(values, pa.decimal128(38, scale)).view(pa.decimal128(precision, scale))


def test_decimal_beyond_precision_is_refused(tmp_path):
    """Reproducer: 38 nines in a decimal128(5,0) were written and read back as -1."""
    table = pa.table({"d": _wide([Decimal(1), _nines(38)], 5)})
    with pytest.raises(ValueCheckError, match=r"column 'd', row 1 of the batch.*decimal128\(5, 0\)"):
        gpuwrite.write_table(table, tmp_path / "d.parquet")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("precision", [5, 18, 19, 30, 38])
def test_decimal_precision_bounds_exactly(tmp_path, precision):
    """10**p - 1 and its negation are written; one more digit either way is refused (64- and 128-bit paths)."""
    edge = [_nines(precision), _nines(precision, -1), Decimal(0)]
    gpuwrite.write_table(pa.table({"d": _wide(edge, precision)}), tmp_path / "ok.parquet")
    assert pq.read_table(tmp_path / "ok.parquet").column("d").to_pylist() == edge
    if precision < 38:
        for bad in (_nines(precision, 1, 1), _nines(precision, -1, 1)):
            with pytest.raises(ValueCheckError, match="row 2 of the batch"):
                gpuwrite.write_table(pa.table({"d": _wide([Decimal(1), Decimal(2), bad], precision)}),
                                     tmp_path / "bad.parquet")


def test_decimal256_and_null_slots(tmp_path):
    """decimal256 values need their upper words to be sign bits; garbage under a null slot is not a value."""
    gpuwrite.write_table(pa.table({"d": pa.array([_nines(38), _nines(38, -1)], pa.decimal256(38, 0))}),
                         tmp_path / "ok.parquet")
    with pytest.raises(ValueCheckError, match=r"'d', row 0"):
        big = pa.array([Decimal(10**40)], pa.decimal256(76, 0)).view(pa.decimal256(38, 0))
        gpuwrite.write_table(pa.table({"d": big}), tmp_path / "bad.parquet")
    raw = _wide([_nines(38), Decimal(7)], 5)
    masked = pa.Array.from_buffers(raw.type, 2, [pa.py_buffer(np.packbits([0, 1], bitorder="little")),
                                                 raw.buffers()[1]])
    gpuwrite.write_table(pa.table({"d": masked}), tmp_path / "nulls.parquet")
    assert pq.read_table(tmp_path / "nulls.parquet").column("d").to_pylist() == [None, Decimal(7)]


def test_validate_false_writes_unchecked(tmp_path):
    """validate=False is for users who know their data: nothing is checked, the bytes are written as given."""
    table = pa.table({"d": _wide([_nines(38)], 5),
                      "s": pa.array([b"\xff"], pa.binary()).view(pa.string())})
    result = gpuwrite.write_table(table, tmp_path / "x.parquet", validate=False)
    assert result.num_rows == 1
    with pytest.raises(OptionError, match="validate"):
        gpuwrite.write_table(table, tmp_path / "y.parquet", validate="no")


@pytest.mark.parametrize("arrow_type", [pa.string(), pa.large_string(), pa.string_view()])
def test_invalid_utf8_is_refused(tmp_path, arrow_type):
    """Reproducer: invalid UTF-8 was written and DuckDB then refused the file."""
    binary = {pa.string(): pa.binary(), pa.large_string(): pa.large_binary(),
              pa.string_view(): pa.binary_view()}[arrow_type]
    strings = pa.array([b"ok", b"fine", b"caf\xc3", b"also ok"], binary).view(arrow_type)
    with pytest.raises(ValueCheckError, match=r"column 's', row 2 of the batch.*caf\\xc3.*not valid UTF-8"):
        gpuwrite.write_table(pa.table({"s": strings}), tmp_path / "s.parquet")


def test_invalid_bytes_under_a_null_are_not_checked(tmp_path):
    """A null slot's bytes are never written, so they need not be UTF-8."""
    valid = pa.py_buffer(np.packbits([1, 0, 1], bitorder="little"))
    arr = pa.Array.from_buffers(pa.string(), 3, [valid, pa.py_buffer(np.array([0, 2, 3, 5], np.int32)),
                                                 pa.py_buffer(b"ok\xffab")])
    gpuwrite.write_table(pa.table({"s": arr}), tmp_path / "s.parquet")
    assert pq.read_table(tmp_path / "s.parquet").column("s").to_pylist() == ["ok", None, "ab"]


def test_nested_values_report_the_top_level_row(tmp_path):
    """A bad string inside a list of structs is reported at its row, past null and empty lists."""
    item = pa.struct([("name", pa.string())])
    names = pa.array([b"a", b"b", b"\xfe", b"c"], pa.binary()).view(pa.string())
    structs = pa.StructArray.from_arrays([names], fields=list(item))
    offsets = pa.array([0, 1, 1, 1, 4], pa.int32())
    lists = pa.ListArray.from_arrays(offsets, structs, mask=pa.array([False, True, False, False]))
    with pytest.raises(ValueCheckError, match=r"column 'l\.list\.element\.name', row 3 of the batch"):
        gpuwrite.write_table(pa.table({"l": lists}), tmp_path / "n.parquet")


def test_nested_non_nullable_field_null_is_refused_before_anything_changes(tmp_path):
    """A null in a non-nullable struct field is refused where the struct is present, allowed where the
    struct itself is null; the writer keeps going."""
    t = pa.struct([pa.field("x", pa.int32(), nullable=False)])
    schema = pa.schema([("s", t)])
    ok = pa.StructArray.from_arrays([pa.array([1, None], pa.int32())], fields=list(t),
                                    mask=pa.array([False, True]))
    bad = pa.StructArray.from_arrays([pa.array([1, 2, None], pa.int32())], fields=list(t))
    path = tmp_path / "s.parquet"
    with gpuwrite.ParquetWriter(path, schema) as w:
        w.write(pa.table({"s": ok}, schema=schema))
        with pytest.raises(SchemaMismatchError, match=r"'s\.x'.*row 2 of the batch \(row 4 of the file\)"):
            w.write(pa.table({"s": bad}, schema=schema))
        w.write(pa.table({"s": ok}, schema=schema))
    assert pq.read_table(path).column("s").to_pylist() == [{"x": 1}, None, {"x": 1}, None]


def test_list_of_non_nullable_elements(tmp_path):
    """A null element in a list whose elements are declared non-nullable names the row holding it."""
    t = pa.list_(pa.field("element", pa.int64(), nullable=False))
    arr = pa.ListArray.from_arrays(pa.array([0, 2, 2, 4], pa.int32()), pa.array([1, 2, 3, None], pa.int64()),
                                   type=t, mask=pa.array([False, True, False]))
    with pytest.raises(SchemaMismatchError, match=r"'l\.list\.element'.*row 2 of the batch"):
        gpuwrite.write_table(pa.table({"l": arr}), tmp_path / "l.parquet")


def test_writer_survives_every_kind_of_rejected_batch(tmp_path):
    """Reproducer: after one caught error every later write and the `with` exit raised "already closed or
    aborted" and the rows written so far were gone. Each refusal now changes nothing."""
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("d", pa.decimal128(5, 0)),
                        ("s", pa.string()), ("t", pa.timestamp("ns", "UTC"))])

    def batch(k, d=Decimal(1), s=b"x", t=1_000):
        return pa.table({"k": pa.array([k], pa.int64()), "d": _wide([d], 5),
                         "s": pa.array([s], pa.binary()).view(pa.string()),
                         "t": pa.array([t], pa.timestamp("ns", "UTC"))}, schema=schema)

    nullable_k = schema.set(0, pa.field("k", pa.int64()))
    rejected = [
        (pa.table({"k": pa.array([1], pa.int32())}), "differ"),
        (batch(1).cast(schema.set(3, pa.field("t", pa.timestamp("us", "UTC")))), "timestamp"),
        (pa.table([pa.array([None], pa.int64()), *batch(1).columns[1:]], schema=nullable_k), "non-nullable"),
        (batch(2, d=_nines(6)), "precision 5"),
        (batch(2, s=b"\xff"), "UTF-8"),
        (batch(2, t=1_001), "sub-microsecond"),
    ]
    path = tmp_path / "w.parquet"
    with gpuwrite.ParquetWriter(path, schema) as w:
        w.write(batch(1))
        for data, needle in rejected:
            with pytest.raises(GpuwriteError, match=needle):
                w.write(data)
        w.write(batch(2))
    assert pq.read_table(path).column("k").to_pylist() == [1, 2]


def test_rebase_exception_is_refused_up_front(tmp_path):
    """datetimeRebaseModeInWrite=EXCEPTION refuses an ancient date before the batch is taken."""
    schema = pa.schema([("day", pa.date32())])
    path = tmp_path / "r.parquet"
    with gpuwrite.ParquetWriter(path, schema, datetime_rebase="EXCEPTION") as w:
        w.write(pa.table({"day": pa.array([0], pa.date32())}))
        with pytest.raises(GpuwriteError, match=r"'day', row 1 of the batch.*1000-01-01.*before 1582-10-15"):
            w.write(pa.table({"day": pa.array([0, -354_285], pa.date32())}))
    assert pq.read_table(path).num_rows == 1


def test_value_over_a_page_is_refused_quickly_without_copying(tmp_path):
    """Reproducer: a value over 2 GiB failed after 29 s and 16.6 GB. It is now refused from its offsets alone:
    the value's memory (calloc'd, never touched) is not read, so the process barely grows."""
    size = MAX_VALUE_BYTES + 1
    data = np.zeros(size + 10, dtype=np.uint8)  # pages are mapped on first touch
    offsets = np.array([0, 10, 10 + size], dtype=np.int64)
    arr = pa.Array.from_buffers(pa.large_binary(), 2, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    before = _rss()
    start = time.perf_counter()
    with pytest.raises(ValueCheckError, match=r"column 'b', row 1 of the batch.*2,147,483,584 bytes"):
        gpuwrite.write_table(pa.table({"b": arr}), tmp_path / "big.parquet")
    assert time.perf_counter() - start < 10
    assert _rss() - before < 200 * 2**20
    assert list(tmp_path.iterdir()) == []


def _rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def test_page_over_2_gib_names_the_column():
    """Several values that together overflow a page's i32 size fail at the page header with a clear error."""
    span = PageSpan(0, 3, 0, 3, 0, 3)
    sections = PageSections(b"", 0, 0, 2**31, False, None)
    page = EncodedPage(span, 0, 0, sections, None, None, column="blob")  # type: ignore[arg-type]
    with pytest.raises(ValueCheckError, match=r"column 'blob': the page of rows 0\.\.2.*2,147,483,648 bytes"):
        data_page_header(page)


@pytest.mark.parametrize("narrow,wide", [(pa.decimal32(7, 2), pa.decimal128(7, 2)),
                                         (pa.decimal64(15, 3), pa.decimal128(15, 3)),
                                         (pa.decimal32(5, 0), pa.decimal128(5, 0))])
def test_decimal32_and_64_write_as_decimal128(tmp_path, narrow, wide):
    """cudf's native decimal widths: the same file as decimal128 of the same precision and scale; a value
    wider than the precision is refused with its column and row."""
    values = [Decimal(-12345) / 10 ** narrow.scale, None, Decimal(99) / 10 ** narrow.scale]
    gpuwrite.write_table(pa.table({"d": pa.array(values, narrow)}), tmp_path / "n.parquet", device="cpu")
    gpuwrite.write_table(pa.table({"d": pa.array(values, wide)}), tmp_path / "w.parquet", device="cpu")
    assert (tmp_path / "n.parquet").read_bytes() == (tmp_path / "w.parquet").read_bytes()
    raw = np.array([1, 10 ** narrow.precision], dtype=np.int32 if narrow.byte_width == 4 else np.int64)
    bad = pa.Array.from_buffers(narrow, 2, [None, pa.py_buffer(raw)])
    with pytest.raises(ValueCheckError, match=r"column 'd', row 1 of the batch"):
        gpuwrite.write_table(pa.table({"d": bad}), tmp_path / "bad.parquet", device="cpu")


def test_leaves_checked_side_by_side_report_the_first_failing_leaf(monkeypatch):
    """With the writer's threads the leaves' value checks run on them (and on the writing thread while it waits
    for them); the error is still the first failing leaf's in schema order (a later leaf that fails sooner does
    not win), and a clean batch passes."""
    import threading

    from gpuwrite.backends.workpool import WorkPool
    from gpuwrite.options.model import WriteOptions
    from gpuwrite.pipeline.validate import CheckOptions, _check_leaf, check_batch
    from gpuwrite.schema import FileSchema

    bad_text = pa.array([b"ok", b"\xff"], pa.binary()).view(pa.string())
    wide = pa.array([Decimal("1.00"), Decimal("123.45")], pa.decimal128(5, 2)).cast(pa.decimal128(3, 2), safe=False)
    table = pa.table({"ok": pa.array(["a", "b"]), "s": bad_text, "d": wide, "t": bad_text})
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    threads: list[str] = []

    def recording(*args):
        threads.append(threading.current_thread().name)
        return _check_leaf(*args)

    monkeypatch.setattr("gpuwrite.pipeline.validate._check_leaf", recording)
    monkeypatch.setattr("gpuwrite.pipeline.validate.THREADED_CHECK_ROWS", 1)
    pool = WorkPool(2, name="check-test")
    try:
        with pytest.raises(ValueCheckError, match="column 's'"):
            check_batch(table, schema, CheckOptions.of(opts), 0, pool=pool)
        assert any(name.startswith("check-test") for name in threads)
        assert all(name.startswith("check-test") or name == threading.current_thread().name for name in threads)
        with pytest.raises(ValueCheckError, match="column 'd'"):
            check_batch(table.drop_columns(["s"]), FileSchema.from_arrow(table.drop_columns(["s"]).schema, opts),
                        CheckOptions.of(opts), 0, pool=pool)
        clean = table.select(["ok"]).append_column("u", pa.array(["x", "y"]))
        check_batch(clean, FileSchema.from_arrow(clean.schema, opts), CheckOptions.of(opts), 0,
                    pool=pool)
    finally:
        pool.shutdown()


def _bad_utf8(n: int, at: int) -> pa.Array:
    """n strings, the one at `at` not UTF-8."""
    values = [b"ok"] * n
    values[at] = b"\xff"
    return pa.array(values, pa.binary()).view(pa.string())


def _streamed_error(table: pa.Table, path) -> str:
    """The error a streaming write (more=True: every value checked before the writer takes the batch) raises."""
    with pytest.raises(ValueCheckError) as err, gpuwrite.ParquetWriter(path, table.schema) as writer:
        writer.write(table)
    return str(err.value)


def test_write_table_checks_flat_decimals_as_it_converts_them(tmp_path, monkeypatch):
    """A batch written with more=False (write_table's last) leaves the precision of flat INT32 / INT64 decimals
    to the conversion, which reads their words anyway: the batch check reads none of them while every value
    is in range, and a wide one still raises the batch check's own error, leaving nothing behind."""
    from gpuwrite.pipeline import validate

    calls = []
    real = validate._first_wide_decimal
    monkeypatch.setattr(validate, "_first_wide_decimal", lambda arr, start: calls.append(arr.type) or real(arr, start))
    ok = pa.table({"d": _wide([Decimal(5), None, _nines(7)], 7), "w": _wide([_nines(30), Decimal(1), None], 30)})
    gpuwrite.write_table(ok, tmp_path / "ok.parquet")
    assert calls == [pa.decimal128(30, 0)]  # only the FIXED_LEN_BYTE_ARRAY decimal, checked before conversion
    assert pq.read_table(tmp_path / "ok.parquet").equals(ok)
    bad = pa.table({"d": _wide([Decimal(5), None, _nines(7, 1, 1)], 7)})
    expected = _streamed_error(bad, tmp_path / "streamed.parquet")
    with pytest.raises(ValueCheckError) as err:
        gpuwrite.write_table(bad, tmp_path / "bad.parquet")
    assert str(err.value) == expected and "row 2 of the batch" in expected
    assert err.value.__suppress_context__  # the conversion's internal signal is not shown to the user
    assert list(tmp_path.iterdir()) == [tmp_path / "ok.parquet"]


@pytest.mark.parametrize("decimal_first", [True, False])
def test_deferred_decimal_check_keeps_the_full_checks_error(tmp_path, decimal_first):
    """With a wide decimal and a bad string in one batch, write_table raises what a full check raises first
    (the first failing column in schema order), whichever check found its value first."""
    columns = {"d": _wide([Decimal(1), _nines(9, 1, 1), Decimal(3)], 9), "s": _bad_utf8(3, 2)}
    table = pa.table(columns if decimal_first else dict(reversed(list(columns.items()))))
    expected = _streamed_error(table, tmp_path / "streamed.parquet")
    assert ("'d'" in expected) == decimal_first
    with pytest.raises(ValueCheckError) as err:
        gpuwrite.write_table(table, tmp_path / "bad.parquet")
    assert str(err.value) == expected
    assert list(tmp_path.iterdir()) == []


def test_last_batch_with_a_wide_decimal_fails_at_close_with_its_rows_named(tmp_path):
    """ParquetWriter.write(batch, more=False) after other batches: close() raises the last batch's error with
    its row in the batch and in the file, and aborts (nothing at the path)."""
    good = pa.table({"d": _wide([Decimal(i) for i in range(100)], 4)})
    bad = pa.table({"d": _wide([Decimal(1), Decimal(2), Decimal(3), _nines(4, -1, 1)], 4)})
    writer = gpuwrite.ParquetWriter(tmp_path / "x.parquet", good.schema)
    writer.write(good)
    writer.write(bad, more=False)
    with pytest.raises(ValueCheckError, match=r"column 'd', row 3 of the batch \(row 103 of the file\)"):
        writer.close()
    assert list(tmp_path.iterdir()) == []


def test_last_batch_strings_are_checked_on_the_pool_while_its_columns_encode(tmp_path, monkeypatch):
    """write_table's last batch (more=False): its UTF-8 check is a pool job, and the columns' encoding starts
    without waiting for it (a timeseries' one string column was checked on the calling thread, alone, before any
    column was encoded); the file is the same. Which thread runs the check is not asserted: a pool thread takes
    it, or the writing thread does while it waits for its jobs (it runs the jobs no thread has taken yet), and
    on a loaded machine either may come first."""
    import threading

    from gpuwrite.backends.cpu import CpuEncoders
    from gpuwrite.pipeline import validate

    table = pa.table({"n": pa.array(np.arange(5000)), "s": pa.array(["ok", "warn"] * 2500)})
    gpuwrite.write_table(table, tmp_path / "before.parquet")
    encoding, seen = threading.Event(), []
    real_check, real_encode = validate._check_leaf, CpuEncoders.encode

    def check(*args):
        seen.append(encoding.wait(timeout=5))
        return real_check(*args)

    def encode(self, *args, **kwargs):
        encoding.set()
        return real_encode(self, *args, **kwargs)

    monkeypatch.setattr(validate, "THREADED_CHECK_ROWS", 1)
    monkeypatch.setattr(validate, "_check_leaf", check)
    monkeypatch.setattr(CpuEncoders, "encode", encode)
    gpuwrite.write_table(table, tmp_path / "after.parquet")
    assert seen == [True]  # checked once, and still running when the encoding began
    assert (tmp_path / "after.parquet").read_bytes() == (tmp_path / "before.parquet").read_bytes()


def test_last_batch_checked_on_the_pool_fails_at_close_with_its_own_error(tmp_path, monkeypatch):
    """A bad string in a batch written with more=False, checked on the pool: write() returns, close() raises
    the error a full check raises (the first failing column in schema order, its row in the batch and the
    file) and aborts, leaving nothing behind."""
    from gpuwrite.pipeline import validate

    monkeypatch.setattr(validate, "THREADED_CHECK_ROWS", 1)
    good = pa.table({"n": pa.array(np.arange(100)), "s": pa.array(["ok"] * 100), "t": pa.array(["x"] * 100)})
    bad = pa.table({"n": pa.array([1, 2, 3]), "s": pa.array(["a", "b", "c"]), "t": _bad_utf8(3, 1)})
    expected = _streamed_error(bad, tmp_path / "streamed.parquet")
    assert "column 't', row 1 of the batch" in expected
    writer = gpuwrite.ParquetWriter(tmp_path / "x.parquet", good.schema)
    writer.write(good)
    writer.write(bad, more=False)  # checked meanwhile on the pool
    with pytest.raises(ValueCheckError) as err:
        writer.close()
    assert str(err.value) == expected.replace("(row 1 of the file)", "(row 101 of the file)")
    assert list(tmp_path.iterdir()) == []


def test_check_at_conversion_defers_every_batch_and_keeps_its_error(tmp_path, monkeypatch):
    """A writer told to check at conversion (a Spark task's, a dataset's) leaves every batch's flat decimals to
    the conversion, forgets each batch once its rows are converted (a streaming writer holds no input), and a
    wide value still raises that batch's own error, naming its row in the batch and the file, and aborts."""
    from gpuwrite.pipeline import validate

    calls = []
    real = validate._first_wide_decimal
    monkeypatch.setattr(validate, "_first_wide_decimal", lambda arr, start: calls.append(arr.type) or real(arr, start))
    good = pa.table({"d": _wide([Decimal(i % 9999) for i in range(20_000)], 4)})
    writer = gpuwrite.ParquetWriter(tmp_path / "ok.parquet", good.schema, streaming=True)
    writer.check_at_conversion()
    for _ in range(40):
        writer.write(good)
        assert len(writer._deferred) <= 8  # converted batches let go (a step of window.STREAM_CONVERT_ROWS rows)
    writer.close()
    assert calls == [] and pq.read_table(tmp_path / "ok.parquet").num_rows == 800_000
    bad = pa.table({"d": _wide([Decimal(1), Decimal(2), Decimal(3), _nines(4, -1, 1)], 4)})
    writer = gpuwrite.ParquetWriter(tmp_path / "bad.parquet", good.schema, streaming=True)
    writer.check_at_conversion()
    with pytest.raises(ValueCheckError, match=r"column 'd', row 3 of the batch \(row 100003 of the file\)"):
        for piece in [good] * 5 + [bad] + [good] * 5:
            writer.write(piece)
        writer.close()
    assert writer._sink.closed and list(tmp_path.iterdir()) == [tmp_path / "ok.parquet"]


def test_null_in_a_later_chunk_of_a_non_nullable_flat_column_is_refused(tmp_path):
    """A flat leaf with no value check is not read at all unless it is non-nullable and holds a null: a null in
    the second chunk of a table's column is still found, by its row in the batch."""
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.int32())])
    k = pa.chunked_array([pa.array([1, 2, 3], pa.int64()), pa.array([4, None], pa.int64())])
    v = pa.chunked_array([pa.array([1, None, 3], pa.int32()), pa.array([None, 5], pa.int32())])
    with gpuwrite.ParquetWriter(tmp_path / "n.parquet", schema) as w:
        w.write(pa.table({"k": [7], "v": [None]}, schema=schema))  # nulls where the column allows them
        with pytest.raises(GpuwriteError, match=r"'k' is declared non-nullable but the batch holds 1 null\(s\), "
                                                r"the first at row 4 of the batch \(row 5 of the file\)"):
            w.write(pa.Table.from_arrays([k, v], schema=schema.set(0, pa.field("k", pa.int64()))))
    assert pq.read_table(tmp_path / "n.parquet").to_pylist() == [{"k": 7, "v": None}]


def test_view_value_over_a_page_is_refused_from_its_view(tmp_path):
    """A binary_view value over 2 GiB is refused from the length in its view (Arrow's binary_length has no view
    kernel, and the data buffers' sizes say nothing of one value's); a null row's view is not read."""
    size = MAX_VALUE_BYTES + 1
    data = np.zeros(size, dtype=np.uint8)  # pages are mapped on first touch: never touched here
    views = np.zeros((3, 4), dtype=np.int32)
    views[0] = [5, 0x6C6C6568, 0x6F, 0]  # "hello", inline
    views[1] = [size, 0, 0, 0]  # the null row: its view is not a value
    views[2] = [size, 0, 0, 0]
    valid = pa.py_buffer(np.packbits([1, 0, 1], bitorder="little"))
    arr = pa.Array.from_buffers(pa.binary_view(), 3, [valid, pa.py_buffer(views), pa.py_buffer(data)], 1)
    with pytest.raises(ValueCheckError, match=r"column 'b', row 2 of the batch.*2,147,483,584 bytes"):
        gpuwrite.write_table(pa.table({"b": arr}), tmp_path / "big.parquet")
    assert list(tmp_path.iterdir()) == []


def test_nanosecond_loss_is_said_in_pandas_words_with_the_way_out(tmp_path):
    """A datetime64[ns] column from pandas with sub-microsecond parts: the refusal names pandas' type, the
    keyword that allows it (allow_truncated_timestamps) and the pandas call that fixes the column."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"at": pd.to_datetime([1_700_000_000_123_456_789], unit="ns")})
    with pytest.raises(gpuwrite.GpuwriteError) as err:
        gpuwrite.write_table(frame, tmp_path / "at.parquet")
    message = str(err.value)
    assert "column 'at'" in message and "datetime64[ns]" in message
    assert "allow_truncated_timestamps=True" in message and "df['at'].dt.floor('us')" in message
    assert not (tmp_path / "at.parquet").exists()
    from gpuwrite.pipeline.columns import ns_loss_error  # the conversion's (and the device's) form of it

    assert str(ns_loss_error("at")) == ("column 'at': timestamp[ns] values (pandas' datetime64[ns]) with "
                                        "sub-microsecond parts cannot be written without loss (Spark stores "
                                        "microseconds); pass allow_truncated_timestamps=True to truncate them to "
                                        "microseconds (pyarrow's keyword), or cast the column to timestamp[us] first "
                                        "(pandas: df['at'] = df['at'].dt.floor('us'))")
    nested = str(ns_loss_error("s.at"))  # a struct's field: no pandas column to floor
    assert "allow_truncated_timestamps=True" in nested and "pandas:" not in nested


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=40),
       offset=st.integers(0, 9), start=st.integers(0, 45), switch=st.integers(-(2**40), 2**40))
def test_first_marked_matches_pyarrow_compute(values, offset, start, switch):
    """The timestamp / date finders read the values with NumPy (no pyarrow.compute load on a write): the first
    present value at or after `start` that is flagged, as pyarrow.compute's compare-and-index finds it, on sliced
    arrays with and without nulls, int64 and int32."""
    import pyarrow.compute as pc

    from gpuwrite.pipeline.validate import _first_marked

    for typ, dtype, lo, hi in [(pa.int64(), np.int64, -(2**63), 2**63 - 1), (pa.int32(), np.int32, -(2**31), 2**31 - 1)]:
        vals = [None if v is None else min(max(v, lo), hi) for v in values]
        arr = pa.array([0] * offset + vals, typ).slice(offset)
        s = min(start, len(arr))
        flagged = pc.or_(pc.less(arr, max(min(switch, hi), lo)), pc.equal(pc.bit_wise_and(arr, 7), 3))
        i = pc.index(flagged.slice(s), True).as_py()
        want = -1 if i < 0 else s + i
        bound = max(min(switch, hi), lo)
        got = _first_marked(arr, dtype, lambda v, b=bound: (v < b) | ((v & 7) == 3), s)
        assert got == want


def test_a_flat_write_does_not_load_pyarrow_compute(tmp_path):
    """A fresh process writing flat columns (timestamps in three units, dates, ints with nulls, decimals) checks
    them without importing pyarrow.compute (~0.1 s of a first write)."""
    import subprocess
    import sys

    code = f"""
import sys, numpy as np, pyarrow as pa
import gpuwrite
def fixed(typ, values, valid=None):
    bm = None if valid is None else pa.py_buffer(np.packbits(np.asarray(valid, bool), bitorder="little"))
    nulls = 0 if valid is None else int((~np.asarray(valid, bool)).sum())
    return pa.Array.from_buffers(typ, len(values), [bm, pa.py_buffer(np.ascontiguousarray(values))], null_count=nulls)
n = 10
t = pa.table({{"us": fixed(pa.timestamp("us"), np.arange(n, dtype=np.int64) * 10**12),
               "ns": fixed(pa.timestamp("ns"), np.arange(n, dtype=np.int64) * 10**9, [True, False] * 5),
               "ms": fixed(pa.timestamp("ms", "UTC"), np.arange(n, dtype=np.int64)),
               "d": fixed(pa.date32(), np.arange(n, dtype=np.int32), [False, True] * 5),
               "i": fixed(pa.int64(), np.arange(n, dtype=np.int64), [False, True] * 5),
               "dec": pa.Array.from_buffers(pa.decimal128(7, 2), n,
                                            [None, pa.py_buffer(np.arange(2 * n, dtype=np.int64) * ([1, 0] * n))])}})
assert "pyarrow.compute" not in sys.modules
gpuwrite.write_table(t, {str(tmp_path / "t.parquet")!r}, timestamp_type="TIMESTAMP_MICROS")
print("pyarrow.compute" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
    assert pq.read_table(tmp_path / "t.parquet").num_rows == 10
