"""Compile the block-per-page kernels (kernels/pages_block.py) to sm_90 PTX with no GPU, as ptx.py does for
the one-thread-per-page kernels; prints one line per kernel and argument types."""

from __future__ import annotations

from typing import Any

from ptx import A_i32, A_i64, A_u8, A_u32, b1, enable_offline_compilation, i64

# (kernel, argument types), one entry per type combination a backend would launch
BLOCK_SIGNATURES: list[tuple[str, list[Any]]] = [
    ("block_plain_fixed", [A_i64, A_i64, A_i64, i64, i64, A_u8, A_i64, A_i64]),
    ("block_plain_fixed", [A_i32, A_i64, A_i64, i64, i64, A_u8, A_i64, A_i64]),
    ("block_plain_bool", [A_u8, A_i64, A_i64, A_u8, A_i64, A_i64]),
    ("block_copy_bytes", [A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64]),
    ("block_plain_byte_array", [A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64]),
    ("block_gather", [A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, A_u8, A_i64]),
    ("block_int_minmax", [A_i32, A_i64, A_i64, A_i64, A_i64]),
    ("block_int_minmax", [A_i64, A_i64, A_i64, A_i64, A_i64]),
    ("block_int_minmax", [A_u8, A_i64, A_i64, A_i64, A_i64]),
    ("block_float_minmax", [A_i32, A_i64, A_i64, b1, A_i64, A_i64]),
    ("block_float_minmax", [A_i64, A_i64, A_i64, b1, A_i64, A_i64]),
    ("block_bytes_minmax", [A_i64, A_u8, A_i64, A_i64, b1, A_i64, A_i64, A_i64]),
    ("block_crc32", [A_u8, A_i64, A_i64, A_u32, A_i64]),
]


def compile_all() -> list[tuple[str, int, bool]]:
    """(kernel, PTX size, whether it uses shared memory) per signature; raises on the first failure."""
    from gpuwrite.kernels import pages_block
    from numba import cuda

    enable_offline_compilation()
    done = []
    for name, args in BLOCK_SIGNATURES:
        ptx, _ = cuda.compile_ptx(getattr(pages_block, name).py_func, tuple(args), cc=(9, 0))
        done.append((name, len(ptx), ".shared" in ptx))
    return done


if __name__ == "__main__":
    for name, size, shared in compile_all():
        print(f"{name:24s} {size:8d} bytes of PTX shared={int(shared)}")
