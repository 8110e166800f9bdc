"""`df.gpuwrite.to_parquet(path, **options)` and `df.gpuwrite.to_dataset(path, **options)` on pandas and cudf
DataFrames, registered explicitly: by `import gpuwrite` for a library already imported, by the next call of a
writer entry point (`write_table`, `ParquetWriter`, `write_dataset`), or by `gpuwrite.register_accessors()`
after importing pandas or cudf later. No import hook: other libraries' loaders are left alone."""

from __future__ import annotations

import os
import sys
from typing import Any

LIBRARIES = ("pandas", "cudf")
_REGISTERED: set[str] = set()  # libraries whose DataFrame has the accessor


class GpuwriteAccessor:
    """The `gpuwrite` namespace on a DataFrame."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    def _data(self) -> Any:
        """What the writers take: pandas as is; cudf columns where they lie, on the device (pylibcudf's Arrow C
        Device export, `device_input.from_cudf`: no copy to the host; the index is not written)."""
        frame = self._frame
        if type(frame).__module__.startswith("cudf"):
            from .integrations.device_input import from_cudf

            return from_cudf(frame)
        return frame

    def to_parquet(self, path: str | os.PathLike[str], **options: Any) -> Any:
        """Write the frame to one Parquet v2 file (`gpuwrite.write_table`); returns its FileResult."""
        from .api import write_table

        return write_table(self._data(), path, **options)

    def to_dataset(self, path: str | os.PathLike[str], **options: Any) -> Any:
        """Write the frame as a Spark-layout table directory (`gpuwrite.write_dataset`)."""
        from .dataset.write import write_dataset

        return write_dataset(self._data(), path, **options)


def register_accessors() -> list[str]:
    """Attach `df.gpuwrite` to pandas' and cudf's DataFrame, for those of them already imported (pandas'
    `register_dataframe_accessor`, cudf's own); returns the libraries that have it now. Safe to call again."""
    for name in LIBRARIES:
        module = sys.modules.get(name)
        if name in _REGISTERED or module is None:
            continue
        extensions = getattr(getattr(module, "api", None), "extensions", None)
        if extensions is None:  # the library is still importing (gpuwrite imported from inside it): next time
            continue
        extensions.register_dataframe_accessor("gpuwrite")(GpuwriteAccessor)
        _REGISTERED.add(name)
    return [name for name in LIBRARIES if name in _REGISTERED]


def register_if_imported() -> None:
    """`register_accessors` when pandas or cudf is imported and not yet registered: two dictionary look-ups
    otherwise, cheap enough for every call of a writer entry point."""
    if any(name in sys.modules and name not in _REGISTERED for name in LIBRARIES):
        register_accessors()
