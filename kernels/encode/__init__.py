"""Page encoders: PLAIN, RLE / bit-packed hybrid, DELTA_BINARY_PACKED, DELTA_BYTE_ARRAY, statistics and CRCs.
`X.py` holds the sequential kernels (one source for CPU and CUDA) and the CPU twins of `X_cuda.py`, the
block-per-page CUDA kernels."""
