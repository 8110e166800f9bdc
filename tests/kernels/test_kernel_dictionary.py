"""Dictionary kernels against a pure-Python model of parquet-java's linked-hash-map dictionary writers."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
from gpuwrite.kernels.dictionary.by_page import (
    bytes_insert,
    bytes_rehash,
    fixed_insert,
    fixed_rehash,
    hash_words,
)
from gpuwrite.kernels.encode.plain import canonical_float_bits32, canonical_float_bits64
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UNLIMITED = 2**62


class DictModel:
    """parquet-java's dictionary: first-occurrence ids, bytes grow per new entry, stop once over the limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ids: dict[Hashable, int] = {}
        self.first: list[int] = []
        self.byte_size = 0

    def insert(self, keys: Sequence[Hashable], costs: Sequence[int], base: int) -> tuple[list[int], int]:
        """Ids of keys (up to and including the overflowing one) and the overflow offset or -1."""
        out: list[int] = []
        for i, (k, c) in enumerate(zip(keys, costs, strict=False)):
            if k in self.ids:
                out.append(self.ids[k])
                continue
            self.ids[k] = len(self.first)
            self.first.append(base + i)
            out.append(self.ids[k])
            self.byte_size += c
            if self.byte_size > self.limit:
                return out, i
        return out, -1


def _pow2_at_least(n: int) -> int:
    """Smallest power of two >= max(n, 2)."""
    p = 2
    while p < n:
        p <<= 1
    return p


def run_fixed(keys: np.ndarray, cuts: list[int], entry_size: int, limit: int,
              model_keys: Sequence[Hashable]) -> None:
    """Insert `keys` page by page (tight, growing tables) and compare every page with DictModel."""
    n = len(keys)
    table = np.full(2, -1, dtype=np.int32)
    entry_keys = np.zeros(max(n, 1), dtype=np.int64)
    n_entries, dict_bytes = 0, 0
    model = DictModel(limit)
    bounds = sorted({min(c, n) for c in cuts} | {n})
    start = 0
    for end in bounds:
        need = _pow2_at_least(n_entries + (end - start) + 1)
        if need > len(table):
            table = np.full(need, -1, dtype=np.int32)
            fixed_rehash(entry_keys, n_entries, table)
        ids = np.full(max(end - start, 1), -7, dtype=np.int32)
        n_entries, dict_bytes, overflow = fixed_insert(keys, start, end, table, entry_keys, n_entries,
                                                       entry_size, dict_bytes, limit, ids)
        want_ids, want_overflow = model.insert(model_keys[start:end], [entry_size] * (end - start), start)
        assert overflow == want_overflow
        done = len(want_ids)
        assert ids[:done].tolist() == want_ids
        assert n_entries == len(model.first) and dict_bytes == model.byte_size
        assert entry_keys[:n_entries].tolist() == [int(keys[i]) for i in model.first]
        assert (entry_keys[ids[:done]] == keys[start:start + done]).all()
        if overflow >= 0:
            return
        start = end


cuts_strategy = st.lists(st.integers(0, 400), max_size=4)
limits = st.integers(0, 400) | st.just(UNLIMITED)


def limits_near(unit: int) -> st.SearchStrategy[int]:
    """Byte limits at, just below and just above a multiple of one entry's cost, to pin the strict `>`."""
    multiple = st.integers(1, 8) | st.integers(0, 60)
    near = st.tuples(multiple, st.sampled_from([-1, 0, 1])).map(lambda t: max(0, t[0] * unit + t[1]))
    return near | limits


@SETTINGS
@given(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-5, 5)
                | st.sampled_from([-(2**63), 2**63 - 1, 2**31, -(2**31)]), max_size=400),
       cuts_strategy, st.sampled_from([4, 8]).flatmap(lambda n: st.tuples(st.just(n), limits_near(n))))
def test_fixed_insert_int(values: list[int], cuts: list[int], sized_limit: tuple[int, int]) -> None:
    """Integer keys: ids, first-occurrence entry order, byte count and overflow offset equal the model."""
    entry_size, limit = sized_limit
    keys = np.asarray(values, dtype=np.int64)
    run_fixed(keys, cuts, entry_size, limit, values)


