"""DELTA_BINARY_PACKED / DELTA_BYTE_ARRAY kernels: independent round trips, parquet-java's block layout."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from decoders import decode_delta_binary_packed, decode_delta_byte_array
from gpuwrite.kernels.encode.delta import byte_array_prefixes, delta_encode, delta_max_size, gather_suffixes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuwrite

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
LENGTHS = [0, 1, 2, 31, 32, 33, 127, 128, 129, 255, 256, 257, 1000]
CANARY = 0x5A


def _uleb(v: int) -> bytes:
    """Unsigned LEB128 bytes of v."""
    if v < 0:
        raise ValueError(f"ULEB128 of negative {v}")
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _wrap(v: int, bits: int) -> int:
    """v reduced to a signed `bits`-bit integer."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _zigzag(v: int, bits: int) -> int:
    """Zigzag mapping of a signed `bits`-bit integer."""
    return ((v << 1) ^ (v >> (bits - 1))) & ((1 << bits) - 1)


def java_delta(values: list[int], bits: int) -> bytes:
    """parquet-java's DeltaBinaryPackingValuesWriter bytes (128/4), stale widths and padding taken as zero."""
    out = bytearray(_uleb(128) + _uleb(4) + _uleb(len(values)))
    out += _uleb(_zigzag(values[0], bits) if values else 0)
    deltas = [_wrap(b - a, bits) for a, b in zip(values, values[1:], strict=False)]
    for start in range(0, len(deltas), 128):
        block = deltas[start:start + 128]
        low = min(block)
        adjusted = [(d - low) & ((1 << bits) - 1) for d in block]
        out += _uleb(_zigzag(low, bits))
        minis = [adjusted[m:m + 32] for m in range(0, len(adjusted), 32)]
        widths = []
        for mini in minis:
            acc = 0
            for a in mini:
                acc |= a
            widths.append(acc.bit_length())
        out += bytes(widths + [0] * (4 - len(widths)))
        for mini, width in zip(minis, widths, strict=False):
            packed = 0
            for i, a in enumerate(mini):
                packed |= a << (i * width)
            out += packed.to_bytes(4 * width, "little")
    return bytes(out)


def kernel_delta(values: list[int], is32: bool, lead: int = 2, pos: int = 3) -> bytes:
    """delta_encode over a window of a larger array into the middle of a canary-filled buffer."""
    n = len(values)
    arr = np.full(n + lead + 1, 77, dtype=np.int64)
    arr[lead:lead + n] = np.asarray(values, dtype=np.int64)
    bound = delta_max_size(n)
    out = np.full(pos + bound + 64, CANARY, dtype=np.uint8)
    end = int(delta_encode(arr, lead, lead + n, is32, out, pos))
    assert pos <= end <= pos + bound, f"wrote {end - pos} bytes, delta_max_size says {bound}"
    assert (out[:pos] == CANARY).all() and (out[end:] == CANARY).all(), "wrote outside its range"
    return out[pos:end].tobytes()


