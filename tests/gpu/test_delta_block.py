"""The block-per-page DELTA encoders (`kernels/encode/delta_cuda.py`), run by numba's CUDA simulator, write every
page's bytes exactly as their sequential CPU twins (`pages.page_delta`, `pages.page_delta_bytes`) do: many
pages of varied lengths in one launch, several block sizes (the intended 128, 32, and odd ones)."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.encode import delta_cuda as B
from gpuwrite.kernels.encode import pages as K
from gpuwrite.kernels.encode.delta import delta_max_size
from hypothesis import given, settings
from hypothesis import strategies as st

# Page lengths at the layout's edges: n values give n - 1 deltas, so 33/65/97 fill 1/2/3 miniblocks and one
# more value, 129 fills the first 128-value block exactly, 130 opens a second block with a single delta.
EDGES = [0, 1, 2, 32, 33, 34, 65, 97, 127, 128, 129, 130]
LENGTHS = st.one_of(st.sampled_from(EDGES), st.integers(0, 300))
THREADS = st.sampled_from([128, 32, 32, 20, 1])
STYLES = ["full", "small", "extremes", "constant", "ramp", "wrap"]
FILL = 0xA5  # both outputs start as this, so a byte written by only one side shows


def _bounds(lengths: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Page value ranges va, vb laid end to end."""
    ends = np.cumsum([0, *lengths]).astype(np.int64)
    return ends[:-1].copy(), ends[1:].copy()


def _offsets(caps: list[int]) -> tuple[np.ndarray, int]:
    """Output offsets spaced by each page's upper bound, and the buffer size."""
    ends = np.cumsum([0, *caps]).astype(np.int64)
    return ends[:-1].copy(), int(ends[-1])


