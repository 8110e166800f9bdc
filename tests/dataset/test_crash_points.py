"""A commit killed at any step, under any directory-listing order, loses nothing (issue 33, item 1).

Each run forks a child that writes (write_dataset overwrite / append, or a Spark job commit through the
job_commit functions, without a Spark session) with the file-system primitives wrapped: os.unlink / remove /
rmdir / mkdir / rename / replace / fsync and every file opened for writing (the journal, the marks) count as
steps, and the child calls os._exit at its k-th step (as a SIGKILL: no `finally`, no cleanup runs). os.listdir
and os.scandir (which shutil.rmtree and os.walk read) return the entries sorted, reverse-sorted or in one of six
hash orders (as ext4 lists a directory by hashes of its names).
After each kill the parent recovers the directory twice, from two copies of it: with the next write
(mode="ignore") and with `gpuwrite clean --force`; then `gpuwrite clean --force --older-than 0` (everything
counts as abandoned) must change nothing more. The table must be exactly the old one or exactly the new one
(byte for byte: the job id is fixed), and nothing may be left beside it. Killed recoveries are tried too: a
recovery (the next write, `gpuwrite clean`) killed at each of its steps, then recovered again. (The Iceberg
write has no staging directory or commit of its own: its data files are written in place, one catalog
transaction commits them, and a failure removes them; it has no crash points here.)
"""

from __future__ import annotations

import builtins
import hashlib
import os
import shutil
import sys
import traceback
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from dataset_tables import new_table, old_table, snapshot

import gpuwrite
from gpuwrite.dataset import job_commit, write
from gpuwrite.tools.cli import main

KILLED = 86  # the exit status of a child killed at its k-th step
JOB = uuid.UUID("0123abcd-4567-89ab-cdef-0123456789ab")  # every write's job id, so that files are comparable
ORDERS = ("sorted", "reverse", *(f"hash-{i}" for i in range(1, 7)))
STEPS = ("unlink", "remove", "rmdir", "mkdir", "rename", "replace", "fsync")


class Listing:
    """What os.scandir returns (an iterator and a context manager), over entries in a chosen order."""

    def __init__(self, entries: list[Any]) -> None:
        self._it = iter(entries)

    def __iter__(self) -> Iterator[Any]:
        return self._it

    def __next__(self) -> Any:
        return next(self._it)

    def __enter__(self) -> Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def close(self) -> None:
        pass


def reorder(items: list[Any], order: str, key: Callable[[Any], str]) -> list[Any]:
    """`items` sorted, reverse-sorted, or in a hash order: by a hash of the name seeded by the order's name, as
    ext4 lists a directory by its names' hashes under a per-filesystem seed."""
    if order == "sorted":
        return sorted(items, key=key)
    if order == "reverse":
        return sorted(items, key=key, reverse=True)
    return sorted(items, key=lambda item: hashlib.blake2b(f"{order}/{key(item)}".encode()).digest())


@contextmanager
def listing_order(order: str) -> Iterator[None]:
    """os.listdir and os.scandir return entries in `order` (the parent's recoveries run under it too)."""
    real_listdir, real_scandir = os.listdir, os.scandir

    def listdir(*args: Any, **kwargs: Any) -> list[Any]:
        return reorder(real_listdir(*args, **kwargs), order, str)

    def scandir(*args: Any, **kwargs: Any) -> Listing:
        with real_scandir(*args, **kwargs) as it:
            return Listing(reorder(list(it), order, lambda e: str(e.name)))

    os.listdir, os.scandir = listdir, scandir  # type: ignore[assignment]
    try:
        yield
    finally:
        os.listdir, os.scandir = real_listdir, real_scandir


