"""The package root: its public names resolve lazily to the real objects, `gpuwrite.inspect` stays the function
whatever submodules are imported, `__version__` matches pyproject.toml, and the compile notice is listening
once the write pipeline is loaded."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gpuwrite

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, *args: str) -> list[str]:
    """Run `code` in a fresh interpreter; its stdout lines (fails with its stderr if it fails)."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_version_matches_pyproject() -> None:
    project = (ROOT / "pyproject.toml").read_text().split("[project]", 1)[1].split("\n[", 1)[0]
    declared = re.search(r'^version\s*=\s*"([^"]+)"', project, re.M)
    assert declared is not None and gpuwrite.__version__ == declared.group(1)
    from gpuwrite._version import __version__
    from gpuwrite.assemble.footer import CREATED_BY

    assert __version__ is gpuwrite.__version__ and CREATED_BY == f"gpuwrite version {__version__} (build {__version__})"


@pytest.mark.parametrize("name", [n for n in gpuwrite.__all__ if n != "__version__"])
def test_public_name_is_the_defining_modules_object(name: str) -> None:
    """Each public name is the very object of the module the root's table names, and `dir()` lists it."""
    module = importlib.import_module(gpuwrite._EXPORTS[name])
    assert getattr(gpuwrite, name) is getattr(module, name)
    assert name in dir(gpuwrite)


def test_table_and_all_agree_and_unknown_names_fail() -> None:
    assert sorted(gpuwrite._EXPORTS) == sorted(n for n in gpuwrite.__all__ if n != "__version__")
    with pytest.raises(AttributeError, match="no attribute 'write_tabel'"):
        gpuwrite.write_tabel  # noqa: B018
    namespace: dict[str, object] = {}
    exec("from gpuwrite import *", namespace)
    assert set(gpuwrite.__all__) <= set(namespace) and namespace["write_table"] is gpuwrite.write_table


INSPECT_AFTER_SUBMODULES = """
import sys
import gpuwrite
{imports}
import pyarrow as pa
gpuwrite.write_table(pa.table({{"a": [1, 2]}}), sys.argv[1])
print(callable(gpuwrite.inspect), gpuwrite.inspect(sys.argv[1])["footer"]["num_rows"])
"""


@pytest.mark.parametrize("imports", [
    "import gpuwrite.inspection.text",
    "import gpuwrite.inspection.text, gpuwrite.inspection.file\nfrom gpuwrite.inspection.file import format_summary",
    "import gpuwrite.tools.cli",
])
def test_inspect_stays_the_function_after_its_submodule_is_imported(imports: str, tmp_path: Path) -> None:
    """Importing the inspection modules (or modules that do) in a fresh process before the first
    `gpuwrite.inspect` leaves the function where it is (its module is `gpuwrite.inspection.file`, so no
    submodule of the root shares its name)."""
    out = _python(INSPECT_AFTER_SUBMODULES.format(imports=imports), str(tmp_path / "x.parquet"))
    assert out == ["True 2"]


def test_compile_notice_listens_once_the_pipeline_is_loaded() -> None:
    """`import gpuwrite` loads no numba; importing the writer installs the compile listener, and the kernels it
    loaded are not compiled yet (so the first compile, at the first write, is announced)."""
    code = ("import sys, gpuwrite; print('numba' in sys.modules); import gpuwrite.pipeline.writer; "
            "from gpuwrite.backends import kernel_cache as k; "
            "print(k._installed, len(k.kernel_dispatchers()) > 0, any(d.signatures for d in k.kernel_dispatchers()))")
    assert _python(code) == ["False", "True True False"]
