"""One file, written safely (issue 12): no temporary file survives any failure, the final rename included, nor a
writer dropped unclosed or killed; the target keeps its mode, a symlink stays a link, a read-only file is
refused; file-system errors are GpuwriteErrors naming the path."""

from __future__ import annotations

import errno
import gc
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from unprivileged import reachable_directory, unprivileged

import gpuwrite
from gpuwrite import GpuwriteError
from gpuwrite.assemble import sink
from gpuwrite.errors import FileWriteError

TABLE = pa.table({"a": pa.array(range(1000), pa.int64())})


def _temps(directory: Path) -> list[str]:
    """Temporary files of gpuwrite writers in `directory`."""
    return sorted(n for n in os.listdir(directory) if n.endswith(sink.TEMP_SUFFIX))


def test_failed_rename_removes_the_temporary_file(tmp_path, monkeypatch):
    """Reproducer: commit() marked the sink closed before renaming, so a failed rename left the temp file."""
    path = tmp_path / "out.parquet"
    w = gpuwrite.ParquetWriter(path, TABLE.schema)
    w.write(TABLE)

    real_replace = os.replace

    def refuse(src, dst):
        # only the sink's rename onto the target: `sink.os` is the os module, and numba's kernel cache also
        # renames its index files (a cold cache compiles kernels inside close())
        if os.fspath(dst) != os.path.realpath(path):
            return real_replace(src, dst)
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(sink.os, "replace", refuse)
    with pytest.raises(FileWriteError, match=r"out\.parquet.*Invalid cross-device link") as info:
        w.close()
    assert info.value.errno == errno.EXDEV and isinstance(info.value, OSError)
    assert os.listdir(tmp_path) == []
    w.abort()  # idempotent
    with pytest.raises(GpuwriteError, match="already closed or aborted"):
        w.write(TABLE)


def test_unclosed_writer_removed_on_garbage_collection(tmp_path):
    """A writer dropped without close() or abort() removes its temporary file and warns."""
    w = gpuwrite.ParquetWriter(tmp_path / "gc.parquet", TABLE.schema)
    w.write(TABLE)
    assert len(_temps(tmp_path)) == 1
    with pytest.warns(ResourceWarning, match=r"gc\.parquet.*never closed"):
        del w
        gc.collect()
    assert os.listdir(tmp_path) == []


def test_existing_target_keeps_its_mode(tmp_path):
    """A 0600 file stays 0600 when rewritten (pyarrow rewrites it in place and keeps the mode)."""
    path = tmp_path / "private.parquet"
    path.write_bytes(b"old")
    os.chmod(path, 0o600)
    gpuwrite.write_table(TABLE, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert pq.read_table(path).num_rows == 1000


def test_new_file_gets_the_default_mode(tmp_path):
    """A new file is created as open() creates one (0666 less the umask), not with a temp file's 0600."""
    umask = os.umask(0o022)
    try:
        gpuwrite.write_table(TABLE, tmp_path / "new.parquet")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "new.parquet").st_mode) == 0o644


def test_symlink_is_written_through(tmp_path):
    """The link stays a link; the file it points to (in another directory) gets the new bytes."""
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "data.parquet"
    real.write_bytes(b"old")
    link = tmp_path / "link.parquet"
    link.symlink_to(os.path.relpath(real, tmp_path))
    result = gpuwrite.write_table(TABLE, link)
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(real, tmp_path)
    assert pq.read_table(real).num_rows == 1000
    assert result.path == str(link)
    assert sorted(os.listdir(tmp_path)) == ["link.parquet", "real"] and os.listdir(real_dir) == ["data.parquet"]


def test_dangling_symlink_creates_its_target(tmp_path):
    """As open() does (and pyarrow), a link to a missing file creates that file."""
    link = tmp_path / "link.parquet"
    link.symlink_to(tmp_path / "target.parquet")
    gpuwrite.write_table(TABLE, link)
    assert link.is_symlink() and pq.read_table(tmp_path / "target.parquet").num_rows == 1000


def test_read_only_target_is_refused_like_pyarrow():
    """Reproducer: a read-only file was replaced. Now it is refused before anything is written, as pyarrow
    refuses it, and keeps its bytes. The directory is one the unprivileged user can reach, wherever the
    checkout's temporary directory sits (under a directory nobody cannot enter, the write was refused for
    that instead, and reported as a missing directory)."""
    with reachable_directory() as directory:  # writable for the unprivileged user: only the file's mode refuses
        gpuwrite.write_table(TABLE, os.path.join(directory, "warm.parquet"))  # imports done while privileged
        paths = [os.path.join(directory, name) for name in ("ro.parquet", "ro_pyarrow.parquet")]
        for path in paths:
            with open(path, "wb") as f:
                f.write(b"old")
            os.chmod(path, 0o444)
        with unprivileged():
            with pytest.raises(PermissionError):
                pq.write_table(TABLE, paths[1])  # (pyarrow then deletes the file it could not open)
            with pytest.raises(FileWriteError, match=r"ro\.parquet.*read-only") as info:
                gpuwrite.write_table(TABLE, paths[0])
        assert info.value.errno == errno.EACCES
        assert open(paths[0], "rb").read() == b"old"
        assert not [n for n in os.listdir(directory) if n.endswith(sink.TEMP_SUFFIX)]


