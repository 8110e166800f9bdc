"""The row window converts Arrow rows a step at a time into growable buffers and keeps the rows past a row-group
cut converted (issue 12's memory work): files are byte-identical whatever the step, and large values are not
copied on their way to the encoders."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpuwrite
from gpuwrite.backends.workpool import WorkPool
from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.columns import leaf_data
from gpuwrite.pipeline.leafdata import LeafBuffer, LeafData, block_prefix
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.pipeline.window import RowWindow
from gpuwrite.pipeline.writer import FileWriter
from gpuwrite.schema import FileSchema


def _table(n: int, seed: int = 3) -> pa.Table:
    """Nullable ints, strings with empty and null slots, decimals, lists and structs over n rows."""
    rng = np.random.default_rng(seed)
    ints = pa.array([None if k % 7 == 0 else int(v) for k, v in enumerate(rng.integers(0, 50, n))], pa.int64())
    strings = pa.array([None if k % 5 == 0 else ("" if k % 11 == 0 else f"s{v}" * int(v % 4))
                        for k, v in enumerate(rng.integers(0, 1000, n))])
    decimals = pa.array([Decimal(int(v)) / 100 for v in rng.integers(-99999, 99999, n)], pa.decimal128(7, 2))
    lists = pa.array([None if k % 9 == 0 else [int(x) for x in rng.integers(0, 5, k % 4)] for k in range(n)],
                     pa.list_(pa.int32()))
    structs = pa.array([None if k % 13 == 0 else {"a": k, "b": f"t{k % 3}"} for k in range(n)],
                       pa.struct([("a", pa.int64()), ("b", pa.string())]))
    return pa.table({"i": ints, "s": strings, "d": decimals, "l": lists, "st": structs})


def _write(path, table, batch_rows, monkeypatch=None, step=None, **options) -> bytes:
    if step is not None:
        init = RowWindow.__init__

        def small(self, *args, **kwargs):
            init(self, *args, **kwargs)
            self.convert_bytes = step

        monkeypatch.setattr(RowWindow, "__init__", small)
    with gpuwrite.ParquetWriter(path, table.schema, device="cpu", **options) as w:
        for batch in table.to_batches(max_chunksize=batch_rows):
            w.write(batch)
    if step is not None:
        monkeypatch.undo()
    return path.read_bytes()


@pytest.mark.parametrize("step", [1, 3000, 40_000])
def test_conversion_step_does_not_change_the_bytes(tmp_path, monkeypatch, step):
    """Several row groups, cuts inside converted rows (the tail carried over), steps of one row to many:
    the same file as one conversion of everything."""
    table = _table(6000)
    options = {"block_size": 16 * 1024, "page_size": 1024}
    whole = _write(tmp_path / "a.parquet", table, 6000, **options)
    stepped = _write(tmp_path / "b.parquet", table, 700, monkeypatch, step, **options)
    assert stepped == whole
    assert gpuwrite.inspect(str(tmp_path / "a.parquet"))["footer"]["num_rows"] == 6000
    assert len(gpuwrite.inspect(str(tmp_path / "a.parquet"))["row_groups"]) >= 3


def _views(table: pa.Table, cuts: list[int]) -> tuple[FileSchema, list[list[LeafData]]]:
    """Each leaf's LeafData for consecutive slices of the table."""
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    bounds = [0, *cuts, table.num_rows]
    parts = [[leaf_data(table.slice(a, b - a).column(leaf.index).combine_chunks(), leaf, RebaseOptions.of(opts))
              for a, b in zip(bounds, bounds[1:], strict=False)] for leaf in schema.leaves]
    return schema, parts


def _same(a: LeafData, b: LeafData) -> None:
    """Two LeafData hold the same rows (byte offsets compared relative to their data)."""
    assert a.num_rows == b.num_rows
    for name in ("valid", "values", "rep", "dfn", "row_entry", "values_before"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None) or name == "valid", name
        if x is not None and y is not None:
            assert np.array_equal(x, y), name
    if a.offsets is not None:
        ao, bo = a.offsets - a.offsets[0], b.offsets - b.offsets[0]
        assert np.array_equal(ao, bo)
        assert np.array_equal(a.data[a.offsets[0]:a.offsets[-1]], b.data[b.offsets[0]:b.offsets[-1]])


