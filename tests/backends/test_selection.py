"""Backend selection: device='gpu' without a usable GPU is an error naming what is missing; 'auto' falls back."""

from __future__ import annotations

import pyarrow as pa
import pytest

import gpuwrite
from gpuwrite.backends import resolve_device
from gpuwrite.backends.device import ops


def test_gpu_without_device_names_the_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(ops, "simulated", lambda: False)
    problem = ops.gpu_problem()
    assert problem is not None  # no GPU on the machines these tests run on
    with pytest.raises(gpuwrite.GpuwriteError, match="GPU backend cannot run here") as err:
        gpuwrite.write_table(pa.table({"a": [1]}), tmp_path / "x.parquet", device="gpu")
    assert problem in str(err.value)
    assert not list(tmp_path.iterdir())


def test_missing_cupy_is_named(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy":
            raise ImportError("no cupy")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(ops, "simulated", lambda: False)
    monkeypatch.setattr(builtins, "__import__", no_cupy)
    assert "CuPy is not installed" in ops.gpu_problem()


def test_auto_and_cpu(monkeypatch):
    monkeypatch.setattr(ops, "simulated", lambda: False)
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(ops, "gpu_problem", lambda: None)
    assert resolve_device("auto") == "gpu"


def test_unknown_device_is_an_option_error():
    with pytest.raises(gpuwrite.OptionError, match="device"):
        gpuwrite.WriteOptions(device="tpu")


def test_no_driver_is_said_plainly_with_cupys_error_as_the_cause(tmp_path, monkeypatch):
    """With CuPy installed but no GPU driver, device='gpu' said "cudaErrorInsufficientDriver"; it says no CUDA
    device/driver was found and what device='gpu' needs, with CuPy's error kept as the cause."""
    import sys
    import types

    class CUDARuntimeError(RuntimeError):
        pass

    failure = CUDARuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA "
                               "runtime version")

    def device_count():
        raise failure

    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(getDeviceCount=device_count))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setattr(ops, "simulated", lambda: False)
    with pytest.raises(gpuwrite.GpuwriteError) as err:
        gpuwrite.write_table(pa.table({"a": [1]}), tmp_path / "x.parquet", device="gpu")
    assert str(err.value).startswith("no CUDA device/driver found: device='gpu' needs an NVIDIA GPU with a CUDA "
                                     "driver; use device='cpu'")
    assert err.value.__cause__ is failure
    assert not list(tmp_path.iterdir())
    assert resolve_device("auto") == "cpu"
