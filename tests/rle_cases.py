"""Hypothesis inputs for the RLE encoders that stress run choices: pages built from pieces that are repeat
runs around the 8-value threshold, long repeats, and alternating stretches of 63/64 groups (no 8 equal
values), so runs cross group, segment and page boundaries."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

WIDTHS = [0, 1, 2, 3, 8, 9, 17, 32]
REPEAT_LENGTHS = [1, 2, 3, 7, 8, 9, 14, 15, 16, 17]
NOISE_LENGTHS = [503, 504, 505, 511, 512, 1008]  # 63 and 64 groups of 8, give or take


def _dtype(width: int) -> type:
    return np.uint8 if width <= 8 else np.int32


@st.composite
def rle_values(draw: st.DrawFn, width: int, max_len: int, long_len: int) -> np.ndarray:
    """Values of at most `max_len` fitting `width` bits, as a sequence of repeat / alternating pieces."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    top = (1 << width) - 1
    pieces: list[np.ndarray] = []
    total = 0
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["repeat", "repeat", "long", "noise", "noise_long", "random"]))
        value = int(rng.integers(0, top + 1))
        if kind == "repeat":
            piece = np.full(draw(st.sampled_from(REPEAT_LENGTHS)), value)
        elif kind == "long":
            piece = np.full(draw(st.integers(18, long_len)), value)
        elif kind in ("noise", "noise_long"):
            other = value ^ 1 if top else value
            size = draw(st.sampled_from(NOISE_LENGTHS)) if kind == "noise_long" else draw(st.integers(1, 40))
            piece = np.where(np.arange(size) % 2 == 0, value, other)
        else:
            piece = rng.integers(0, min(top, 3) + 1, draw(st.integers(1, 60)))
        piece = piece[:max(0, max_len - total)]
        pieces.append(piece)
        total += len(piece)
    values = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    if width == 32:  # values past 2**31 wrap to negative int32 ids: raw two's complement bytes
        return values.astype(np.int64).astype(np.int32)
    return values.astype(_dtype(width))


def page_cuts(draw: st.DrawFn, n: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` consecutive pages over 0..n (some empty or of one value) as (page_start, page_end)."""
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=count - 1, max_size=count - 1)))
    bounds = np.array([0, *cuts, n], dtype=np.int64)
    return bounds[:-1].copy(), bounds[1:].copy()