def _ints(style: str, n: int, is32: bool, rng: np.random.Generator) -> np.ndarray:
    """n integers of a style that stresses one part of the encoding (widths, extremes, wrapping deltas)."""
    info = np.iinfo(np.int32 if is32 else np.int64)
    lo, hi = int(info.min), int(info.max)
    if style == "full":
        v = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64)
    elif style == "small":
        v = rng.integers(-5, 6, n) + int(rng.integers(lo // 2, hi // 2))
    elif style == "extremes":
        v = rng.choice(np.array([lo, hi, 0, -1, 1, lo + 1, hi - 1], dtype=np.int64), n)
    elif style == "constant":
        v = np.full(n, int(rng.integers(lo, hi)), dtype=np.int64)
    elif style == "ramp":
        v = np.arange(n, dtype=np.int64) * int(rng.integers(-1000, 1000)) + int(rng.integers(-1000, 1000))
    else:  # deltas that overflow the type: alternating extremes, then a walk of huge steps that wraps
        steps = rng.choice(np.array([hi, lo, hi // 2 + 7, -(hi // 3)], dtype=np.int64), n).view(np.uint64)
        walk = np.cumsum(steps, dtype=np.uint64)
        walk = (walk & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32) if is32 else walk.view(np.int64)
        v = walk.astype(np.int64)
        v[:n // 3] = np.where(np.arange(n // 3) % 2 == 0, lo, hi)
    return v.astype(np.int32 if is32 else np.int64)


def _encode_ints(values: np.ndarray, lengths: list[int], is32: bool, threads: int) -> None:
    """Assert that one launch over all pages equals the twin page by page."""
    va, vb = _bounds(lengths)
    off, size = _offsets([delta_max_size(n) for n in lengths])
    pages = len(lengths)
    want, got = np.full(size, FILL, np.uint8), np.full(size, FILL, np.uint8)
    want_sizes, got_sizes = np.zeros(pages, np.int64), np.full(pages, -1, np.int64)
    for p in range(pages):
        K.page_delta(p, values, va, vb, is32, want, off, want_sizes)
    B.delta_pages[pages, threads](values, va, vb, is32, got, off, got_sizes)
    assert got_sizes.tolist() == want_sizes.tolist()
    for p in range(pages):
        a, b = int(off[p]), int(off[p] + want_sizes[p])
        assert got[a:b].tobytes() == want[a:b].tobytes(), f"page {p} of {lengths} (threads {threads})"
    assert np.array_equal(got, want)  # nothing written outside the pages' bytes


@settings(max_examples=14, deadline=None)
@given(st.lists(st.tuples(LENGTHS, st.sampled_from(STYLES)), min_size=1, max_size=5), st.booleans(), THREADS,
       st.integers(0, 2**32 - 1))
def test_delta_binary_packed_pages_equal_twin(pages, is32, threads, seed):
    rng = np.random.default_rng(seed)
    lengths = [n for n, _ in pages]
    parts = [_ints(style, n, is32, rng) for n, style in pages]
    values = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    _encode_ints(values, lengths, is32, threads)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=0, max_size=140), st.booleans())
def test_delta_binary_packed_drawn_values_equal_twin(drawn, is32):
    # Values hypothesis picks (and shrinks) itself, one page, reduced to int32 by wrapping when is32.
    values = np.array(drawn, dtype=np.int64)
    if is32:
        values = values.astype(np.int32)
    _encode_ints(values, [len(drawn)], is32, 32)


def test_delta_binary_packed_many_blocks_and_edges_in_one_launch():
    # A 1100-value page (9 DELTA blocks) among every edge length, both integer types, the intended 128
    # threads; the last block of the long page is partial (1099 deltas = 8 * 128 + 75).
    rng = np.random.default_rng(7)
    lengths = [1100, *EDGES]
    for is32 in (False, True):
        parts = [_ints(STYLES[k % len(STYLES)], n, is32, rng) for k, n in enumerate(lengths)]
        _encode_ints(np.concatenate(parts), lengths, is32, 128)


def _words(count: int, style: str, rng: np.random.Generator) -> list[bytes]:
    """Byte strings with shared prefixes, empties, long values or one repeated value."""
    stems = [b"", b"a", b"ab", b"abc" * 30, bytes(rng.integers(0, 256, 12).astype(np.uint8))]
    out = []
    for _ in range(count):
        if style == "long":
            w = bytes(rng.integers(0, 3, int(rng.integers(150, 400))).astype(np.uint8))
        elif style == "empty":
            w = b"" if rng.random() < 0.7 else b"x"
        elif style == "same":
            w = b"same value"
        else:  # a shared stem, then a short tail over a tiny alphabet (long common prefixes, equal values)
            w = stems[int(rng.integers(0, len(stems)))] + bytes(rng.integers(97, 99, int(rng.integers(0, 4)))
                                                               .astype(np.uint8))
        out.append(w)
    return out


def _encode_bytes(words: list[bytes], lengths: list[int], threads: int) -> None:
    """Assert that one launch over all pages equals the twin page by page, scratch lengths included."""
    data = np.frombuffer(b"".join(words), dtype=np.uint8).copy()
    offsets = np.cumsum([0, *map(len, words)]).astype(np.int64)
    va, vb = _bounds(lengths)
    caps = [2 * delta_max_size(n) + int(offsets[b] - offsets[a]) for n, a, b in zip(lengths, va, vb, strict=True)]
    off, size = _offsets(caps)
    pages, n = len(lengths), len(words)
    want, got = np.full(size, FILL, np.uint8), np.full(size, FILL, np.uint8)
    want_sizes, got_sizes = np.zeros(pages, np.int64), np.full(pages, -1, np.int64)
    want_pre, want_suf = np.zeros(n, np.int64), np.zeros(n, np.int64)
    got_pre, got_suf = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    for p in range(pages):
        K.page_delta_bytes(p, offsets, data, va, vb, want_pre, want_suf, want, off, want_sizes)
    B.delta_bytes_pages[pages, threads](offsets, data, va, vb, got_pre, got_suf, got, off, got_sizes)
    assert got_pre.tolist() == want_pre.tolist()
    assert got_suf.tolist() == want_suf.tolist()
    assert got_sizes.tolist() == want_sizes.tolist()
    for p in range(pages):
        a, b = int(off[p]), int(off[p] + want_sizes[p])
        assert got[a:b].tobytes() == want[a:b].tobytes(), f"page {p} of {lengths} (threads {threads})"
    assert np.array_equal(got, want)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(LENGTHS, st.sampled_from(["stems", "stems", "empty", "long", "same"])), min_size=1,
                max_size=4), THREADS, st.integers(0, 2**32 - 1))
def test_delta_byte_array_pages_equal_twin(pages, threads, seed):
    rng = np.random.default_rng(seed)
    lengths = [n for n, _ in pages]
    words = [w for n, style in pages for w in _words(n, style, rng)]
    _encode_bytes(words, lengths, threads)


@settings(max_examples=8, deadline=None)
@given(st.lists(st.binary(max_size=20), max_size=140))
def test_delta_byte_array_drawn_values_equal_twin(words):
    _encode_bytes(words, [len(words)], 32)


def test_delta_byte_array_many_chunks_in_one_launch():
    # 400 values (4 suffix-gather chunks of 128, 4 DELTA blocks per length stream) next to the edge lengths.
    rng = np.random.default_rng(11)
    lengths = [400, *EDGES]
    words = [w for k, n in enumerate(lengths) for w in _words(n, ["stems", "empty", "long"][k % 3], rng)]
    _encode_bytes(words, lengths, 128)
