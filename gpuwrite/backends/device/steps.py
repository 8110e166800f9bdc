"""Every device step of the GPU backend: its CUDA kernel (imported when first launched), CPU twin and `serial`.

`serial(items, *args)` (the cost model's, `ops.Kernel`): the longest sequential loop one thread runs in the launch,
derived from the work a thread owns in today's CUDA kernel (kernels/**/_cuda.py), from the arguments' sizes only
(never a device read), with THREADS threads a block as on a GPU. Where the per-item work is only known on the
device (a page's values, a chunk's), the bound the write's defaults put on it is used: a page holds at most
PAGE_VALUES values and PAGE_BYTES bytes (parquet-java's 20,000-row and 1 MiB defaults; nested pages can hold
more values), a dictionary chunk CHUNK values, a conversion chunk CHUNK_ROWS rows, a dictionary DICT_ENTRIES
entries (1 MiB of 4-byte entries); a column's share of a table of chunks is the even share (flat columns have
the same rows). Each derivation is a small named function next to its Kernel.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from gpuwrite.kernels.dictionary import row_group as D
from gpuwrite.kernels.dictionary.row_group import CHUNK
from gpuwrite.kernels.encode import delta as DT
from gpuwrite.kernels.encode import pages as PT
from gpuwrite.kernels.encode import rle as RT
from gpuwrite.kernels.encode.delta import BLOCK as DELTA_BLOCK
from gpuwrite.kernels.encode.delta import MINIBLOCKS
from gpuwrite.kernels.hashing import bloom as B
from gpuwrite.kernels.plan import page_layout as L
from gpuwrite.kernels.plan import planner as P
from gpuwrite.options.model import (
    DEFAULT_DICTIONARY_PAGE_SIZE,
    DEFAULT_MAX_ROW_COUNT_FOR_PAGE_SIZE_CHECK,
    DEFAULT_PAGE_ROW_COUNT_LIMIT,
    DEFAULT_PAGE_SIZE,
)

from .ops import Kernel
from .serial_steps import T, block_runs_steps, block_steps
from .serial_steps import ceil_div as _div
from .serial_steps import log2_threads as _log2

PAGE_VALUES = DEFAULT_PAGE_ROW_COUNT_LIMIT  # values of a flat page, at most (default options)
PAGE_BYTES = DEFAULT_PAGE_SIZE  # bytes of a page's values or body (default options; the check lets it exceed a bit)
CHECK_MAX_ROWS = DEFAULT_MAX_ROW_COUNT_FOR_PAGE_SIZE_CHECK  # rows between page checks, at most (default options)
DICT_ENTRIES = DEFAULT_DICTIONARY_PAGE_SIZE // 4  # entries of a dictionary, at most (4-byte entries, 1 MiB)


def _cuda(module: str, name: str) -> Callable[[], Any]:
    """A factory importing gpuwrite.kernels.<module>.<name> on first use (importing it imports numba.cuda)."""
    cache: dict[str, Any] = {}

    def get() -> Any:
        if "k" not in cache:
            cache["k"] = getattr(importlib.import_module(f"gpuwrite.kernels.{module}"), name)
        return cache["k"]
    return get


def _size(a: Any) -> int:
    """Elements of array `a` (its first dimension's rows for a table)."""
    return int(a.shape[0]) if getattr(a, "ndim", 1) > 1 else int(a.size)


def _page_values(*arrays: Any) -> int:
    """Values of one page, at most: PAGE_VALUES, or fewer when the arrays holding them are smaller."""
    return max(1, min(PAGE_VALUES, max(int(a.size) for a in arrays)))


def _page_bytes(*arrays: Any) -> int:
    """Bytes of one page's values or body, at most: PAGE_BYTES, or fewer when the buffers are smaller."""
    return max(1, min(PAGE_BYTES, max(int(a.nbytes) for a in arrays)))


# dictionary (kernels/dictionary/row_group.py)
def _dict_insert_serial(items: int, *args: Any) -> int:
    """Each value probes the table (1.5 slots a value: a load of at most 2/3, so about (1 + 1/(1 - 2/3)**2) / 2
    = 5 linear probes expected for a miss)."""
    return block_steps(CHUNK) * 5


DICT_INSERT = Kernel("dict_insert", _cuda("dictionary.row_group_cuda", "dict_insert_block"), D.dict_insert,
                     serial=_dict_insert_serial)


def _dict_first_serial(items: int, *args: Any) -> int:
    """Each thread reads its share's first occurrences, then one shared atomic add."""
    return block_steps(CHUNK) + 1


DICT_FIRST = Kernel("dict_first", _cuda("dictionary.row_group_cuda", "dict_first_block"), D.dict_first,
                    serial=_dict_first_serial)


def _dict_bases_serial(items: int, col_chunks: Any, totals: Any, bases: Any) -> int:
    """A block per column: each thread sums a run of the column's chunks, then a block scan over the runs (all
    chunks counted: an upper bound, the launch's sizes do not say a column's share)."""
    return block_runs_steps(_size(totals))


DICT_BASES = Kernel("dict_bases", _cuda("dictionary.row_group_cuda", "dict_bases_block"), D.dict_bases,
                    serial=_dict_bases_serial)


def _dict_number_serial(items: int, *args: Any) -> int:
    """Each thread owns a contiguous run (CHUNK / T), walked twice around a block scan."""
    return block_runs_steps(CHUNK)


DICT_NUMBER = Kernel("dict_number", _cuda("dictionary.row_group_cuda", "dict_number_block"), D.dict_number,
                     serial=_dict_number_serial)


def _dict_ids_serial(items: int, *args: Any) -> int:
    """Each thread writes its share's ids."""
    return block_steps(CHUNK)


DICT_IDS = Kernel("dict_ids", _cuda("dictionary.row_group_cuda", "dict_ids_block"), D.dict_ids,
                  serial=_dict_ids_serial)


# page encoders (kernels/encode/rle_cuda.py, delta_cuda.py, pages_cuda.py; twins in rle.py, delta.py, pages.py)
def _rle_serial(items: int, values: Any, *args: Any) -> int:
    """Each thread finds the runs of its segment (n / T values) and writes its items, around ~3 block scans."""
    return block_runs_steps(_page_values(values), scans=3)


RLE = Kernel("rle", _cuda("encode.rle_cuda", "rle_encode_block"), RT.rle_pages, serial=_rle_serial)


def _delta_blocks(n: int) -> int:
    """A block walks the page's DELTA blocks in turn: per block its deltas, the miniblock ORs and packing."""
    return _div(n, DELTA_BLOCK) * (block_steps(DELTA_BLOCK, walks=2) + MINIBLOCKS + 2)


def _delta_serial(items: int, values: Any, *args: Any) -> int:
    """DELTA_BINARY_PACKED of the page's values."""
    return _delta_blocks(_page_values(values))


DELTA = Kernel("delta", _cuda("encode.delta_cuda", "delta_pages"), DT.delta_pages, serial=_delta_serial)


def _delta_bytes_serial(items: int, offsets: Any, data: Any, *args: Any) -> int:
    """Prefix lengths (one value per thread a step), two DELTA encodings of the lengths, the suffix bytes."""
    n = _page_values(offsets)
    return block_steps(n) + 2 * _delta_blocks(n) + block_steps(_page_bytes(data))


DELTA_BYTES = Kernel("delta_bytes", _cuda("encode.delta_cuda", "delta_bytes_pages"), DT.delta_bytes_pages,
                     serial=_delta_bytes_serial)


def _plain_fixed_serial(items: int, values: Any, *args: Any) -> int:
    """Each thread writes its share of the values."""
    return block_steps(_page_values(values))


PLAIN_FIXED = Kernel("plain_fixed", _cuda("encode.pages_cuda", "block_plain_fixed"), PT.plain_fixed_pages,
                     serial=_plain_fixed_serial)


def _plain_bool_serial(items: int, values: Any, *args: Any) -> int:
    """Each thread writes its share of the output bytes, 8 values each."""
    return block_steps(_div(_page_values(values), 8)) * 8


PLAIN_BOOL = Kernel("plain_bool", _cuda("encode.pages_cuda", "block_plain_bool"), PT.plain_bool_pages,
                    serial=_plain_bool_serial)


def _copy_bytes_serial(items: int, offsets: Any, data: Any, *args: Any) -> int:
    """Each thread copies its share of the page's bytes."""
    return block_steps(_page_bytes(data))


COPY_BYTES = Kernel("copy_bytes", _cuda("encode.pages_cuda", "block_copy_bytes"), PT.copy_bytes_pages,
                    serial=_copy_bytes_serial)


def _plain_byte_array_serial(items: int, offsets: Any, data: Any, *args: Any) -> int:
    """T values a step (lengths, a block scan of their sizes), then their bytes by the block."""
    return block_steps(_page_values(offsets)) * (2 + 2 * _log2(T)) + block_steps(_page_bytes(data))


PLAIN_BYTE_ARRAY = Kernel("plain_byte_array", _cuda("encode.pages_cuda", "block_plain_byte_array"),
                          PT.plain_byte_array_pages, serial=_plain_byte_array_serial)


def _gather_serial(items: int, *args: Any) -> int:
    """Each thread copies its share of the page body (levels and values)."""
    return block_steps(_page_bytes(args[-2]))


GATHER = Kernel("gather", _cuda("encode.pages_cuda", "block_gather"), PT.gather_pages, serial=_gather_serial)


def _minmax_serial(items: int, values: Any, *args: Any) -> int:
    """Each thread's candidates over its share, then a block reduction."""
    return block_steps(_page_values(values), scans=1)


INT_MINMAX = Kernel("int_minmax", _cuda("encode.pages_cuda", "block_int_minmax"), PT.int_minmax_pages,
                    serial=_minmax_serial)
FLOAT_MINMAX = Kernel("float_minmax", _cuda("encode.pages_cuda", "block_float_minmax"), PT.float_minmax_pages,
                      serial=_minmax_serial)


def _bytes_minmax_serial(items: int, offsets: Any, *args: Any) -> int:
    """Each thread's candidates over its share, then a block reduction (comparisons' lengths not counted)."""
    return block_steps(_page_values(offsets), scans=1)


BYTES_MINMAX = Kernel("bytes_minmax", _cuda("encode.pages_cuda", "block_bytes_minmax"), PT.bytes_minmax_pages,
                      serial=_bytes_minmax_serial)


def _crc32_serial(items: int, buf: Any, *args: Any) -> int:
    """The table (256 / T), each thread's contiguous share of the bytes, then a combine tree (32-bit GF(2)
    products a level)."""
    return block_steps(256) + block_steps(_page_bytes(buf), scans=32)


CRC32 = Kernel("crc32", _cuda("encode.pages_cuda", "block_crc32"), PT.crc32_pages, serial=_crc32_serial)


# per-page bookkeeping (kernels/plan/page_layout.py)
def _page_info_serial(items: int, *args: Any) -> int:
    """A chunk's first page sizes its ids sequentially (rle_size over the page's values)."""
    return _page_values(args[6])


PAGE_INFO = Kernel("page_info", _cuda("plan.page_layout_cuda", "pages_info_thread"), L.pages_info, "thread",
                   serial=_page_info_serial)


def _stored_serial(items: int, *args: Any) -> int:
    """A few fields of one page."""
    return 1


STORED = Kernel("stored", _cuda("plan.page_layout_cuda", "stored_choices_thread"), L.stored_choices, "thread",
                serial=_stored_serial)


def _extremes_serial(items: int, *args: Any) -> int:
    """Float pages: a sequential pass over the page's values (NaN count, largest non-NaN; args 5, 6: v32, v64)."""
    return _page_values(args[5], args[6])


EXTREMES = Kernel("extremes", _cuda("plan.page_layout_cuda", "pages_extremes_thread"), L.pages_extremes, "thread",
                  serial=_extremes_serial)


def _header_serial(items: int, *args: Any) -> int:
    """One page (or dictionary page) header, byte after byte (its bound)."""
    return int(L.HEADER_BOUND)


PAGE_HEADERS = Kernel("page_headers", _cuda("plan.page_layout_cuda", "page_headers_thread"), L.page_headers, "thread",
                      serial=_header_serial)
DICT_HEADERS = Kernel("dict_headers", _cuda("plan.page_layout_cuda", "dictionary_headers_thread"),
                      L.dictionary_headers, "thread", serial=_header_serial)


def _dict_pages_serial(items: int, dcol: Any, count: Any, cols: Any, efirst: Any, *args: Any) -> int:
    """Threads stride over a dictionary's entries."""
    return block_steps(min(DICT_ENTRIES, max(1, int(efirst.size))))


DICT_PAGES = Kernel("dict_pages", _cuda("plan.page_layout_cuda", "dictionary_pages_block"), L.dictionary_pages,
                    serial=_dict_pages_serial)


def _scan_serial(items: int, values: Any, n: int, out: Any) -> int:
    """One block: each thread sums a run of the n values, a block scan over the runs, then the run again."""
    return block_runs_steps(n)


SCAN = Kernel("scan", _cuda("plan.page_layout_cuda", "exclusive_scan_block"), L.exclusive_scan,
              serial=_scan_serial)


# the planner on the device (kernels/plan/planner.py)
def _pack_levels_serial(items: int, parts: Any, streams: Any, lev: Any, bits: Any) -> int:
    """A block per part of a 1-bit level stream (at most PACK_PART words, fewer when the level bytes are fewer),
    threads over its words, 64 levels each."""
    return block_steps(min(P.PACK_PART, _div(int(lev.size), 64))) * 64


PACK_LEVELS = Kernel("pack_levels", _cuda("plan.planner_cuda", "pack_levels_block"), P.pack_levels,
                     serial=_pack_levels_serial)


def _level_share(levels: Any, bits: Any, cols: int, segments: int) -> int:
    """A column's even share of one segment's level words, walked once to count and once to meter: the packed
    1-bit streams' words and the wider levels 8 a word, over columns (flat columns have the same rows) and over
    segments - 2 (the segments between the first and the last, which can be shorter, are whole), plus the rows
    between the previous segment's last check and this segment (a check interval: page_size_check_max rows at the
    defaults) and a word either end."""
    bit_words = int(bits.size)
    wide = max(0, int(levels.size) - 64 * bit_words)
    whole = max(1, segments - 2)
    return _div(2 * bit_words + _div(wide, 8), cols * whole) + 2 * _div(CHECK_MAX_ROWS, 64) + 2


def _plan_count_serial(items: int, desc: Any, bits: Any, *args: Any) -> int:
    """A block per segment, a thread per column of each tile of T: the column's set bits over its segment's 1-bit
    words, one word a step (the even share of the 1-bit words over columns and the whole segments, as
    `_level_share`; segment 0 counts from the last check before it, a check interval more)."""
    cols = max(1, int(desc.shape[0]))
    return _div(cols, T) * (_div(int(bits.size), cols * max(1, items - 2)) + _div(CHECK_MAX_ROWS, 64) + 2)


def _plan_walk_serial(items: int, *args: Any) -> int:
    """A block per segment runs one chain of its checks, at most xr.shape[2] (the room the kernel stops at:
    `planner.segment_checks`, the checks a segment can hold), a thread per column of each tile of T: per check its
    column checks, a 2 log2(T)-step scan per tile and two log2(T)-step min-reductions, the guess's page starts
    recorded or compared (a log2(T)-step sum) with thread 0 stepping through the guess's checks (at most as many
    again); its start state (the guess sums its column's counts of the segments before: `items` steps); over the
    chain a thread walks its columns' levels in the segment (`_level_share`)."""
    desc, levels, bits, xc, xr = args[1], args[2], args[4], args[12], args[13]  # (w, desc, levels, words, bits, ...)
    cols = max(1, int(desc.shape[0]))
    tiles = _div(cols, T)
    checks = int(xr.shape[2])
    per_check = tiles * (2 * _log2(T) + 5) + 3 * (_log2(T) + 2) + 6
    return checks * (per_check + 1) + tiles * (int(xc.shape[3]) + items) + tiles * _level_share(levels, bits, cols,
                                                                                                  items)


def _plan_emit_serial(items: int, *args: Any) -> int:
    """A block per segment: each thread sums the segments' counts before its own (`items` steps), then copies its
    share of the segment's checks (both walks': 2 xr.shape[2], each with its columns' level bytes) and pages (2
    xfc.shape[2]); the last kept segment's threads copy the state (their columns)."""
    xc, xr, xl, xfc = args[4], args[5], args[7], args[8]  # (segs, sched, cursor, xs, xc, xr, xe, xl, xfc, ...)
    cols = max(1, int(xl.shape[3]))
    return (2 * items + _div(2 * int(xr.shape[2]), T) * (cols + 2) + 2 * _div(2 * int(xfc.shape[2]), T)
            + _div(cols, T) * int(xc.shape[3]))


PLAN_COUNT = Kernel("plan_count", _cuda("plan.planner_cuda", "plan_count_block"), P.plan_count,
                    serial=_plan_count_serial)
PLAN_SPEC = Kernel("plan_spec", _cuda("plan.planner_cuda", "plan_walk_block"), P.plan_walk,
                   serial=_plan_walk_serial)
PLAN_FIX = Kernel("plan_fix", _cuda("plan.planner_cuda", "plan_walk_block"), P.plan_walk,
                  serial=_plan_walk_serial)
PLAN_EMIT = Kernel("plan", _cuda("plan.planner_cuda", "plan_emit_block"), P.plan_emit,
                   serial=_plan_emit_serial)


def _wide_walk(levels: Any, bits: Any, cols: int, rows: int, rows_total: int) -> int:
    """Words of one column's wider (byte) levels over `rows` of the row group's `rows_total` rows, twice (both
    streams): the even share over columns and rows (nested columns' entries per row vary), 8 levels a word."""
    wide = max(0, int(levels.size) - 64 * int(bits.size))
    return 2 * _div(_div(wide * rows, max(1, rows_total)), 8 * cols) if wide else 0


def _replay_marks_serial(items: int, desc: Any, levels: Any, words: Any, bits: Any, *args: Any) -> int:
    """A thread per page (the planned pages, then each column's open page): a binary search for its check over
    ev_row, then its page's levels walked once (a page holds at most PAGE_VALUES rows' levels: 3 words per 64 rows
    of 1-bit streams, and its share of the wider levels), leaving a mark of MK_COUNT values every `every` rows."""
    ev_row, every, marks = args[1], args[-2], args[-1]  # (index, ev_row, ev_end, ..., limits, every, marks)
    cols = max(1, int(desc.shape[0]))
    rows_total = int(marks.shape[1]) * int(every)
    return (_log2(int(ev_row.shape[0])) + 3 * (_div(PAGE_VALUES, 64) + 1)
            + _wide_walk(levels, bits, cols, PAGE_VALUES, rows_total) + _div(PAGE_VALUES, int(every)) * P.MK_COUNT)


REPLAY_MARKS = Kernel("replay_marks", _cuda("plan.planner_cuda", "replay_marks_thread"), P.replay_marks, "thread",
                      serial=_replay_marks_serial)


def _replay_serial(items: int, desc: Any, levels: Any, words: Any, bits: Any, *args: Any) -> int:
    """One block replays the chain of checks: the planned page checks (ev_row, args[4], passed as exactly the
    checks planned) and the memory checks, at most as many plus 65 (SPEC: InternalParquetRecordWriter: the next
    memory check is at most 10,000 rows on, or half way to the estimated end, so it closes in on the end in at most
    64 halvings; page checks are at most page_size_check_max rows apart, 10,000 by default). Per page check a
    thread applies its share of the check's pages (one per column at most), counting each column's values from the
    mark before the check; per memory check it bounds its columns (counting likewise) and takes part in a
    log2(T)-step sum of three rows (a second when the bounds leave the answer open, when it meters its columns from
    the mark before the check: at most `every` rows of levels, args[-1]), thread 0 a few steps of the block
    check."""
    cols = max(1, int(desc.shape[0]))
    tiles = _div(cols, T)
    checks = int(args[4].shape[0])
    marks, every = args[-2], int(args[-1])
    rows_total = int(marks.shape[1]) * every
    count = _div(every, 64) + 1
    meter = 2 * (_div(every, 64) + 1) + _wide_walk(levels, bits, cols, every, rows_total) + 12
    page_check = tiles * (count + 1) + 2
    memory_check = tiles * (2 + count + meter) + 2 * (_log2(T) + 2) + 8
    return checks * page_check + (checks + 65) * memory_check


REPLAY = Kernel("replay", _cuda("plan.planner_cuda", "replay_block"), P.replay_step, serial=_replay_serial)



def _spans_serial(items: int, *args: Any) -> int:
    """One page's entry and value bounds."""
    return 1


SPANS = Kernel("spans", _cuda("plan.planner_cuda", "page_spans_thread"), P.page_spans, "thread",
               serial=_spans_serial)
OPEN_SPANS = Kernel("open_spans", _cuda("plan.planner_cuda", "open_spans_thread"), P.open_spans, "thread",
                    serial=_spans_serial)  # a column's page open at the replay's cut: one page's bounds


def _flush_sizes_serial(items: int, *args: Any) -> int:
    """One planned page's stored size."""
    return 1


FLUSH_SIZES = Kernel("flush_sizes", _cuda("plan.page_layout_cuda", "flush_sizes_thread"), L.flush_sizes, "thread",
                     serial=_flush_sizes_serial)


# bloom filters (kernels/hashing/bloom.py, kernels/hashing/bloom_cuda.py)
def _bloom_hash_serial(items: int, segs: Any, *args: Any) -> int:
    """A binary search of the segment table, then XXH64 of one value (fixed widths; byte values' lengths not
    counted)."""
    return _log2(_size(segs)) + 8


BLOOM_HASH = Kernel("bloom_hash", _cuda("hashing.bloom_cuda", "bloom_hash_thread"), B.hash_segments, "thread",
                    serial=_bloom_hash_serial)


def _bloom_job_serial(items: int, jobs: Any, *args: Any) -> int:
    """A binary search of the job table, then 8 atomics (one per bit)."""
    return _log2(_size(jobs)) + 8


BLOOM_INSERT = Kernel("bloom_insert", _cuda("hashing.bloom_cuda", "bloom_insert_thread"), B.insert_jobs, "thread",
                      serial=_bloom_job_serial)
BLOOM_FIRST = Kernel("bloom_first", _cuda("hashing.bloom_cuda", "bloom_first_thread"), B.first_setters, "thread",
                     serial=_bloom_job_serial)
BLOOM_COUNT = Kernel("bloom_count", _cuda("hashing.bloom_cuda", "bloom_count_thread"), B.count_fresh, "thread",
                     serial=_bloom_job_serial)
