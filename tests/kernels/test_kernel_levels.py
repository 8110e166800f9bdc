"""Dremel levels from the slot kernels (gpuwrite.pipeline.levels.walk) against an independent recursive oracle that
follows the definition of repetition and definition levels value by value, over random nested data."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from gpuwrite.kernels.convert.levels import bit_block_counts, block_counts, present_index
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.levels import walk
from gpuwrite.schema import FileSchema


def _oracle(value: Any, t: pa.DataType, nullable: bool, path: list[Any], levels: tuple[int, int, int],
            out: list[tuple[int, int, Any]]) -> None:
    """Append (rep, def, value) for one value of type t along the leaf `path` (a list of field selectors);
    `levels` is (definition level so far, repetition level of this value, depth of repetition so far)."""
    d, r, depth_rep = levels
    if value is None:
        out.append((r, d, None))
        return
    d = d + (1 if nullable else 0)
    if pa.types.is_struct(t):
        i = path[0]
        _oracle(value.get(t.field(i).name), t.field(i).type, t.field(i).nullable, path[1:], (d, r, depth_rep), out)
        return
    if pa.types.is_map(t):
        entries = list(value)
        if not entries:
            out.append((r, d, None))
            return
        i = path[0]
        for k, (key, item) in enumerate(entries):
            field = t.key_field if i == 0 else t.item_field
            child = key if i == 0 else item
            _oracle(child, field.type, i == 1 and field.nullable, path[1:],
                    (d + 1, r if k == 0 else depth_rep + 1, depth_rep + 1), out)
        return
    if pa.types.is_list(t):
        if not value:
            out.append((r, d, None))
            return
        for k, item in enumerate(value):
            _oracle(item, t.value_type, t.value_field.nullable, path,
                    (d + 1, r if k == 0 else depth_rep + 1, depth_rep + 1), out)
        return
    out.append((r, d, value))


def _selectors(leaf_steps: tuple) -> list[int]:
    return [s[1] for s in leaf_steps if s[0] == "field"]


TYPES = [
    pa.list_(pa.int32()),
    pa.list_(pa.list_(pa.int32())),
    pa.struct([("a", pa.int32()), ("b", pa.list_(pa.field("e", pa.int32(), nullable=False)))]),
    pa.map_(pa.int32(), pa.list_(pa.int32())),
    pa.list_(pa.struct([("a", pa.list_(pa.int32())), ("m", pa.map_(pa.int32(), pa.int32()))])),
]


def _values(t: pa.DataType, nullable: bool = True) -> st.SearchStrategy[Any]:
    if pa.types.is_struct(t):
        inner = st.fixed_dictionaries({t.field(i).name: _values(t.field(i).type, t.field(i).nullable)
                                       for i in range(t.num_fields)})
    elif pa.types.is_map(t):
        inner = st.lists(st.tuples(st.integers(0, 99), _values(t.item_type)), max_size=3,
                         unique_by=lambda kv: kv[0])
    elif pa.types.is_list(t):
        inner = st.lists(_values(t.value_type, t.value_field.nullable), max_size=3)
    else:
        inner = st.integers(-5, 5)
    return st.one_of(st.none(), inner) if nullable else inner


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_walk_matches_oracle(data):
    t = data.draw(st.sampled_from(TYPES))
    rows = data.draw(st.lists(_values(t), max_size=12))
    arr = pa.array(rows, t)
    if data.draw(st.booleans()) and len(arr) > 1:
        arr = arr.slice(1)
        rows = rows[1:]
    schema = FileSchema.from_arrow(pa.schema([("c", t)]), WriteOptions())
    for leaf in schema.leaves:
        (pos, rep, dfn, leaf_arr), _ = walk(arr, leaf)
        expected: list[tuple[int, int, Any]] = []
        for row in rows:
            _oracle(row, t, True, _selectors(leaf.steps), (0, 0, 0), expected)
        got_values = [leaf_arr[int(p)].as_py() if p >= 0 else None for p in pos]
        assert list(zip(rep.tolist(), dfn.tolist(), got_values, strict=True)) == expected, leaf.dotted
        assert all((d == leaf.max_def) == (p >= 0) for d, p in zip(dfn.tolist(), pos.tolist(), strict=True))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=200), st.data())
def test_level_counts_is_a_bincount_of_the_span(levels: list[int], data: st.DataObject) -> None:
    """level_counts over levels[a:b] adds what np.bincount counts there (levels 0..max)."""
    import numpy as np
    from gpuwrite.kernels.convert.levels import level_counts

    arr = np.array(levels, dtype=np.uint8)
    a = data.draw(st.integers(0, len(levels)))
    b = data.draw(st.integers(a, len(levels)))
    counts = np.zeros(6, dtype=np.int64)
    level_counts(arr, a, b, counts)
    assert counts.tolist() == np.bincount(arr[a:b], minlength=6).tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), max_size=300), st.integers(1, 17))
def test_block_counts_counts_each_full_block(flags: list[bool], block: int) -> None:
    """block_counts gives each full block's number of true flags, as NumPy counts them."""
    import numpy as np
    from gpuwrite.kernels.convert.levels import block_counts

    arr = np.array(flags, dtype=np.bool_)
    blocks = len(flags) // block
    counts = np.full(blocks, -1, dtype=np.int64)
    block_counts(arr.view(np.uint8), block, counts)
    expected = np.count_nonzero(arr[:blocks * block].reshape(blocks, block), axis=1)
    assert counts.tolist() == expected.tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 5), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_bit_block_counts_equal_the_flag_counts(blocks: int, density: float, seed: int) -> None:
    """Counting a block's rows from its packed bits (popcount per word) gives block_counts' count of its flags."""
    rng = np.random.default_rng(seed)
    flags = rng.random(blocks * 4096 + 77) < density
    expected = np.zeros(blocks, dtype=np.int64)
    block_counts(flags.view(np.uint8), 4096, expected)
    words = np.packbits(flags[:blocks * 4096], bitorder="little").view(np.uint64)
    got = np.full(blocks, -1, dtype=np.int64)
    bit_block_counts(words, 64, got)
    assert got.tolist() == expected.tolist()


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 3).flatmap(lambda top: st.tuples(st.just(top), st.lists(st.integers(0, top), max_size=300))),
       st.lists(st.integers(0, 1000), min_size=4, max_size=4), st.data())
