"""The dictionary pages a row group needs (backends/device/dict_pages.py): per dictionary column, the entries (and
their bytes) at its dictionary-encoded page with the most entries."""

from __future__ import annotations

import numpy as np
import pytest
from gpuwrite.kernels.plan.layout import CT_COUNT, CT_DICT
from gpuwrite.kernels.plan.page_layout import I_BYTES, I_COUNT, I_ENTRIES

from gpuwrite.backends.device.dict_pages import dictionary_counts
from gpuwrite.format.enums import Encoding


def _reference(cols: np.ndarray, col: np.ndarray, encoding: np.ndarray, info: np.ndarray) -> dict[int, tuple[int, int]]:
    """Page by page: a later page replaces a column's pick only with more entries."""
    out: dict[int, tuple[int, int]] = {}
    for c, e, row in zip(col.tolist(), encoding.tolist(), info, strict=True):
        if e != Encoding.RLE_DICTIONARY or not cols[c, CT_DICT] or row[I_ENTRIES] <= 0:
            continue
        if c not in out or row[I_ENTRIES] > out[c][0]:
            out[c] = (int(row[I_ENTRIES]), int(row[I_BYTES]))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_counts_are_the_first_page_with_the_most_entries(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ncols, pages = int(rng.integers(1, 8)), int(rng.integers(0, 60))
    cols = np.zeros((ncols, CT_COUNT), dtype=np.int64)
    cols[:, CT_DICT] = rng.integers(0, 2, ncols)
    col = rng.integers(0, ncols, pages)
    encoding = rng.choice([int(Encoding.RLE_DICTIONARY), int(Encoding.PLAIN)], pages)
    info = np.zeros((pages, I_COUNT), dtype=np.int64)
    info[:, I_ENTRIES] = rng.integers(0, 5, pages)  # ties: the first page's bytes
    info[:, I_BYTES] = rng.integers(0, 1000, pages)
    assert dictionary_counts(cols, col, encoding, info) == _reference(cols, col, encoding, info)
