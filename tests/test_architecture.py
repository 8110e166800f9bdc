"""Guard rails of the layout: which modules may import which, file length, and host-side argument lists.

The write path is input -> plan -> backend (cpu | device) -> assemble -> format; Spark policy lives under
gpuwrite/spark and the core imports nothing from it; encoders return bytes and numbers, never Thrift structs;
kernels know nothing of gpuwrite.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gpuwrite"
KERNELS = ROOT / "kernels"
MAX_LINES = 800
MAX_POSITIONAL = 6

# The core: everything a file write goes through. None of it may import gpuwrite.spark.
CORE = ("gpuwrite.format", "gpuwrite.assemble", "gpuwrite.encode", "gpuwrite.backends", "gpuwrite.pipeline.plan",
        "gpuwrite.pipeline.writer", "gpuwrite.pipeline.window", "gpuwrite.pipeline.columns", "gpuwrite.pipeline.levels", "gpuwrite.pipeline.leafdata",
        "gpuwrite.schema", "gpuwrite.result", "gpuwrite.pipeline.validate", "gpuwrite.filesystems")
THRIFT = ("gpuwrite.format.structs", "gpuwrite.format.thrift")


def module_name(path: Path) -> str:
    """The dotted module name of a source file (kernels/ is installed as gpuwrite.kernels)."""
    if path.is_relative_to(KERNELS):
        parts = ("gpuwrite", "kernels", *path.relative_to(KERNELS).with_suffix("").parts)
    else:
        parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(source: str, module: str, is_package: bool = False) -> Iterator[str]:
    """Absolute names of every module `source` imports (at any depth, relative imports resolved)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield target
            yield from (f"{target}.{alias.name}" for alias in node.names)


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    """Whether module `name` is one of `prefixes` or inside one of them."""
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def violations() -> list[str]:
    """Every import that crosses a wall, as 'module imports target (rule)'."""
    found = []
    for path in sorted([*PACKAGE.rglob("*.py"), *KERNELS.rglob("*.py")]):
        module = module_name(path)
        for target in imports(path.read_text(), module, path.name == "__init__.py"):
            if _within(module, CORE) and _within(target, ("gpuwrite.spark",)):
                found.append(f"{module} imports {target} (the core knows nothing of Spark)")
            if not _within(module, ("gpuwrite.iceberg",)) and _within(target, ("gpuwrite.iceberg", "pyiceberg")):
                found.append(f"{module} imports {target} (only gpuwrite.iceberg knows Iceberg)")
            if _within(module, ("gpuwrite.encode",)) and _within(target, THRIFT):
                found.append(f"{module} imports {target} (encoders return bytes and numbers, not Thrift)")
            if _within(module, ("gpuwrite.kernels",)) and _within(target, ("gpuwrite",)) \
                    and not _within(target, ("gpuwrite.kernels",)):
                found.append(f"{module} imports {target} (kernels know nothing of gpuwrite)")
    return found


def test_no_import_crosses_a_wall() -> None:
    assert violations() == []


def test_iceberg_is_imported_lazily() -> None:
    """`import gpuwrite.iceberg` loads no pyiceberg: the package imports its modules on first use."""
    init = (PACKAGE / "iceberg" / "__init__.py").read_text()
    top = [n for n in ast.parse(init).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [alias.name for n in top for alias in n.names] + [getattr(n, "module", "") or "" for n in top]
    assert names and not any("pyiceberg" in n or n in ("commit", "metrics", "partitions", "transforms", "files")
                             for n in names)
    profile = PACKAGE / "iceberg" / "profile.py"
    assert not any(_within(t, ("pyiceberg",)) for t in imports(profile.read_text(), "gpuwrite.iceberg.profile"))


# What `import gpuwrite` must not load: the root resolves its public names on first use.
NOT_AT_IMPORT = ("gpuwrite.spark", "gpuwrite.iceberg", "pandas", "pyspark", "numba", "gpuwrite.api")


def test_import_gpuwrite_loads_no_spark_iceberg_pandas_or_kernels() -> None:
    """A fresh `import gpuwrite` loads none of NOT_AT_IMPORT, patches no import hook, and the public names
    still resolve afterwards (which loads them)."""
    code = ("import sys; hooks = list(sys.meta_path); import gpuwrite; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('gpuwrite', 'pandas', 'pyspark', 'numba'))); "
            "print(sys.meta_path == hooks); print(gpuwrite.write_table.__module__, 'gpuwrite.spark' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded, same_hooks, after = done.stdout.splitlines()
    assert not [m for m in ast.literal_eval(loaded) if _within(m, NOT_AT_IMPORT)], loaded
    assert ast.literal_eval(loaded) == ["gpuwrite", "gpuwrite._version"]
    assert same_hooks == "True"
    assert after == "gpuwrite.api True"  # resolving write_table imports the writer (and Spark's footer keys)


def test_the_import_check_sees_relative_and_nested_imports() -> None:
    """The checker itself: a Spark import inside a function, relative, is found."""
    source = "def f():\n    from ..spark.footer_keys import x\n    import gpuwrite.format.structs\n"
    found = set(imports(source, "gpuwrite.assemble.file"))
    assert "gpuwrite.spark.footer_keys" in found and "gpuwrite.format.structs" in found
    assert "gpuwrite.kernels.encode" in set(imports("from . import rle\n", "gpuwrite.kernels.encode.pages"))
    assert "gpuwrite.encode.rules" in set(imports("from .rules import x\n", "gpuwrite.encode", is_package=True))


def _sources() -> list[Path]:
    """The project's Python files: package, kernels, tests and benchmarks."""
    return sorted(p for d in ("gpuwrite", "kernels", "tests", "bench") for p in (ROOT / d).rglob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_file_over_800_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


KERNEL_DECORATORS = ("jit", "jit_inline", "njit", "cuda.jit", "cuda_kernel")


def long_signatures(source: str) -> list[str]:
    """Functions with more than MAX_POSITIONAL positional parameters (self / cls not counted)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(ast.unparse(d.func if isinstance(d, ast.Call) else d) in KERNEL_DECORATORS
                   for d in node.decorator_list):
                continue  # a kernel (a test's own, outside kernels/): it passes arrays
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            if names and names[0] in ("self", "cls"):
                names = names[1:]
            if len(names) > MAX_POSITIONAL:
                found.append(f"{node.name} (line {node.lineno}): {len(names)} positional parameters")
    return found


@pytest.mark.parametrize("path", [p for p in _sources() if not p.is_relative_to(KERNELS)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_host_functions_take_at_most_six_positional_parameters(path: Path) -> None:
    """Kernels are exempt (they pass arrays); everything else groups what it re-threads in value objects."""
    assert long_signatures(path.read_text()) == []


def test_the_signature_check_counts_positional_parameters_only() -> None:
    assert long_signatures("def f(self, a, b, c, d, e, g, *, h, i): pass\n") == []
    assert long_signatures("def f(a, b, c, d, e, g, h): pass\n") == ["f (line 1): 7 positional parameters"]
    assert long_signatures("@jit\ndef f(a, b, c, d, e, g, h): pass\n") == []
