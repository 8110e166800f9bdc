"""Tables holding Arrow's view types (string_view, binary_view: polars' strings) flat and nested anywhere, each
with the same data as plain string / binary types: a file written from either must be byte for byte the same
(tests/pipeline/test_views.py, and the identity corpus on the GPU paths)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from gpuwrite.pipeline.nested_types import rebuilt_type

SV, BV = pa.string_view(), pa.binary_view()


def _words(n: int, seed: int) -> list[str | None]:
    """Short (inline) and long (out-of-line) strings, with nulls."""
    return [None if (i + seed) % 7 == 3 else ("w" * ((i * 5 + seed) % 29)) + str(i) for i in range(n)]


def _lists(n: int, seed: int) -> list[list[str | None] | None]:
    """Lists of words: null and empty lists among them, null elements too."""
    words = _words(4 * n, seed)
    out: list[list[str | None] | None] = []
    for i in range(n):
        if i % 9 == 4:
            out.append(None)
        else:
            out.append(words[4 * i:4 * i + i % 4])
    return out


def _concatenated_slices(n: int) -> pa.Array:
    """A string_view array made of slices of one larger array (with nulls), concatenated: the data buffers of
    the large array are listed once per slice, so Arrow's nbytes counts them many times over."""
    big = pa.array([None if i % 11 == 5 else "v" * 20 + str(i) for i in range(20 * n)], SV)
    return pa.concat_arrays([big.slice(i * 20, 3) for i in range(n // 3)])


def _hidden_values() -> pa.Array:
    """A list<string_view> whose null entry spans values (offsets 2..4): they are not in the column."""
    values = pa.array(["a", "b" * 20, "hidden" * 5, "c" * 14, None, "d"], SV)
    return pa.ListArray.from_arrays(pa.array([0, 2, 4, 6], pa.int32()), values,
                                    mask=pa.array([False, True, False]))


def view_cases() -> dict[str, tuple[pa.Table, pa.Table]]:
    """name -> (a table with view types, the same rows with string / binary in their place)."""
    n = 240
    words, lists = _words(n, 1), _lists(n, 2)
    raw: dict[str, tuple[Any, pa.DataType, pa.DataType]] = {
        "flat": (words, SV, pa.string()),
        "flat_binary": ([None if w is None else w.encode() for w in words], BV, pa.binary()),
        "list": (lists, pa.list_(SV), pa.list_(pa.string())),
        "list_binary": ([None if v is None else [None if w is None else w.encode() for w in v] for v in lists],
                        pa.list_(BV), pa.list_(pa.binary())),
        "large_list": (lists, pa.large_list(SV), pa.large_list(pa.large_string())),
        "fixed_size_list": ([None if i % 5 == 1 else [words[i], words[(i * 7) % n]] for i in range(n)],
                            pa.list_(SV, 2), pa.list_(pa.string(), 2)),
        "struct": ([None if i % 6 == 2 else {"l": lists[i], "s": words[i]} for i in range(n)],
                   pa.struct([("l", pa.list_(SV)), ("s", SV)]),
                   pa.struct([("l", pa.list_(pa.string())), ("s", pa.string())])),
        "map": ([None if i % 8 == 3 else [(f"k{j}" + "q" * (i % 17), words[(i + j) % n]) for j in range(i % 3)]
                 for i in range(n)], pa.map_(SV, SV), pa.map_(pa.string(), pa.string())),
        "list_struct_list": ([None if v is None else [{"x": v}, {"x": None}] for v in lists],
                             pa.list_(pa.struct([("x", pa.list_(SV))])),
                             pa.list_(pa.struct([("x", pa.list_(pa.string()))]))),
    }
    long_lists = [None if i % 10 == 0 else ["L" * (30 + i % 50) + str(i)] * (i % 3) + [None] * (i % 7 == 2)
                  for i in range(1500)]
    raw["list_many_buffers"] = (long_lists, pa.list_(SV), pa.list_(pa.string()))  # data in several buffers
    cases = {name: (pa.table({"c": pa.array(data, view)}), pa.table({"c": pa.array(data, plain)}))
             for name, (data, view, plain) in raw.items()}
    sliced = pa.array(lists, pa.list_(SV)).slice(17, 150)  # offsets into the values start past 0
    cases["sliced_list"] = (pa.table({"c": sliced}), pa.table({"c": sliced.cast(pa.list_(pa.string()))}))
    joined = _concatenated_slices(n)
    cases["concatenated_slices"] = (pa.table({"c": joined}), pa.table({"c": joined.cast(pa.string())}))
    hidden = _hidden_values()
    cases["hidden_values"] = (pa.table({"c": hidden}), pa.table({"c": hidden.cast(pa.list_(pa.string()))}))
    return cases


def plain_type(t: pa.DataType) -> pa.DataType:
    """`t` with string_view / binary_view replaced by string / binary wherever they are in it."""
    return rebuilt_type(t, _plain_leaf, _plain_field)


def _plain_leaf(t: pa.DataType) -> pa.DataType:
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    return t


def _plain_field(f: pa.Field) -> pa.Field:
    return f.with_type(plain_type(f.type))


def plain(table: pa.Table) -> pa.Table:
    """The table with its view types cast to string / binary (same values)."""
    return table.cast(pa.schema([_plain_field(f) for f in table.schema], table.schema.metadata))
