"""Arrow's view types (string_view, binary_view: how polars holds strings) read by value.

A view is 16 bytes, read here as four int32 words: the value's length, then either the value itself (at most
12 bytes, inline in words 1..3) or its first 4 bytes, the index of the data buffer holding it and its offset in
that buffer. The data buffers are separate allocations, any number of them (pyarrow's builder makes one per
32 KiB, a concatenation of slices lists each slice's buffers again), so the kernels read the bytes where they
lie, through the buffers' addresses, instead of first copying the buffers into one arena.

Geometry: sequential, CPU only, one call per Arrow array. There is no CUDA twin: the device path converts view
columns on the host (flat ones in backends/device/sources.py, nested leaves through pipeline/columns.py, both
with these kernels). Inputs: `views`, the array's views as int32[4 * rows] (its offset applied) and the same
memory as uint8[16 * rows] (`view_bytes`); `positions`, int64[m], the rows whose values are wanted, in the
order wanted (each in 0..rows-1). Outputs: offsets int64[m + 1] from 0, and the values' bytes concatenated,
uint8[offsets[m]] (the layout of a large_string array without nulls).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .._jit import jit

INLINE = 12  # the longest value a view holds itself


def _copy_typed(typingctx: Any, dst: Any, src: Any, n: Any) -> Any:
    """`_copy(dst, src, n)`: copy n bytes from address `src` to address `dst` (int64s; LLVM's memcpy), a
    view's bytes read where they lie, in its data buffer or in the view itself."""
    sig = types.void(types.int64, types.int64, types.int64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> None:
        to, start, count = args
        byte_ptr = ir.IntType(8).as_pointer()
        cgutils.raw_memcpy(builder, builder.inttoptr(to, byte_ptr), builder.inttoptr(start, byte_ptr), count, 1)

    return sig, codegen


_copy: Any = intrinsic(_copy_typed)


@jit
def view_offsets(views: np.ndarray, positions: np.ndarray, out_offsets: np.ndarray) -> int:
    """out_offsets = 0 then the running sum of the lengths of the values at `positions` (m + 1 entries).
    Returns the total, or -1 - j for the first position j whose view has a negative length."""
    total = 0
    out_offsets[0] = 0
    for j in range(positions.shape[0]):
        n = views[4 * positions[j]]
        if n < 0:
            return -1 - j
        total += n
        out_offsets[j + 1] = total
    return total


@jit
def gather_views(views: np.ndarray, view_bytes: np.ndarray, positions: np.ndarray, addresses: np.ndarray,
                 sizes: np.ndarray, out_offsets: np.ndarray, out_data: np.ndarray) -> int:
    """Copy the values at `positions` to out_data at out_offsets (from `view_offsets`). `addresses` / `sizes`:
    int64 per data buffer of the array (the memory must stay alive during the call). Returns -1, or the first
    j whose view points outside its buffers (nothing is read there; what was copied before stays)."""
    out = out_data.ctypes.data
    inline = view_bytes.ctypes.data + 4
    for j in range(positions.shape[0]):
        i = positions[j]
        n = views[4 * i]
        if n <= INLINE:
            _copy(out + out_offsets[j], inline + 16 * i, n)
            continue
        b = views[4 * i + 2]
        start = np.int64(views[4 * i + 3])
        if b < 0 or b >= addresses.shape[0] or start < 0 or start + n > sizes[b]:
            return j
        _copy(out + out_offsets[j], addresses[b] + start, n)
    return -1


@jit
def longest_view(views: np.ndarray, valid_bits: np.ndarray, bit_offset: int, start: int, limit: int) -> int:
    """The first row at or after `start` that is valid (Arrow's bitmap as bytes, bit `bit_offset + i` for
    row i; empty when every row is) and whose value is longer than `limit` bytes, or -1 (the too-long check
    of validate.py, read from the lengths alone)."""
    for i in range(start, views.shape[0] // 4):
        if views[4 * i] > limit:
            if valid_bits.shape[0] == 0:
                return i
            bit = bit_offset + i
            if (valid_bits[bit >> 3] >> (bit & 7)) & 1:
                return i
    return -1


@jit
def out_of_line_bytes(views: np.ndarray, valid_bits: np.ndarray, bit_offset: int) -> int:
    """Bytes of the valid values longer than INLINE (those held in the data buffers, not in their views):
    what the rows use of the data buffers, whatever the buffers' sizes."""
    total = 0
    for i in range(views.shape[0] // 4):
        n = views[4 * i]
        if n > INLINE:
            if valid_bits.shape[0] != 0:
                bit = bit_offset + i
                if ((valid_bits[bit >> 3] >> (bit & 7)) & 1) == 0:
                    continue
            total += n
    return total
