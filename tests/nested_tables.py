"""The nested table of the nested-column tests (test_nested.py), which the GPU backend's identity corpus writes
too: every container kind, nulls at every level, empty containers, deep nesting."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa

D = decimal.Decimal
POINT = pa.struct([("x", pa.int32()), ("label", pa.string())])


def nested_table() -> pa.Table:
    """Every container, nulls at every level, empty containers, deep nesting."""
    return pa.table({
        "id": pa.array([0, 1, 2, 3, 4, 5], pa.int64()),
        "ints": pa.array([[1, 2, 3], None, [], [None], [4, None, 5], [-(2**31)]], pa.list_(pa.int32())),
        "strict": pa.array([[1.5], [], None, [2.5, 3.5], [0.0], []],
                           pa.list_(pa.field("element", pa.float64(), nullable=False))),
        "big": pa.array([["a"], None, [], ["", "long" * 40], [None], ["z"]], pa.large_list(pa.string())),
        "pair": pa.array([[1, 2], None, [3, None], [None, None], [5, 6], [7, 8]], pa.list_(pa.int64(), 2)),
        "pt": pa.array([{"x": 1, "label": "a"}, None, {"x": None, "label": None}, {"x": 4, "label": "d"},
                        {"x": 5, "label": ""}, None], POINT),
        "attrs": pa.array([[("k1", 1), ("k2", None)], None, [], [("k3", 3)], [("", 0)], [("k", -1), ("j", 2)]],
                          pa.map_(pa.string(), pa.int64())),
        "deep": pa.array([
            {"tags": [[{"x": 1, "label": "p"}], [], None], "m": [("a", [1, 2])]},
            None,
            {"tags": None, "m": None},
            {"tags": [], "m": []},
            {"tags": [[None, {"x": None, "label": "q"}]], "m": [("b", None), ("c", [])]},
            {"tags": [[{"x": 9, "label": None}]], "m": [("d", [None])]},
        ], pa.struct([("tags", pa.list_(pa.list_(POINT))), ("m", pa.map_(pa.string(), pa.list_(pa.int32())))])),
        "dec": pa.array([[D("1.25")], None, [D("-3.50"), None], [], [D("99999999999999999.99")], [D(0)]],
                        pa.list_(pa.decimal128(20, 2))),
        "dates": pa.array([[dt.date(2020, 1, 1)], [], None, [dt.date(1, 1, 1), None], [dt.date(9999, 12, 31)],
                           [dt.date(1970, 1, 1)]], pa.list_(pa.date32())),
        "flags": pa.array([[True, False], None, [None], [], [True], [False, None, True]], pa.list_(pa.bool_())),
    })
