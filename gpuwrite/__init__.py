"""gpuwrite: Parquet v2 files from columnar data, encoded by numba kernels, read by Spark as its own."""

from __future__ import annotations

__version__ = "0.1.0"

from .api import ParquetWriter, write_table  # noqa: E402
from .dataset.write import DatasetResult, write_dataset  # noqa: E402
from .errors import GpuwriteError, OptionError, SchemaMismatchError, UnsupportedTypeError  # noqa: E402
from .inspection.file import inspect  # noqa: E402
from .integrations.accessors import install as _install_accessors  # noqa: E402
from .options.model import WriteOptions  # noqa: E402
from .pipeline.buffers import release_memory  # noqa: E402
from .result import ChunkSummary, FileResult, FooterSummary, RowGroupSummary  # noqa: E402
from .tools import kernel_cache as _kernel_cache

_install_accessors()
_kernel_cache.install()  # a one-line notice when a process has to compile the kernels (first run only)

__all__ = [
    "ChunkSummary", "DatasetResult", "FileResult", "FooterSummary", "GpuwriteError", "OptionError",
    "ParquetWriter", "RowGroupSummary", "SchemaMismatchError", "UnsupportedTypeError", "WriteOptions", "__version__",
    "inspect", "release_memory", "write_dataset", "write_table",
]
