"""bench/gpu_check.py runs end to end (under the simulator, at a tiny scale): identity checks pass, timings and
the JSON report come out, and a missing cudf is reported rather than fatal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import gpu_check  # noqa: E402


def test_gpu_check_small(tmp_path, capsys):
    out = tmp_path / "report.json"
    code = gpu_check.main(["--rows", "400", "--repeats", "1", "--corpus-scale", "0.002", "--codec", "snappy",
                           "--out", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    assert len(report["identity"]) == 10 and all(r["ok"] for r in report["identity"])
    assert all(r["identical_bytes"] for r in report["identity"] if r["codec"] == "uncompressed")
    writers = {r["writer"].split()[0] + " " + (r["writer"].split() + [""])[1] for r in report["timings"]}
    assert {"gpuwrite gpu", "gpuwrite cpu", "gpuwrite device-input", "pyarrow "} <= writers
    assert any(r["writer"].startswith("cudf") for r in report["timings"])
    printed = capsys.readouterr().out
    assert "identity" in printed and "GB/s" in printed
