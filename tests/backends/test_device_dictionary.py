"""The all-columns device dictionary (stand-in device: its compiled CPU twins) against the sequential CPU
dictionary that the CPU backend uses (`encode.dictionary.Dictionary`), value by value."""

from __future__ import annotations

import numpy as np
import pytest
from device_cases import device_window, random_table
from gpuwrite.kernels.dictionary.row_group import NO_OVERFLOW
from gpuwrite.kernels.plan.layout import CT_DICT, CT_KEYS, CT_VALUES

from gpuwrite.backends.device.dictionary import build_dictionary
from gpuwrite.backends.device.ops import Device
from gpuwrite.encode.dictionary import Dictionary
from gpuwrite.options.model import WriteOptions


def dictionary_arrays(device: Device, rows: int, seed: int, limit: int, distinct: int = 50) -> tuple:
    """(leaves, host data, host column table, downloaded dictionary arrays) of a random window."""
    opts = WriteOptions(dictionary_page_size=limit)
    leaves, datas, win = device_window(device, random_table(rows, seed, distinct), opts)
    d = build_dictionary(device, win.cols, win.dev_cols, win.arenas, limit)
    got = [np.asarray(device.download(a)) for a in (d.ids, d.ecum, d.bcum, d.efirst, d.overflow)]
    return leaves, datas, win.cols, got


@pytest.mark.parametrize(("seed", "limit", "distinct"), [(1, 1 << 20, 50), (2, 300, 50), (3, 1 << 20, 5000),
                                                         (4, 64, 5000)])
def test_standin_dictionary_equals_the_sequential_insert(seed: int, limit: int, distinct: int) -> None:
    leaves, datas, cols, (ids, ecum, bcum, efirst, overflow) = dictionary_arrays(Device("standin"), 1500, seed,
                                                                               limit, distinct)
    checked = 0
    for c, (leaf, data) in enumerate(zip(leaves, datas, strict=True)):
        if not cols[c, CT_DICT]:
            assert leaf.kind == "bool"
            continue
        base, n = int(cols[c, CT_KEYS]), int(cols[c, CT_VALUES])
        ref = Dictionary(leaf, limit)
        expected_overflow = NO_OVERFLOW
        for i in range(n):
            got_id, over = ref.insert(data, i, i + 1)
            if over >= 0:
                expected_overflow = i
                break
            assert ids[base + i] == got_id[0], (leaf.name, i)
            assert ecum[base + i] == ref.size and bcum[base + i] == ref.byte_size, (leaf.name, i)
            checked += 1
        assert overflow[c] == expected_overflow, leaf.name
        firsts = [int(np.flatnonzero(ids[base:base + n] == e)[0]) for e in range(int(ecum[base + n - 1]))]
        assert efirst[base:base + len(firsts)].tolist() == firsts, leaf.name
    assert checked > 1000
