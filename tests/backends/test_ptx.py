"""Every CUDA kernel of the project compiles for a real GPU: numba.cuda + NVVM turn each into sm_90 PTX here,
with no device, so code that only a GPU runs (the simulator runs it as Python) is still checked by the compiler.

`KERNELS` is the table: one row per kernel and argument types the backend launches it with, and what its PTX
must show (shared memory or none, at least so many block barriers and shared-memory atomics, no local memory).
Run as a script (`python tests/backends/test_ptx.py`: a fresh interpreter with the simulator off, where numba
asks a stand-in device for its compute capability) it compiles every row and prints one JSON line per row; the
test runs it once and checks each row.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from numba import types as T

ROOT = Path(__file__).resolve().parents[2]
i64, b1 = T.int64, T.boolean
# Any-layout arrays (the rows of the one-thread-per-page kernels and block encoders, as first written)
A_u8, A_i64, A_i32, A_u64, A_u32 = T.uint8[:], T.int64[:], T.int32[:], T.uint64[:], T.uint32[:]
# C-contiguous arrays, as the device steps launch them (Device arrays are contiguous; tables are 2-D)
C_u8, C_i32, C_i64, C2_i64 = T.uint8[::1], T.int32[::1], T.int64[::1], T.int64[:, ::1]
C3_i64 = T.int64[:, :, ::1]


@dataclass(frozen=True)
class Row:
    """One kernel with one set of argument types, and what its PTX must show."""

    module: str  # gpuwrite.kernels.<module>
    kernel: str
    args: tuple[Any, ...]
    tag: str = ""  # tells apart the rows of one kernel (value types)
    per_item: bool = False  # a @jit `f(i, ...)` run one thread per item by `_jit.page_kernel` (count first)
    shared: bool = False  # whether it declares shared memory (block scans, tables, reductions)
    barriers: int = 0  # at least this many bar.sync
    shared_atomics: int = 0  # at least this many atom.shared
    local_ok: bool = False  # whether it may use local memory (per-thread arrays the compiler keeps in memory)
    factory: bool = False  # the module attribute builds the kernel when called (specialised at first use)

    @property
    def label(self) -> str:
        return f"{self.module}.{self.kernel}" + (f"[{self.tag}]" if self.tag else "")


def _pages(name: str, *args: Any, tag: str = "") -> Row:
    """A per-page encoder of kernels/encode/pages.py, one thread per page."""
    return Row("encode.pages", name, args, tag, per_item=True)


def _block(name: str, *args: Any, tag: str = "", shared: bool = False) -> Row:
    """A block-per-page encoder of kernels/encode/pages_cuda.py; the cooperative ones keep their per-thread candidates
    or tables in shared memory."""
    return Row("encode.pages_cuda", name, args, tag, shared=shared)


def _rle(values: Any, tag: str) -> list[Row]:
    """The block RLE kernels for one value type: block scans in shared memory."""
    return [Row("encode.rle_cuda", "rle_sizes_block", (values, A_i64, A_i64, A_i64, b1, A_i64), tag, shared=True,
                barriers=1),
            Row("encode.rle_cuda", "rle_encode_block", (values, A_i64, A_i64, A_i64, b1, A_u8, A_i64, A_i64), tag,
                shared=True, barriers=1)]


def _delta(name: str, args: tuple[Any, ...], tag: str) -> Row:
    """A block DELTA encoder: its phases synchronise the block; the block minimum and the miniblock ORs are
    shared-memory reductions."""
    return Row("encode.delta_cuda", name, args, tag, shared=True, barriers=4, shared_atomics=2)


KERNELS: list[Row] = [
    # one thread per page (kernels/encode/pages.py through _jit.page_kernel)
    _pages("page_dict_ids", A_i32, A_i64, A_i64, A_i64, A_u8, A_i64, A_i64),
    _pages("page_delta", A_i64, A_i64, A_i64, b1, A_u8, A_i64, A_i64, tag="int64"),
    _pages("page_delta", A_i32, A_i64, A_i64, b1, A_u8, A_i64, A_i64, tag="int32"),
    _pages("page_delta_bytes", A_i64, A_u8, A_i64, A_i64, A_i64, A_i64, A_u8, A_i64, A_i64),
    _pages("page_plain_fixed", A_i64, A_i64, A_i64, i64, i64, A_u8, A_i64, A_i64, tag="int64"),
    _pages("page_plain_fixed", A_i32, A_i64, A_i64, i64, i64, A_u8, A_i64, A_i64, tag="int32"),
    _pages("page_plain_bool", A_u8, A_i64, A_i64, A_u8, A_i64, A_i64),
    _pages("page_copy_bytes", A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64),
    _pages("page_int_minmax", A_i32, A_i64, A_i64, A_i64, A_i64, tag="int32"),
    _pages("page_int_minmax", A_i64, A_i64, A_i64, A_i64, A_i64, tag="int64"),
    _pages("page_int_minmax", A_u8, A_i64, A_i64, A_i64, A_i64, tag="uint8"),
    _pages("page_float_minmax", A_i64, A_i64, A_i64, b1, A_i64, A_i64, tag="int64"),
    _pages("page_float_minmax", A_i32, A_i64, A_i64, b1, A_i64, A_i64, tag="int32"),
    _pages("page_bytes_minmax", A_i64, A_u8, A_i64, A_i64, b1, A_i64, A_i64, A_i64),
    _pages("page_gather", A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, A_u8, A_i64),
    _pages("page_crc32", A_u8, A_i64, A_i64, A_u32, A_i64),
    # Dremel level steps (kernels/convert/levels.py), one thread per slot through the same wrapper
    Row("convert.levels", "slot_optional", (A_i64, A_u8, A_u8, b1, A_i64), per_item=True),
    Row("convert.levels", "slot_count", (A_i64, A_i64, A_i64), per_item=True),
    Row("convert.levels", "slot_expand", (A_i64, A_u8, A_u8, A_i64, A_i64, i64, A_i64, A_u8, A_u8), per_item=True),
    # one block per page (kernels/encode/pages_cuda.py)
    _block("block_plain_fixed", A_i64, A_i64, A_i64, i64, i64, A_u8, A_i64, A_i64, tag="int64"),
    _block("block_plain_fixed", A_i32, A_i64, A_i64, i64, i64, A_u8, A_i64, A_i64, tag="int32"),
    _block("block_plain_bool", A_u8, A_i64, A_i64, A_u8, A_i64, A_i64),
    _block("block_copy_bytes", A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64),
    _block("block_plain_byte_array", A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, shared=True),
    _block("block_gather", A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, A_u8, A_i64),
    _block("block_int_minmax", A_i32, A_i64, A_i64, A_i64, A_i64, tag="int32", shared=True),
    _block("block_int_minmax", A_i64, A_i64, A_i64, A_i64, A_i64, tag="int64", shared=True),
    _block("block_int_minmax", A_u8, A_i64, A_i64, A_i64, A_i64, tag="uint8", shared=True),
    _block("block_float_minmax", A_i32, A_i64, A_i64, b1, A_i64, A_i64, tag="int32", shared=True),
    _block("block_float_minmax", A_i64, A_i64, A_i64, b1, A_i64, A_i64, tag="int64", shared=True),
    _block("block_bytes_minmax", A_i64, A_u8, A_i64, A_i64, b1, A_i64, A_i64, A_i64, shared=True),
    _block("block_crc32", A_u8, A_i64, A_i64, A_u32, A_i64, shared=True),
    # block RLE (kernels/encode/rle_cuda.py): uint8 levels, int32 dictionary ids, int64
    *_rle(T.uint8[:], "u8"), *_rle(T.int32[:], "i32"), *_rle(T.int64[:], "i64"),
    # block DELTA (kernels/encode/delta_cuda.py)
    _delta("delta_pages", (A_i64, A_i64, A_i64, b1, A_u8, A_i64, A_i64), "int64"),
    _delta("delta_pages", (A_i32, A_i64, A_i64, b1, A_u8, A_i64, A_i64), "int32"),
    _delta("delta_bytes_pages", (A_i64, A_u8, A_i64, A_i64, A_i64, A_i64, A_u8, A_i64, A_i64), "bytes"),
    # all-columns dictionary, one block per chunk (kernels/dictionary/row_group_cuda.py, launched by
    # gpuwrite/backends/device/dictionary.py): chunks / cols / totals / bases are int64 tables; table slots, per-value arrays and entries int32
    Row("dictionary.row_group_cuda", "dict_insert_block",
        (C2_i64, C2_i64, C_i32, C_i64, C_i64, C_u8, C_i32, C_i32)),
    Row("dictionary.row_group_cuda", "dict_first_block", (C2_i64, C2_i64, C_i64, C_i32, C_i32, C_i32, C2_i64),
        shared=True, barriers=2, shared_atomics=2),
    Row("dictionary.row_group_cuda", "dict_bases_block", (C2_i64, C2_i64, C2_i64), shared=True, barriers=3),
    Row("dictionary.row_group_cuda", "dict_number_block",
        (C2_i64, C2_i64, C_i64, i64, C2_i64, C_i32, C_i32, C_i32, C_i32, C_i64), shared=True, barriers=3),
    Row("dictionary.row_group_cuda", "dict_ids_block", (C2_i64, C2_i64, C_i32, C_i32, C_i32)),
    # per-page bookkeeping (kernels/plan/page_layout_cuda.py, the steps of gpuwrite/backends/device/steps.py): page
    # and column tables int64, CRCs 0..2^32-1 as int64 (the CRC step's output), arenas as in kernels/plan/layout.py
    Row("plan.page_layout_cuda", "pages_info_thread",
        (i64, C_i64, C_i64, C_i64, C_i64, C2_i64, C_i64, C_i32, C_i32, C_i32, C_i64, C2_i64)),
    Row("plan.page_layout_cuda", "stored_choices_thread", (i64, C_i64, C_i64, b1, C2_i64, C_i64, C_i64, C_i64)),
    Row("plan.page_layout_cuda", "pages_extremes_thread",
        (i64, C_i64, C2_i64, C2_i64, C2_i64, C_u8, C_i32, C_i64, C_i64, C2_i64)),
    Row("plan.page_layout_cuda", "page_headers_thread", (i64, C2_i64, C_i64, b1, C_u8, C_i64, C_i64)),
    Row("plan.page_layout_cuda", "dictionary_headers_thread", (i64, C2_i64, C_i64, C_i64, b1, C_u8, C_i64, C_i64)),
    Row("plan.page_layout_cuda", "flush_sizes_thread", (i64, C_i64, C_i64, C_i64, C_i64)),
    Row("plan.planner_cuda", "pack_levels_block", (C2_i64, C2_i64, C_u8, T.uint64[::1])),
    Row("plan.planner_cuda", "replay_marks_thread", (i64, C2_i64, C_u8, T.uint64[::1], T.uint64[::1], C_i64, C_i64,
                                                    C_i64, C_i64, C_i64, C2_i64, C_i64, C_i64, i64, C3_i64)),
    Row("plan.planner_cuda", "page_spans_thread", (i64, C2_i64, C2_i64, C_i64, C2_i64)),
    Row("plan.planner_cuda", "open_spans_thread", (i64, C_i64, C2_i64, i64, C2_i64, C_i64, C2_i64, C2_i64)),
    # plan segments and replay: a block each, a thread per column; shared-memory scans and reductions
    # (kernels/plan/planner_cuda.py)
    Row("plan.planner_cuda", "plan_count_block", (C2_i64, T.uint64[::1], C2_i64, C2_i64, C2_i64)),
    Row("plan.planner_cuda", "plan_walk_block", (i64, C2_i64, C_u8, T.uint64[::1], T.uint64[::1], C_i64, C_i64,
                                                C2_i64, C2_i64, C_i64, C2_i64, C3_i64, T.int64[:, :, :, ::1],
                                                C3_i64, C3_i64, T.int32[:, :, :, ::1], C3_i64, C3_i64, C3_i64),
        shared=True, barriers=3),
    Row("plan.planner_cuda", "plan_emit_block", (C2_i64, C_i64, C2_i64, C3_i64, T.int64[:, :, :, ::1], C3_i64,
                                                C3_i64, T.int32[:, :, :, ::1], C3_i64, C3_i64, C_i64, C_i64,
                                                T.int32[:, ::1], C_i64, C_i64, C_i64)),
    Row("plan.planner_cuda", "replay_block", (C2_i64, C_u8, T.uint64[::1], T.uint64[::1], C_i64, C_i64, C_i64,
                                             C_i64, C_i64, C_i64, T.int32[:, ::1], C_i64, C_i64, C_i64, C2_i64, C_i64,
                                             C3_i64, i64),
        shared=True, barriers=3),
    Row("plan.page_layout_cuda", "dictionary_pages_block",
        (C_i64, C_i64, C2_i64, C_i32, C_i32, C_i32, C_i64, C_i64, C_u8, C_u8, C_i64)),
    Row("plan.page_layout_cuda", "exclusive_scan_block", (C_i64, i64, C_i64), shared=True, barriers=3),
    # window conversion from Arrow buffers (kernels/convert/arenas_cuda.py, launched by gpuwrite/backends/device/convert.py):
    # the tables are C-contiguous 2-D views of one uploaded array; chunk counts and writes scan in shared memory
    Row("convert.arenas_cuda", "count_chunks", (C2_i64, C2_i64, C_u8, C2_i64), shared=True),
    Row("convert.arenas_cuda", "scan_columns_block", (C2_i64, C2_i64, C2_i64, C2_i64, C2_i64, C2_i64, C_i64),
        shared=True, barriers=4),
    Row("convert.arenas_cuda", "write_chunks", (C2_i64, C2_i64, C_u8, C_i64, C2_i64, C2_i64, C2_i64, C2_i64, C_u8, C_i64,
                                         C_u8, C_i32, C_i64, C_u8), shared=True),
    # value checks over the conversion's chunks (kernels/convert/value_checks.py, gpuwrite/backends/device/checks.py)
    Row("convert.value_checks", "check_chunk", (C2_i64, C2_i64, C_u8, C2_i64, C2_i64), per_item=True),
    # Iceberg partition transforms (kernels/hashing/transforms.py), one thread per row
    Row("hashing.bloom_cuda", "bloom_hash_thread", (i64, C2_i64, C_i32, C_i64, C_i64, C_u8, T.uint64[::1])),
    Row("hashing.bloom_cuda", "bloom_insert_thread", (i64, C2_i64, T.uint64[::1], T.uint32[::1])),
    Row("hashing.bloom_cuda", "bloom_first_thread", (i64, C2_i64, T.uint64[::1], C_i32)),
    Row("hashing.bloom_cuda", "bloom_count_thread", (i64, C2_i64, T.uint64[::1], C_i32, C_i64)),
    Row("hashing.transforms", "bucket_long_at", (A_i64, i64, A_i64), per_item=True),
    Row("hashing.transforms", "bucket_bytes_at", (A_i64, A_u8, i64, A_i64), tag="int64 offsets", per_item=True),
    Row("hashing.transforms", "bucket_bytes_at", (A_i32, A_u8, i64, A_i64), tag="int32 offsets", per_item=True),
    Row("hashing.transforms", "truncate_long_at", (A_i64, i64, A_i64), per_item=True),
    Row("hashing.transforms", "temporal_at", (A_i64, i64, i64, A_i64), per_item=True),
]


class _StandInDevice:
    compute_capability = (9, 0)


def enable_offline_compilation() -> None:
    """Let numba.cuda compile device functions with no GPU present (it asks the device for its cc)."""
    import numba.cuda.dispatcher as dispatcher

    dispatcher.get_current_device = lambda: _StandInDevice()  # type: ignore[attr-defined]


def compile_row(row: Row) -> dict[str, Any]:
    """Row `row` compiled to sm_90 PTX: its size and the features the checks read."""
    from gpuwrite.kernels._jit import page_kernel, source
    from numba import cuda

    fn = getattr(importlib.import_module(f"gpuwrite.kernels.{row.module}"), row.kernel)
    args = row.args
    if row.factory:
        fn = fn()
    if row.per_item:
        assert source(fn)  # a @jit kernel: the CPU form exists too
        fn, args = page_kernel(fn), (i64, *args)
    ptx, _ = cuda.compile_ptx(fn.py_func, args, cc=(9, 0))
    return {"label": row.label, "size": len(ptx), "sm_90": ".target sm_90" in ptx, "shared": ".shared" in ptx,
            "barriers": ptx.count("bar.sync"), "shared_atomics": ptx.count("atom.shared"),
            "local": ".local" in ptx}


def compile_all() -> None:
    """Print one JSON line per row of the table; raises on the first kernel numba.cuda cannot compile."""
    enable_offline_compilation()
    for row in KERNELS:
        print(json.dumps(compile_row(row)), flush=True)


def page_kernel_uses() -> set[str]:
    """Names of the @jit functions the GPU backend runs through `_jit.page_kernel`."""
    found = set()
    for path in (ROOT / "gpuwrite").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "page_kernel" and node.args:
                arg = node.args[0]
                found.add(arg.attr if isinstance(arg, ast.Attribute) else ast.unparse(arg))
    return found


def test_the_table_covers_every_cuda_kernel() -> None:
    from kernel_inventory import global_kernels  # not at the top: run as a script, tests/ is not importable

    labels = [row.label for row in KERNELS]
    assert len(labels) == len(set(labels))
    assert global_kernels() - {f"{r.module}.{r.kernel}" for r in KERNELS if not r.per_item} == set()
    assert page_kernel_uses() - {r.kernel for r in KERNELS if r.per_item} == set()
    assert {"dictionary.row_group_cuda.dict_number_block", "plan.page_layout_cuda.exclusive_scan_block"} <= global_kernels()


def test_every_cuda_kernel_compiles_to_sm90_ptx() -> None:
    # A fresh interpreter: the simulator must be off, and the compile patch must not leak into other tests.
    done = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=900,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "NUMBA_ENABLE_CUDASIM": "0"})
    assert done.returncode == 0, done.stderr[-4000:]
    compiled = {c["label"]: c for c in map(json.loads, done.stdout.splitlines())}
    assert list(compiled) == [row.label for row in KERNELS]
    for row in KERNELS:
        got = compiled[row.label]
        assert got["sm_90"] and got["size"] > 1000, got
        assert got["shared"] == row.shared, got
        assert got["barriers"] >= row.barriers and got["shared_atomics"] >= row.shared_atomics, got
        assert row.local_ok or not got["local"], got


if __name__ == "__main__":
    compile_all()
