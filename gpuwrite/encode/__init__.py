"""The CPU encode path: pages of one column chunk from LeafData, through the numba kernels."""
