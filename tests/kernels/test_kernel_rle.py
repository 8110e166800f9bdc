"""RLE/bit-packed hybrid kernel: round trips, byte equality with a parquet-java port, emitted-size meter."""

from __future__ import annotations

import numpy as np
import pytest
from decoders import decode_rle_hybrid
from gpuwrite.kernels.encode.rle import rle_emitted_size, rle_encode, rle_max_size, rle_size
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SPECIAL_LENGTHS = [1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 503, 504, 505, 511, 512, 513, 1008, 1009]
CANARY = 0xA5


class JavaRleEncoder:
    """Python port of parquet-java's RunLengthBitPackingHybridEncoder (writeInt, toBytes, getBufferedSize)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.out = bytearray()
        self.previous = 0
        self.repeat_count = 0
        self.buffered: list[int] = []
        self.header_index = -1
        self.group_count = 0

    def write_int(self, value: int) -> None:
        """Accept one value; runs are only counted from a group boundary."""
        if value == self.previous:
            self.repeat_count += 1
            if self.repeat_count >= 8:
                return
        else:
            if self.repeat_count >= 8:
                self._write_rle_run()
            self.repeat_count = 1
            self.previous = value
        self.buffered.append(value)
        if len(self.buffered) == 8:
            self._write_or_append_bit_packed_run()

    def _write_or_append_bit_packed_run(self) -> None:
        """Pack the 8 buffered values as one group of the open bit-packed run (at most 63 groups per run)."""
        if self.group_count >= 63:
            self._end_previous_bit_packed_run()
        if self.header_index == -1:
            self.out.append(0)
            self.header_index = len(self.out) - 1
        packed = 0
        for i, v in enumerate(self.buffered):
            packed |= v << (i * self.width)
        self.out += packed.to_bytes(self.width, "little")
        self.buffered = []
        self.repeat_count = 0
        self.group_count += 1

    def _end_previous_bit_packed_run(self) -> None:
        """Fill in the header byte of the open bit-packed run, if any."""
        if self.header_index == -1:
            return
        self.out[self.header_index] = (self.group_count << 1) | 1
        self.header_index = -1
        self.group_count = 0

    def _write_rle_run(self) -> None:
        """Close any bit-packed run, then write ULEB128(count << 1) and the value padded to whole bytes."""
        self._end_previous_bit_packed_run()
        header = self.repeat_count << 1
        while header >= 0x80:
            self.out.append((header & 0x7F) | 0x80)
            header >>= 7
        self.out.append(header)
        self.out += self.previous.to_bytes((self.width + 7) // 8, "little")
        self.repeat_count = 0
        self.buffered = []

    @property
    def buffered_size(self) -> int:
        """Bytes emitted so far (getBufferedSize): what the stream holds before the final flush."""
        return len(self.out)

    def to_bytes(self) -> bytes:
        """Flush the pending run or zero-padded group and return the whole stream."""
        if self.repeat_count >= 8:
            self._write_rle_run()
        elif self.buffered:
            self.buffered += [0] * (8 - len(self.buffered))
            self._write_or_append_bit_packed_run()
            self._end_previous_bit_packed_run()
        else:
            self._end_previous_bit_packed_run()
        return bytes(self.out)


def java_rle(values: list[int], width: int) -> bytes:
    """parquet-java's bytes for these values."""
    enc = JavaRleEncoder(width)
    for v in values:
        enc.write_int(v)
    return enc.to_bytes()


def kernel_rle(values: list[int] | np.ndarray, width: int, dtype: type = np.int64, lead: int = 3,
               pos: int = 5) -> bytes:
    """rle_encode over a window of a larger array, into the middle of a canary-filled buffer."""
    n = len(values)
    arr = np.full(n + lead + 2, 1, dtype=dtype)
    arr[lead:lead + n] = np.asarray(values, dtype=dtype)
    bound = rle_max_size(n, width)
    out = np.full(pos + bound + 64, CANARY, dtype=np.uint8)
    end = int(rle_encode(arr, lead, lead + n, width, out, pos))
    assert pos <= end <= pos + bound, f"wrote {end - pos} bytes, rle_max_size says {bound}"
    assert (out[:pos] == CANARY).all() and (out[end:] == CANARY).all(), "wrote outside its range"
    return out[pos:end].tobytes()


@st.composite
def rle_case(draw: st.DrawFn, width: int | None = None) -> tuple[int, list[int]]:
    """A width and values < 2**width built from runs, alternations and noise of awkward lengths."""
    if width is None:
        width = draw(st.integers(0, 32))
    value = st.integers(0, (1 << width) - 1)
    length = st.sampled_from(SPECIAL_LENGTHS) | st.integers(1, 40)
    piece = st.one_of(
        st.tuples(value, length).map(lambda t: [t[0]] * t[1]),
        st.tuples(value, value, st.integers(1, 300)).map(lambda t: [t[0], t[1]] * t[2]),
        st.lists(value, max_size=40),
        st.lists(st.integers(0, min(1, (1 << width) - 1)), max_size=40),
    )
    pieces = draw(st.lists(piece, max_size=6))
    return width, [v for p in pieces for v in p]


