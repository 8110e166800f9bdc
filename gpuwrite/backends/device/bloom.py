"""A row group's bloom filters built on the device from the window's arenas, read back with the chunks' bytes.

The filtered chunks' values are hashed in one launch (a thread per value), then inserted into every filter (an
adaptive column's candidates included) in one launch (a thread per filter and hash, atomic ORs: the same bits
as the sequential insert); adaptive columns' distinct counts take two more launches (first setters, then the
count). Sizes, candidates and the choice among them are `encode.bloom.BloomBuilder`'s, on the host.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuwrite.kernels.hashing.bloom import (
    FIRST_PER_BLOCK,
    FIRST_UNSET,
    HK_BYTES,
    HK_U32,
    HK_U64,
    JB_COUNT,
    SG_COUNT,
)
from gpuwrite.kernels.plan.layout import (
    CT_KIND,
    CT_OFFS,
    CT_VALS,
    K_BOOL,
    K_DOUBLE,
    K_FLOAT,
    K_INT32,
    K_INT64,
)

from ...encode.bloom import BloomBuilder, needs_filter
from ...options.model import BloomSpec
from ...schema import Leaf
from . import steps
from .ops import Device
from .window import DeviceWindow

_HASH_KIND = {K_INT32: HK_U32, K_FLOAT: HK_U32, K_INT64: HK_U64, K_DOUBLE: HK_U64}


@dataclass
class DeviceBlooms:
    """The row group's filters on the device: per filtered column its builder (sizes, candidates) and the word
    base of each of its filters; `words` and `counts` are read back with the chunks' bytes."""

    builders: dict[int, BloomBuilder]
    bases: dict[int, list[int]]
    count_job: dict[int, int]  # adaptive column -> its row in `counts`
    words: Any  # device uint32: every filter's words back to back
    counts: Any  # device int64[adaptive columns]: hashes not found before their insertion

    def bitsets(self, words: np.ndarray, counts: np.ndarray) -> dict[int, bytes]:
        """Column -> the bitset written, from the host copies of `words` and `counts`."""
        out = {}
        for c, builder in self.builders.items():
            for f, base in zip(builder.filters, self.bases[c], strict=True):
                f.words = words[base:base + len(f.words)]
            if c in self.count_job:
                builder.distinct = int(counts[self.count_job[c]])
            out[c] = builder.bitset()
        return out


def build_blooms(device: Device, win: DeviceWindow, leaves: Sequence[Leaf], specs: Sequence[BloomSpec | None],
                 pages: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> DeviceBlooms | None:
    """Launch the filters of the chunks that get one (a spec, and some data page not dictionary-encoded), from
    the kept pages (column, first value, end value, encoding; in file order). None when no chunk gets one."""
    if all(spec is None for spec in specs):
        return None
    col, va, vb, encoding = pages
    builders: dict[int, BloomBuilder] = {}
    segs: list[tuple[int, int, int, int]] = []
    hash_at: dict[int, tuple[int, int]] = {}  # column -> its first hash and hash count
    out = 0
    for c, (leaf, spec) in enumerate(zip(leaves, specs, strict=True)):
        mine = col == c
        if spec is None or not needs_filter(encoding[mine].tolist()):
            continue
        builders[c] = BloomBuilder(leaf, spec, int((vb[mine] - va[mine]).sum()))
        first = out
        kind = int(win.cols[c, CT_KIND])
        if kind != K_BOOL:  # booleans are never inserted
            hk = _HASH_KIND.get(kind, HK_BYTES)
            base = int(win.cols[c, CT_OFFS if hk == HK_BYTES else CT_VALS])
            for a, b in zip(va[mine].tolist(), vb[mine].tolist(), strict=True):
                if b > a:
                    segs.append((hk, base + a, out, out + b - a))
                    out += b - a
        hash_at[c] = (first, out - first)
    if not builders:
        return None
    jobs: list[tuple[int, int, int, int, int]] = []
    counting: list[tuple[int, int, int, int, int]] = []  # column, first hash, hashes, first slot, blocks
    bases: dict[int, list[int]] = {}
    items = total_words = first_slots = 0
    for c, builder in builders.items():
        h0, n = hash_at[c]
        bases[c] = []
        for f in builder.filters:
            bases[c].append(total_words)
            if n > 0:
                jobs.append((h0, items, items + n, total_words, f.num_blocks))
                items += n
            total_words += len(f.words)
        if builder.adaptive and n > 0:  # the largest candidate counts the distinct values
            counting.append((c, h0, n, first_slots, builder.largest.num_blocks))
            first_slots += builder.largest.num_blocks * FIRST_PER_BLOCK
    words = device.full(max(1, total_words), 0, np.uint32)
    counts = device.full(max(1, len(counting)), 0, np.int64)
    if out > 0:
        ar = win.arenas
        hashes = device.empty(out, np.uint64)
        device.launch(steps.BLOOM_HASH, out, device.upload(np.array(segs, dtype=np.int64).reshape(-1, SG_COUNT)),
                      ar.v32, ar.v64, ar.idx, ar.dat, hashes)
        device.launch(steps.BLOOM_INSERT, items, device.upload(np.array(jobs, dtype=np.int64).reshape(-1, JB_COUNT)),
                      hashes, words)
        if counting:
            start = np.zeros(len(counting) + 1, dtype=np.int64)
            np.cumsum([n for _, _, n, _, _ in counting], out=start[1:])
            table = np.array([(h0, start[r], start[r + 1], slot, blocks)
                              for r, (_, h0, _, slot, blocks) in enumerate(counting)], dtype=np.int64)
            n_items = int(start[-1])
            dev_table = device.upload(table)
            first = device.full(first_slots, int(FIRST_UNSET), np.int32)
            device.launch(steps.BLOOM_FIRST, n_items, dev_table, hashes, first)
            device.launch(steps.BLOOM_COUNT, n_items, dev_table, hashes, first, counts)
    return DeviceBlooms(builders, bases, {row[0]: r for r, row in enumerate(counting)}, words, counts)
