"""`df.gpuwrite.to_parquet(path, **options)` and `df.gpuwrite.to_dataset(path, **options)` on pandas and cudf
DataFrames, registered when gpuwrite is imported (or, for a library imported later, as soon as it is)."""

from __future__ import annotations

import importlib.abc
import os
import sys
from typing import Any

_REGISTERED: set[str] = set()


class GpuwriteAccessor:
    """The `gpuwrite` namespace on a DataFrame."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    def _data(self) -> Any:
        """What the writers take: pandas as is; cudf columns where they lie, on the device (pylibcudf's Arrow C
        Device export, `device_input.from_cudf`: no copy to the host; the index is not written)."""
        frame = self._frame
        if type(frame).__module__.startswith("cudf"):
            from .device_input import from_cudf

            return from_cudf(frame)
        return frame

    def to_parquet(self, path: str | os.PathLike[str], **options: Any) -> Any:
        """Write the frame to one Parquet v2 file (`gpuwrite.write_table`); returns its FileResult."""
        from ..api import write_table

        return write_table(self._data(), path, **options)

    def to_dataset(self, path: str | os.PathLike[str], **options: Any) -> Any:
        """Write the frame as a Spark-layout table directory (`gpuwrite.write_dataset`)."""
        from ..dataset.write import write_dataset

        return write_dataset(self._data(), path, **options)


def _register(module_name: str) -> None:
    """Attach the accessor to `module_name`'s DataFrame (pandas or cudf), once."""
    if module_name in _REGISTERED:
        return
    module = sys.modules[module_name]
    _REGISTERED.add(module_name)
    module.api.extensions.register_dataframe_accessor("gpuwrite")(GpuwriteAccessor)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Registers the accessor right after pandas or cudf is imported, so importing gpuwrite stays cheap."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in ("pandas", "cudf") or fullname in _REGISTERED:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = finder.find_spec(fullname, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None and spec.loader is not None:
                loader = spec.loader
                original = loader.exec_module

                def exec_module(module: Any, _original: Any = original, _name: str = fullname) -> None:
                    _original(module)
                    _register(_name)

                loader.exec_module = exec_module  # type: ignore[method-assign]
                return spec
        return None


def install() -> None:
    """Register now for libraries already imported, and on import for the others."""
    for name in ("pandas", "cudf"):
        if name in sys.modules:
            _register(name)
    if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())
