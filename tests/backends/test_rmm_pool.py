"""CuPy allocates through RMM only where the user's process already imported rmm (a fake rmm module here)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from gpuwrite.backends.device.rmm_pool import rmm_allocator, share_rmm_pool


class _FakeCupy:
    """What `share_rmm_pool` calls: cupy.cuda.set_allocator."""

    def __init__(self) -> None:
        self.allocators: list[Any] = []
        self.cuda = types.SimpleNamespace(set_allocator=self.allocators.append)


def _fake_rmm(monkeypatch: pytest.MonkeyPatch, *, modern: bool = True) -> Any:
    """Put a fake rmm (with rmm.allocators.cupy when `modern`, else the old top-level allocator) in sys.modules."""
    def allocator(nbytes: int) -> int:
        return nbytes

    rmm = types.ModuleType("rmm")
    monkeypatch.setitem(sys.modules, "rmm", rmm)
    if modern:
        allocators, cupy_mod = types.ModuleType("rmm.allocators"), types.ModuleType("rmm.allocators.cupy")
        cupy_mod.rmm_cupy_allocator = allocator  # type: ignore[attr-defined]
        allocators.cupy = cupy_mod  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "rmm.allocators", allocators)
        monkeypatch.setitem(sys.modules, "rmm.allocators.cupy", cupy_mod)
    else:
        rmm.rmm_cupy_allocator = allocator  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "rmm.allocators", None)  # type: ignore[arg-type]  # import fails
    return allocator


def test_without_rmm_cupy_keeps_its_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "rmm", raising=False)
    cupy = _FakeCupy()
    assert rmm_allocator() is None
    assert not share_rmm_pool(cupy) and cupy.allocators == []
    assert "rmm" not in sys.modules  # never imported by gpuwrite


@pytest.mark.parametrize("modern", [True, False])
def test_with_rmm_imported_cupy_allocates_through_it(monkeypatch: pytest.MonkeyPatch, modern: bool) -> None:
    allocator = _fake_rmm(monkeypatch, modern=modern)
    cupy = _FakeCupy()
    assert rmm_allocator() is allocator
    assert share_rmm_pool(cupy) and cupy.allocators == [allocator]
