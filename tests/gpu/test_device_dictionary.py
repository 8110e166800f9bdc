"""The all-columns dictionary's CUDA kernels (simulator) against their sequential CPU twins (stand-in device)."""

from __future__ import annotations

import numpy as np
import pytest
from device_cases import device_window, random_table
from gpuwrite.kernels.plan.layout import CT_ENT, CT_ENTB, CT_ENTN, CT_KEYS, CT_VALUES

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
