"""Device code for gpuwrite: arrays in, arrays out, nothing of files or Parquet structs.

Every function here is plain numba-compilable Python. `jit` compiles it for the CPU (cached), and keeps the
pure-Python body at `.py_func`, so the GPU backend can compile the same source with `cuda.jit(device=True)`.
Installed as `gpuwrite.kernels`.
"""
