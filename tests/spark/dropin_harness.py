"""Helpers for the drop-in tests: run the same writer calls with gpuwrite enabled and disabled in one session,
record the footers of the files gpuwrite commits, and compare directory layouts as Spark names them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

import gpuwrite.spark as gws
from gpuwrite.dataset import job_commit as commit
from gpuwrite.spark import dropin

_JOB = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Footers:
    """The `created_by` of every file gpuwrite committed, read from the file right after its job's commit."""

    def __init__(self) -> None:
        self.created_by: list[str] = []

    def spy(self, original: Callable[..., list[str]]) -> Callable[..., list[str]]:
        def commit_job(fs: Any, paths: Any, files: Any, overwrite: bool, dynamic: bool = False) -> list[str]:
            moved = original(fs, paths, files, overwrite, dynamic)
            for path in moved:
                with fs.open_input_file(path) as f:
                    self.created_by.append(pq.ParquetFile(f).metadata.created_by)
            return moved
        return commit_job

    def all_gpuwrite(self) -> bool:
        """Some file was committed, and gpuwrite wrote each."""
        return bool(self.created_by) and all(c.startswith("gpuwrite") for c in self.created_by)


@contextmanager
def gpuwrite_on(spark: Any, footers: Footers) -> Iterator[None]:
    """gpuwrite enabled for `spark` (footers recorded, fallbacks counted afresh) for the block."""
    original = commit.commit_job
    commit.commit_job = footers.spy(original)  # type: ignore[assignment]
    dropin.clear_fallbacks()
    gws.enable(spark)
    try:
        yield
    finally:
        gws.disable(spark)
        commit.commit_job = original  # type: ignore[assignment]


def both(spark: Any, scenario: Callable[[str], Any]) -> tuple[Any, Any, Footers]:
    """(Spark's result, gpuwrite's result, gpuwrite's footers) of `scenario(tag)` run disabled then enabled."""
    assert not dropin.is_enabled(spark)
    theirs = scenario("spark")
    footers = Footers()
    with gpuwrite_on(spark, footers):
        ours = scenario("gpuwrite")
    return theirs, ours, footers


def layout(root: Path) -> list[str]:
    """The files under a table directory as Spark names them, the job id masked, checksum files left out."""
    return sorted(_JOB.sub("JOB", str(p.relative_to(root))) for p in root.rglob("*")
                  if p.is_file() and not p.name.endswith(".crc"))


def data_files(root: Path) -> list[Path]:
    """The Parquet data files under a directory."""
    return sorted(p for p in root.rglob("*.parquet") if not p.name.startswith("."))
