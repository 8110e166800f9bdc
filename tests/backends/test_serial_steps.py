"""Serial-step formulas of the device steps (`Kernel.serial`, gpuwrite/backends/device/serial_steps.py): the
steps that scan a column's chunks or a batch's pages as a block grow by 2 steps per block of items, not 1 per
item."""

from __future__ import annotations

import numpy as np

from gpuwrite.backends.device import steps
from gpuwrite.backends.device.convert import SCAN as CONVERT_SCAN
from gpuwrite.backends.device.ops import THREADS
from gpuwrite.backends.device.serial_steps import T, block_runs_steps, block_steps, ceil_div, log2_threads


def test_formulas() -> None:
    assert log2_threads(128) == 7 and log2_threads(1) == 0 and log2_threads(100) == 7
    assert block_runs_steps(0) == 7
    assert block_runs_steps(128) == 2 + 7
    assert block_runs_steps(129, scans=3) == 4 + 21


def test_one_vocabulary_for_strided_shares_and_scans() -> None:
    # steps.py's helpers are serial_steps' (one module owns them); a binary search over nothing takes no step
    assert (steps._div, steps._log2, steps.T) == (ceil_div, log2_threads, T) and T == THREADS
    assert log2_threads(0) == 0 and ceil_div(257, 128) == 3
    assert block_steps(0) == 0 and block_steps(129) == 2 and block_steps(-5, walks=2, scans=1) == 7
    assert block_steps(300, walks=2, scans=3) == block_runs_steps(300, scans=3) == 6 + 21
    assert block_steps(300, scans=1, threads=32) == 10 + 5


def test_block_scans_of_chunks_and_pages() -> None:
    # 2.88 M values of 20 dictionary columns: 14,080 chunks of 4,096; one thread once walked a column's 704
    chunks = np.zeros((14_080, 3), dtype=np.int64)
    two = np.zeros((14_080, 2), dtype=np.int64)
    assert steps.DICT_BASES.geometry == "block" and CONVERT_SCAN.geometry == "block"
    assert steps.DICT_BASES.serial is not None and steps.DICT_BASES.serial(20, two[:20], two, two) == 2 * 110 + 7
    assert CONVERT_SCAN.serial is not None
    assert CONVERT_SCAN.serial(20, two[:20], chunks, chunks, chunks, chunks, two, two) == 2 * 110 + 3 * 7
    assert steps.SCAN.serial is not None and steps.SCAN.serial(1, np.zeros(3_335), 3_335, None) == 2 * 27 + 7
    assert THREADS == 128


def test_per_page_and_per_item_steps_do_not_grow_with_the_items() -> None:
    # a thread per page / column / bloom item: its steps are a header's bytes, a lookup, or a search of the job
    # table and 8 filter words, whatever the number of items
    jobs = np.zeros((40, 4), dtype=np.int64)
    for step, want in ((steps.STORED, 1), (steps.SPANS, 1), (steps.FLUSH_SIZES, 1), (steps.PAGE_HEADERS, 64),
                       (steps.DICT_HEADERS, 64)):
        assert step.serial is not None
        assert step.serial(10, None) == step.serial(10**6, None) == want, step.name
    for step in (steps.BLOOM_INSERT, steps.BLOOM_FIRST, steps.BLOOM_COUNT):
        assert step.serial is not None and step.serial(10**6, jobs, None) == 6 + 8, step.name
