"""`make gpu-wheels`: the wheels the lent GPU machine lacks, in one folder a device call can carry.

That machine has Python 3.12, CUDA 13 (driver 580), CuPy (cupy-cuda13x), numba, numba-cuda, NumPy, pyarrow and
pandas, no network, and takes at most 64 MiB of files a call. This builds gpuwrite's own wheel and downloads,
for that Python and manylinux x86_64, what a write imports beyond the image: nvCOMP for CUDA 13 (snappy, zstd and
lz4 on the GPU), cramjam and isal (the host codecs), tzdata (time zones without the system's database). The folder
must stay under 60 MiB; `bench/gpu_session.sh` installs it with `pip --no-index --target`. gpuwrite's own wheel
ships kernels compiled for the Python that builds it and is tagged for that Python; for another (this machine's
3.11 against the lent machine's 3.12) it is built without them, pure (py3-none-any), so pip installs it there;
its CPU kernels then compile on the first write (`bench/gpu_check.py` measures that first write).

    python bench/gpu_wheels.py --dest .whl                       # for the lent machine (Python 3.12)
    python bench/gpu_wheels.py --dest W --python-version 3.11 --host-only   # the stand-in rehearsal here
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LIMIT_BYTES = 60 << 20
HOST = ["cramjam", "isal", "tzdata"]  # what gpuwrite imports that the image lacks
CUDA = ["nvidia-nvcomp-cu13==6.0.0.12", "nvidia-libnvcomp-cu13==6.0.0.12"]  # the GPU codecs, CUDA 13
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64"]


def pip(*args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"], check=True,
                   env=env)


def this_python() -> str:
    """This interpreter's version as pip's --python-version takes it (e.g. '3.11')."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def build(dest: Path, python_version: str, host_only: bool) -> int:
    """Fill `dest` with the wheels; their total size in bytes."""
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.whl"):
        old.unlink()
    # gpuwrite's wheel carries kernels compiled for the interpreter that builds it, and is tagged for it (setup.py):
    # for another Python it is built without them, a pure wheel that installs there and compiles on first use
    env = None if python_version == this_python() else {**os.environ, "GPUWRITE_SKIP_KERNEL_BUILD": "1"}
    pip("wheel", str(REPO_ROOT), "--no-deps", "--wheel-dir", str(dest), env=env)
    platform = [a for p in PLATFORMS for a in ("--platform", p)]
    wanted = HOST + ([] if host_only else CUDA)
    pip("download", "--no-deps", "--only-binary=:all:", "--python-version", python_version, "--implementation",
        "cp", *platform, "--dest", str(dest), *wanted)
    return sum(f.stat().st_size for f in dest.glob("*.whl"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", type=Path, default=REPO_ROOT / ".whl")
    parser.add_argument("--python-version", default="3.12", help="the Python of the machine that installs them")
    parser.add_argument("--host-only", action="store_true", help="without nvCOMP (a rehearsal on the stand-in)")
    args = parser.parse_args(argv)
    size = build(args.dest, args.python_version, args.host_only)
    for f in sorted(args.dest.glob("*.whl")):
        print(f"{f.stat().st_size / 2**20:7.1f} MiB  {f.name}")
    print(f"{size / 2**20:7.1f} MiB in {args.dest} (limit {LIMIT_BYTES >> 20} MiB)")
    if size > LIMIT_BYTES:
        print("over the limit: a device call carries at most 64 MiB with the working tree")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
