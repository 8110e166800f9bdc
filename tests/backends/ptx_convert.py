"""Compile the window conversion kernels (kernels/convert_cuda.py) to sm_90 PTX with no GPU, as ptx.py does;
prints one line per kernel."""

from __future__ import annotations

from typing import Any

from numba import types as T
from ptx import enable_offline_compilation

i64 = T.int64
M_i64 = T.int64[:, ::1]  # the tables: C-contiguous 2-D views of one uploaded array
V_u8, V_i32, V_i64 = T.uint8[::1], T.int32[::1], T.int64[::1]

# (kernel, argument types) as convert.build_window launches them
CONVERT_SIGNATURES: list[tuple[str, list[Any]]] = [
    ("count_chunks", [M_i64, M_i64, V_u8, M_i64]),
    ("scan_columns", [i64, M_i64, M_i64, M_i64, M_i64, M_i64, M_i64, V_i64]),
    ("write_chunks", [M_i64, M_i64, V_u8, V_i64, M_i64, M_i64, M_i64, M_i64, V_u8, V_i64, V_u8, V_i32, V_i64,
                      V_u8]),
]


def compile_all() -> list[tuple[str, int, bool]]:
    """(kernel, PTX size, whether it uses shared memory) per signature; raises on the first failure."""
    from gpuwrite.kernels import convert_cuda
    from numba import cuda

    enable_offline_compilation()
    done = []
    for name, args in CONVERT_SIGNATURES:
        kernel = getattr(convert_cuda, name)
        if name == "scan_columns":
            kernel = kernel()
        ptx, _ = cuda.compile_ptx(kernel.py_func, tuple(args), cc=(9, 0))
        done.append((name, len(ptx), ".shared" in ptx))
    return done


if __name__ == "__main__":
    for name, size, shared in compile_all():
        print(f"{name:24s} {size:8d} bytes of PTX shared={int(shared)}")
