"""Guard rails of the layout: which modules may import which, file length, and host-side argument lists.

The write path is input -> plan -> backend (cpu | device) -> assemble -> format; Spark policy lives under
gpuwrite/spark and the core imports nothing from it, nor reaches it through any chain of imports; encoders return
bytes and numbers, never Thrift structs; kernels know nothing of gpuwrite. Tests stand alone: none imports
another, none edits the import path.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from collections import deque
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gpuwrite"
KERNELS = ROOT / "kernels"
MAX_LINES = 800
MAX_POSITIONAL = 6

# The core: everything a file write goes through (input, options, plan, backends, encoders, file bytes).
CORE = ("gpuwrite.options", "gpuwrite.integrations", "gpuwrite.schema", "gpuwrite.type_hints", "gpuwrite.pipeline",
        "gpuwrite.page_model",
        "gpuwrite.backends", "gpuwrite.encode", "gpuwrite.assemble", "gpuwrite.format", "gpuwrite.result",
        "gpuwrite.filesystems", "gpuwrite.errors", "gpuwrite._version")
# What sits above the core and must stay out of it.
ABOVE_CORE = ("gpuwrite.api", "gpuwrite.spark", "gpuwrite.dataset", "gpuwrite.iceberg", "gpuwrite.inspection",
              "gpuwrite.tools", "pyspark", "pyiceberg")
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


def import_statements(source: str, module: str, is_package: bool = False) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(absolute module name, names taken from it) of every import in `source`, at any depth (inside functions
    too), relative imports resolved; `import a.b` takes no names."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield target, tuple(alias.name for alias in node.names)


def imports(source: str, module: str, is_package: bool = False) -> Iterator[str]:
    """Absolute names of every module `source` imports (at any depth, relative imports resolved), and of every
    name it takes from one (`from a import b` gives a and a.b)."""
    for target, names in import_statements(source, module, is_package):
        yield target
        yield from (f"{target}.{name}" for name in names)


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


# -- what a module reaches: its imports, their imports, and so on ---------------------------------------------


@dataclass(frozen=True)
class Layer:
    """A layer rule: no module under `members` may reach a module under `forbidden` by any chain of imports."""

    name: str
    members: tuple[str, ...]
    forbidden: tuple[str, ...]
    why: str


# The PySpark integration: every module of gpuwrite/spark/ but its policy package (read from the folder, so a new
# module is covered without editing this list).
SPARK_INTEGRATION = tuple(f"gpuwrite.spark.{p.stem}" for p in sorted((PACKAGE / "spark").iterdir())
                          if p.suffix == ".py" and p.stem != "__init__")


# The rules the reach check applies: the packages in flow order, each reaching only what is below it.
LAYERS = (
    Layer("core", CORE, ABOVE_CORE,
          "the write path knows nothing of the API above it, Spark, datasets, Iceberg, inspection or tooling"),
    Layer("spark policy", ("gpuwrite.spark.policy",),
          ("gpuwrite.api", "gpuwrite.dataset", "gpuwrite.iceberg", "gpuwrite.inspection", "gpuwrite.tools",
           "pyspark", "pyiceberg", *SPARK_INTEGRATION),
          "Spark's format rules are pure: the dataset writer and the PySpark integration build on them"),
    Layer("dataset", ("gpuwrite.dataset",),
          ("gpuwrite.iceberg", "gpuwrite.inspection", "gpuwrite.tools", "pyspark", "pyiceberg", *SPARK_INTEGRATION),
          "write_dataset works without Spark: it takes Spark's format rules (spark.policy), not the integration"),
    Layer("kernels", ("gpuwrite.kernels",),
          tuple(f"gpuwrite.{p.stem}" for p in sorted(PACKAGE.iterdir())
                if p.stem not in ("kernels", "__init__", "__pycache__", "py") and (p.suffix == ".py" or p.is_dir())),
          "kernels are arrays in, arrays out: nothing of gpuwrite outside them"),
)

# Imports the reach check does not follow for now, each with what removes it. Each entry must still be needed
# (test_every_known_import_is_still_needed), so this list only shrinks.
KNOWN: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Reach:
    """A member of a layer that reaches a forbidden package, by the shortest chain of imports (start first)."""

    layer: Layer
    package: str
    chain: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.chain[0]} reaches {self.package} ({self.layer.why}): {' -> '.join(self.chain)}"


def module_edges(source: str, module: str, is_package: bool, modules: Collection[str]) -> set[str]:
    """What `module` imports, as nodes of the import graph: `from p import m` of a module m is an edge to p.m;
    any other name taken from p, or `import p`, is an edge to p (its __init__). Names outside `modules`
    (pyspark.sql, numpy) are nodes as written. Parent packages are no edges: Python runs their __init__ on any
    import, but a module depends on what it names."""
    edges = set()
    for target, names in import_statements(source, module, is_package):
        submodules = {f"{target}.{name}" for name in names if f"{target}.{name}" in modules}
        edges |= submodules
        if not names or len(submodules) < len(names):
            edges.add(target)
    edges.discard(module)
    return edges


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """Every module of gpuwrite/ and kernels/ -> what it imports (module level and inside functions)."""
    paths = {module_name(p): p for p in sorted([*PACKAGE.rglob("*.py"), *KERNELS.rglob("*.py")])}
    return {name: frozenset(module_edges(path.read_text(), name, path.name == "__init__.py", paths))
            for name, path in paths.items()}


def reach_violations(graph: Mapping[str, Collection[str]], layer: Layer,
                     skip: Collection[tuple[str, str]] = ()) -> list[Reach]:
    """Each member of `layer` that reaches a forbidden package, once per package, by the shortest chain (breadth
    first); edges in `skip` are not followed, nor is anything past a forbidden module."""
    found = []
    for start in sorted(m for m in graph if _within(m, layer.members)):
        came_from: dict[str, str] = {}
        reached: dict[str, str] = {}  # forbidden package -> the first module of it reached
        queue = deque([start])
        while queue:
            here = queue.popleft()
            for there in sorted(graph.get(here, ())):
                if there == start or there in came_from or (here, there) in skip:
                    continue
                came_from[there] = here
                package = next((f for f in layer.forbidden if _within(there, (f,))), None)
                if package is None:
                    queue.append(there)
                else:
                    reached.setdefault(package, there)
        for package, end in sorted(reached.items()):
            chain = [end]
            while chain[-1] != start:
                chain.append(came_from[chain[-1]])
            found.append(Reach(layer, package, tuple(reversed(chain))))
    return found


@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: layer.name)
def test_no_module_reaches_what_its_layer_must_not_know(layer: Layer) -> None:
    """Through any chain of imports (other layers' modules included), KNOWN's edges aside."""
    assert [str(r) for r in reach_violations(import_graph(), layer, KNOWN)] == []


def test_every_known_import_is_still_needed() -> None:
    """An entry of KNOWN stays while the import exists and, followed, lets a layer member reach a forbidden
    package; once its cause is gone, remove the entry (KNOWN is empty today: nothing is let through)."""
    graph = import_graph()
    for edge in KNOWN:
        assert edge[1] in graph.get(edge[0], ()), f"{' -> '.join(edge)} is no longer an import: remove it"
        others = KNOWN.keys() - {edge}
        through = [r for layer in LAYERS for r in reach_violations(graph, layer, others)
                   if edge in zip(r.chain, r.chain[1:], strict=False)]
        assert through, f"no layer member reaches a forbidden package through {' -> '.join(edge)}: remove it"


def test_the_reach_check_follows_chains_past_other_layers() -> None:
    """The checker itself: chains through modules outside the layer, cycles, one report per package, skipped
    edges, and no search past a forbidden module."""
    graph = {"core.a": {"core.b", "numpy"}, "core.b": {"glue"}, "glue": {"core.a", "bad.x"}, "bad.x": {"pyspark"},
             "core.c": {"numpy", "glue.other"}, "glue.other": {"pyspark.sql"}}
    layer = Layer("t", ("core",), ("bad", "pyspark"), "a test rule")
    assert [str(r) for r in reach_violations(graph, layer)] == [
        "core.a reaches bad (a test rule): core.a -> core.b -> glue -> bad.x",
        "core.b reaches bad (a test rule): core.b -> glue -> bad.x",
        "core.c reaches pyspark (a test rule): core.c -> glue.other -> pyspark.sql",
    ]
    assert [str(r) for r in reach_violations(graph, layer, {("glue", "bad.x"), ("core.c", "glue.other")})] == []


def test_the_graph_has_an_edge_per_module_named() -> None:
    """`from p import m` of a module is an edge to p.m, not to p; other names taken from p are an edge to p, and
    names from outside the project stay as written."""
    modules = {"pkg", "pkg.mod", "pkg.sub", "pkg.sub.leaf"}
    assert module_edges("from pkg import mod\n", "pkg.sub.leaf", False, modules) == {"pkg.mod"}
    source = "def f():\n    from .. import __version__, mod\nimport pyspark.sql\nfrom . import leaf\n"
    assert module_edges(source, "pkg.sub.leaf", False, modules) == {"pkg", "pkg.mod", "pyspark.sql"}
    assert module_edges("from .leaf import x\n", "pkg.sub", True, modules) == {"pkg.sub.leaf"}


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


# -- tests stand alone ---------------------------------------------------------------------------------------------

TESTS = ROOT / "tests"
PATH_EDIT = re.compile(r"\bsys\s*\.\s*path\b|\bfrom\s+sys\s+import\b[^\n]*\bpath\b")
LOADERS = ("spec_from_file_location", "import_module", "run_path", "run_module", "__import__")


@functools.cache
def names_of_test_modules() -> frozenset[str]:
    """The names pytest imports the test modules and conftests under tests/ by (their file names)."""
    return frozenset(p.stem for p in TESTS.rglob("*.py") if p.stem.startswith("test_") or p.stem == "conftest")


def imported_test_modules(source: str, names: Collection[str]) -> list[str]:
    """The test modules (or conftests) `source` imports: by an import statement, or by a loader call
    (importlib's, runpy's) that names one, as a module or as a file."""
    found = []
    for target, taken in import_statements(source, "x"):
        parts = target.split(".") + [n for n in taken if n in names]
        found += [part for part in parts if part in names]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith(LOADERS):
            for arg in ast.walk(node):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    stem = arg.value.rsplit("/", 1)[-1].removesuffix(".py").rsplit(".", 1)[-1]
                    found += [stem] if stem in names else []
    return found


@pytest.mark.parametrize("path", [p for p in _sources() if not p.is_relative_to(PACKAGE) and
                                  not p.is_relative_to(KERNELS)], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_module_is_imported(path: Path) -> None:
    """Tests, their helpers and the benchmarks share code through helper modules (corpus.py, readers.py, ...),
    never by importing a test module: a test file stands alone."""
    assert imported_test_modules(path.read_text(), names_of_test_modules()) == []


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_edits_the_import_path(path: Path) -> None:
    """pytest puts tests/ and each test's folder on the import path (see conftest.py); a test that adds more
    depends on the order tests run in. Subprocesses take PYTHONPATH or a working directory instead."""
    assert PATH_EDIT.findall(path.read_text()) == []


def test_the_isolation_checks_see_imports_loaders_and_path_edits() -> None:
    """The checkers themselves: a test module imported by name, from a package or by file; an import-path edit
    in code or in a string a subprocess runs."""
    names = {"test_a", "conftest"}
    assert imported_test_modules("from test_a import x\nimport b.test_a\nfrom pkg import test_a\n",
                                 names) == ["test_a", "test_a", "test_a"]
    assert imported_test_modules("def f():\n    importlib.util.spec_from_file_location('m', p / 'test_a.py')\n",
                                 names) == ["test_a"]
    assert imported_test_modules("from helpers import test_b, c\nimport test_helpers\n", names) == []
    attr = "pa" + "th"  # spelt in two pieces, so that this file does not match its own check
    assert PATH_EDIT.findall(f"import sys\nsys.{attr}.insert(0, d)\n") == [f"sys.{attr}"]
    assert PATH_EDIT.findall(f"from sys import argv, {attr}\n") and PATH_EDIT.findall(f"'import sys; sys .{attr}'")
    assert PATH_EDIT.findall("os.path.join(a, b)\nsys.argv\n") == []
