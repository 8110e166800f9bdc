"""kernels/convert/views.py: view arrays read by value (lengths, gathered bytes, the too-long scan, the rows'
out-of-line bytes), against what Arrow's own cast to large_string gives."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from gpuwrite.kernels.convert.views import gather_views, longest_view, out_of_line_bytes, view_offsets
from hypothesis import given, settings
from hypothesis import strategies as st


def _views(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(views int32, valid bits, buffer addresses, buffer sizes) of a view array."""
    bufs = arr.buffers()
    views = np.frombuffer(bufs[1], np.int32, count=4 * (arr.offset + len(arr)))[4 * arr.offset:]
    bits = np.frombuffer(bufs[0], np.uint8) if bufs[0] is not None and arr.null_count else np.zeros(0, np.uint8)
    return (views, bits, np.array([b.address for b in bufs[2:]], np.int64),
            np.array([b.size for b in bufs[2:]], np.int64))


values = st.lists(st.none() | st.binary(max_size=40), min_size=1, max_size=80)


@settings(max_examples=60, deadline=None)
@given(values, st.data())
def test_gather_matches_arrow(raw: list, data: st.DataObject) -> None:
    """Any rows in any order, inline and out-of-line values, from a sliced array: the bytes Arrow's cast holds."""
    arr = pa.array(raw * 300, pa.binary_view())  # several 32 KiB data buffers
    start = data.draw(st.integers(0, len(arr) - 1))
    arr = arr.slice(start)
    views, _, addresses, sizes = _views(arr)
    positions = np.array(data.draw(st.lists(st.integers(0, len(arr) - 1), max_size=50)), dtype=np.int64)
    offsets = np.empty(len(positions) + 1, np.int64)
    total = view_offsets(views, positions, offsets)
    out = np.empty(total, np.uint8)
    assert gather_views(views, views.view(np.uint8), positions, addresses, sizes, offsets, out) == -1
    expected = [arr[int(i)].as_py() or b"" for i in positions]
    assert [out[offsets[j]:offsets[j + 1]].tobytes() for j in range(len(positions))] == expected


def test_view_outside_its_buffers_is_reported() -> None:
    """A buffer index past the array's buffers, or bytes past a buffer's end: the first such row, nothing read."""
    views = np.zeros(12, np.int32)
    views[0:4] = [3, 0x636261, 0, 0]  # "abc" inline
    views[4:8] = [20, 0, 0, 0]  # in buffer 0: fine
    views[8:12] = [20, 0, 1, 0]  # buffer 1 does not exist
    data = np.frombuffer(b"z" * 20, np.uint8)
    addresses, sizes = np.array([data.ctypes.data], np.int64), np.array([20], np.int64)
    positions = np.arange(3, dtype=np.int64)
    offsets = np.empty(4, np.int64)
    out = np.empty(view_offsets(views, positions, offsets), np.uint8)
    assert gather_views(views, views.view(np.uint8), positions, addresses, sizes, offsets, out) == 2
    assert out[:23].tobytes() == b"abc" + b"z" * 20
    views[8:12] = [20, 0, 0, 1]  # one byte past buffer 0's end
    assert gather_views(views, views.view(np.uint8), positions, addresses, sizes, offsets, out) == 2
    views[0] = -1
    assert view_offsets(views, positions, offsets) == -1


def test_longest_view_and_out_of_line_bytes_skip_nulls() -> None:
    """Null rows' lengths are not values: neither the too-long scan nor the byte count reads them."""
    arr = pa.array(["a" * 30, None, "b" * 5, "c" * 50, "d" * 13], pa.string_view()).slice(1)
    views, bits, _, _ = _views(arr)
    views = views.copy()
    views[0] = 40  # the null row's view claims 40 bytes (a null's view is undefined in Arrow)
    assert longest_view(views, bits, arr.offset, 0, 20) == 2
    assert longest_view(views, bits, arr.offset, 3, 20) == -1
    assert longest_view(views, np.zeros(0, np.uint8), 0, 0, 20) == 0
    assert out_of_line_bytes(views, bits, arr.offset) == 50 + 13
    assert out_of_line_bytes(views, np.zeros(0, np.uint8), 0) == 40 + 50 + 13
