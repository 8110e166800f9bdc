"""The GPU session rehearsed here: `bench/gpu_wheels.py` builds the carried wheels (this Python's, without nvCOMP:
the stand-in device does not compress on a GPU) and `bench/gpu_session.sh` installs them with pip --no-index
--target into a fresh venv whose only other packages are those the lent machine's image has (NumPy, numba,
pyarrow, pandas), then runs bench/gpu_check.py on the stand-in device end to end: the report comes back as JSON
and text, from the installed wheel, not the checkout. Needs PyPI (pip download), as `make venv` does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
IMAGE = ["numpy", "numpy.libs", "numba", "llvmlite", "pyarrow", "pandas", "dateutil", "six.py", "pytz"]


def test_session_runs_end_to_end_in_a_fresh_venv(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([sys.executable, str(REPO / "bench" / "gpu_wheels.py"), "--dest", str(wheels), "--python-version",
                    version, "--host-only"], check=True, capture_output=True)
    names = sorted(p.name.split("-")[0] for p in wheels.glob("*.whl"))
    assert names == ["cramjam", "gpuwrite", "isal", "tzdata"], names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    ours = Path(sysconfig.get_paths()["purelib"])
    image = tmp_path / "image"  # what the lent machine's image holds, and nothing of gpuwrite's own
    image.mkdir()
    for name in IMAGE:
        if (ours / name).exists():
            (image / name).symlink_to(ours / name)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "image.pth").write_text(f"{image}\n")
    missing = subprocess.run([str(python), "-c", "import gpuwrite"], capture_output=True, cwd=tmp_path)
    assert missing.returncode != 0  # the fresh venv does not see the checkout's gpuwrite

    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_ENABLE_CUDASIM", "OUT")}
    env["PYTHON"] = str(python)
    run = subprocess.run(["bash", str(REPO / "bench" / "gpu_session.sh"), str(out), str(wheels), "--rows", "small",
                          "--standin", "--skip-compile"], env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    text = (out / "gpu_check.txt").read_text()
    assert "gpuwrite-site" in text.splitlines()[0] and str(REPO) not in text.splitlines()[0]  # the installed wheel
    assert "gpu_session: install" in text
    report = json.loads((out / "gpu_check.json").read_text())
    assert report["device"]["mode"] == "standin"
    assert report["identity"] and all(r["ok"] for r in report["identity"])
    writers = {t["writer"] for t in report["timings"]}
    assert {"gpuwrite gpu cold", "gpuwrite cpu", "pyarrow"} <= writers, writers


def test_wheels_for_another_python_install_there(tmp_path: Path) -> None:
    """The lent machine runs another Python (3.12) than this one: gpuwrite's wheel, whose shipped kernels are
    compiled for the Python that builds it and tagged for it (cp311-cp311-linux_x86_64 here), would not install
    there ("not a supported wheel on this platform"). For another Python it is built pure, without them; every
    wheel carried installs on the target's tags."""
    from packaging.tags import compatible_tags, cpython_tags
    from packaging.utils import parse_wheel_filename

    other = "3.12" if sys.version_info[:2] != (3, 12) else "3.11"
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, str(REPO / "bench" / "gpu_wheels.py"), "--dest", str(wheels), "--python-version",
                    other, "--host-only"], check=True, capture_output=True)
    version = tuple(int(p) for p in other.split("."))
    platforms = ["linux_x86_64", "manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
    target = set(cpython_tags(version, platforms=platforms)) | set(compatible_tags(version, platforms=platforms))
    found = {parse_wheel_filename(p.name)[0]: parse_wheel_filename(p.name)[3] for p in wheels.glob("*.whl")}
    assert sorted(found) == ["cramjam", "gpuwrite", "isal", "tzdata"], sorted(found)
    assert all(tags & target for tags in found.values()), found
    assert {str(t) for t in found["gpuwrite"]} == {"py3-none-any"}
