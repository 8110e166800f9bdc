"""The C heap keeps a write's freed temporaries for the next write (issue 32: warm writes page-faulted 5,000 to
10,000 pages afresh, a different count each time), and hands them back on `release_memory`."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.pipeline import heap


class _FakeLibc:
    """Records mallopt and malloc_trim calls; mallopt answers `accept`."""

    def __init__(self, accept: int = 1) -> None:
        self.accept = accept
        self.calls: list[tuple] = []

    def mallopt(self, key: int, value: int) -> int:
        self.calls.append(("mallopt", key, value))
        return self.accept

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad))
        return 1


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[_FakeLibc]:
    """A fresh, not yet tried heap state over a recording libc."""
    libc = _FakeLibc()
    monkeypatch.setattr(heap, "_libc", lambda: libc)
    monkeypatch.setattr(heap, "_state", {"tried": False, "enabled": False})
    yield libc


def test_a_cpu_write_keeps_freed_memory_in_one_heap_once(fake: _FakeLibc, tmp_path) -> None:
    """The first CPU write sets one arena, a 64 MiB mmap threshold and a 256 MiB trim threshold; later writes
    set nothing again."""
    table = pa.table({"x": list(range(1000))})
    gpuwrite.write_table(table, str(tmp_path / "a.parquet"), device="cpu")
    expected = [("mallopt", heap.M_ARENA_MAX, 1), ("mallopt", heap.M_MMAP_THRESHOLD, 64 << 20),
                ("mallopt", heap.M_TRIM_THRESHOLD, 256 << 20)]
    assert fake.calls == expected
    gpuwrite.write_table(table, str(tmp_path / "b.parquet"), device="cpu")
    assert fake.calls == expected and heap.enable() is True


def test_release_memory_trims_the_heap(fake: _FakeLibc) -> None:
    heap.enable()
    gpuwrite.release_memory()
    assert fake.calls[-1] == ("malloc_trim", 0)


def test_refused_settings_or_no_glibc_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """mallopt refusing, or no glibc at all: not enabled, and release_memory trims nothing."""
    refusing = _FakeLibc(accept=0)
    monkeypatch.setattr(heap, "_libc", lambda: refusing)
    monkeypatch.setattr(heap, "_state", {"tried": False, "enabled": False})
    assert heap.enable() is False
    heap.trim()
    assert all(call[0] == "mallopt" for call in refusing.calls)
    monkeypatch.setattr(heap, "_libc", lambda: None)
    monkeypatch.setattr(heap, "_state", {"tried": False, "enabled": False})
    assert heap.enable() is False


def test_this_process_runs_on_glibc_or_says_so() -> None:
    """On glibc (this project's Linux machines) the real libc is found; elsewhere None, never an error."""
    import platform

    libc = heap._libc()
    assert (libc is not None) == (platform.libc_ver()[0] == "glibc")


def test_the_heap_is_left_alone_when_the_user_says_so(fake: _FakeLibc, tmp_path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """GPUWRITE_HEAP_TUNING=0: the process's heap keeps glibc's settings (they would apply to the user's own
    allocations too); a write still works and release_memory trims nothing."""
    monkeypatch.setenv(heap.TUNING_ENV, "0")
    gpuwrite.write_table(pa.table({"x": [1, 2, 3]}), str(tmp_path / "a.parquet"), device="cpu")
    gpuwrite.release_memory()
    assert fake.calls == [] and heap.enable() is False