class Killer:
    """In a forked child: every file-system step once armed is counted, and the k-th never happens (os._exit)."""

    def __init__(self, k: int) -> None:
        self.k, self.n, self.armed = k, 0, False

    def step(self) -> None:
        if self.armed:
            self.n += 1
            if self.n == self.k:
                os._exit(KILLED)

    def install(self) -> None:
        """Wrap the primitives (module attributes: shutil and gpuwrite look them up at each call)."""
        for name in STEPS:
            real = getattr(os, name)
            setattr(os, name, self._counted(real))
        real_open = builtins.open

        def opened(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if any(c in mode for c in "wax+"):
                self.step()
            return real_open(file, mode, *args, **kwargs)

        builtins.open = opened  # type: ignore[assignment]
        uuid.uuid4 = lambda: JOB  # type: ignore[assignment]  # the child's job id: files comparable by bytes

    def _counted(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.step()
            return real(*args, **kwargs)
        return counted


def in_child(k: int, order: str, job: Callable[[Killer], None]) -> bool:
    """Run `job` in a forked child killed at its k-th armed step; True when it was killed, False when it ran
    to the end."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            killer = Killer(k)
            killer.install()
            with listing_order(order):
                job(killer)
            code = 0
        except BaseException:  # noqa: BLE001 - the parent sees the status and fails
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, KILLED), f"the child failed (status {code}) at step {k} under {order}"
    return code == KILLED


def armed_after(module: Any, name: str, killer: Killer) -> None:
    """Arm `killer` once `module.name` returns (the files are written: the commit starts)."""
    real = getattr(module, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        killer.armed = True
        return out

    setattr(module, name, wrapped)


# -- the writes ------------------------------------------------------------------------------------------------


def dataset_write(mode: str) -> Callable[[Path, Killer], None]:
    """write_dataset of `new_table` in `mode`, armed once the staged files are written."""
    def run(work: Path, killer: Killer) -> None:
        armed_after(write, "write_task", killer)
        gpuwrite.write_dataset(new_table(), work / "t", mode=mode, partition_by=["p"])
    return run


def staged_files(work: Path) -> list[tuple[int, str]]:
    """A Spark job's committed task: the files of `new_table`, partitions b and d, in `task_00000`."""
    paths = job_commit.JobPaths(str(work / "t"), str(JOB))
    files = []
    for part, rows in (("p=b", [100, 102, 104]), ("p=d", [101, 103, 105])):
        rel = f"{part}/part-00000-{JOB}.c000.snappy.parquet"
        local = os.path.join(paths.task_dir(0), rel)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        pq.write_table(pa.table({"v": pa.array(rows, pa.int64())}), local)
        files.append((0, rel))
    with open(os.path.join(paths.task_dir(0), job_commit.ATTEMPT_MARKER), "wb") as f:
        f.write(b"0")
    return files


def job_write(mode: str, dynamic: bool = False) -> Callable[[Path, Killer], None]:
    """A Spark job's driver, as `spark.job.run_job` runs it: open the job's directory, (tasks write), commit
    (`publish_job`, armed from here), then clean up in `finally`."""
    def run(work: Path, killer: Killer) -> None:
        fs = pafs.LocalFileSystem()
        paths = job_commit.JobPaths(str(work / "t"), str(JOB))
        stage = job_commit.JobStage.open(fs, paths)
        files = staged_files(work)
        killer.armed = True
        try:
            job_commit.publish_job(fs, paths, files, mode, dynamic)
        finally:
            try:
                job_commit.cleanup(fs, paths)
            finally:
                stage.close()
    return run


WRITES: dict[str, Callable[[Path, Killer], None]] = {
    "overwrite": dataset_write("overwrite"),
    "append": dataset_write("append"),
    "job overwrite": job_write("overwrite"),
    "job append": job_write("append"),
    "job dynamic": job_write("overwrite", dynamic=True),
}


# -- recoveries ------------------------------------------------------------------------------------------------


def next_write(work: Path) -> None:
    """The next write to the table: mode ignore writes nothing, but cleans what dead jobs left first."""
    gpuwrite.write_dataset(new_table(), work / "t", mode="ignore", partition_by=["p"])


def clean(work: Path, *more: str) -> None:
    """`gpuwrite clean PATH --force`."""
    assert main(["clean", str(work / "t"), "--force", *more]) == 0


RECOVERIES: dict[str, Callable[[Path], None]] = {"next write": next_write, "clean": clean}


def table(work: Path) -> dict[str, bytes | None]:
    """The table directory byte for byte."""
    return snapshot(work / "t")


def verdict(work: Path, old: dict[str, bytes | None], new: dict[str, bytes | None]) -> str:
    """'old', 'new', or what else the table is: after a recovery, and again after `gpuwrite clean` of
    everything (no leftover may still change the table later), with nothing left beside the table."""
    now = table(work)
    clean(work, "--older-than", "0")
    if table(work) != now:
        return "changed by a later clean"
    if sorted(os.listdir(work)) != ["t"]:
        return f"leftovers {sorted(os.listdir(work))}"
    if now.get(job_commit.TEMPORARY, b"") is None and len(now) - 1 in (len(old), len(new)):
        return "an empty _temporary left"
    return "old" if now == old else "new" if now == new else "neither"


def copy(src: Path, dst: Path) -> Path:
    """A copy of a run's directory (links as links), to recover or kill again."""
    shutil.copytree(src, dst, symlinks=True)
    return dst


def reference(base: Path, tmp: Path, name: str) -> dict[str, bytes | None]:
    """The table after `name` runs uninterrupted (in a child, with the fixed job id)."""
    work = copy(base, tmp / f"ref-{name}")
    assert not in_child(10**9, "sorted", lambda killer: WRITES[name](work, killer))
    return table(work)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The old table (partitions a, b, c and `_SUCCESS`), copied for each run."""
    root = tmp_path_factory.mktemp("crash-base")
    old_table(root / "t")
    return root


def kill_everywhere(base: Path, tmp: Path, name: str, order: str, outcomes: Counter[str],
                    new: dict[str, bytes | None]) -> int:
    """Kill write `name` under `order` at each step in turn, recover each way, tally the verdicts; the number of
    steps (kills) tried."""
    old = table(base)
    k = 0
    while True:
        k += 1
        work = copy(base, tmp / f"{order}-{k}")
        killed = in_child(k, order, lambda killer, work=work: WRITES[name](work, killer))
        spare = copy(work, tmp / f"{order}-{k}-spare")
        for how, recover in RECOVERIES.items():
            place = work if how == "next write" else spare
            with listing_order(order):
                recover(place)
            outcome = verdict(place, old, new)
            outcomes[outcome] += 1
            if outcome not in ("old", "new"):
                print(f"{name} killed at step {k} under {order}, recovered by {how}: {outcome}", file=sys.stderr)
            if not killed:
                assert table(place) == new
        shutil.rmtree(work)
        shutil.rmtree(spare)
        if not killed:
            return k - 1


@pytest.mark.parametrize("name", list(WRITES))
def test_a_commit_killed_at_any_step_leaves_the_old_or_the_new_table(base, tmp_path, name, capsys):
    """Reproducer: shutil.rmtree of a finished overwrite's staging directory deleted the commit mark before the
    journal in some listing orders; killed then, with part of `old/` gone, recovery undid the finished commit
    and put back what was left of the old table. Now no kill, in any order, leaves anything but the old or the
    new table, and recovery leaves nothing beside it."""
    outcomes: Counter[str] = Counter()
    new = reference(base, tmp_path, name)
    assert new != table(base)
    kills = {order: kill_everywhere(base, tmp_path, name, order, outcomes, new) for order in ORDERS}
    with capsys.disabled():
        print(f"\n{name}: kills per order {kills}, verdicts {dict(outcomes)}")
    assert min(kills.values()) >= 10  # the commit's steps were counted
    assert set(outcomes) <= {"old", "new"}, dict(outcomes)
    assert outcomes["old"] and outcomes["new"]


def killed_recovery_states(base: Path, tmp: Path) -> Iterator[tuple[int, Path]]:
    """Directories left by an overwrite killed at each step (a hash order) where recovery has work beyond
    deleting a staging directory: a journal to act on, or a retired directory."""
    k = 0
    while True:
        k += 1
        work = copy(base, tmp / f"state-{k}")
        if not in_child(k, "hash-1", lambda killer, work=work: WRITES["overwrite"](work, killer)):
            shutil.rmtree(work)
            return
        if any(n.endswith(".done") or os.path.exists(work / n / "journal.json") for n in os.listdir(work)):
            yield k, work
        else:
            shutil.rmtree(work)


@pytest.mark.parametrize("how", list(RECOVERIES))
def test_a_recovery_killed_at_any_step_recovers_later(base, tmp_path, how, capsys):
    """The next write or `gpuwrite clean` recovering a killed overwrite, itself killed at each of its steps,
    then recovered again: still the old or the new table."""
    old, new = table(base), reference(base, tmp_path, "overwrite")
    outcomes: Counter[str] = Counter()
    kills = 0
    for k, state in killed_recovery_states(base, tmp_path):
        j = 0
        while True:
            j += 1
            work = copy(state, tmp_path / f"state-{k}-{j}")

            def recover(killer: Killer, work: Path = work) -> None:
                killer.armed = True
                RECOVERIES[how](work)

            killed = in_child(j, "hash-2", recover)
            with listing_order("hash-3"):
                RECOVERIES[how](work)
            outcomes[verdict(work, old, new)] += 1
            shutil.rmtree(work)
            if not killed:
                break
            kills += 1
        shutil.rmtree(state)
    with capsys.disabled():
        print(f"\nrecovery by {how}: {kills} kills, verdicts {dict(outcomes)}")
    assert set(outcomes) <= {"old", "new"}, dict(outcomes)
