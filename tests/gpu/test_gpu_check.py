"""bench/gpu_check.py runs end to end here (`--rows small`, on the stand-in device: the simulator's kernels are
checked by test_simulator_identity.py, and a simulated run of every step takes half an hour on a busy 2-core machine):
compile measurement, identity, every writer's timing row and the JSON report (to $OUT when set). cudf is never silently absent: without it
here the report says MISSING and `--expect-cudf` makes the run fail; with GPUWRITE_EXPECT_CUDF=1 (a GPU machine
with cudf) this test fails unless cudf and the cudf hook were timed."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest

from gpuwrite.backends.device import standin

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpu_check() -> ModuleType:
    """bench/gpu_check.py, loaded from its file: bench/ holds scripts, not modules importable by name."""
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "bench" / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _on_the_standin_device():
    with standin():
        yield


def test_gpu_check_small_end_to_end(gpu_check, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    expect = os.environ.get("GPUWRITE_EXPECT_CUDF") == "1"
    code = gpu_check.main(["--rows", "small", "--codec", "snappy"])
    report = json.loads((tmp_path / "out" / "gpu_check.json").read_text())  # written to $OUT
    assert report["device"]["mode"] == "standin"
    compile_ = report["compile"]
    assert "error" not in compile_, compile_
    assert compile_["cold"]["first_write_s"] > 0 and compile_["warm"]["first_write_s"] > 0
    if report["device"]["mode"] == "cuda":  # kernels compiled once, then loaded by the second process
        assert compile_["cuda_kernels_compiled_cold"] > 0 and compile_["cuda_kernels_compiled_warm"] == 0
    identity = report["identity"]
    assert len(identity) == 10 and all(r["ok"] for r in identity)
    assert all(r["identical_bytes"] for r in identity if r["codec"] == "uncompressed")
    assert all(r["same_values"] and r["same_pages"] for r in identity)  # the host codec here: same cuts too
    rows = {r["writer"]: r for r in report["timings"]}
    for name in ("gpuwrite gpu cold", "gpuwrite gpu warm", "gpuwrite gpu warm, no CRC", "gpuwrite cpu", "pyarrow"):
        assert rows[name]["seconds"] > 0 and rows[name]["output_bytes"] > 0 and rows[name]["input_gb_per_s"] > 0
    cudf = [r for r in report["timings"] if r["writer"].startswith("cudf")]
    assert len(cudf) == 1  # a record, timed or saying why not: never left out
    if expect:
        assert code == 0 and report["cudf_problem"] is None and cudf[0]["seconds"] > 0
        assert rows["gpuwrite cudf hook"]["seconds"] > 0
    else:
        assert cudf[0]["seconds"] is None and cudf[0]["note"].startswith("MISSING")
        assert report["cudf_problem"] is not None and code == 0
    printed = capsys.readouterr().out
    assert "identity" in printed and "GB/s" in printed and "compile" in printed


def test_expected_cudf_that_is_missing_fails_the_run(gpu_check, tmp_path):
    if os.environ.get("GPUWRITE_EXPECT_CUDF") == "1":
        return  # cudf is there: the test above requires its timings
    code = gpu_check.main(["--rows", "small", "--skip-identity", "--skip-compile", "--expect-cudf",
                           "--out", str(tmp_path / "r.json")])
    report = json.loads((tmp_path / "r.json").read_text())
    assert code == 3 and report["cudf_problem"].startswith("cudf at 400 rows: MISSING")


def test_cudf_problem_names_a_missing_record(gpu_check):
    timed = {"rows": 10, "writer": "cudf 25.02", "seconds": 1.0, "note": ""}
    assert gpu_check.cudf_problem([timed]) is None
    assert gpu_check.cudf_problem([{"rows": 10, "writer": "pyarrow", "seconds": 1.0}]) == "no cudf record at 10 rows"
    assert "MISSING" in gpu_check.cudf_problem([{**timed, "seconds": None, "note": "MISSING: x"}])
