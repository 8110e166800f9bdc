"""The all-columns device dictionary (stand-in device: its compiled CPU twins) against the sequential CPU
dictionary that the CPU backend uses (`encode.dictionary.Dictionary`), value by value."""

from __future__ import annotations

import numpy as np
import pytest
from device_cases import device_window, random_table
from gpuwrite.kernels.dictionary.row_group import NO_OVERFLOW, dictionary_bytes
from gpuwrite.kernels.plan.layout import CT_DICT, CT_ENT, CT_ENTN, CT_KEYS, CT_VALUES

from gpuwrite.backends.device.dictionary import MAX_INDEX, build_dictionary
from gpuwrite.backends.device.ops import Device
from gpuwrite.encode.dictionary import Dictionary
from gpuwrite.options.model import WriteOptions


def dictionary_arrays(device: Device, rows: int, seed: int, limit: int, distinct: int = 50) -> tuple:
    """(leaves, host data, host column table, downloaded dictionary arrays) of a random window."""
    opts = WriteOptions(dictionary_page_size=limit)
    leaves, datas, win = device_window(device, random_table(rows, seed, distinct), opts)
    d = build_dictionary(device, win.cols, win.dev_cols, win.arenas, limit)
    got = [np.asarray(device.download(a)) for a in (d.ids, d.efirst, d.ebytes, d.overflow)]
    return leaves, datas, win.cols, got


@pytest.mark.parametrize(("seed", "limit", "distinct"), [(1, 1 << 20, 50), (2, 300, 50), (3, 1 << 20, 5000),
                                                         (4, 64, 5000)])
def test_standin_dictionary_equals_the_sequential_insert(seed: int, limit: int, distinct: int) -> None:
    leaves, datas, cols, (ids, efirst, ebytes, overflow) = dictionary_arrays(Device("standin"), 1500, seed, limit,
                                                                           distinct)
    checked = 0
    for c, (leaf, data) in enumerate(zip(leaves, datas, strict=True)):
        if not cols[c, CT_DICT]:
            assert leaf.kind == "bool"
            continue
        base, n = int(cols[c, CT_KEYS]), int(cols[c, CT_VALUES])
        ent, room = int(cols[c, CT_ENT]), int(cols[c, CT_ENTN])
        entries = efirst[ent:ent + room]
        ref = Dictionary(leaf, limit)
        expected_overflow = NO_OVERFLOW
        for i in range(n):
            got_id, over = ref.insert(data, i, i + 1)
            if over >= 0:
                expected_overflow = i
                break
            assert ids[base + i] == got_id[0], (leaf.name, i)
            size = int((entries <= i).sum())  # the entries once value i is in, read off the entries' first values
            assert size == ref.size and dictionary_bytes(cols, c, size, ebytes) == ref.byte_size, (leaf.name, i)
            checked += 1
        assert overflow[c] == expected_overflow, leaf.name
        total = int(ids[base:base + n].max()) + 1 if n else 0
        firsts = [int(np.flatnonzero(ids[base:base + n] == e)[0]) for e in range(min(total, room))]
        assert entries[:len(firsts)].tolist() == firsts, leaf.name
        assert (entries[len(firsts):] == MAX_INDEX).all(), leaf.name  # the room past the last entry
    assert checked > 1000


@pytest.mark.parametrize("limit", [64, 300, 1 << 20])
def test_entries_are_kept_for_what_a_dictionary_can_hold(limit: int) -> None:
    """Per-entry arrays hold the entries within the byte limit and the one that passes it (SPEC: parquet-java
    DictionaryValuesWriter's maxDictionaryByteSize), not one per value: an int32 column (4 bytes an entry) of
    mostly distinct values under a 64-byte limit keeps 64 // 4 + 1 entries, the last one its overflow value."""
    leaves, _, cols, (ids, efirst, _, overflow) = dictionary_arrays(Device("standin"), 1500, 4, limit, 5000)
    c = next(c for c, leaf in enumerate(leaves) if leaf.name == "i32")
    n, ent, room = int(cols[c, CT_VALUES]), int(cols[c, CT_ENT]), int(cols[c, CT_ENTN])
    assert room == min(n, limit // 4 + 1)
    total = int(ids[int(cols[c, CT_KEYS]):int(cols[c, CT_KEYS]) + n].max()) + 1
    assert total > 1000 and (efirst[ent:ent + room] < MAX_INDEX).sum() == min(room, total)
    assert overflow[c] == (NO_OVERFLOW if limit == 1 << 20 else efirst[ent + room - 1])


def test_dictionary_steps_serial_work_is_a_chunk_per_thread() -> None:
    """`Kernel.serial`: a thread of the value steps walks its share of one chunk (4096 values over 128 threads),
    whatever the rows; dict_bases walks a column's chunks (bounded by all chunks of the launch)."""
    from gpuwrite.backends.device import steps

    per_thread = 4096 // 128
    for rows in (10, 10**6):  # the launch's items (chunks) do not change what one thread walks
        assert steps.DICT_IDS.serial is not None and steps.DICT_IDS.serial(rows) == per_thread
        assert steps.DICT_FIRST.serial is not None and steps.DICT_FIRST.serial(rows) == per_thread + 1
        assert steps.DICT_INSERT.serial is not None and steps.DICT_INSERT.serial(rows) == 5 * per_thread
        # dict_number: its run walked twice around ONE block scan of two rows (log2 T rounds), as dict_bases'
        assert steps.DICT_NUMBER.serial is not None and steps.DICT_NUMBER.serial(rows) == 2 * per_thread + 7
    # dict_bases: a block per column, each thread a run of the chunks (all 40 counted), then a block scan
    assert steps.DICT_BASES.serial is not None and steps.DICT_BASES.serial(3, None, np.zeros((40, 2)), None) == 2 + 7
    assert steps.DICT_BASES.serial(3, None, np.zeros((4000, 2)), None) == 2 * 32 + 7