SPECIAL32 = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF,
             0x7FBFFFFF, 0x3F800000, 0xBF800000, 0x00000001, 0x80000001]
SPECIAL64 = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
             0x7FF0000000000001, 0xFFFFFFFFFFFFFFFF, 0x7FF7FFFFFFFFFFFF, 0x3FF0000000000000, 1]


def _java_float_key(x: float) -> Hashable:
    """Key equality of floatToIntBits / doubleToLongBits: NaNs all equal, -0.0 and +0.0 distinct."""
    if math.isnan(x):
        return "NaN"
    return (x, math.copysign(1.0, x))


@SETTINGS
@given(st.lists(st.integers(0, 2**32 - 1) | st.sampled_from(SPECIAL32), max_size=300), cuts_strategy,
       limits_near(4))
def test_fixed_insert_float(bits: list[int], cuts: list[int], limit: int) -> None:
    """FLOAT keys (canonical bits, as the writer builds them): NaNs are one entry, -0.0 and +0.0 two."""
    raw = np.asarray(bits, dtype=np.uint32)
    keys = canonical_float_bits32(raw.view(np.int32)).astype(np.int64)
    model_keys = [_java_float_key(float(x)) for x in raw.view(np.float32)]
    run_fixed(keys, cuts, 4, limit, model_keys)


@SETTINGS
@given(st.lists(st.integers(0, 2**64 - 1) | st.sampled_from(SPECIAL64), max_size=300), cuts_strategy,
       limits_near(8))
def test_fixed_insert_double(bits: list[int], cuts: list[int], limit: int) -> None:
    """DOUBLE keys: NaNs of any payload or sign are one entry, -0.0 and +0.0 two."""
    raw = np.asarray(bits, dtype=np.uint64)
    keys = canonical_float_bits64(raw.view(np.int64))
    model_keys = [_java_float_key(float(x)) for x in raw.view(np.float64)]
    run_fixed(keys, cuts, 8, limit, model_keys)


def test_float_nan_and_signed_zero_entries() -> None:
    """A fixed example: three NaN payloads collapse to one entry, the two zeros stay apart."""
    raw = np.array([0x7FC00000, 0x80000000, 0xFFC00001, 0x00000000, 0x7F800001, 0x80000000], dtype=np.uint32)
    keys = canonical_float_bits32(raw.view(np.int32)).astype(np.int64)
    table = np.full(16, -1, dtype=np.int32)
    entry_keys = np.zeros(8, dtype=np.int64)
    ids = np.zeros(6, dtype=np.int32)
    n, size, overflow = fixed_insert(keys, 0, 6, table, entry_keys, 0, 4, 0, UNLIMITED, ids)
    assert (n, size, overflow) == (3, 12, -1)
    assert ids.tolist() == [0, 1, 0, 2, 0, 1]
    assert entry_keys[:3].tolist() == [0x7FC00000, -(2**31), 0]


def run_bytes(values: list[bytes], cuts: list[int], overhead: int, limit: int) -> None:
    """Insert byte strings page by page (tight, growing tables) and compare every page with DictModel."""
    n = len(values)
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in values])
    data = np.frombuffer(b"".join(values) + b"\0", dtype=np.uint8).copy()
    table = np.full(2, -1, dtype=np.int32)
    entry_hash = np.zeros((n + 1, 3), dtype=np.uint64)  # per entry: hash, first two words
    entry_offsets = np.zeros(n + 2, dtype=np.int64)
    entry_data = np.zeros(len(data) + 1, dtype=np.uint8)
    n_entries, dict_bytes = 0, 0
    model = DictModel(limit)
    bounds = sorted({min(c, n) for c in cuts} | {n})
    start = 0
    for end in bounds:
        need = _pow2_at_least(n_entries + (end - start) + 1)
        if need > len(table):
            table = np.full(need, -1, dtype=np.int32)
            bytes_rehash(entry_hash, n_entries, table)
        ids = np.full(max(end - start, 1), -7, dtype=np.int32)
        n_entries, dict_bytes, overflow = bytes_insert(offsets, data, start, end, table, entry_hash,
                                                       entry_offsets, entry_data, n_entries, overhead,
                                                       dict_bytes, limit, ids)
        page = values[start:end]
        want_ids, want_overflow = model.insert(page, [len(v) + overhead for v in page], start)
        assert overflow == want_overflow
        done = len(want_ids)
        assert ids[:done].tolist() == want_ids
        assert n_entries == len(model.first) and dict_bytes == model.byte_size
        entries = [entry_data[entry_offsets[e]:entry_offsets[e + 1]].tobytes() for e in range(n_entries)]
        kept = n_entries - (1 if overflow >= 0 else 0)  # the overflowing entry keeps no bytes
        assert entries[:kept] == [values[i] for i in model.first[:kept]]
        assert [entries[e] for e in ids[:done] if e < kept] == [v for v, e in zip(page[:done], ids[:done],
                                                                                    strict=False) if e < kept]
        if overflow >= 0:
            assert entries[kept:] == [b""]
            return
        start = end


