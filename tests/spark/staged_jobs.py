"""Spark jobs staged as their tasks would leave them, for the job-commit tests (test_commit.py,
test_commit_concurrency.py): tasks simulated by files written with pyarrow, committed by `commit.py`."""

from __future__ import annotations

import multiprocessing
import os
import uuid
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from dataset_tables import snapshot

from gpuwrite.dataset import job_commit as commit

CTX = multiprocessing.get_context("fork")


@dataclass
class Job:
    """A job whose tasks have written and committed their files, ready for the driver's commit."""

    fs: pafs.FileSystem
    paths: commit.JobPaths
    files: list[tuple[int, str]]
    stage: commit.JobStage
    rows: int

    def close(self) -> None:
        commit.cleanup(self.fs, self.paths)
        self.stage.close()


def staged_job(root: str | os.PathLike[str], who: int, parts: tuple[str, ...] = ("k=0", "k=1", "k=2"),
               tasks: int = 2, rows: int = 4) -> Job:
    """Stage a job at `root` as Spark's tasks would: each task writes one file per partition in its attempt
    directory and commits it (column `who` says which job wrote a row)."""
    fs, real = commit.resolve(str(root))
    paths = commit.JobPaths(real, str(uuid.uuid4()))
    stage = commit.JobStage.open(fs, paths)
    files = []
    for task in range(tasks):
        for part in parts:
            rel = f"{part}/part-{task:05d}-{paths.job}.c000.snappy.parquet" if part else \
                f"part-{task:05d}-{paths.job}.c000.snappy.parquet"
            local = os.path.join(paths.attempt_dir(task, 0), rel)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            pq.write_table(pa.table({"who": pa.array([who] * rows, pa.int64()), "v": pa.array(range(rows))}), local)
            files.append((task, rel))
        commit.commit_task(fs, paths, task, 0)
    return Job(fs, paths, files, stage, rows * tasks * len(parts))


def state(root: str | os.PathLike[str]) -> dict[str, bytes | None]:
    """The table byte for byte, without `_temporary`."""
    return {n: b for n, b in snapshot(root).items() if not n.startswith(commit.TEMPORARY)}


def old_table(root: str | os.PathLike[str]) -> dict[str, bytes | None]:
    """Commit a first job (who=1, partitions k=0..2, 24 rows) and return the table's bytes."""
    first = staged_job(root, 1)
    commit.publish_job(first.fs, first.paths, first.files, "error")
    first.close()
    assert sorted(os.listdir(root)) == ["_SUCCESS", "k=0", "k=1", "k=2"]
    return state(root)