def test_level_counts_of_levels_up_to_3_add_to_the_counts(case: tuple[int, list[int]], before: list[int],
                                                          data: st.DataObject) -> None:
    """Levels 0..3 counted from their power sums: one slot per level up to the maximum, added to what the
    counts held (a chunk's pages accumulate), as np.bincount gives them."""
    import numpy as np
    from gpuwrite.kernels.convert.levels import level_counts

    top, levels = case
    arr = np.array(levels, dtype=np.uint8)
    a = data.draw(st.integers(0, len(levels)))
    b = data.draw(st.integers(a, len(levels)))
    counts = np.array(before[: top + 1], dtype=np.int64)
    level_counts(arr, a, b, counts)
    assert counts.tolist() == (np.array(before[: top + 1]) + np.bincount(arr[a:b], minlength=top + 1)).tolist()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=60), st.booleans(), st.booleans())
def test_present_index_matches_its_numpy_form(slots: list[tuple[bool, bool]], repeated: bool, gather: bool) -> None:
    """One pass gives what the NumPy form did: the present slots' positions, the values before each entry, the
    entries where rows start (rep == 0, or every entry without repetition) and whether no gather is needed."""
    n = len(slots)
    present = np.array([p for p, _ in slots], dtype=bool)
    rep = np.array([0 if (i == 0 or start) else 1 for i, (_, start) in enumerate(slots)], dtype=np.uint8)
    pos = np.full(n, -1, dtype=np.int64)
    pos[present] = np.arange(int(present.sum()))[::-1] if gather else np.arange(int(present.sum()))
    starts = np.flatnonzero(rep == 0) if repeated else np.arange(n)
    at = np.empty(n, dtype=np.int64)
    values_before = np.empty(n + 1, dtype=np.int64)
    row_entry = np.empty(len(starts) + 1, dtype=np.int64)
    k, r, in_order = present_index(pos, rep if repeated else np.zeros(0, np.uint8), at, values_before, row_entry)
    assert (k, r) == (int(present.sum()), len(starts))
    assert at[:k].tolist() == pos[present].tolist()
    assert values_before.tolist() == np.concatenate([[0], np.cumsum(present)]).tolist()
    assert row_entry.tolist() == starts.tolist() + [n]
    assert in_order == (not gather or k < 2)


def test_present_index_counts_row_starts_beyond_the_room_it_is_given() -> None:
    """More row starts than rows: counted (the caller refuses them), never stored past the array."""
    row_entry = np.full(3, 7, dtype=np.int64)
    k, r, _ = present_index(np.arange(4, dtype=np.int64), np.zeros(4, np.uint8), np.empty(4, np.int64),
                            np.empty(5, np.int64), row_entry)
    assert (k, r) == (4, 4)
    assert row_entry.tolist() == [0, 1, 4]
