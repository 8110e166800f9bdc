"""gpuwrite: Parquet v2 files from columnar data, encoded by numba kernels, read by Spark as its own.

The public names are imported on first use (PEP 562), so `import gpuwrite` loads neither numba, pyarrow's
writers, Spark's layer nor pandas; `gpuwrite.write_table` and the others resolve to the real objects.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # the real objects, for type checkers and IDEs
    from .accessors import register_accessors
    from .api import ParquetWriter, release_memory, write_table
    from .dataset.write import DatasetResult, write_dataset
    from .errors import GpuwriteError, OptionError, SchemaMismatchError, UnsupportedTypeError
    from .inspection.file import inspect
    from .options.model import WriteOptions
    from .result import ChunkSummary, FileResult, FooterSummary, RowGroupSummary

# public name -> the module that defines it (absolute, imported on first access)
_EXPORTS: dict[str, str] = {
    "ParquetWriter": "gpuwrite.api",
    "write_table": "gpuwrite.api",
    "release_memory": "gpuwrite.api",
    "GpuwriteError": "gpuwrite.errors",
    "OptionError": "gpuwrite.errors",
    "SchemaMismatchError": "gpuwrite.errors",
    "UnsupportedTypeError": "gpuwrite.errors",
    "inspect": "gpuwrite.inspection.file",
    "register_accessors": "gpuwrite.accessors",
    "WriteOptions": "gpuwrite.options.model",
    "ChunkSummary": "gpuwrite.result",
    "FileResult": "gpuwrite.result",
    "FooterSummary": "gpuwrite.result",
    "RowGroupSummary": "gpuwrite.result",
    "DatasetResult": "gpuwrite.dataset.write",
    "write_dataset": "gpuwrite.dataset.write",
}

__all__ = [
    "ChunkSummary", "DatasetResult", "FileResult", "FooterSummary", "GpuwriteError", "OptionError",
    "ParquetWriter", "RowGroupSummary", "SchemaMismatchError", "UnsupportedTypeError", "WriteOptions", "__version__",
    "inspect", "register_accessors", "release_memory", "write_dataset", "write_table",
]


# subpackages a user reaches as attributes (`gpuwrite.spark.enable(spark)` after a bare `import gpuwrite`)
_SUBPACKAGES = ("dataset", "iceberg", "inspection", "integrations", "options", "spark", "tools")


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access and keep the object here (later accesses are plain); a
    subpackage by its name is imported the same way."""
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's own names and every public name, imported or not."""
    return sorted({*globals(), *__all__})


if "pandas" in sys.modules or "cudf" in sys.modules:  # `df.gpuwrite` now for a library already imported
    from .accessors import register_accessors as _register_accessors

    _register_accessors()
