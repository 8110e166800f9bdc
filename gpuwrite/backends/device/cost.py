"""What one device launch costs on an H200, modelled from what `ops.Device` records of it.

Every launch (a kernel, a fill, a device copy, the page codec) leaves a `LaunchRecord`: its geometry as it would
launch on CUDA (blocks, threads per block; the same in the stand-in and simulator modes), the longest sequential
loop any one of its threads runs (`serial`, from the Kernel's `serial` function: derived from the work a thread
owns, from the launch's host-side sizes), and the bytes it reads and writes.

Bytes: a kernel's are the bytes of the device arrays it takes (views and overlapping arrays counted once: the union
of their address ranges), whole arrays even where it touches a slice. A Kernel does not say which of its
arguments it writes, so every array is counted as read and as written: an upper bound on its traffic. Fills,
grown copies, the value-count and mask launches and the page codec count what they read and write exactly.

The H200 estimate of one launch (`modeled_launch_s`), summed per step and in total (`modeled_device_s`)::

    t = (bytes_read + bytes_written) / (HBM_BYTES_PER_S * HBM_EFFICIENCY)
        + serial * STEP_S
        + LAUNCH_S

HBM_BYTES_PER_S is the H200's 4.8 TB/s, of which HBM_EFFICIENCY = 0.8 is taken as achievable by streaming
kernels (STREAM-like copies reach 80-90% of peak on Hopper). STEP_S = 300 ns is one dependent step of a thread's
sequential loop: a global-memory round trip (about 600 cycles at the H200's 1.98 GHz boost clock); a walk whose
loads hit in L1/L2 is faster, so a long serial chain is an upper estimate. LAUNCH_S = 4 us is a kernel launch's
fixed cost (3-5 us from the host through the driver, back to back on one stream). Host-device copies are not in
the estimate (they cross PCIe: the report's H2D / D2H bytes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

HBM_BYTES_PER_S = 4.8e12  # H200 HBM3e peak bandwidth
HBM_EFFICIENCY = 0.8  # fraction of the peak a streaming kernel achieves
STEP_S = 300e-9  # one dependent step of a sequential loop (a global-memory round trip)
LAUNCH_S = 4e-6  # fixed cost of one launch


@dataclass(frozen=True)
class LaunchRecord:
    """One launch as `Device` saw it (see the module doc); `scratch_bytes`: device memory it needs beside its
    arguments while it runs (nvCOMP's temporary space)."""

    step: str
    blocks: int
    threads: int
    serial: int
    bytes_read: int
    bytes_written: int
    scratch_bytes: int = 0


def modeled_launch_s(r: LaunchRecord) -> float:
    """The H200 seconds of one launch: bytes over achievable bandwidth + serial steps x step latency + launch."""
    return (r.bytes_read + r.bytes_written) / (HBM_BYTES_PER_S * HBM_EFFICIENCY) + r.serial * STEP_S + LAUNCH_S


def modeled_device_s(records: Iterable[LaunchRecord]) -> tuple[float, dict[str, float]]:
    """(total, per step) H200 seconds of `records`, by `modeled_launch_s`."""
    by_step: dict[str, float] = {}
    for r in records:
        by_step[r.step] = by_step.get(r.step, 0.0) + modeled_launch_s(r)
    return sum(by_step.values()), by_step


def max_serial(records: Iterable[LaunchRecord]) -> tuple[int, str | None]:
    """(the longest serial loop of any launch, the step it occurs in; the first such launch), (0, None) when
    there is none."""
    best, where = 0, None
    for r in records:
        if r.serial > best:
            best, where = r.serial, r.step
    return best, where


def _address(a: Any) -> int:
    """Where array `a`'s data starts (CuPy, NumPy and numba device arrays), or its id when none says."""
    ptr = getattr(getattr(a, "data", None), "ptr", None)
    if ptr is not None:  # CuPy
        return int(ptr)
    iface = getattr(a, "__array_interface__", None) or getattr(a, "__cuda_array_interface__", None)
    if iface is not None:
        return int(iface["data"][0])
    return id(a)


def array_bytes(args: Iterable[Any]) -> int:
    """The bytes of memory the arrays among `args` cover (anything with `nbytes` and `shape`; views and
    overlapping arrays counted once: the union of their address ranges)."""
    spans = sorted((_address(a), _address(a) + int(a.nbytes)) for a in args
                   if hasattr(a, "nbytes") and hasattr(a, "shape"))
    total, end = 0, -1
    for lo, hi in spans:
        if hi > end:
            total += hi - max(lo, end)
            end = hi
    return total


def codec_scratch_bytes(codec: str, pages: int, max_page_bytes: int) -> int:
    """nvCOMP's temporary device bytes for one batch of `pages` pages of at most `max_page_bytes`, by its
    documented rule: Snappy needs none (`nvcompBatchedSnappyCompressGetTempSize` sets 0). The other codecs' rules
    are not modelled (0); on CUDA the memory pool's high-water mark is measured instead."""
    del codec, pages, max_page_bytes  # Snappy's rule: none; the rest: not modelled
    return 0


__all__ = ["HBM_BYTES_PER_S", "HBM_EFFICIENCY", "LAUNCH_S", "STEP_S", "LaunchRecord", "array_bytes",
           "codec_scratch_bytes", "max_serial", "modeled_device_s", "modeled_launch_s"]
