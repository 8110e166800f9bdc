"""Which CUDA extra fits the driver, and a driver / wheel mismatch named with the extra that fixes it."""

from __future__ import annotations

import ctypes
import importlib.metadata
import re
from pathlib import Path
from typing import Any

import pytest

from gpuwrite.backends.device import cuda_packages as cp
from gpuwrite.backends.device import ops

ROOT = Path(__file__).resolve().parents[2]


class _Driver:
    """A libcuda stand-in whose cuDriverGetVersion reports `version` (e.g. 13000 for CUDA 13.0)."""

    def __init__(self, version: int) -> None:
        self.version = version

    def cuDriverGetVersion(self, out: Any) -> int:  # noqa: N802 - the driver API's name
        ctypes.cast(out, ctypes.POINTER(ctypes.c_int))[0] = self.version
        return 0


def _no_driver(name: str) -> ctypes.CDLL:
    raise OSError(f"{name}: cannot open shared object file")


def _versions(*dists: str) -> Any:
    def version(name: str) -> str:
        if name in dists:
            return "1.0"
        raise importlib.metadata.PackageNotFoundError(name)
    return version


def test_driver_version_read_without_a_context() -> None:
    assert cp.driver_cuda_version(lambda _: _Driver(13000)) == (13, 0)  # type: ignore[arg-type, return-value]
    assert cp.driver_cuda_version(lambda _: _Driver(12040)) == (12, 4)  # type: ignore[arg-type, return-value]
    assert cp.driver_cuda_version(_no_driver) is None


def test_the_extra_follows_the_driver() -> None:
    assert cp.install_hint((13, 0)) == "pip install 'gpuwrite[gpu-cu13]'"
    assert cp.install_hint((12, 8)) == "pip install 'gpuwrite[gpu-cu12]'"
    assert cp.extra_for(None) == "gpu-cu12"


@pytest.mark.parametrize("driver,dists,expected", [
    ((12, 4), ("cupy-cuda13x", "nvidia-nvcomp-cu13"), "cupy-cuda13x needs a CUDA 13 driver.*gpuwrite\\[gpu-cu12\\]"),
    ((13, 0), ("cupy-cuda12x", "cupy-cuda13x"), "cupy-cuda12x and cupy-cuda13x are both installed.*gpu-cu13"),
    ((13, 0), ("cupy-cuda13x", "nvidia-nvcomp-cu12"), "built for different CUDA versions.*gpu-cu13"),
    ((11, 8), ("cupy-cuda12x",), "needs a driver for CUDA 12 or 13"),
])
def test_mismatches_name_the_extra_that_fits(driver: tuple[int, int], dists: tuple[str, ...],
                                             expected: str) -> None:
    problem = cp.package_problem(driver, cp.installed(_versions(*dists)))
    assert problem is not None and re.search(expected, problem), problem


@pytest.mark.parametrize("driver,dists", [
    ((13, 0), ("cupy-cuda13x", "nvidia-nvcomp-cu13")),
    ((13, 0), ("cupy-cuda12x", "nvidia-nvcomp-cu12")),  # a CUDA 13 driver runs CUDA 12 wheels
    ((12, 4), ("cupy-cuda12x",)),
    (None, ("cupy-cuda13x", "nvidia-nvcomp-cu12")),  # no driver: nothing to compare with (reported elsewhere)
])
def test_matching_wheels_pass(driver: tuple[int, int] | None, dists: tuple[str, ...]) -> None:
    assert cp.package_problem(driver, cp.installed(_versions(*dists))) is None


def test_gpu_problem_reports_the_mismatch_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cp, "driver_cuda_version", lambda: (12, 2))
    monkeypatch.setattr(cp, "installed", lambda: {"CuPy": [13], "nvCOMP": [13]})
    problem = ops.gpu_problem()
    assert problem is not None and "gpuwrite[gpu-cu12]" in problem and "cupy-cuda13x" in problem


def test_the_extras_install_what_the_checks_name() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    extras = {m[1]: re.findall(r'"([^"]+)"', m[2]) for m in re.finditer(r"^([\w-]+) = \[(.*)\]$", text, re.M)}
    for major, extra in cp.EXTRAS.items():
        wanted = [by_major[major] for by_major in cp.PACKAGES.values()] + [f"numba-cuda[cu{major}]"]
        for name in wanted:
            assert any(req.startswith(name) for req in extras[extra]), (extra, name)
    assert extras["gpu"] == ["gpuwrite[gpu-cu12]"]
