"""The byte-range helpers (kernels/encode/byteops.py) and the byte-array kernels built on them against plain Python:
long shared prefixes and lengths around multiples of 8, so both the 8-byte word steps and the byte tails run."""

from __future__ import annotations

import numpy as np
from gpuwrite.kernels.convert.checks import ascii_strings
from gpuwrite.kernels.dictionary.by_page import bytes_insert
from gpuwrite.kernels.encode.byteops import common_prefix, compare_bytes, copy_bytes, same_bytes
from gpuwrite.kernels.encode.delta import byte_array_prefixes, gather_suffixes
from gpuwrite.kernels.encode.plain import plain_byte_array
from gpuwrite.kernels.encode.stats import bytes_minmax
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CANARY = 0xA5


@st.composite
def values_sharing_prefixes(draw: st.DrawFn, max_count: int = 40) -> list[bytes]:
    """Byte strings that share long prefixes (0..40 bytes of a few stems) and differ anywhere after them."""
    stems = draw(st.lists(st.binary(min_size=0, max_size=40), min_size=1, max_size=3))
    one = st.tuples(st.sampled_from(stems), st.integers(0, 40), st.binary(max_size=20)).map(
        lambda t: t[0][:t[1]] + t[2])
    return draw(st.lists(one | st.binary(max_size=24), max_size=max_count))


