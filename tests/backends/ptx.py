"""Compile every CUDA kernel of the GPU backend to PTX for a real GPU (sm_90), without needing one.

numba.cuda asks the current device for its compute capability when it compiles a device function; a stand-in
device answers, so NVVM (shipped with numba-cuda[cu12]) compiles the same code a GPU would run.
"""

from __future__ import annotations

from typing import Any

from numba import types as T

i64, b1 = T.int64, T.boolean
A_u8, A_i64, A_i32, A_u64, A_u32 = T.uint8[:], T.int64[:], T.int32[:], T.uint64[:], T.uint32[:]

# (kernel, argument types after the page index), one entry per type combination the backend launches
PAGE_SIGNATURES: list[tuple[str, list[Any]]] = [
    ("page_levels", [A_u8, A_i64, A_i64, i64, A_u8, A_i64, A_i64]),
    ("page_dict_ids", [A_i32, A_i64, A_i64, A_i64, A_u8, A_i64, A_i64]),
    ("page_delta", [A_i64, A_i64, A_i64, b1, A_u8, A_i64, A_i64]),
    ("page_delta_bytes", [A_i64, A_u8, A_i64, A_i64, A_i64, A_i64, A_u8, A_i64, A_i64]),
    ("page_plain_fixed", [A_i64, A_i64, A_i64, i64, i64, A_u8, A_i64, A_i64]),
    ("page_plain_bool", [A_u8, A_i64, A_i64, A_u8, A_i64, A_i64]),
    ("page_copy_bytes", [A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64]),
    ("page_int_minmax", [A_i32, A_i64, A_i64, A_i64, A_i64]),
    ("page_float_minmax", [A_i64, A_i64, A_i64, b1, A_i64, A_i64]),
    ("page_bytes_minmax", [A_i64, A_u8, A_i64, A_i64, b1, A_i64, A_i64, A_i64]),
    ("page_gather", [A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, A_u8, A_i64, A_i64, A_u8, A_i64]),
    ("page_crc32", [A_u8, A_i64, A_i64, A_u32, A_i64]),
    ("page_delta", [A_i32, A_i64, A_i64, b1, A_u8, A_i64, A_i64]),
    ("page_plain_fixed", [A_i32, A_i64, A_i64, i64, i64, A_u8, A_i64, A_i64]),
    ("page_int_minmax", [A_i64, A_i64, A_i64, A_i64, A_i64]),
    ("page_int_minmax", [A_u8, A_i64, A_i64, A_i64, A_i64]),
    ("page_float_minmax", [A_i32, A_i64, A_i64, b1, A_i64, A_i64]),
    ("page_float_nans", [A_i32, A_i64, A_i64, b1, A_i64, A_i64]),
    ("page_float_nans", [A_i64, A_i64, A_i64, b1, A_i64, A_i64]),
]
# Dremel level steps (kernels/levels.py), one thread per slot through the same wrapper.
LEVEL_SIGNATURES: list[tuple[str, list[Any]]] = [
    ("slot_optional", [A_i64, A_u8, A_u8, b1, A_i64]),
    ("slot_count", [A_i64, A_i64, A_i64]),
    ("slot_expand", [A_i64, A_u8, A_u8, A_i64, A_i64, i64, A_i64, A_u8, A_u8]),
]

# Iceberg partition transforms (kernels/transforms.py), one thread per row through the same wrapper.
ROW_SIGNATURES: list[tuple[str, list[Any]]] = [
    ("bucket_long_at", [A_i64, i64, A_i64]),
    ("bucket_bytes_at", [A_i64, A_u8, i64, A_i64]),
    ("bucket_bytes_at", [A_i32, A_u8, i64, A_i64]),
    ("truncate_long_at", [A_i64, i64, A_i64]),
    ("temporal_at", [A_i64, i64, i64, A_i64]),
]

DICTIONARY_SIGNATURES: dict[str, list[Any]] = {
    "insert_fixed": [A_i64, i64, i64, A_i64, i64, A_i64],
    "hash_values": [A_i64, A_u8, i64, i64, A_u64],
    "insert_bytes": [A_i64, A_u8, A_u64, i64, i64, A_i64, A_i64],
    "first_of": [A_i64, A_i64, i64, i64, A_i64],
}


class _StandInDevice:
    compute_capability = (9, 0)


def enable_offline_compilation() -> None:
    """Let numba.cuda compile device functions with no GPU present (it asks the device for its cc)."""
    import numba.cuda.dispatcher as dispatcher

    dispatcher.get_current_device = lambda: _StandInDevice()  # type: ignore[attr-defined]


def compile_all() -> dict[str, int]:
    """PTX size per kernel; raises on the first kernel numba.cuda cannot compile."""
    from gpuwrite.kernels import dictionary_cuda, levels, pages, transforms
    from gpuwrite.kernels._jit import page_kernel, source
    from numba import cuda

    enable_offline_compilation()
    sizes = {}
    for name, args in PAGE_SIGNATURES:
        kernel = page_kernel(getattr(pages, name))
        ptx, _ = cuda.compile_ptx(kernel.py_func, (i64, *args), cc=(9, 0))
        sizes[name] = min(sizes.get(name, len(ptx)), len(ptx))
        assert source(getattr(pages, name))  # a @jit kernel: the CPU form exists too
    for name, args in LEVEL_SIGNATURES:
        ptx, _ = cuda.compile_ptx(page_kernel(getattr(levels, name)).py_func, (i64, *args), cc=(9, 0))
        sizes[name] = len(ptx)
    for name, args in ROW_SIGNATURES:
        ptx, _ = cuda.compile_ptx(page_kernel(getattr(transforms, name)).py_func, (i64, *args), cc=(9, 0))
        sizes[name] = min(sizes.get(name, len(ptx)), len(ptx))
    for name, args in DICTIONARY_SIGNATURES.items():
        ptx, _ = cuda.compile_ptx(getattr(dictionary_cuda, name).py_func, tuple(args), cc=(9, 0))
        sizes[name] = len(ptx)
    return sizes


if __name__ == "__main__":
    for k, v in compile_all().items():
        print(f"{k:20s} {v:8d} bytes of PTX")
