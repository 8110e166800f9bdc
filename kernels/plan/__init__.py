"""Where pages and row groups end (the compiled planner and row-group replay), the level meters they read, and
the device pipeline's page bookkeeping. `X.py` holds the sequential kernels and CPU twins, `X_cuda.py` the
CUDA forms."""
