"""Concurrent Spark-job commits on one path (issue 12, the job half), with real processes whose commits are
forced to overlap: the result is always one job's complete output, never a mix of two or nothing (the
reproduction against main, with the same forced overlap: 2 of 60 trials left both jobs' rows, or no data
file, beside a `_SUCCESS`). Job commits and write_dataset take the same lock, so they exclude each other too;
of concurrent mode="error" jobs on a new path exactly one wins."""

from __future__ import annotations

import os
import shutil
import time

import pyarrow as pa
import pyarrow.parquet as pq
from staged_jobs import CTX, old_table, staged_job

import gpuwrite
from gpuwrite import GpuwriteError
from gpuwrite.dataset import job_commit as commit
from gpuwrite.dataset import publish

WRITERS, ROUNDS = 4, 3


def _slow_moves() -> None:
    """Widen every commit (a millisecond per rename) so that unlocked commits would interleave."""
    real = publish._move

    def slow(src: str, dst: str) -> None:
        time.sleep(0.001)
        real(src, dst)

    publish._move = slow


def _racer(root: str, mode: str, who: int, barrier, queue) -> None:
    """One driver per round: stage a job (writer `who` writes `who + 1` tasks, so each job's output differs
    in size), wait for all the others, commit. Writer 3 is a write_dataset call instead of a Spark job."""
    _slow_moves()
    for r in range(ROUNDS):
        target = os.path.join(root, f"t{r}")
        try:
            if who == 3 and mode == "overwrite":
                data = pa.table({"k": [0, 1, 2] * 3, "who": pa.array([who] * 9, pa.int64()), "v": pa.array(range(9))})
                barrier.wait(timeout=60)
                result = gpuwrite.write_dataset(data, target, mode=mode, partition_by=["k"])
                files = [os.path.relpath(f.path, target) for f in result.files]
            else:
                job = staged_job(target, who, tasks=who + 1)
                barrier.wait(timeout=60)
                try:
                    moved = commit.publish_job(job.fs, job.paths, job.files, mode)
                finally:
                    job.close()
                files = [os.path.relpath(m, job.paths.root) for m in moved or []]
            queue.put((r, who, "ok", sorted(files)))
        except GpuwriteError as e:
            queue.put((r, who, "error", str(e)))
        except BaseException as e:  # noqa: BLE001 - reported to the parent, which fails the test
            queue.put((r, who, "crash", repr(e)))


def _race(root, mode: str) -> dict[int, list[tuple[int, str, object]]]:
    """Run WRITERS racing driver processes; round -> [(writer, outcome, files or message)]."""
    barrier, queue = CTX.Barrier(WRITERS), CTX.Queue()
    procs = [CTX.Process(target=_racer, args=(str(root), mode, who, barrier, queue)) for who in range(WRITERS)]
    for p in procs:
        p.start()
    results: dict[int, list[tuple[int, str, object]]] = {r: [] for r in range(ROUNDS)}
    for _ in range(WRITERS * ROUNDS):
        r, who, outcome, detail = queue.get(timeout=120)
        results[r].append((who, outcome, detail))
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return results


def _data_files(target) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), target) for d, _, fs in os.walk(target) for f in fs
                  if f != "_SUCCESS")


def test_concurrent_overwrites_leave_one_complete_output(tmp_path):
    """Three Spark-job drivers and one write_dataset overwrite one table at once, three rounds: all succeed
    (they commit one at a time), and the table is exactly the last committer's files and rows, with
    `_SUCCESS`, and nothing left beside or inside it."""
    gpuwrite.write_dataset(pa.table({"k": [0], "v": pa.array([0])}), tmp_path / "warm")  # compile once, here
    for r in range(ROUNDS):
        old_table(tmp_path / f"t{r}")
    shutil.rmtree(tmp_path / "warm")
    results = _race(tmp_path, "overwrite")
    for r, outcomes in results.items():
        assert [o for _, o, _ in outcomes] == ["ok"] * WRITERS, outcomes
        target = tmp_path / f"t{r}"
        owners = [who for who, _, files in outcomes if files == _data_files(target)]
        assert len(owners) == 1, (outcomes, _data_files(target))
        rows = pq.read_table(target, partitioning="hive").column("who").to_pylist()
        assert rows == [owners[0]] * (9 if owners[0] == 3 else 12 * (owners[0] + 1))
        assert sorted(os.listdir(target)) == ["_SUCCESS", "k=0", "k=1", "k=2"]
    assert sorted(os.listdir(tmp_path)) == [f"t{r}" for r in range(ROUNDS)]


def test_concurrent_error_mode_jobs_have_exactly_one_winner(tmp_path):
    """Four mode="error" jobs on a new path (each sees no table when it starts): exactly one commits, the
    others raise "already exists" naming the path, and the table is the winner's files only."""
    results = _race(tmp_path, "error")
    for r, outcomes in results.items():
        winners = [(who, files) for who, outcome, files in outcomes if outcome == "ok"]
        assert len(winners) == 1, outcomes
        losers = [str(detail) for _, outcome, detail in outcomes if outcome != "ok"]
        target = tmp_path / f"t{r}"
        assert len(losers) == WRITERS - 1 and all("already exists" in m and str(target) in m for m in losers)
        who, files = winners[0]
        assert _data_files(target) == files and (target / "_SUCCESS").exists()
        assert set(pq.read_table(target, partitioning="hive").column("who").to_pylist()) == {who}
        assert not (target / commit.TEMPORARY).exists()
    assert sorted(os.listdir(tmp_path)) == [f"t{r}" for r in range(ROUNDS)]
