"""Iceberg tables: gpuwrite writes the data files and commits them through pyiceberg (an optional extra).

    import gpuwrite.iceberg
    gpuwrite.iceberg.append(table, data)                        # a pyiceberg Table; CPU or device="gpu"
    gpuwrite.iceberg.overwrite(table, data, overwrite_filter="day = '2024-01-01'")

Keywords are gpuwrite options (e.g. `fallback_encoding="plain"`: no DELTA_* values, for Iceberg readers before
1.11; also the table property `gpuwrite.fallback-encoding`). pyiceberg is imported on first use, so
`import gpuwrite.iceberg` works without it; the core never imports this package. Modules: `profile` (options from table properties), `transforms` and `partitions` (partition
tuples, with gpuwrite's kernels), `files` (rolling data files), `metrics` (manifest metrics from the writer's
results), `commit` (the snapshot).
"""

from __future__ import annotations

from typing import Any

from .profile import IcebergWriteError

__all__ = ["IcebergWriteError", "append", "overwrite"]


def _commit_module() -> Any:
    try:
        from . import commit
    except ModuleNotFoundError as err:
        raise IcebergWriteError(f"gpuwrite.iceberg needs pyiceberg: pip install 'gpuwrite[iceberg]' ({err})") from err
    return commit


def append(table: Any, data: Any, **keywords: Any) -> Any:
    """Append `data` to a pyiceberg `table` in one snapshot (see `commit.append`); returns the DataFiles."""
    return _commit_module().append(table, data, **keywords)


def overwrite(table: Any, data: Any, overwrite_filter: Any = None, **keywords: Any) -> Any:
    """Replace the rows matching `overwrite_filter` (all rows when None) with `data` (see `commit.overwrite`)."""
    module = _commit_module()
    if overwrite_filter is None:
        return module.overwrite(table, data, **keywords)
    return module.overwrite(table, data, overwrite_filter, **keywords)
