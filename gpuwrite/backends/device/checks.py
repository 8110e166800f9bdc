"""The value checks of `validate.py` that read every value (decimal precision, UTF-8), run on the device over
the window's Arrow buffers for the columns converted there; their results are read with the planner's first
sync, so they cost one launch and no wait of their own.

With the GPU backend, `validate.check_batch` skips the value checks of flat leaves (`device_checked`): a bad
value is then found when its row group's window is converted, and the write fails there with the CPU path's
message (naming the column and the row of the file) instead of refusing only its batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from gpuwrite.kernels.convert import value_checks as K
from gpuwrite.kernels.convert.arenas import CHUNK_ROWS

from ...errors import GpuwriteError, ValueCheckError
from ...integrations.device_data import DeviceColumn
from ...pipeline.validate import decimal_bound, describe_bad_utf8, describe_wide_decimal
from ...schema import Leaf
from .ops import Device, Kernel


def _cuda() -> Any:
    from gpuwrite.kernels._jit import page_kernel

    return page_kernel(K.check_chunk)


def _checks_serial(items: int, *args: Any) -> int:
    """One thread per chunk checks its rows one after another (at most CHUNK_ROWS; a string check walks the
    bytes, not counted)."""
    return int(CHUNK_ROWS)


CHECKS = Kernel("value_checks", cuda=_cuda, twin=K.check_chunks, geometry="thread", serial=_checks_serial)


def device_checked(leaf: Leaf) -> bool:
    """Whether the GPU backend checks this leaf's values on the device (flat leaves: converted there)."""
    return not leaf.nested


def check_table(leaves: Sequence[Leaf], validate: bool) -> np.ndarray | None:
    """`checks` (int64[C, CHK_COUNT], see kernels/convert/value_checks.py) for the leaves, or None when nothing is
    checked (`validate`, the option, is False, or no decimal / string leaf is converted on the device)."""
    if not validate:
        return None
    table = np.zeros((len(leaves), K.CHK_COUNT), dtype=np.int64)
    for c, leaf in enumerate(leaves):
        t = leaf.arrow_type
        if not device_checked(leaf):
            continue
        if pa.types.is_dictionary(t):
            t = t.value_type
        if pa.types.is_decimal(t):
            table[c, K.CHK_CODE] = K.DECIMAL
            table[c, K.CHK_B_HI:] = decimal_bound(t.precision).view(np.int64)
        elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            table[c, K.CHK_CODE] = K.UTF8
    return table if table[:, K.CHK_CODE].any() else None


def launch_checks(device: Device, converted: Any, checks: np.ndarray | None) -> Any:
    """Launch the checks over the converted window's chunks (convert.DeviceWindow.inputs); the device array
    `bad` (int64[K, 2]) to read later, or None when nothing is checked."""
    if checks is None:
        return None
    chunks = converted.inputs["chunks"]
    n = len(converted.inputs["counts"])
    if n == 0:
        return None
    bad = device.empty(2 * n, np.int64).reshape(n, 2)
    device.launch(CHECKS, n, chunks, converted.inputs["srct"], converted.inputs["src"], device.upload(checks), bad)
    return bad


def check_error(bad: np.ndarray, checks: np.ndarray, leaves: Sequence[Leaf], rows: tuple[int, Any]
                ) -> GpuwriteError | None:
    """The CPU path's error for the first failing value (schema order, then row), given a host copy of `bad`;
    `rows`: the file row of the window's first row and the window's Arrow rows (to show the value). None when
    every value passed."""
    hits = np.flatnonzero(bad[:, 0] >= 0)
    if len(hits) == 0:
        return None
    c = int(bad[hits, 1].min())
    row = int(bad[hits[bad[hits, 1] == c], 0].min())
    first_row, table = rows
    leaf = leaves[c]
    one = table.column(leaf.index).slice(row, 1)
    one = one.to_host(table.device).combine_chunks() if isinstance(one, DeviceColumn) else one.combine_chunks()
    describe = describe_wide_decimal if int(checks[c, K.CHK_CODE]) == K.DECIMAL else describe_bad_utf8
    what = describe(one, 0)
    return ValueCheckError(f"column {leaf.dotted!r}, row {first_row + row} of the file: {what}")
