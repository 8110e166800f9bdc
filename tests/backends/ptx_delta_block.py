"""Compile the block-per-page DELTA encoders (`kernels/delta_block.py`) to sm_90 PTX without a GPU.

Run as a script (a fresh interpreter, simulator off): prints one line per kernel and signature with its PTX
size and how many block barriers and shared-memory atomics the PTX holds.
"""

from __future__ import annotations

from typing import Any

from ptx import A_i32, A_i64, A_u8, b1, enable_offline_compilation

# (kernel, argument types), one entry per type combination a backend would launch
BLOCK_SIGNATURES: list[tuple[str, str, list[Any]]] = [
    ("delta_pages", "int64", [A_i64, A_i64, A_i64, b1, A_u8, A_i64, A_i64]),
    ("delta_pages", "int32", [A_i32, A_i64, A_i64, b1, A_u8, A_i64, A_i64]),
    ("delta_bytes_pages", "bytes", [A_i64, A_u8, A_i64, A_i64, A_i64, A_i64, A_u8, A_i64, A_i64]),
]


def compile_block_kernels() -> dict[str, tuple[int, int, int]]:
    """name/variant -> (PTX size, bar.sync count, shared atomics count); raises if a kernel does not compile."""
    enable_offline_compilation()
    from gpuwrite.kernels import delta_block
    from numba import cuda

    found = {}
    for name, variant, args in BLOCK_SIGNATURES:
        ptx, _ = cuda.compile_ptx(getattr(delta_block, name).py_func, tuple(args), cc=(9, 0))
        assert ".target sm_90" in ptx
        found[f"{name}/{variant}"] = (len(ptx), ptx.count("bar.sync"), ptx.count("atom.shared"))
    return found


if __name__ == "__main__":
    for key, (size, syncs, atomics) in compile_block_kernels().items():
        print(f"{key:24s} {size:8d} bytes of PTX {syncs} barriers {atomics} shared atomics")
