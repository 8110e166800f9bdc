"""Every device step of the GPU backend: its CUDA kernel (imported when first launched) and CPU twin."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from gpuwrite.kernels.dictionary import row_group as D
from gpuwrite.kernels.encode import delta as DT
from gpuwrite.kernels.encode import pages as PT
from gpuwrite.kernels.encode import rle as RT
from gpuwrite.kernels.hashing import bloom as B
from gpuwrite.kernels.plan import page_layout as L
from gpuwrite.kernels.plan import planner as P

from .ops import THREADS, Kernel


def _cuda(module: str, name: str) -> Callable[[], Any]:
    """A factory importing gpuwrite.kernels.<module>.<name> on first use (importing it imports numba.cuda)."""
    cache: dict[str, Any] = {}

    def get() -> Any:
        if "k" not in cache:
            cache["k"] = getattr(importlib.import_module(f"gpuwrite.kernels.{module}"), name)
        return cache["k"]
    return get


# dictionary (kernels/dictionary/row_group.py)
# a chunk's values (D.CHUNK) strided over a block's threads; dict_number scans the threads' runs (log2 THREADS)
_PER_THREAD = -(-D.CHUNK // THREADS)
DICT_INSERT = Kernel("dict_insert", _cuda("dictionary.row_group_cuda", "dict_insert_block"), D.dict_insert,
                     serial=lambda items, *args: _PER_THREAD)  # probes: O(1) expected at a load of at most 2/3
DICT_FIRST = Kernel("dict_first", _cuda("dictionary.row_group_cuda", "dict_first_block"), D.dict_first,
                    serial=lambda items, *args: _PER_THREAD)
DICT_BASES = Kernel("dict_bases", _cuda("dictionary.row_group_cuda", "dict_bases_thread"), D.dict_bases, "thread",
                    serial=lambda items, col_chunks, totals, bases: len(totals))  # at most every chunk
DICT_NUMBER = Kernel("dict_number", _cuda("dictionary.row_group_cuda", "dict_number_block"), D.dict_number,
                     serial=lambda items, *args: 2 * _PER_THREAD + THREADS.bit_length() - 1)
DICT_IDS = Kernel("dict_ids", _cuda("dictionary.row_group_cuda", "dict_ids_block"), D.dict_ids,
                  serial=lambda items, *args: _PER_THREAD)

# page encoders (kernels/encode/rle_cuda.py, delta_cuda.py, pages_cuda.py; twins in rle.py, delta.py, pages.py)
RLE = Kernel("rle", _cuda("encode.rle_cuda", "rle_encode_block"), RT.rle_pages)
DELTA = Kernel("delta", _cuda("encode.delta_cuda", "delta_pages"), DT.delta_pages)
DELTA_BYTES = Kernel("delta_bytes", _cuda("encode.delta_cuda", "delta_bytes_pages"), DT.delta_bytes_pages)
PLAIN_FIXED = Kernel("plain_fixed", _cuda("encode.pages_cuda", "block_plain_fixed"), PT.plain_fixed_pages)
PLAIN_BOOL = Kernel("plain_bool", _cuda("encode.pages_cuda", "block_plain_bool"), PT.plain_bool_pages)
COPY_BYTES = Kernel("copy_bytes", _cuda("encode.pages_cuda", "block_copy_bytes"), PT.copy_bytes_pages)
PLAIN_BYTE_ARRAY = Kernel("plain_byte_array", _cuda("encode.pages_cuda", "block_plain_byte_array"),
                          PT.plain_byte_array_pages)
GATHER = Kernel("gather", _cuda("encode.pages_cuda", "block_gather"), PT.gather_pages)
INT_MINMAX = Kernel("int_minmax", _cuda("encode.pages_cuda", "block_int_minmax"), PT.int_minmax_pages)
FLOAT_MINMAX = Kernel("float_minmax", _cuda("encode.pages_cuda", "block_float_minmax"), PT.float_minmax_pages)
BYTES_MINMAX = Kernel("bytes_minmax", _cuda("encode.pages_cuda", "block_bytes_minmax"), PT.bytes_minmax_pages)
CRC32 = Kernel("crc32", _cuda("encode.pages_cuda", "block_crc32"), PT.crc32_pages)

# per-page bookkeeping (kernels/plan/page_layout.py)
PAGE_INFO = Kernel("page_info", _cuda("plan.page_layout_cuda", "pages_info_thread"), L.pages_info, "thread")
STORED = Kernel("stored", _cuda("plan.page_layout_cuda", "stored_choices_thread"), L.stored_choices, "thread")
EXTREMES = Kernel("extremes", _cuda("plan.page_layout_cuda", "pages_extremes_thread"), L.pages_extremes, "thread")
PAGE_HEADERS = Kernel("page_headers", _cuda("plan.page_layout_cuda", "page_headers_thread"), L.page_headers, "thread")
DICT_HEADERS = Kernel("dict_headers", _cuda("plan.page_layout_cuda", "dictionary_headers_thread"),
                      L.dictionary_headers, "thread")
DICT_PAGES = Kernel("dict_pages", _cuda("plan.page_layout_cuda", "dictionary_pages_block"), L.dictionary_pages)
SCAN = Kernel("scan", _cuda("plan.page_layout_cuda", "exclusive_scan_block"), L.exclusive_scan)

# the planner on the device (kernels/plan/planner.py)
PACK_LEVELS = Kernel("pack_levels", _cuda("plan.planner_cuda", "pack_levels_block"), P.pack_levels)
PLAN = Kernel("plan", _cuda("plan.planner_cuda", "plan_thread"), P.plan_step, "thread")
REPLAY = Kernel("replay", _cuda("plan.planner_cuda", "replay_thread"), P.replay_step, "thread")
SPANS = Kernel("spans", _cuda("plan.planner_cuda", "page_spans_thread"), P.page_spans, "thread")
FLUSH_SIZES = Kernel("flush_sizes", _cuda("plan.page_layout_cuda", "flush_sizes_thread"), L.flush_sizes, "thread")

# bloom filters (kernels/hashing/bloom.py, kernels/hashing/bloom_cuda.py)
BLOOM_HASH = Kernel("bloom_hash", _cuda("hashing.bloom_cuda", "bloom_hash_thread"), B.hash_segments, "thread")
BLOOM_INSERT = Kernel("bloom_insert", _cuda("hashing.bloom_cuda", "bloom_insert_thread"), B.insert_jobs, "thread")
BLOOM_FIRST = Kernel("bloom_first", _cuda("hashing.bloom_cuda", "bloom_first_thread"), B.first_setters, "thread")
BLOOM_COUNT = Kernel("bloom_count", _cuda("hashing.bloom_cuda", "bloom_count_thread"), B.count_fresh, "thread")