@st.composite
def int_column(draw: st.DrawFn, bits: int) -> list[int]:
    """Integers of one width: extremes, small steps, wild jumps, constant runs; lengths near block edges."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    n = draw(st.sampled_from(LENGTHS) | st.integers(0, 300))
    style = draw(st.sampled_from(["any", "extremes", "steps", "constant"]))
    if style == "any":
        elem = st.integers(lo, hi) | st.sampled_from([lo, hi, 0, -1, 1, lo + 1, hi - 1])
        return draw(st.lists(elem, min_size=n, max_size=n))
    if style == "extremes":
        return draw(st.lists(st.sampled_from([lo, hi, 0, -1]), min_size=n, max_size=n))
    if style == "constant":
        return [draw(st.integers(lo, hi))] * n
    start = draw(st.integers(lo, hi))
    steps = draw(st.lists(st.integers(-1000, 1000), min_size=n, max_size=n))
    out, v = [], start
    for s in steps:
        v = _wrap(v + s, bits)
        out.append(v)
    return out


@SETTINGS
@given(int_column(32))
def test_int32_round_trip(values: list[int]) -> None:
    """INT32 semantics: 32-bit wrapping deltas decode back to the values and every byte is consumed."""
    data = kernel_delta(values, True)
    decoded, end = decode_delta_binary_packed(data, 32)
    assert decoded == values
    assert end == len(data)


@SETTINGS
@given(int_column(64))
def test_int64_round_trip(values: list[int]) -> None:
    """INT64 semantics: 64-bit wrapping deltas decode back to the values and every byte is consumed."""
    data = kernel_delta(values, False)
    decoded, end = decode_delta_binary_packed(data, 64)
    assert decoded == values
    assert end == len(data)


@SETTINGS
@given(st.sampled_from([32, 64]).flatmap(lambda b: st.tuples(st.just(b), int_column(b))))
def test_layout_matches_parquet_java(case: tuple[int, list[int]]) -> None:
    """Header, min deltas, miniblock widths and packing equal a parquet-java port (stale bytes as zeros)."""
    bits, values = case
    assert kernel_delta(values, bits == 32) == java_delta(values, bits)


def test_fixed_cases() -> None:
    """Extremes and block-boundary lengths for both widths, hand-picked."""
    cases32 = [[], [0], [INT32_MIN], [INT32_MAX], [INT32_MIN, INT32_MAX] * 64, [INT32_MAX, INT32_MIN] * 65,
               [INT32_MAX] + [INT32_MIN] * 128, list(range(1000)), [5] * 129,
               [INT32_MIN, INT32_MAX, INT32_MIN]]
    cases64 = [[], [INT64_MIN], [INT64_MAX], [INT64_MIN, INT64_MAX] * 64, [INT64_MAX, INT64_MIN] * 65,
               [INT64_MAX] + [INT64_MIN] * 128 + [0], [_wrap(-(v * 7919) ** 3, 64) for v in range(1000)],
               [2**40] * 127]
    for bits, cases in ((32, cases32), (64, cases64)):
        for values in cases:
            data = kernel_delta(values, bits == 32)
            assert data == java_delta(values, bits), (bits, values[:4], len(values))
            decoded, end = decode_delta_binary_packed(data, bits)
            assert decoded == values and end == len(data)


def test_known_bytes() -> None:
    """Header-only streams for 0 and 1 values; a single 1-delta block."""
    assert kernel_delta([], True) == bytes([0x80, 0x01, 4, 0, 0])
    assert kernel_delta([-1], True) == bytes([0x80, 0x01, 4, 1, 1])
    assert kernel_delta([INT32_MIN], True) == bytes([0x80, 0x01, 4, 1]) + _uleb(2**32 - 1)
    assert kernel_delta([INT64_MIN], False) == bytes([0x80, 0x01, 4, 1]) + _uleb(2**64 - 1)
    assert kernel_delta([3, 5], True) == bytes([0x80, 0x01, 4, 2, 6, 4, 0, 0, 0, 0])


def kernel_delta_byte_array(values: list[bytes], lead: int = 1) -> tuple[bytes, list[int]]:
    """DELTA_BYTE_ARRAY bytes as chunk.py builds them from the kernels, over a window after `lead` values."""
    allv = [b"zz" * 3] * lead + values + [b"tail"]
    offsets = np.zeros(len(allv) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(v) for v in allv])
    data = np.frombuffer(b"".join(allv) or b"\0", dtype=np.uint8).copy()
    n = len(values)
    prefix = np.full(n, -9, dtype=np.int64)
    suffix = np.full(n, -9, dtype=np.int64)
    total = int(byte_array_prefixes(offsets, data, lead, lead + n, prefix, suffix))
    tail = np.full(total + 16, CANARY, dtype=np.uint8)
    end = int(gather_suffixes(offsets, data, lead, lead + n, prefix, tail, 0))
    assert end == total and (tail[total:] == CANARY).all()
    body = kernel_delta(prefix.tolist(), True) + kernel_delta(suffix.tolist(), True) + tail[:total].tobytes()
    return body, prefix.tolist()


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common leading byte run."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@st.composite
def byte_strings(draw: st.DrawFn) -> list[bytes]:
    """Byte strings sharing prefixes (sorted keys, extensions of each other), empty strings, unicode."""
    stems = draw(st.lists(st.binary(max_size=12), min_size=1, max_size=4))
    shared = st.tuples(st.sampled_from(stems), st.integers(0, 12), st.binary(max_size=6)).map(
        lambda t: t[0][:t[1]] + t[2])
    unicode = st.text(max_size=10).map(lambda s: s.encode("utf-8"))
    stem = st.sampled_from(["", "ключ/", "键-", "🙂🙃", "e\u0301"])
    prefixed_unicode = st.tuples(stem, st.text(max_size=6)).map(lambda t: (t[0] + t[1]).encode("utf-8"))
    elem = shared | unicode | prefixed_unicode | st.just(b"") | st.binary(max_size=40)
    n = draw(st.sampled_from([0, 1, 2, 127, 128, 129]) | st.integers(0, 60))
    values = draw(st.lists(elem, min_size=n, max_size=n))
    if draw(st.booleans()):
        values.sort()
    return values


@SETTINGS
@given(byte_strings())
def test_delta_byte_array_round_trip(values: list[bytes]) -> None:
    """Decoding with the independent decoder gives the strings back; prefixes are maximal, window-relative."""
    body, prefixes = kernel_delta_byte_array(values)
    decoded, end = decode_delta_byte_array(body)
    assert decoded == values
    assert end == len(body)
    expected = [0] + [_common_prefix(a, b) for a, b in zip(values, values[1:], strict=False)]
    assert prefixes == expected[:len(values)]


@SETTINGS
@given(byte_strings())
def test_delta_byte_array_matches_parquet_java(values: list[bytes]) -> None:
    """Whole DELTA_BYTE_ARRAY stream equals the parquet-java port: prefixes, suffix lengths, suffix bytes."""
    body, _ = kernel_delta_byte_array(values)
    prefixes = [0] + [_common_prefix(a, b) for a, b in zip(values, values[1:], strict=False)]
    prefixes = prefixes[:len(values)]
    suffixes = [v[p:] for v, p in zip(values, prefixes, strict=False)]
    expected = java_delta(prefixes, 32) + java_delta([len(s) for s in suffixes], 32) + b"".join(suffixes)
    assert body == expected


def test_delta_byte_array_first_prefix_ignores_previous_window() -> None:
    """A window's first value never shares a prefix with the value before the window."""
    body, prefixes = kernel_delta_byte_array([b"zzzzzz", b"zzzzzzz"], lead=1)
    assert prefixes == [0, 6]
    assert decode_delta_byte_array(body)[0] == [b"zzzzzz", b"zzzzzzz"]


