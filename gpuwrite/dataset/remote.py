"""`write_dataset` on a filesystem other than the local disk (a URI or a given pyarrow / fsspec filesystem).

The files are written (`write_task`, each through the filesystem's sink: `assemble.store_sink`) under the
table's `_temporary/<job>/task_00000/` (hidden from Spark and pyarrow readers, as a Spark job stages its
tasks), then published by the journal a Spark job commit runs (`commit.publish_job`): the save mode checked
again, old entries moved aside (overwrite), new files moved in, `_SUCCESS` last, the staging area deleted only
once the commit is marked done. What each store allows: on HDFS and fsspec's memory filesystem a move is one
rename; on object stores (S3, GCS, Azure) each file's move is a copy then a delete, so readers can see the
table change file by file during the commit (never a partial file), and a killed commit leaves its journal
under `_temporary` for `gpuwrite clean`. There is no lock on these filesystems (as with Spark's own writer),
so two concurrent writes to one remote path are not kept apart.
"""

from __future__ import annotations

import posixpath
import uuid
from collections.abc import Callable
from typing import Any

import pyarrow.fs as pafs

from ..filesystems import resolve
from ..integrations.arrow import open_input
from ..result import FileResult
from ..spark.policy.modes import check_mode, should_write
from . import job_commit as commit
from .target import DatasetPathError
from .write import DatasetResult, write_task
from .writers import FileLayout


def write_remote(data: Any, path: str, filesystem: Any, mode: str,
                 layout_for: Callable[[str, pafs.FileSystem], FileLayout]) -> DatasetResult:
    """Write `data` as a table at `path` (on `filesystem`, or a URI) in `mode`; `layout_for(job, fs)` gives
    the files' layout (names carry the job id; directories and files on `fs`)."""
    check_mode(mode)
    fs, root = resolve(path, filesystem)
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.File:
        raise DatasetPathError(f"cannot write a dataset at {path!r}: it is a file")
    if not should_write(path, mode, commit.holds_table(fs, root)):
        return DatasetResult(path, "", [])
    schema, pieces = open_input(data)
    job = str(uuid.uuid4())
    paths = commit.JobPaths(root, job)
    existed = info.type != pafs.FileType.NotFound
    staged = paths.task_dir(0)
    try:
        files = write_task(schema, pieces, staged, layout_for(job, fs))
        rels = [posixpath.relpath(f.path, staged) for f in files]
        moved = commit.publish_job(fs, paths, [(0, rel) for rel in rels], mode)
    finally:
        commit.cleanup(fs, paths)  # nothing left after a commit; an interrupted commit's old files are kept
        if not existed:
            commit.remove_if_empty(fs, root)
    if moved is None:  # mode ignore, and another write made the table meanwhile
        return DatasetResult(path, "", [])
    shown = path.rstrip("/")
    return DatasetResult(path, job, [FileResult(f"{shown}/{rel}", f.num_rows, f.size, f.summary, f.metadata)
                              for f, rel in zip(files, rels, strict=True)])