def test_leaf_buffer_appends_and_tails_like_concatenation():
    """Appending parts equals LeafData.concat and one conversion of all rows; a tail holds the rows past the
    cut and takes more; earlier views stay valid."""
    table = _table(500, seed=9)
    _, parts = _views(table, [1, 120, 121, 300])
    _, whole = _views(table, [])
    _, after = _views(table.slice(200), [])
    for leaf_parts, full, rest in zip(parts, whole, after, strict=True):
        buffer = LeafBuffer(rows_hint=64)
        buffer.append(leaf_parts[0])
        first_view = buffer.view()
        for part in leaf_parts[1:]:
            buffer.append(part)
        _same(buffer.view(), LeafData.concat(leaf_parts))
        _same(buffer.view(), full[0])
        _same(first_view, leaf_parts[0])
        tail = buffer.tail(200, rows_hint=1000)
        _same(tail.view(), rest[0])
        tail.append(leaf_parts[-1])
        _same(tail.view(), LeafData.concat([rest[0], leaf_parts[-1]]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), max_size=40) | st.integers(0, 9000).map(lambda n: [True] * n),
                min_size=1, max_size=8), st.integers(0, 3))
def test_leaf_buffer_keeps_block_counts_and_packed_bits_as_rows_arrive(parts, null_every):
    """The block counts and packed validity a buffer keeps as parts arrive (on the converting thread) equal
    those counted and packed from the whole validity at once, whatever the parts' lengths (bytes cut
    mid-part, blocks of 4096 rows crossed); an earlier view's bits stay as they were."""
    buffer = LeafBuffer()
    views, rows = [], []
    for part in parts:
        valid = np.array(part, dtype=np.bool_)
        if null_every and len(valid):
            valid[::null_every + 1] = False
        buffer.append(LeafData(len(valid), valid, values=np.zeros(int(valid.sum()), dtype=np.int64)))
        rows.append(valid)
        views.append((buffer.view(), np.concatenate(rows)))
    for view, valid in views:
        if view.valid is None:
            continue
        assert np.array_equal(view.valid, valid)
        assert np.array_equal(view.packed_valid(), np.packbits(valid, bitorder="little"))
        assert np.array_equal(view._block_prefix, block_prefix(valid, None))
        assert [view.value_index(r) for r in range(0, len(valid) + 1, 997)] == \
            [int(valid[:r].sum()) for r in range(0, len(valid) + 1, 997)]


def test_large_values_are_not_copied_into_the_window():
    """Slices of one large_binary array stay views of its data buffer, however many steps convert them."""
    size, n = 1 << 20, 12
    data = np.random.default_rng(1).integers(0, 256, n * size, dtype=np.uint8)
    arr = pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(np.arange(n + 1, dtype=np.int64) * size),
                                                       pa.py_buffer(data)])
    table = pa.table({"b": arr})
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    buffer = LeafBuffer()
    for k in range(n):
        buffer.append(leaf_data(table.column(0).chunk(0).slice(k, 1), schema.leaves[0], RebaseOptions.of(opts)))
    view = buffer.view()
    assert np.shares_memory(view.data, data) and view.data.size == n * size
    assert np.array_equal(view.offsets, np.arange(n + 1) * size)


