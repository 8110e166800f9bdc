"""Compile the block-per-page RLE kernels (kernels/rle_block.py) to sm_90 PTX with no GPU present, for each
value type the backend launches them with (uint8 levels, int32 dictionary ids)."""

from __future__ import annotations

from typing import Any

from numba import types as T
from ptx import enable_offline_compilation

A_i64, A_u8, b1 = T.int64[:], T.uint8[:], T.boolean
VALUE_TYPES = {"u8": T.uint8[:], "i32": T.int32[:], "i64": T.int64[:]}


def signatures(values: Any) -> dict[str, tuple[Any, ...]]:
    """Argument types of each kernel for one value array type."""
    return {"rle_sizes_block": (values, A_i64, A_i64, A_i64, b1, A_i64),
            "rle_encode_block": (values, A_i64, A_i64, A_i64, b1, A_u8, A_i64, A_i64)}


def compile_all() -> dict[str, int]:
    """PTX size per kernel and value type; raises on the first one numba.cuda cannot compile."""
    from gpuwrite.kernels import rle_block
    from numba import cuda

    enable_offline_compilation()
    sizes = {}
    for tag, values in VALUE_TYPES.items():
        for name, args in signatures(values).items():
            ptx, _ = cuda.compile_ptx(getattr(rle_block, name).py_func, args, cc=(9, 0))
            assert ".shared" in ptx and "bar.sync" in ptx, name  # block scans in shared memory
            sizes[f"{name}[{tag}]"] = len(ptx)
    return sizes


if __name__ == "__main__":
    for k, v in compile_all().items():
        print(f"{k:28s} {v:8d} bytes of PTX")
