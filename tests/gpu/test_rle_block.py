"""The block-per-page RLE kernels under numba's simulator against their CPU twin `rle_encode`: every page of
one launch, sized exactly by `rle_sizes_block` and written by `rle_encode_block`, byte for byte."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.encode.pages import page_dict_ids
from gpuwrite.kernels.encode.rle import rle_encode, rle_max_size
from gpuwrite.kernels.encode.rle_cuda import MAX_THREADS, rle_encode_block, rle_sizes_block
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rle_cases import WIDTHS, page_cuts, rle_values

SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CANARY = 0xA5


def _expected(values: np.ndarray, starts: np.ndarray, ends: np.ndarray, widths: np.ndarray,
              width_byte: bool) -> list[bytes]:
    """Each page's bytes from the sequential CPU encoder."""
    pages = []
    for a, b, w in zip(starts, ends, widths, strict=True):
        buf = np.zeros(rle_max_size(int(b - a), int(w)) + 1, dtype=np.uint8)
        lead = 1 if width_byte else 0
        buf[0] = w
        end = rle_encode(values, int(a), int(b), int(w), buf, lead)
        pages.append(bytes(buf[:end]))
    return pages


def _launch(values: np.ndarray, starts: np.ndarray, ends: np.ndarray, widths: np.ndarray, width_byte: bool, *,
            threads: int, blocks: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sizes, then the encode at exact offsets behind a canary byte per page; returns (sizes, offsets, out)."""
    n = len(starts)
    grid = n if blocks is None else blocks
    sizes = np.full(n, -1, dtype=np.int64)
    rle_sizes_block[grid, threads](values, starts, ends, widths, width_byte, sizes)
    offsets = np.concatenate(([0], np.cumsum(sizes + 1)[:-1])).astype(np.int64)  # one canary byte after each
    out = np.full(int(np.sum(sizes + 1)), CANARY, dtype=np.uint8)
    written = np.full(n, -1, dtype=np.int64)
    rle_encode_block[grid, threads](values, starts, ends, widths, width_byte, out, offsets, written)
    assert np.array_equal(written, sizes)
    return sizes, offsets, out


def _check(values: np.ndarray, starts: np.ndarray, ends: np.ndarray, widths: np.ndarray, width_byte: bool, *,
           threads: int, blocks: int | None = None) -> None:
    sizes, offsets, out = _launch(values, starts, ends, widths, width_byte, threads=threads, blocks=blocks)
    for p, want in enumerate(_expected(values, starts, ends, widths, width_byte)):
        assert sizes[p] == len(want), p
        assert bytes(out[offsets[p]:offsets[p] + sizes[p]]) == want, p
        assert out[offsets[p] + sizes[p]] == CANARY, p  # nothing written past the page


@st.composite
def launches(draw: st.DrawFn, max_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(values, page_start, page_end, widths) of 1-4 pages cut from one array of one width."""
    width = draw(st.sampled_from(WIDTHS))
    values = draw(rle_values(width, max_len, 200))
    starts, ends = page_cuts(draw, len(values), draw(st.integers(1, 4)))
    return values, starts, ends, np.full(len(starts), width, dtype=np.int64)


@SETTINGS
@given(launches(1200), st.sampled_from([1, 3, 8, 32]), st.booleans())
def test_pages_equal_rle_encode(case, threads, width_byte):
    _check(*case, width_byte, threads=threads)


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_long_pages_many_values_per_thread_and_mixed_widths(seed):
    # Pages far longer than the block (hundreds of values per thread), each page its own width.
    rng = np.random.default_rng(seed)
    lengths = rng.choice([1, 2, 7, 8, 9, 16, 17, 40, 300], 120)
    values = np.repeat(rng.integers(0, 3, 120), lengths).astype(np.uint8)
    starts = np.array([0, 5, len(values) // 2], dtype=np.int64)
    ends = np.array([5, len(values) // 2, len(values)], dtype=np.int64)
    _check(values, starts, ends, rng.choice([2, 3, 8], 3).astype(np.int64), False, threads=4)


def test_edge_lengths_all_equal_and_alternating():
    # One launch of 0/1/7/8/9/504/505-value pages at widths 0, 1 and 17, all equal (a repeat run or a short
    # group) or alternating (63 and 64 groups of 8 in one bit-packed stretch).
    pieces, bounds, widths = [], [0], []
    for i, n in enumerate([0, 1, 7, 8, 9, 504, 505] * 2):
        width = [1, 17, 0][i % 3]
        equal = i < 7
        pieces.append(np.zeros(n) if width == 0 else np.ones(n) if equal else np.arange(n) % 2)
        bounds.append(bounds[-1] + n)
        widths.append(width)
    values = np.concatenate(pieces).astype(np.int32)
    starts, ends = np.array(bounds[:-1], dtype=np.int64), np.array(bounds[1:], dtype=np.int64)
    _check(values, starts, ends, np.array(widths, dtype=np.int64), False, threads=8)


def test_many_pages_one_launch_with_spare_blocks():
    rng = np.random.default_rng(3)
    values = np.repeat(rng.integers(0, 2, 300), rng.choice([1, 3, 8, 12, 30], 300)).astype(np.uint8)
    starts, ends = np.arange(0, 10 * 53, 53, dtype=np.int64), np.arange(53, 11 * 53, 53, dtype=np.int64)
    ends[-1] = len(values)
    _check(values, starts, ends, np.ones(10, dtype=np.int64), False, threads=8, blocks=12)


def test_full_block_of_max_threads():
    # The production geometry: 128 threads on one page of runs crossing every segment edge.
    rng = np.random.default_rng(11)
    values = np.repeat(rng.integers(0, 4, 200), rng.choice([1, 5, 8, 9, 23], 200)).astype(np.uint8)
    _check(values, np.array([0], dtype=np.int64), np.array([len(values)], dtype=np.int64),
           np.full(1, 2, dtype=np.int64), False, threads=MAX_THREADS)


def test_width_byte_pages_equal_page_dict_ids():
    # RLE_DICTIONARY bodies: the width byte from the dictionary size, as pages.page_dict_ids writes them.
    rng = np.random.default_rng(5)
    ids = np.repeat(rng.integers(0, 300, 100), rng.choice([1, 4, 9, 20], 100)).astype(np.int32)
    starts = np.array([0, 100, 250], dtype=np.int64)
    ends = np.array([100, 250, len(ids)], dtype=np.int64)
    entries = np.array([300, 1, 70000], dtype=np.int64)
    widths = np.array([int(e - 1).bit_length() for e in entries], dtype=np.int64)
    ids[100:250] = 0  # a one-entry dictionary: width 0
    sizes, offsets, out = _launch(ids, starts, ends, widths, True, threads=32)
    want = np.zeros(int(np.sum(sizes)) + 64, dtype=np.uint8)
    off = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    got_sizes = np.zeros(3, dtype=np.int64)
    for p in range(3):
        page_dict_ids(p, ids, starts, ends, entries, want, off, got_sizes)
    assert np.array_equal(got_sizes, sizes)
    for p in range(3):
        assert np.array_equal(out[offsets[p]:offsets[p] + sizes[p]], want[off[p]:off[p] + sizes[p]])
