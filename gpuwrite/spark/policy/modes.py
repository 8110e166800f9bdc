"""Spark's save modes (DataFrameWriter.mode) and what each does when the target already holds a table."""

from __future__ import annotations

from ...errors import GpuwriteError

MODES = ("error", "errorifexists", "overwrite", "append", "ignore")
ERROR_MODES = ("error", "errorifexists")  # SPEC: SaveMode.ErrorIfExists (the default)


def check_mode(mode: str) -> None:
    """Refuse a mode Spark does not know."""
    if mode not in MODES:
        raise GpuwriteError(f"mode={mode!r} is not one of {', '.join(MODES)}")


def should_write(path: str, mode: str, occupied: bool) -> bool:
    """Whether to write at `path`, which holds a table when `occupied`: error modes raise, ignore skips."""
    if occupied and mode in ERROR_MODES:
        raise GpuwriteError(f"path {path!r} already exists (mode='error'); use mode='overwrite' or 'append'")
    return not (occupied and mode == "ignore")