byte_values = (st.binary(max_size=12) | st.sampled_from([b"", b"a", b"ab", b"\x00", b"\x00\x00", b"\xff"])
               | st.text(max_size=5).map(lambda s: s.encode("utf-8"))
               | st.binary(min_size=7, max_size=40))  # longer values: several hash rounds, longer compares


@SETTINGS
@given(st.lists(byte_values, max_size=300), cuts_strategy, st.sampled_from([0, 4]), limits)
def test_bytes_insert(values: list[bytes], cuts: list[int], overhead: int, limit: int) -> None:
    """Byte-string keys by content: ids, first-occurrence entries, length + overhead bytes, overflow."""
    run_bytes(values, cuts, overhead, limit)


run_values = st.sampled_from([b"ok", b"ok\x00", b"warn", b"", b"0123456789abcdefX", b"0123456789abcdefY",
                              b"0123456789abcdef", b"0123456789abcdefXY"]) | st.binary(max_size=24)


@SETTINGS
@given(st.lists(st.tuples(run_values, st.integers(1, 9)), max_size=60), cuts_strategy, st.sampled_from([0, 4]),
       limits)
def test_bytes_insert_runs(runs: list[tuple[bytes, int]], cuts: list[int], overhead: int, limit: int) -> None:
    """Values in runs (a status column's mostly "ok"), each taking the id of the value before it when equal:
    neighbours equal in their words but not their length, or in their first 16 bytes but not after, get their
    own ids; runs across page cuts, the limit passed inside a run."""
    run_bytes([v for v, k in runs for _ in range(k)], cuts, overhead, limit)


def test_bytes_insert_run_after_an_entry_found_and_a_new_one() -> None:
    """A run's value repeats the id of the value before it, whether that value was found in the table or
    just added; a page starts without a value before it."""
    values = [b"ok", b"ok", b"warn", b"ok", b"ok", b"warn", b"warn", b"0123456789abcdefX", b"0123456789abcdefY",
              b"0123456789abcdefY"]
    run_bytes(values, [0, 3, 4], 4, UNLIMITED)
    run_bytes(values, [], 0, 12)


def test_overflow_is_strictly_greater() -> None:
    """Reaching the limit exactly is allowed; the entry that passes it is the overflow."""
    keys = np.array([1, 2, 1, 3, 4], dtype=np.int64)
    table = np.full(16, -1, dtype=np.int32)
    entry_keys = np.zeros(8, dtype=np.int64)
    ids = np.zeros(5, dtype=np.int32)
    assert fixed_insert(keys, 0, 5, table, entry_keys, 0, 4, 0, 12, ids) == (4, 16, 4)
    assert ids.tolist() == [0, 1, 0, 2, 3]


@SETTINGS
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=30, unique=True), st.integers(0, 9))
def test_hash_words_sees_every_byte_and_only_the_range(values: list[bytes], shift: int) -> None:
    """bytes_insert's word-at-a-time hash: the same bytes hash alike wherever they lie (any alignment), and
    the distinct values here (a byte changed anywhere, in a full word or in the tail, or the length) hash
    apart."""
    data = np.frombuffer(b"\xff" * shift + b"".join(values) + b"\xee" * 8, dtype=np.uint8)
    ends = np.cumsum([shift] + [len(v) for v in values])
    hashes = [int(hash_words(data, int(a), int(b))) for a, b in zip(ends[:-1], ends[1:], strict=True)]
    alone = [int(hash_words(np.frombuffer(v + b"\x00", dtype=np.uint8), 0, len(v))) for v in values]
    assert hashes == alone
    assert len(set(hashes)) == len(values)