def _layout(values: list[bytes], lead: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (int64) and bytes of `values`, the bytes starting `lead` bytes into the buffer (unaligned)."""
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in values], dtype=np.int64)
    offsets += lead
    data = np.frombuffer(bytes([CANARY]) * lead + b"".join(values) + bytes([CANARY]) * 3, dtype=np.uint8).copy()
    return offsets, data


def _prefix(a: bytes, b: bytes) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _order(a: bytes, b: bytes, signed_first: bool) -> int:
    if signed_first and a and b:
        x, y = (a[0] ^ 0x80), (b[0] ^ 0x80)
        if x != y:
            return -1 if x < y else 1
        a, b = a[1:], b[1:]
    return (a > b) - (a < b)


@SETTINGS
@given(st.binary(max_size=80), st.binary(max_size=80), st.integers(0, 9), st.booleans())
def test_helpers_on_two_ranges(a: bytes, b: bytes, lead: int, signed_first: bool) -> None:
    """copy, equality, common prefix and order of two ranges of one buffer, as Python computes them."""
    for second in (b, a, a[:len(a) // 2] + b):
        offsets, data = _layout([a, second], lead)
        a0, b0, b1 = int(offsets[0]), int(offsets[1]), int(offsets[2])
        n = min(len(a), len(second))
        assert common_prefix(data, a0, b0, n) == _prefix(a, second)
        assert same_bytes(data, a0, data, b0, n) == (a[:n] == second[:n])
        assert compare_bytes(data, a0, b0, b0, b1, signed_first) == _order(a, second, signed_first)
        out = np.full(len(a) + lead + 2, CANARY, dtype=np.uint8)
        copy_bytes(out, lead, data, a0, len(a))
        assert out[lead:lead + len(a)].tobytes() == a
        assert (out[:lead] == CANARY).all() and (out[lead + len(a):] == CANARY).all()


@SETTINGS
@given(values_sharing_prefixes(), st.integers(0, 9), st.data())
def test_delta_byte_array_parts(values: list[bytes], lead: int, data: st.DataObject) -> None:
    """Prefix and suffix lengths of a range of values, and the suffix bytes gathered back to back."""
    offsets, raw = _layout(values, lead)
    start = data.draw(st.integers(0, len(values)))
    end = data.draw(st.integers(start, len(values)))
    n = end - start
    prefix, suffix = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    total = byte_array_prefixes(offsets, raw, start, end, prefix, suffix)
    want = [0 if i == start else _prefix(values[i - 1], values[i]) for i in range(start, end)]
    assert prefix.tolist() == want
    assert suffix.tolist() == [len(values[i]) - p for i, p in zip(range(start, end), want, strict=True)]
    gathered = b"".join(values[i][p:] for i, p in zip(range(start, end), want, strict=True))
    assert total == len(gathered)
    out = np.full(total + 7, CANARY, dtype=np.uint8)
    assert gather_suffixes(offsets, raw, start, end, prefix, out, 3) == 3 + total
    assert out[3:3 + total].tobytes() == gathered
    assert (out[:3] == CANARY).all() and (out[3 + total:] == CANARY).all()


@SETTINGS
@given(values_sharing_prefixes(), st.integers(0, 9))
def test_plain_byte_array(values: list[bytes], lead: int) -> None:
    """4-byte little-endian length, then the bytes, per value."""
    offsets, raw = _layout(values, lead)
    want = b"".join(len(v).to_bytes(4, "little") + v for v in values)
    out = np.full(len(want) + 2, CANARY, dtype=np.uint8)
    assert plain_byte_array(offsets, raw, 0, len(values), out, 1) == 1 + len(want)
    assert out[1:1 + len(want)].tobytes() == want


@SETTINGS
@given(values_sharing_prefixes().filter(bool), st.integers(0, 9), st.booleans())
def test_bytes_minmax_long_prefixes(values: list[bytes], lead: int, signed_first: bool) -> None:
    """First index of the smallest and of the largest value, and whether all are equal."""
    offsets, raw = _layout(values, lead)
    imin, imax, same = bytes_minmax(offsets, raw, 0, len(values), signed_first)
    lo = hi = 0
    for i, v in enumerate(values):
        if _order(v, values[lo], signed_first) < 0:
            lo = i
        if _order(v, values[hi], signed_first) > 0:
            hi = i
    assert (imin, imax, bool(same)) == (lo, hi, len(set(values)) == 1)


@SETTINGS
@given(values_sharing_prefixes(max_count=80).map(lambda vs: vs + vs[::2]), st.integers(0, 9), st.sampled_from([0, 4]))
def test_bytes_insert_first_occurrence(values: list[bytes], lead: int, overhead: int) -> None:
    """Ids number distinct values in first-occurrence order; the entries hold their bytes (no limit hit)."""
    offsets, raw = _layout(values, lead)
    table = np.full(256, -1, dtype=np.int32)
    hashes = np.empty((len(values) + 1, 3), dtype=np.uint64)
    entry_offsets = np.zeros(len(values) + 2, dtype=np.int64)
    entry_data = np.empty(len(raw) + 1, dtype=np.uint8)
    ids = np.full(len(values), -1, dtype=np.int32)
    size, nbytes, overflow = bytes_insert(offsets, raw, 0, len(values), table, hashes, entry_offsets, entry_data,
                                          0, overhead, 0, 1 << 30, ids)
    first: dict[bytes, int] = {}
    want = [first.setdefault(v, len(first)) for v in values]
    assert (size, overflow) == (len(first), -1)
    assert nbytes == sum(len(v) + overhead for v in first)
    assert ids.tolist() == want
    entries = [entry_data[entry_offsets[e]:entry_offsets[e + 1]].tobytes() for e in range(size)]
    assert entries == list(first)


@SETTINGS
@given(st.lists(st.binary(max_size=20) | st.text(max_size=8).map(str.encode), max_size=40), st.integers(0, 9),
       st.data())
def test_ascii_strings(values: list[bytes], lead: int, data: st.DataObject) -> None:
    """True exactly when every byte of values start.. is below 0x80 (offsets in order)."""
    offsets, raw = _layout(values, lead)
    start = data.draw(st.integers(0, len(values)))
    assert ascii_strings(offsets, raw, start) == all(b < 0x80 for v in values[start:] for b in v)


def test_ascii_strings_across_blocks_and_bad_offsets() -> None:
    """A high byte in a later block is found; offsets out of order or past the data are never 'ASCII'."""
    raw = np.full(200_000, ord("a"), dtype=np.uint8)
    offsets = np.arange(0, 200_001, 1000, dtype=np.int64)
    assert ascii_strings(offsets, raw, 0)
    raw[150_123] = 0xC3
    assert not ascii_strings(offsets, raw, 0)
    assert ascii_strings(offsets, raw, 151)  # values from 151 start past the high byte
    assert not ascii_strings(np.array([0, 5, 3, 9], dtype=np.int64), raw, 0)
    assert not ascii_strings(np.array([0, 5, 300_000], dtype=np.int64), raw, 0)


def test_ascii_strings_finds_a_high_byte_at_every_place_of_a_word() -> None:
    """The bytes are read as 8-byte words between byte-wise ends: a high byte is found wherever it lies
    against the word boundaries, for every alignment of the first value."""
    for lead in range(9):
        for bad in range(lead, lead + 40):
            raw = np.full(lead + 40, ord("x"), dtype=np.uint8)
            raw[bad] = 0x80
            offsets = np.array([lead, lead + 17, lead + 40], dtype=np.int64)
            assert not ascii_strings(offsets, raw, 0), (lead, bad)
            assert ascii_strings(offsets, raw, 1) == (bad < lead + 17), (lead, bad)


def test_copy_bytes_word_path_edges() -> None:
    """copy_bytes at every length 0..80 (the word path's 8..63 with its overlapping last word, the byte loop
    below and above) and every alignment: the bytes land exactly in dst[d:d+n] (canaries either side kept), and
    a source range that ends at the very end of its array (no slack for a word read past it) is copied whole."""
    rng = np.random.default_rng(7)
    for n in range(81):
        for d in range(9):
            for slack in (0, 1, 9):
                src = rng.integers(0, 256, size=3 + n + slack, dtype=np.uint8)
                s = 3
                dst = np.full(d + n + 9, CANARY, dtype=np.uint8)
                copy_bytes(dst, d, src, s, n)
                assert dst[d:d + n].tobytes() == src[s:s + n].tobytes(), (n, d, slack)
                assert (dst[:d] == CANARY).all() and (dst[d + n:] == CANARY).all(), (n, d, slack)
                exact = np.full(n, CANARY, dtype=np.uint8)  # a destination with no room past the copy
                copy_bytes(exact, 0, src, s, n)
                assert exact.tobytes() == src[s:s + n].tobytes()


def test_delta_byte_array_suffix_lengths_around_words() -> None:
    """byte_array_prefixes (whole-word prefixes inside the buffer, the byte path near its end) and
    gather_suffixes over values whose suffixes are 1..70 bytes (prefixes shared with the one before, so each
    value is its own copy, the short-copy word path), non-ASCII UTF-8 and empty values among them: the same
    prefixes and bytes as Python finds, the buffer ending at the last value or 9 bytes later."""
    values = []
    for n in range(1, 71):
        values.append("é€".encode() * 3 + bytes(range(65, 65 + n % 26)) * (n // 26 + 1))
        values.append(b"")
    values = [v[:k] for k, v in zip(range(1, 200), values, strict=False)]
    values += [b"abcdefgh" * 3 + bytes([k]) + b"tail" * k for k in range(12)]  # prefixes of 24..27 bytes
    for lead, slack in ((0, 0), (5, 0), (3, 9)):
        offsets, raw = _layout(values, lead)
        raw = np.concatenate([raw[:len(raw) - 3], np.full(slack, CANARY, dtype=np.uint8)])
        n = len(values)
        prefix, suffix = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        total = byte_array_prefixes(offsets, raw, 0, n, prefix, suffix)
        want = [0] + [_prefix(values[i - 1], values[i]) for i in range(1, n)]
        assert prefix.tolist() == want
        out = np.full(total + 2, CANARY, dtype=np.uint8)
        assert gather_suffixes(offsets, raw, 0, n, prefix, out, 1) == 1 + total
        assert out[1:1 + total].tobytes() == b"".join(v[p:] for v, p in zip(values, want, strict=True))
        assert out[0] == CANARY and out[1 + total] == CANARY


def _model_minmax(values: list[bytes]) -> tuple[int, int, bool]:
    """First index of the smallest and of the largest value (unsigned byte order), and whether all are equal."""
    lo = min(range(len(values)), key=lambda i: (values[i], i))
    hi = min(range(len(values)), key=lambda i: (tuple(-b for b in values[i]) + (1,), i))
    return lo, hi, len(set(values)) == 1


def test_bytes_minmax_prefix_keys_on_edge_pages() -> None:
    """bytes_minmax's keys (8 bytes after the prefix a page's first and last values share: 0, 8 or 16 bytes)
    against Python's order: values of 0..20 bytes, zero bytes that pad like a key's padding ("ab" against
    "ab\\0"), UTF-8 and 0xFF bytes, values in the middle without the shared prefix (shorter, or different in
    it), a minimum or maximum that lacks it, and buffers that end at the last value or hold under 8 bytes."""
    rng = np.random.default_rng(5)
    stems = [b"", b"https://", b"https://www.", "ünïcode-16bytes!".encode()[:16] + b"/x", b"product "]
    tails = [b"", b"\x00", b"\x00\x00", b"a", b"ab", b"ab\x00", b"\xff" * 9, "é".encode() * 5, b"z" * 20,
             bytes(range(1, 18))]
    for trial in range(400):
        stem = stems[trial % len(stems)]
        count = int(rng.integers(1, 12))
        values = [stem + tails[int(rng.integers(0, len(tails)))] for _ in range(count)]
        for _ in range(int(rng.integers(0, 3))):  # middle values without the page's shared prefix
            cut = stem[:int(rng.integers(0, len(stem) + 1))] + tails[int(rng.integers(0, len(tails)))]
            values.insert(int(rng.integers(0, len(values) + 1)), cut)
        for slack in (0, 3, 9):
            offsets, raw = _layout(values, int(rng.integers(0, 9)))
            raw = raw[:len(raw) - 3 + slack] if slack <= 3 else np.concatenate([raw, np.zeros(slack, np.uint8)])
            got = bytes_minmax(offsets, raw, 0, len(values), False)
            assert (int(got[0]), int(got[1]), bool(got[2])) == _model_minmax(values), (values, slack)
    for values in ([b"a"], [b"ab", b"a"], [b"", b"\x00", b""], [b"abc", b"abd", b"ab"]):  # under 8 bytes of data
        offsets, raw = _layout(values, 0)
        raw = raw[:len(raw) - 3]
        got = bytes_minmax(offsets, raw, 0, len(values), False)
        assert (int(got[0]), int(got[1]), bool(got[2])) == _model_minmax(values)
