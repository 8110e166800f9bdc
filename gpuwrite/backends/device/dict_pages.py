"""A row group's dictionary pages on the device: PLAIN pages of each dictionary's first entries, compressed (always:
parquet-java compresses a dictionary page whatever the result), with CRCs and headers.

Made at the row group's end (`chunks.queue_chunks`), or with a batch: the first for a guessed cut, the second for
the cut (`encode._store`: compressed in the batch's own codec call, their bodies gathered and CRC'd with the
batch's pages, `encode._bodies`; so a row group spends no sync of its own on them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuwrite.kernels.encode.pages import crc32_table
from gpuwrite.kernels.plan.layout import CT_DICT
from gpuwrite.kernels.plan.page_layout import HEADER_BOUND, I_BYTES, I_ENTRIES

from ...format.enums import Encoding
from . import steps
from .codecs import aligned, starts
from .dictionary import DeviceDictionary
from .ops import Device
from .window import DeviceWindow

Counts = dict[int, tuple[int, int]]  # column -> (entries its dictionary page holds, their bytes)


@dataclass
class DictPages:
    """The row group's dictionary pages on the device (one per column that has one)."""

    columns: list[int]
    count: np.ndarray
    raw_len: np.ndarray
    body: Any
    body_off: np.ndarray
    body_len: Any
    headers: Any
    header_len: Any
    crc: Any


@dataclass
class RawDictPages:
    """Dictionary pages laid out (PLAIN, not compressed yet) in a device buffer at `off`."""

    columns: list[int]
    count: np.ndarray
    raw_len: np.ndarray
    off: np.ndarray  # host: each page's offset in the buffer (ALIGN-aligned)
    small: Any  # device int64[4, n]: columns, count, raw_len, off

    @property
    def end(self) -> int:
        """Where the last page ends in the buffer (its offsets include the base the layout was given)."""
        return int(self.off[-1] + self.raw_len[-1]) if len(self.columns) else 0


def dictionary_counts(cols: np.ndarray, col: np.ndarray, encoding: np.ndarray, info: np.ndarray) -> Counts:
    """Per dictionary column with a dictionary-encoded page among the pages (col, encoding, info): (entries its
    dictionary page holds, their bytes), the state at its dictionary-encoded page with the most entries (entries
    only grow within a chunk)."""
    pick = np.flatnonzero((encoding == Encoding.RLE_DICTIONARY) & (cols[col, CT_DICT] != 0))
    entries, mine = info[pick, I_ENTRIES], col[pick]
    order = np.lexsort((np.arange(len(pick)), -entries, mine))  # per column: the first page with the most entries
    first = order[np.flatnonzero(np.diff(mine[order], prepend=-1) != 0)]  # (one sort: wide tables)
    first = first[entries[first] > 0]
    return dict(zip(mine[first].tolist(), zip(entries[first].tolist(), info[pick[first], I_BYTES].tolist(),
                                                 strict=True), strict=True))


def layout(device: Device, counts: Counts, base: int = 0) -> RawDictPages:
    """Where the pages of `counts` go in a buffer, from `base` (ALIGN-aligned: codec inputs)."""
    columns = sorted(counts)
    count = np.array([counts[c][0] for c in columns], dtype=np.int64)
    raw_len = np.array([counts[c][1] for c in columns], dtype=np.int64)
    off = starts(aligned(raw_len)) + base
    small = device.upload(np.stack([np.array(columns, dtype=np.int64), count, raw_len, off]))
    return RawDictPages(columns, count, raw_len, off, small)


def write_raw(device: Device, win: DeviceWindow, dic: DeviceDictionary, raw: RawDictPages, buf: Any) -> None:
    """Write the PLAIN pages of `raw` into `buf` (one launch)."""
    ar, small = win.arenas, raw.small
    device.launch(steps.DICT_PAGES, len(raw.columns), small[0], small[1], win.dev_cols, dic.efirst, dic.ebytes,
                  ar.v32, ar.v64, ar.idx, ar.dat, buf, small[3])


def detach(device: Device, body: tuple[Any, np.ndarray, Any]) -> tuple[Any, np.ndarray, Any]:
    """The stored pages `body` (buffer, host offsets, device lengths: the last runs of a batch's codec buffer,
    which ends 8 bytes after the last run's slot) copied into a buffer of their own (one launch), so the batch's
    buffer is freed with the batch's other temporaries and not kept until the row group's end."""
    buf, off, length = body
    slots = np.diff(np.append(off, int(buf.size) - 8))
    out_off = starts(slots)
    out = device.empty(int(slots.sum()) + 8, np.uint8)
    at = device.upload(np.stack([off, out_off, np.zeros(len(off), dtype=np.int64)]))
    z = at[2]
    device.launch(steps.GATHER, len(off), buf, z, z, buf, z, z, buf, at[0], length, out, at[1])
    return out, out_off, length


def finish(device: Device, raw: RawDictPages, body: tuple[Any, np.ndarray, Any], checksum: bool,
           crc: Any = None) -> DictPages:
    """The pages' CRCs (with checksums, unless `crc` holds them: found with the batch's pages) and headers,
    given their stored bodies (buffer, host offsets, device lengths)."""
    buf, body_off, body_len = body
    n = len(raw.columns)
    if crc is None:
        crc = device.empty(n, np.int64)  # read only with checksums, which write it
        if checksum:
            device.launch(steps.CRC32, n, buf, device.upload(body_off), body_len, device.upload(crc32_table()),
                          crc)
    headers = device.empty(n * HEADER_BOUND, np.uint8)
    header_len = device.empty(n, np.int64)
    device.launch(steps.DICT_HEADERS, n, raw.small[1:3], body_len, crc, checksum, headers,
                  device.upload(np.arange(n, dtype=np.int64) * HEADER_BOUND), header_len)
    return DictPages(raw.columns, raw.count, raw.raw_len, buf, body_off, body_len, headers, header_len, crc)
