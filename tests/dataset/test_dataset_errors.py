"""Failures of the file system under a dataset write are GpuwriteErrors naming the path, value or cause (issue 33,
item 7), not bare OSErrors or misleading words, and leave nothing behind: a partition value too long for a
directory name, no space (or no inodes) for a partition directory or the `_SUCCESS` marker, a symlink loop as the
dataset path, a parent directory the user may not search."""

from __future__ import annotations

import errno
import os

import pyarrow as pa
import pytest
from dataset_tables import new_table, old_table, snapshot
from unprivileged import reachable_directory, unprivileged

import gpuwrite
from gpuwrite.dataset import publish, writers
from gpuwrite.dataset.publish import CommitError
from gpuwrite.dataset.target import DatasetPathError
from gpuwrite.errors import FileWriteError


def test_partition_value_too_long_for_a_directory_name(tmp_path):
    """Reproducer: a 300-byte partition value raised a bare `OSError: File name too long`. Now the error names
    the column and the value, shortened, and the write leaves nothing (no table, no staging directory)."""
    long_value = "x" * 300
    table = pa.table({"p": [long_value, "short"], "v": [1, 2]})
    with pytest.raises(FileWriteError, match=r"partition column 'p': the value 'x{60}\.\.\. \(300 characters\)'"
                                             r".*302 bytes long.*limit of 255 bytes") as info:
        gpuwrite.write_dataset(table, tmp_path / "ds", partition_by="p")
    assert long_value not in str(info.value)
    assert info.value.errno == errno.ENAMETOOLONG
    assert os.listdir(tmp_path) == []


def test_long_partition_value_in_a_second_column_names_that_column(tmp_path):
    """With several partition columns, the one whose `column=value` name is too long is named (multi-byte
    characters counted in bytes)."""
    table = pa.table({"a": ["ok", "ok"], "b": ["é" * 200, "fine"], "v": [1, 2]})
    with pytest.raises(FileWriteError, match=r"partition column 'b'.*402 bytes long"):
        gpuwrite.write_dataset(table, tmp_path / "ds", partition_by=["a", "b"])
    assert os.listdir(tmp_path) == []


def test_no_space_for_a_partition_directory(tmp_path, monkeypatch):
    """Reproducer: no space or no inodes while making a partition directory in staging raised a bare
    `OSError [Errno 28]`. Now the error names the directory and the cause, and nothing is left."""
    real = os.makedirs

    def full(path, *args, **kwargs):
        if "p=" in os.fspath(path):
            raise OSError(errno.ENOSPC, "No space left on device", path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(writers.os, "makedirs", full)
    with pytest.raises(FileWriteError, match=r"cannot create the directory '[^']*p=[ab]': "
                                             r"No space left on device \(ENOSPC\)") as info:
        gpuwrite.write_dataset(pa.table({"p": ["a", "b"], "v": [1, 2]}), tmp_path / "ds", partition_by="p")
    assert info.value.errno == errno.ENOSPC and "p=" in info.value.filename
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_symlink_loop_is_called_a_symlink_loop(tmp_path):
    """Reproducer: a symlink loop as the dataset path was refused as "a file"."""
    (tmp_path / "loop").symlink_to("loop")
    for mode in ("error", "overwrite", "append"):
        with pytest.raises(DatasetPathError, match=r"'[^']*loop'.*it is a symlink loop") as info:
            gpuwrite.write_dataset(new_table(), tmp_path / "loop", mode=mode)
        assert "a file" not in str(info.value)
    assert os.listdir(tmp_path) == ["loop"]


def test_append_without_inodes_says_what_failed(tmp_path, monkeypatch):
    """Reproducer: an append that ran out of inodes while creating the staged `_SUCCESS` said "could not create
    the dataset". Now it says it could not append, which step failed and why (ENOSPC); the table is as it was."""
    target = tmp_path / "t"
    old_table(target)
    before = snapshot(target)
    real_touch = publish._touch

    def no_inodes(path):
        if path.endswith(publish.SUCCESS):
            raise OSError(errno.ENOSPC, "No space left on device", path)
        real_touch(path)

    monkeypatch.setattr(publish, "_touch", no_inodes)
    with pytest.raises(CommitError, match=r"could not append to the dataset '[^']*t': creating the staged "
                                          r"_SUCCESS marker .* failed: No space left on device \(ENOSPC\)") as info:
        gpuwrite.write_dataset(new_table(), target, mode="append", partition_by=["p"])
    assert "could not create" not in str(info.value)
    assert snapshot(target) == before and os.listdir(tmp_path) == ["t"]


def test_unsearchable_parent_is_permission_denied_not_missing():
    """Reproducer: a dataset under a directory the user cannot search (no x permission) was reported as "does
    not exist". Now: permission denied, naming the directory that cannot be searched."""
    with reachable_directory() as top:
        locked = os.path.join(top, "locked")
        os.makedirs(os.path.join(locked, "inner"))
        os.chmod(locked, 0o600)  # readable, not searchable: its entries cannot be reached
        with unprivileged():
            with pytest.raises(DatasetPathError, match=rf"permission denied: directory '{locked}' cannot be "
                                                       r"searched") as info:
                gpuwrite.write_dataset(new_table(), os.path.join(locked, "inner", "ds"))
        assert "does not exist" not in str(info.value)
        os.chmod(locked, 0o700)
        assert os.listdir(os.path.join(locked, "inner")) == []
        gpuwrite.write_dataset(new_table(), os.path.join(top, "missing", "ds"))  # a missing parent is made
        assert os.path.isdir(os.path.join(top, "missing", "ds"))