@SETTINGS
@given(rle_case())
def test_round_trip(case: tuple[int, list[int]]) -> None:
    """Decoding the kernel's bytes with the independent decoder gives the values back, using every byte."""
    width, values = case
    data = kernel_rle(values, width)
    decoded, end = decode_rle_hybrid(data, width, len(values))
    assert decoded == values
    assert end == len(data)


@SETTINGS
@given(rle_case())
def test_bytes_equal_parquet_java(case: tuple[int, list[int]]) -> None:
    """The kernel writes exactly the bytes of the parquet-java port."""
    width, values = case
    assert kernel_rle(values, width) == java_rle(values, width)


def _patterns(width: int) -> list[list[int]]:
    """Deterministic inputs for one width: empty, runs of 7/8/9, 504-value bit-packed runs, noise."""
    top = (1 << width) - 1
    rng = np.random.default_rng(width)
    a, b = top, top // 3
    noise = [int(x) for x in rng.integers(0, top + 1, size=1100, dtype=np.uint64)]
    return [
        [],
        [a],
        [a] * 7, [a] * 8, [a] * 9,
        [b] * 7 + [a] * 8 + [b] * 9,
        [a] * 8 + [b] * 8 + [a] * 16,
        [0] * 3 + [a] * 13 + [0] * 100,
        [a, b] * 252, [a, b] * 252 + [a], [a, b] * 253, [a, b] * 504 + [a] * 20,
        list(range(min(top, 1000) + 1)),
        noise[:504], noise[:505], noise,
        noise[:100] + [a] * 1000 + noise[:9],
    ]


@pytest.mark.parametrize("width", range(33))
def test_every_width(width: int) -> None:
    """All widths 0..32: round trip and parquet-java bytes on fixed patterns, for several value dtypes."""
    dtypes: list[type] = [np.int64, np.uint32]
    if width <= 31:
        dtypes.append(np.int32)
    if width <= 8:
        dtypes.append(np.uint8)
    for values in _patterns(width):
        expected = java_rle(values, width)
        for dtype in dtypes:
            data = kernel_rle(values, width, dtype=dtype)
            assert data == expected, (width, dtype, len(values))
        decoded, end = decode_rle_hybrid(expected, width, len(values))
        assert decoded == values and end == len(expected)


def test_empty_input_writes_nothing() -> None:
    """No values: no bytes at all, at any width."""
    for width in (0, 1, 8, 32):
        assert kernel_rle([], width) == b""
        assert java_rle([], width) == b""


def test_known_bytes() -> None:
    """Hand-checked streams: one RLE run, one padded bit-packed group, 63-group split."""
    assert kernel_rle([1] * 8, 1) == bytes([16, 1])
    assert kernel_rle([5] * 300, 3) == bytes([0xD8, 0x04, 5])
    assert kernel_rle([1, 0, 1], 1) == bytes([3, 0b101])
    assert kernel_rle([0, 1] * 256, 1) == bytes([127]) + bytes([0xAA]) * 63 + bytes([3, 0xAA])
    assert kernel_rle([7] * 20, 32) == bytes([40, 7, 0, 0, 0])
    assert kernel_rle([0] * 20, 0) == bytes([40])


@SETTINGS
@given(rle_case(), st.lists(st.integers(0, 10_000), max_size=6))
def test_emitted_size_resumed(case: tuple[int, list[int]], cuts: list[int]) -> None:
    """rle_emitted_size, fed in resumed calls with one state array, tracks the port's buffered size."""
    width, values = case
    n = len(values)
    bounds = sorted({min(c, n) for c in cuts} | {n})
    arr = np.asarray(values, dtype=np.int64)
    state = np.zeros(6, dtype=np.int64)
    enc = JavaRleEncoder(width)
    start = 0
    for end in bounds:
        size = int(rle_emitted_size(arr, start, end, width, state))
        for v in values[start:end]:
            enc.write_int(v)
        assert size == enc.buffered_size, (start, end)
        start = end
    assert len(enc.to_bytes()) >= enc.buffered_size


def test_emitted_size_counts_open_header() -> None:
    """The placeholder header byte of an open bit-packed run counts; pending values do not."""
    state = np.zeros(6, dtype=np.int64)
    vals = np.array([0, 1] * 4 + [1] * 7, dtype=np.int64)
    assert rle_emitted_size(vals, 0, 7, 1, state) == 0
    assert rle_emitted_size(vals, 7, 8, 1, state) == 2
    assert rle_emitted_size(vals, 8, 15, 1, state) == 2


@SETTINGS
@given(rle_case())
def test_size_without_writing_equals_the_written_bytes(case: tuple[int, list[int]]) -> None:
    """rle_size counts exactly what rle_encode writes (the device sizes pages with it before encoding)."""
    width, values = case
    arr = np.asarray([7] + values + [7], dtype=np.int64)
    assert rle_size(arr, 1, 1 + len(values), width) == len(kernel_rle(values, width))