def test_pages_of_written_row_groups_are_released(tmp_path, monkeypatch):
    """Reproducer: the assembler kept every page (its bytes) until the footer, so a streamed file's whole size
    stayed in memory. Once a row group is in the file its pages are gone; only the indexes stay."""
    import gc
    import weakref

    from gpuwrite.encode import chunk

    made: list[weakref.ref] = []
    of = chunk.encoded_page

    def tracked(*args, **kwargs):
        page = of(*args, **kwargs)
        made.append(weakref.ref(page))
        return page

    monkeypatch.setattr(chunk, "encoded_page", tracked)
    init = RowWindow.__init__

    def small(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.convert_bytes = 20_000  # convert as batches arrive, so row groups reach the file before close

    monkeypatch.setattr(RowWindow, "__init__", small)
    table = _table(6000)
    with gpuwrite.ParquetWriter(tmp_path / "p.parquet", table.schema, device="cpu", block_size=16 * 1024,
                                page_size=1024) as w:
        for batch in table.to_batches(max_chunksize=500):
            w.write(batch)
        gc.collect()
        assert w._assembler.row_groups, "no row group was written before close: the test covers nothing"
        alive = sum(r() is not None for r in made)
        assert alive < len(made) // 2
    monkeypatch.undo()
    reference = tmp_path / "r.parquet"
    gpuwrite.write_table(table, reference, device="cpu", block_size=16 * 1024, page_size=1024)
    assert (tmp_path / "p.parquet").read_bytes() == reference.read_bytes()


def test_lookahead_writes_row_groups_while_rows_arrive(tmp_path):
    """A writer that rolls files on written bytes (lookahead=1) sees finished row groups in `bytes_written` as
    rows arrive, far below the 32 MiB conversion floor, and writes the same bytes as the default writer."""
    table = _table(6000)
    options = WriteOptions(block_size=16 * 1024, page_size=1024, device="cpu")
    schema = FileSchema.from_arrow(table.schema, options)

    def write(path, lookahead):
        seen = []
        with FileWriter(path, schema, options, lookahead=lookahead) as w:
            for batch in table.to_batches(max_chunksize=500):
                w.write(batch)
                seen.append(w.bytes_written)
        return seen, path.read_bytes()

    rolled, rolled_bytes = write(tmp_path / "a.parquet", 1)
    default, default_bytes = write(tmp_path / "b.parquet", None)
    assert default[-1] == len(b"PAR1")  # the default writer converts once 32 MiB wait (or at close)
    assert len(b"PAR1") < rolled[len(rolled) // 2] < rolled[-1]  # row groups reach the file batch by batch
    assert rolled_bytes == default_bytes


def test_threaded_conversion_gives_the_same_leaves_and_the_first_failure(monkeypatch):
    """With the backend's pool the leaves of a step convert side by side: the same LeafData as one thread, and
    a failure is the first failing leaf's in schema order, as without threads (each column its own job: small
    ones are otherwise grouped, and these are small; and run on the pool, which they are too small for)."""
    monkeypatch.setattr("gpuwrite.backends.workpool.SMALL_JOB", 0)
    monkeypatch.setattr("gpuwrite.backends.workpool.PARALLEL_JOB_BYTES", 0)
    table = _table(3000)
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    pool = WorkPool(2)
    try:
        windows = [RowWindow(schema, opts), RowWindow(schema, opts, pool=pool)]
        for window in windows:
            window.start_row_group(None)
            for batch in table.to_batches(max_chunksize=1000):
                window.push(batch)
        serial, threaded = (w.extend().leaves() for w in windows)
        assert len(serial) == len(threaded) == len(schema.leaves)
        for a, b in zip(serial, threaded, strict=True):
            for name in ("valid", "values", "offsets", "data", "rep", "dfn", "row_entry", "values_before"):
                x, y = getattr(a, name), getattr(b, name)
                assert (x is None) == (y is None), name
                if x is not None:
                    assert np.array_equal(x, y), name

        def failing(column, leaf, options, into=None, memo=None, check_decimals=False):
            raise ValueError(f"bad {leaf.dotted}")

        window = RowWindow(schema, opts, pool=pool)
        window.start_row_group(None)
        window.push(table)
        monkeypatch.setattr("gpuwrite.pipeline.window.leaf_data", failing)
        with pytest.raises(ValueError, match=f"bad {schema.leaves[0].dotted}$"):
            window.extend()
    finally:
        pool.shutdown()


def _leaves_equal(a: list[LeafData], b: list[LeafData]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.num_rows == y.num_rows
        for name in ("valid", "values", "offsets", "data", "rep", "dfn", "row_entry", "values_before"):
            u, v = getattr(x, name), getattr(y, name)
            assert (u is None) == (v is None), name
            if u is not None:
                assert np.array_equal(u, v), name


def _in_quarters(table: pa.Table, *windows: RowWindow) -> tuple[RowWindow, ...]:
    """Windows holding `table`, converted a quarter of its bytes at a time, with a row group open."""
    for window in windows:
        window.convert_bytes = table.nbytes // 4
        window.push(table)
        window.start_row_group(None)
    return windows


def test_next_step_is_converted_ahead_in_the_background():
    """With a pool, extend returns the window and starts converting the next step as background work: the
    window grows by that step at the next extend (the same leaves as converting serially), at_end stays false
    while it is in flight, and drop waits for it before carrying rows over."""
    table = _table(4000)
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    pool = WorkPool(2)
    try:
        serial, ahead = _in_quarters(table, RowWindow(schema, opts), RowWindow(schema, opts, pool=pool))
        first = ahead.extend()
        assert ahead._ahead is not None and not ahead.at_end  # the second step is on its way
        assert first.rows == ahead.rows == serial.extend().rows < table.num_rows
        assert ahead.pending_rows == table.num_rows
        while not ahead.at_end:  # each extend adds the step converted ahead: the same steps as serially
            assert ahead.extend().rows == serial.extend().rows
        assert serial.at_end and ahead.rows == table.num_rows
        _leaves_equal(serial.extend().leaves(), ahead.extend().leaves())
        # a cut while a step is in flight: drop settles it first, so no row is lost
        cut_serial, cut_ahead = _in_quarters(table, RowWindow(schema, opts), RowWindow(schema, opts, pool=pool))
        rows = cut_ahead.extend().rows
        cut_serial.extend()
        cut_serial.extend()  # the serial window holds the step the other converts ahead
        for window in (cut_serial, cut_ahead):
            window.drop(rows // 2)
        assert cut_ahead._ahead is None and cut_ahead.pending_rows == table.num_rows - rows // 2
        _leaves_equal(cut_serial.extend().leaves(), cut_ahead.extend().leaves())
    finally:
        pool.shutdown()


class _EagerPool(WorkPool):
    """Background jobs that finish before `submit_later` returns: the worst timing for a window that views its
    buffers while the next step appends to them."""

    def submit_later(self, fn, *args):
        future = super().submit_later(fn, *args)
        future.exception()
        return future


def test_the_window_returned_never_holds_rows_of_the_step_converted_ahead():
    """extend's window is taken before the next step starts converting: a step that lands at once (CI caught
    it racing) is not in the window, and is added whole at the next extend."""
    table = _table(4000)
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    pool = _EagerPool(2)
    try:
        serial, ahead = _in_quarters(table, RowWindow(schema, opts), RowWindow(schema, opts, pool=pool))
        while not serial.at_end:
            got, want = ahead.extend(), serial.extend()
            assert ahead._ahead is not None or ahead.at_end
            assert got.rows == ahead.rows == want.rows
            _leaves_equal(want.leaves(), got.leaves())
        assert ahead.at_end
    finally:
        pool.shutdown()


def test_a_failure_converting_ahead_surfaces_at_the_next_extend_and_clear_forgets_it(monkeypatch):
    """A step converted in the background that fails raises (the first failing leaf in schema order) when the
    window next needs it; clear() cancels or waits for a step in flight and leaves nothing pending."""
    table = _table(4000)
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    pool = WorkPool(2)
    real = leaf_data

    def failing_later(column, leaf, options, into=None, memo=None, check_decimals=False):
        if into is not None and into.num_rows > 0:  # only steps after the first
            raise ValueError(f"bad {leaf.dotted}")
        return real(column, leaf, options, into, memo, check_decimals)

    try:
        (window,) = _in_quarters(table, RowWindow(schema, opts, pool=pool))
        monkeypatch.setattr("gpuwrite.pipeline.window.leaf_data", failing_later)
        window.extend()
        with pytest.raises(ValueError, match=f"bad {schema.leaves[0].dotted}$"):
            window.extend()
        (window,) = _in_quarters(table, RowWindow(schema, opts, pool=pool))
        window.extend()
        assert window._ahead is not None
        window.clear()
        assert window._ahead is None and window.pending_rows == 0 and window.at_end
    finally:
        pool.shutdown()


def test_first_row_group_reserves_for_the_rows_waiting():
    """Rows already waiting when a row group starts are reserved for at once (within HINT_GROWTH times the
    block-size estimate): later steps append without regrowing, so converted rows are copied once."""
    from gpuwrite.pipeline.window import HINT_GROWTH

    table = _table(6000)
    opts = WriteOptions(block_size=64 * 1024)
    schema = FileSchema.from_arrow(table.schema, opts)
    window = RowWindow(schema, opts)
    window.convert_bytes = table.nbytes // 6
    window.push(table)
    window.start_row_group(None)
    per_row = table.nbytes // table.num_rows
    guess = max(1024, 2 * opts.block_size // per_row)
    assert guess < table.num_rows <= HINT_GROWTH * guess  # the old estimate alone would regrow
    assert window.rows_hint == table.num_rows
    window.extend()
    window.extend()
    ints = window.buffers[0].values
    assert ints is not None and ints.owned
    held = ints.buf
    while not window.at_end:
        window.extend()
    assert ints.buf is held  # no regrowth after the first copy
    assert window.rows == table.num_rows


def test_block_prefix_carries_over_from_view_to_view(monkeypatch):
    """A flat leaf's non-null block counts are extended part by part as rows are appended (never counted again)
    and equal a fresh count of the whole validity array at every view."""
    import gpuwrite.pipeline.leafdata as leafdata
    from gpuwrite.pipeline.leafdata import _BLOCK, block_prefix

    scanned: list[int] = []
    count = leafdata.bit_block_counts  # the buffer counts blocks from the bits it packs as rows arrive

    def counting(words, block_words, out):
        scanned.append(len(out) * block_words * 64)
        count(words, block_words, out)

    rng = np.random.default_rng(5)
    buffer = LeafBuffer(rows_hint=10 * _BLOCK)
    counted: list[int] = []
    for rows in (100, _BLOCK, 3 * _BLOCK + 7, 2 * _BLOCK - 7, 5):
        valid = rng.random(rows) > 0.3
        values = np.arange(int(valid.sum()), dtype=np.int64)
        monkeypatch.setattr(leafdata, "bit_block_counts", counting)
        buffer.append(LeafData(rows, valid, values=values))  # counted as rows arrive, not at each view
        view = buffer.view()
        monkeypatch.undo()
        assert view.valid is not None
        fresh = block_prefix(view.valid, None)
        assert np.array_equal(view._block_prefix, fresh)
        counted.append(len(fresh) - 1)
        row = int(rng.integers(0, view.num_rows + 1))
        assert view.value_index(row) == int(np.count_nonzero(view.valid[:row]))
    assert counted == sorted(counted) and counted[-1] == buffer.num_rows // _BLOCK
    assert sum(scanned) == counted[-1] * _BLOCK  # each full block counted once over all the views


def test_compacted_values_are_converted_in_place(monkeypatch):
    """Values compacted from nullable columns (ints, doubles, small decimals) are written straight into the
    leaf buffer: after the first step's copy no append copies them again, and the leaves equal a plain
    conversion."""
    import gpuwrite.pipeline.leafdata as leafdata

    rng = np.random.default_rng(9)
    n = 4000
    mask = rng.random(n) < 0.1
    table = pa.table({"i": pa.array(rng.integers(-50, 50, n), pa.int32(), mask=mask),
                      "f": pa.array(rng.random(n), pa.float64(), mask=mask),
                      "d": pa.array([Decimal(int(v)) / 100 for v in rng.integers(-9999, 9999, n)],
                                    pa.decimal128(7, 2), mask=mask)})
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    window = RowWindow(schema, opts)
    window.push(table)
    window.start_row_group(None)
    window.convert_bytes = table.nbytes // 8
    copies: list[int] = []
    plain_append = leafdata._Grow.append

    def counting(self, src, a, b, expected):
        before = self.buf
        plain_append(self, src, a, b, expected)
        if self.dtype not in (np.bool_, np.uint8) and self.buf is before and self.owned:  # values, not validity
            copies.append(int(np.shares_memory(src, before)))

    monkeypatch.setattr(leafdata._Grow, "append", counting)
    while not window.at_end:
        window.extend()
    leaves = window.extend().leaves()
    assert copies and all(copies)  # every later append of values was the buffer's own memory
    for leaf, got in zip(schema.leaves, leaves, strict=True):
        want = leaf_data(table.column(leaf.index), leaf, RebaseOptions.of(opts))
        assert np.array_equal(got.values, want.values), leaf.name
        assert np.array_equal(got.valid, want.valid), leaf.name


def test_small_chunks_of_a_step_are_converted_as_one(tmp_path, monkeypatch):
    """A step of many small batches (a Spark task's 10k-row batches) converts each leaf once, not once per
    batch; dictionary-encoded columns keep their chunks; the bytes are those of one write of the whole table."""
    import gpuwrite.pipeline.window as window_module

    table = _table(3000)
    codes = pa.array(["x", "y", "z"] * 1000).dictionary_encode()
    table = table.append_column("code", codes)
    calls: list[str] = []
    real = window_module.leaf_data

    def counting(column, leaf, options, into=None, memo=None, check_decimals=False):
        calls.append(leaf.dotted)
        return real(column, leaf, options, into, memo, check_decimals)

    monkeypatch.setattr(window_module, "leaf_data", counting)
    opts = WriteOptions()
    schema = FileSchema.from_arrow(table.schema, opts)
    window = RowWindow(schema, opts)
    for batch in table.to_batches(max_chunksize=300):  # 10 chunks, each with its own dictionary
        window.push(batch)
    window.start_row_group(None)
    window.extend()
    assert window.at_end
    flat = [leaf.dotted for leaf in schema.leaves if leaf.dotted != "code"]
    assert all(calls.count(name) == 1 for name in flat), calls
    assert calls.count("code") == 10
    assert _write(tmp_path / "a.parquet", table, 300) == _write(tmp_path / "b.parquet", table, 3000)


def test_view_columns_are_sized_by_their_rows_values():
    """Reproducer: a string_view column of slices of one large array counted its shared data buffers once per
    slice (Arrow's nbytes, gigabytes for a few rows), so the CPU window converted step after tiny step and the
    GPU window planned a tiny first window. Both size the rows by their values now, as the same rows as
    large_string are sized (the view layout's 16 bytes a row against 8 bytes of offsets)."""
    from gpuwrite.pipeline.window import ArrowWindow

    big = pa.array(["v" * 200 + str(i) for i in range(60_000)], pa.string_view())  # about 12 MB of values
    joined = pa.concat_arrays([big.slice(i * 600, 50) for i in range(100)])  # 5000 rows, 1 MB
    table = pa.table({"s": joined})
    assert table.nbytes > 1 << 30
    opts = WriteOptions(block_size=1 << 20)
    schema = FileSchema.from_arrow(table.schema, opts)
    rows = RowWindow(schema, opts)
    rows.push(table)
    plain = pa.table({"s": joined.cast(pa.large_string())})
    assert abs(rows.unconverted_bytes - (plain.nbytes + 8 * table.num_rows)) <= 8  # views 16 bytes, offsets 8
    assert not rows.ready(final=False)  # 1 MB waiting: under a step (32 MiB)
    arrow = ArrowWindow(schema, opts)
    arrow.push(table)
    arrow.start_row_group(None)
    assert arrow.target >= 8 * opts.block_size // (plain.nbytes // table.num_rows + 8)


def test_device_window_margin_follows_how_row_counts_vary():
    """The GPU window after a cut takes the last row group's rows and a margin: 1/8 after one row group, then
    twice the largest change between the last row counts, within 1/32 and 1/4 (a fixed 1/4 re-uploaded a
    quarter of every row group: H2D 1.22x the input at 28.8 M rows in 128 MiB row groups)."""
    from gpuwrite.pipeline.window import SLACK_FIRST, SLACK_MAX, SLACK_MIN, ArrowWindow, window_slack

    assert window_slack([]) == window_slack([5000]) == SLACK_FIRST
    assert window_slack([3_827_446, 3_827_446, 3_810_100]) == SLACK_MIN  # 0.45% apart: the floor
    assert window_slack([10_000, 10_500]) == pytest.approx(0.1)  # 5% apart: twice that
    assert window_slack([10_000, 20_000]) == SLACK_MAX
    assert window_slack([10_000, 20_000, 10_000, 10_000, 10_000, 10_000, 10_000]) == SLACK_MIN  # old jumps age out
    table = pa.table({"a": pa.array(np.arange(100_000), pa.int64())})
    opts = WriteOptions(block_size=1 << 20)
    arrow = ArrowWindow(FileSchema.from_arrow(table.schema, opts), opts)
    arrow.push(table)
    targets = []
    for rows in (5000, 5000, 5000, 6000):
        arrow.start_row_group(rows)
        targets.append(arrow.target)
    assert targets == [5000 + 625 + 1, 5000 + 156 + 1, 5000 + 156 + 1, 6000 + 1500 + 1]
