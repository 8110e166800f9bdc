"""Which CUDA wheels fit this machine: the `[gpu-cu12]` / `[gpu-cu13]` extra for its driver, and the mismatch
between the driver and the installed CuPy / nvCOMP / numba-cuda wheels, named with the extra that fixes it."""

from __future__ import annotations

import ctypes
import importlib.metadata
from collections.abc import Callable

EXTRAS = {12: "gpu-cu12", 13: "gpu-cu13"}  # CUDA major -> gpuwrite's extra (pyproject.toml)
# what each extra installs, by CUDA major: the distribution names a mismatch is found by
PACKAGES = {"CuPy": {12: "cupy-cuda12x", 13: "cupy-cuda13x"},
            "nvCOMP": {12: "nvidia-nvcomp-cu12", 13: "nvidia-nvcomp-cu13"}}


def driver_cuda_version(load: Callable[[str], ctypes.CDLL] = ctypes.CDLL) -> tuple[int, int] | None:
    """(major, minor) of the CUDA version the installed driver supports (`cuDriverGetVersion`, which needs no
    context), or None without a driver."""
    try:
        lib = load("libcuda.so.1")
        version = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return version.value // 1000, (version.value % 1000) // 10


def installed(version: Callable[[str], str] = importlib.metadata.version) -> dict[str, list[int]]:
    """For CuPy and nvCOMP, the CUDA majors whose wheels are installed."""
    found: dict[str, list[int]] = {}
    for kind, by_major in PACKAGES.items():
        majors = []
        for major, dist in by_major.items():
            try:
                version(dist)
            except importlib.metadata.PackageNotFoundError:
                continue
            majors.append(major)
        found[kind] = majors
    return found


def extra_for(driver: tuple[int, int] | None) -> str:
    """The extra to install for this driver: the newest CUDA major it runs (CUDA 12 where it is unknown)."""
    if driver is not None and driver[0] >= 13:
        return EXTRAS[13]
    return EXTRAS[12]


def install_hint(driver: tuple[int, int] | None = None) -> str:
    """`pip install 'gpuwrite[gpu-cuXX]'` for this machine's driver."""
    return f"pip install 'gpuwrite[{extra_for(driver if driver is not None else driver_cuda_version())}]'"


def package_problem(driver: tuple[int, int] | None, wheels: dict[str, list[int]]) -> str | None:
    """Why the installed CUDA wheels cannot run on this driver (or each other), naming the extra that fits; None
    when they can or when there is no driver to compare with."""
    if driver is None:
        return None
    have = f"the CUDA driver supports CUDA {driver[0]}.{driver[1]}"
    if driver[0] < 12:
        return f"{have}; gpuwrite's GPU backend needs a driver for CUDA 12 or 13 (update the NVIDIA driver)"
    fix = install_hint(driver)
    for kind, majors in wheels.items():
        names = [PACKAGES[kind][m] for m in majors]
        if len(majors) > 1:
            return f"{' and '.join(names)} are both installed: uninstall them and {fix}"
        if majors and majors[0] > driver[0]:
            return f"{names[0]} needs a CUDA {majors[0]} driver, but {have}: uninstall it and {fix}"
    cupy, nvcomp = wheels.get("CuPy", []), wheels.get("nvCOMP", [])
    if cupy and nvcomp and cupy != nvcomp:
        return (f"{PACKAGES['CuPy'][cupy[0]]} and {PACKAGES['nvCOMP'][nvcomp[0]]} are built for different CUDA "
                f"versions: uninstall them and {fix}")
    return None
