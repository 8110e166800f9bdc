"""The all-columns dictionary's CUDA kernels (simulator) against their sequential CPU twins (stand-in device)."""

from __future__ import annotations

import numpy as np
import pytest
from device_cases import device_window, random_table
from gpuwrite.kernels.plan.layout import CT_ENT, CT_ENTB, CT_ENTN, CT_KEYS, CT_VALUES

from gpuwrite.backends.device import steps
from gpuwrite.backends.device.dictionary import build_dictionary
from gpuwrite.backends.device.ops import Device
from gpuwrite.options.model import WriteOptions


def _arrays(device: Device, seed: int, limit: int) -> dict[str, list[np.ndarray]]:
    """Per dictionary column: its values' ids, its entries' first values and dictionary bytes; and the overflow
    values (padding between columns left out)."""
    opts = WriteOptions(dictionary_page_size=limit)
    _, _, win = device_window(device, random_table(300, seed, distinct=40), opts)
    d = build_dictionary(device, win.cols, win.dev_cols, win.arenas, limit)
    ids, efirst, ebytes, overflow = (np.asarray(device.download(a)) for a in (d.ids, d.efirst, d.ebytes,
                                                                             d.overflow))
    out: dict[str, list[np.ndarray]] = {"ids": [], "efirst": [], "ebytes": [], "overflow": [overflow]}
    for c in d.columns:
        base, n = int(win.cols[c, CT_KEYS]), int(win.cols[c, CT_VALUES])
        ent, room = int(win.cols[c, CT_ENT]), int(win.cols[c, CT_ENTN])
        recorded = int((efirst[ent:ent + room] < 2**31 - 1).sum())
        out["ids"].append(ids[base:base + n])
        out["efirst"].append(efirst[ent:ent + room])
        if win.cols[c, CT_ENTB] >= 0:  # kept for BYTE_ARRAY columns only
            out["ebytes"].append(ebytes[int(win.cols[c, CT_ENTB]):int(win.cols[c, CT_ENTB]) + recorded])
    return out


@pytest.mark.parametrize(("seed", "limit"), [(1, 1 << 20), (2, 90)])
def test_cuda_dictionary_equals_twin(seed: int, limit: int) -> None:
    sim = Device()
    assert sim.mode == "sim"
    got = _arrays(sim, seed, limit)
    want = _arrays(Device("standin"), seed, limit)
    assert len(got["ids"]) == 7
    for name in got:
        for g, w in zip(got[name], want[name], strict=True):
            assert np.array_equal(g, w), name


@pytest.mark.parametrize(("seed", "threads"), [(1, 1), (2, 3), (3, 8), (4, 32)])
def test_dict_bases_block_equals_twin(seed: int, threads: int) -> None:
    # step 4 alone (a block per column, a block scan over its chunks): columns of 0 to 70 chunks (more than a
    # block's threads), random new entries and bytes per chunk; every chunk's bases equal the sequential twin's
    rng = np.random.default_rng(seed)
    per = rng.integers(0, 71, 6)
    per[0] = 0
    per[1] = 3 * threads + 1  # crosses the block's threads
    first = np.concatenate([[0], np.cumsum(per)[:-1]])
    col_chunks = np.stack([first, per], axis=1).astype(np.int64)
    k = int(per.sum())
    totals = rng.integers(0, 5000, (k, 2)).astype(np.int64)
    results = []
    for device in (Device("standin"), Device("sim")):
        device.threads = threads
        args = [device.upload(a) for a in (col_chunks, totals, np.full((k, 2), -1, dtype=np.int64))]
        device.launch(steps.DICT_BASES, len(per), *args)
        results.append(device.download(args[2]))
    assert np.array_equal(results[0], results[1])
    assert results[1][first[1] + per[1] - 1, 0] == totals[first[1]:first[1] + per[1] - 1, 0].sum()