@st.composite
def arrow_table(draw: st.DrawFn) -> pa.Table:
    """A small table of nullable int32, int64 and string columns: extremes, shared prefixes, unicode."""
    n = draw(st.sampled_from([0, 1, 127, 128, 129, 300]) | st.integers(0, 80))
    maybe = lambda s: st.none() | s | s  # noqa: E731
    i32 = draw(st.lists(maybe(st.integers(INT32_MIN, INT32_MAX) | st.sampled_from([INT32_MIN, INT32_MAX, 0])),
                        min_size=n, max_size=n))
    i64 = draw(st.lists(maybe(st.integers(INT64_MIN, INT64_MAX) | st.sampled_from([INT64_MIN, INT64_MAX, 7])),
                        min_size=n, max_size=n))
    stems = st.sampled_from(["", "a", "prefix/", "prefix/shared/", "ключ", "🙂"])
    text = st.tuples(stems, st.text(max_size=5) | st.sampled_from(["", "x", "xyz"])).map("".join)
    strs = draw(st.lists(maybe(text), min_size=n, max_size=n))
    return pa.table({"i32": pa.array(i32, pa.int32()), "i64": pa.array(i64, pa.int64()),
                     "s": pa.array(strs, pa.string())})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrow_table(), st.sampled_from([20_000, 50, 7]), st.sampled_from([1 << 20, 64, 16]))
def test_pyarrow_reads_back(table: pa.Table, page_rows: int, dict_limit: int) -> None:
    """Files written with DELTA encodings forced, and with the dictionary on, read back equal in pyarrow."""
    with tempfile.TemporaryDirectory() as tmp:
        delta_path = os.path.join(tmp, "delta.parquet")
        gpuwrite.write_table(table, delta_path, enable_dictionary=False, page_row_count_limit=page_rows)
        assert pq.read_table(delta_path).equals(table)
        meta = pq.ParquetFile(delta_path).metadata
        for rg in range(meta.num_row_groups):
            chunks = [meta.row_group(rg).column(c) for c in range(3)]
            assert "DELTA_BINARY_PACKED" in chunks[0].encodings
            assert "DELTA_BINARY_PACKED" in chunks[1].encodings
            assert "DELTA_BYTE_ARRAY" in chunks[2].encodings
            assert not any(c.has_dictionary_page for c in chunks)
        dict_path = os.path.join(tmp, "dict.parquet")
        gpuwrite.write_table(table, dict_path, page_row_count_limit=page_rows,
                             dictionary_page_size=dict_limit)
        assert pq.read_table(dict_path).equals(table)