def _edge_values() -> list[bytes]:
    """Values that a two-word match must tell apart: every length 0..20 of ASCII, UTF-8 and 0x00 / 0xFF bytes;
    a value and the same bytes with zero bytes appended (equal words, other length); values equal in their
    first 16 bytes and different after; values different only in their last byte."""
    out: list[bytes] = []
    for n in range(21):
        out += [b"x" * n, ("é" * n).encode()[:n], b"\x00" * n, b"\xff" * n, bytes(range(1, n + 1))]
        out += [b"ab" + b"\x00" * n, bytes(range(1, n + 1))[:-1] + b"\xfe" if n else b"\xfe"]
    stem = "ünïcode-16bytes!".encode()[:16]
    out += [stem, stem + b"a", stem + b"b", stem + b"\x00", stem * 2, stem * 2 + b"z"]
    return out


def test_bytes_insert_edges_against_the_model() -> None:
    """The two-word match (hash, both words and the length; the bytes after 16 compared) and both loads of the
    words (inside the buffer, and near its end where no word may be read past it): ids in first-occurrence
    order and each entry's bytes, for the edge values in several orders, the buffer ending at the last value
    or later."""
    base = _edge_values()
    rng = np.random.default_rng(11)
    for trial in range(6):
        values = base + [base[k] for k in rng.integers(0, len(base), size=300)]
        if trial % 2:
            values = [values[k] for k in rng.permutation(len(values))]
        offsets = np.zeros(len(values) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(v) for v in values])
        data = np.frombuffer(b"".join(values) + b"\x7f" * (trial // 2 * 9), dtype=np.uint8).copy()
        table = np.full(2048, -1, dtype=np.int32)
        head = np.zeros((len(values) + 1, 3), dtype=np.uint64)
        entry_offsets = np.zeros(len(values) + 2, dtype=np.int64)
        entry_data = np.zeros(len(data) + 1, dtype=np.uint8)
        ids = np.full(len(values), -1, dtype=np.int32)
        size, nbytes, overflow = bytes_insert(offsets, data, 0, len(values), table, head, entry_offsets,
                                              entry_data, 0, 4, 0, UNLIMITED, ids)
        first: dict[bytes, int] = {}
        assert ids.tolist() == [first.setdefault(v, len(first)) for v in values]
        assert (size, overflow, nbytes) == (len(first), -1, sum(len(v) + 4 for v in first))
        assert [entry_data[entry_offsets[e]:entry_offsets[e + 1]].tobytes() for e in range(size)] == list(first)


def test_entry_head_holds_each_entrys_hash_and_first_two_words() -> None:
    """bytes_insert keeps, per entry, its hash_words hash and its bytes 0..7 and 8..15 as little-endian words
    (zero past its end), which the next pages' lookups match against; bytes_rehash rebuilds from the hash."""
    values = [b"", b"a", b"NEW", b"SHIPPED!", b"CANCELLED", b"0123456789abcdef", b"0123456789abcdefXYZ"]
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in values])
    data = np.frombuffer(b"".join(values), dtype=np.uint8).copy()
    head = np.zeros((8, 3), dtype=np.uint64)
    table = np.full(64, -1, dtype=np.int32)
    bytes_insert(offsets, data, 0, len(values), table, head, np.zeros(9, np.int64), np.zeros(64, np.uint8), 0, 4, 0,
                 UNLIMITED, np.zeros(len(values), np.int32))
    for e, v in enumerate(values):
        padded = v[:16].ljust(16, b"\0")
        assert int(head[e, 0]) == int(hash_words(data, int(offsets[e]), int(offsets[e + 1])))
        assert (int(head[e, 1]), int(head[e, 2])) == (int.from_bytes(padded[:8], "little"),
                                                      int.from_bytes(padded[8:], "little"))
    again = np.full(64, -1, dtype=np.int32)
    bytes_rehash(head, len(values), again)
    assert sorted(again[again >= 0].tolist()) == list(range(len(values)))