def test_special_file_target_is_refused(tmp_path):
    """A FIFO (or device) at the path is not replaced by a regular file."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(GpuwriteError, match="not a regular file"):
        gpuwrite.write_table(TABLE, fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and _temps(tmp_path) == []


def test_unwritable_directory_is_a_gpuwrite_error(tmp_path, monkeypatch):
    """Creating the temporary file fails: the error is a FileWriteError naming the path."""
    real_open = open

    def refuse(file, mode="r", *args, **kwargs):
        if str(file).endswith(sink.TEMP_SUFFIX):
            raise PermissionError(errno.EACCES, "Permission denied", file)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refuse)
    with pytest.raises(FileWriteError, match=r"x\.parquet.*Permission denied"):
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet")


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a Python script in a fresh interpreter (this venv)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True,
                          timeout=300)


def test_file_size_limit_is_a_gpuwrite_error_and_leaves_nothing(tmp_path):
    """Reproducer: a full disk or file-size limit surfaced as a bare OSError (EFBIG). Under RLIMIT_FSIZE the
    write fails with a FileWriteError naming the path and errno, and the temporary file is gone."""
    script = """
        import errno, os, resource, signal, sys
        import numpy as np, pyarrow as pa, gpuwrite
        from gpuwrite.errors import FileWriteError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        table = pa.table({"x": pa.array(np.random.default_rng(1).random(2_000_000))})
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
        try:
            gpuwrite.write_table(table, sys.argv[1], compression="uncompressed", block_size=1 << 20)
        except FileWriteError as e:
            print("ERRNO", e.errno == errno.EFBIG, sys.argv[1] in str(e), str(e))
    """
    path = tmp_path / "big.parquet"
    done = _run(script, str(path))
    assert "ERRNO True True" in done.stdout, done.stdout + done.stderr
    assert os.listdir(tmp_path) == []


def test_leftovers_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    """Reproducer: after SIGKILL, the temporary file stayed forever. Its name records the writer's pid and
    host, so the next write beside it removes it once that process is gone."""
    path = tmp_path / "t.parquet"
    script = """
        import os, signal, sys, pyarrow as pa, gpuwrite
        w = gpuwrite.ParquetWriter(sys.argv[1], pa.schema([("a", pa.int64())]))
        w.write(pa.table({"a": pa.array(range(1000), pa.int64())}))
        os.kill(os.getpid(), signal.SIGKILL)
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), str(path)])
    assert proc.wait(timeout=300) == -signal.SIGKILL
    left = _temps(tmp_path)
    assert len(left) == 1 and sink.temp_owner(left[0]) == ("t.parquet", proc.pid, sink.host_tag())
    assert sink.is_orphan(str(tmp_path / left[0]))
    gpuwrite.write_table(TABLE, path)
    assert os.listdir(tmp_path) == ["t.parquet"]


def test_sweep_spares_live_foreign_and_unknown_temporary_files(tmp_path):
    """Only files of dead writers on this host are removed: a live writer's file, another host's, an old
    name form and other files stay."""
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        tag = sink.host_tag()
        other = "0" * 8 if tag != "0" * 8 else "1" * 8
        names = [f".x.parquet.{live.pid}-{tag}-{'a' * 12}{sink.TEMP_SUFFIX}",  # running
                 f".x.parquet.{os.getpid()}-{tag}-{'b' * 12}{sink.TEMP_SUFFIX}",  # this process
                 f".x.parquet.{_dead_pid()}-{other}-{'c' * 12}{sink.TEMP_SUFFIX}",  # another host
                 f".x.parquet.{'d' * 12}{sink.TEMP_SUFFIX}",  # the form before pids were recorded
                 "notes.txt"]
        dead = f".y.parquet.{_dead_pid()}-{tag}-{'e' * 12}{sink.TEMP_SUFFIX}"
        for name in [*names, dead]:
            (tmp_path / name).write_bytes(b"")
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet")
        assert sorted(os.listdir(tmp_path)) == sorted([*names, "x.parquet"])
        # a new leftover after the sweep is still found by the next write (the directory changed)
        (tmp_path / dead).write_bytes(b"")
        gpuwrite.write_table(TABLE, tmp_path / "x.parquet")
        assert dead not in os.listdir(tmp_path)
    finally:
        live.kill()
        live.wait()


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_many_files_in_one_directory_list_it_once(tmp_path, monkeypatch):
    """The sweep lists a directory again only when someone else changed it, so writing n files is not n^2."""
    listed = []
    real_scandir = os.scandir

    def counting(path):
        listed.append(path)
        return real_scandir(path)

    monkeypatch.setattr(sink.os, "scandir", counting)
    for i in range(5):
        gpuwrite.write_table(TABLE, tmp_path / f"part-{i}.parquet")
    assert len(listed) == 1


def test_a_writing_process_holds_a_lock_on_its_temporary_file(tmp_path):
    """The open writer's temporary file is flock-held (what `gpuwrite clean` and sweeps probe), and a locked
    file is spared even when its name's pid looks dead (a pid namespace we cannot see, say)."""
    w = gpuwrite.ParquetWriter(tmp_path / "live.parquet", TABLE.schema)
    (name,) = _temps(tmp_path)
    assert sink._flock_held(str(tmp_path / name))
    disguised = tmp_path / f".x.parquet.{_dead_pid()}-{sink.host_tag()}-{'f' * 12}{sink.TEMP_SUFFIX}"
    os.link(tmp_path / name, disguised)  # the same locked file under a dead owner's name
    assert not sink.is_orphan(str(disguised))
    w.close()
    assert not sink._flock_held(str(disguised)) and sink.is_orphan(str(disguised))
