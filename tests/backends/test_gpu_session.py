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
