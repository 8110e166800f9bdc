"""The on-disk cache of the CPU kernels: a read-only cache shipped inside the package, then a writable one.

The package build (setup.py's `build_py`) runs `gpuwrite warmup` against the build tree with `BUILD_ENV` naming
the shipped folder, `kernels/_cache/<subpackage>/`; every signature it compiles lands there and is installed with
the package. A process then loads each kernel from the shipped folder without writing to it (a read-only install
works), and only a signature missing there (another CPU, another numba, an input the warm-up did not cover) is
compiled and saved where numba would cache it (NUMBA_CACHE_DIR, the in-tree `__pycache__`, the user's cache
directory, else a temp-directory fallback).

Entries are keyed by content, never by file times: installers do not keep mtimes, so the index stamp is the
digest of every kernel source and the options are in the key. Nothing is resolved until a kernel is first
called, and the shipped index of a kernel is read once per process.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from numba.core import compiler, config
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile

BUILD_ENV = "GPUWRITE_BUILD_KERNEL_CACHE"  # set by the package build: the shipped folder to compile into
SHIPPED_ENV = "GPUWRITE_SHIPPED_KERNEL_CACHE"  # "0": ignore the shipped cache (tests of the user cache)
FOLDER = os.path.dirname(os.path.abspath(__file__))  # the kernels package


@functools.cache
def sources_digest() -> str:
    """A digest of every kernel module's source. numba keys a cached kernel by its own file only, so a kernel
    that inlines a helper from another module would keep the helper's old code after that module changed."""
    digest = hashlib.sha256()
    names = sorted(os.path.relpath(os.path.join(d, n), FOLDER) for d, _subs, files in os.walk(FOLDER)
                   for n in files if n.endswith(".py") and "__pycache__" not in d)  # the job subfolders too
    for name in names:
        with open(os.path.join(FOLDER, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()[:16]


def shipped_root() -> str | None:
    """The shipped cache folder (the build's target while the package is built); None when switched off."""
    built = os.environ.get(BUILD_ENV)
    if built:
        return built
    if os.environ.get(SHIPPED_ENV, "1") == "0":
        return None
    return os.path.join(FOLDER, "_cache")


def fallback_cache_dir() -> str:
    """A writable cache directory for numba when neither the install nor the user's cache dir is writable."""
    return os.path.join(tempfile.gettempdir(), f"gpuwrite-numba-cache-{os.getuid() if hasattr(os, 'getuid') else 0}")


def use_fallback_cache_dir() -> None:
    """Point numba's cache, and numba-cuda's (its own copy of the setting) once numba.cuda is loaded, at
    `fallback_cache_dir()`."""
    config.CACHE_DIR = fallback_cache_dir()  # type: ignore[attr-defined]
    cuda_config = sys.modules.get("numba.cuda.core.config")
    if cuda_config is not None:
        cuda_config.CACHE_DIR = fallback_cache_dir()  # type: ignore[attr-defined]


def _filename_base(py_func: Callable[..., Any]) -> str:
    """numba's file name for a function's cache entries: module.qualname-line.pyXY (see numba's CacheImpl)."""
    module = os.path.splitext(os.path.basename(py_func.__code__.co_filename))[0]
    name = f"{module}.{py_func.__qualname__}".replace("<", "").replace(">", "")
    v = sys.version_info
    return f"{name}-{py_func.__code__.co_firstlineno}.py{v[0]}{v[1]}{getattr(sys, 'abiflags', '')}"


def _needs_runtime(library: Any) -> bool:
    """Whether a cached library may call numba's runtime (NRT), whose initialisation compiles a few functions
    (~0.03 s): object code that names no `NRT_` symbol does not (the kernels are compiled without reference
    counting, see `_jit`); anything else is assumed to."""
    try:
        _name, kind, (code, _bitcode) = library
        return kind != "object" or b"NRT_" in code
    except (TypeError, ValueError):
        return True


class _ShippedIndex(IndexDataCacheFile):  # type: ignore[misc]
    """A shipped kernel's index and data files, only read: the index once per process."""

    @functools.cached_property
    def _overloads(self) -> dict[Any, str]:
        """The index, read once (the shipped folder does not change while a process runs)."""
        try:
            return dict(super()._load_index())
        except (OSError, EOFError, ValueError, TypeError, AttributeError, ImportError):  # unreadable: as empty
            return {}

    def _load_index(self) -> dict[Any, str]:
        return self._overloads


class KernelCache(FunctionCache):  # type: ignore[misc]
    """numba's on-disk cache for one kernel, read from the shipped folder first (see the module docstring).

    numba keys a cached kernel by signature, machine (CPU name and features) and bytecode; the compile options
    and the kernel sources' digest are added to the key, so a kernel cached under other options or beside an
    edited helper never loads. A machine with other CPU features misses and compiles into the writable cache.
    """

    def __init__(self, py_func: Callable[..., Any], options: str) -> None:  # numba's locators run lazily
        self._name = repr(py_func)
        self._py_func = py_func
        self._options = options
        self._enabled = True
        self._writable: tuple[CompileResultCacheImpl, IndexDataCacheFile] | None = None
        root = shipped_root()
        folder = os.path.relpath(os.path.dirname(os.path.abspath(py_func.__code__.co_filename)), FOLDER)
        self._shipped = None if root is None else _ShippedIndex(
            cache_path=os.path.normpath(os.path.join(root, folder)), filename_base=_filename_base(py_func),
            source_stamp=sources_digest())

    def _writable_cache(self) -> tuple[CompileResultCacheImpl, IndexDataCacheFile]:
        """numba's cache location for this kernel (resolved on first use) and its content-stamped index."""
        if self._writable is None:
            try:
                impl = CompileResultCacheImpl(self._py_func)
            except RuntimeError as exc:
                if "no locator available" not in str(exc):
                    raise
                use_fallback_cache_dir()
                impl = CompileResultCacheImpl(self._py_func)
            path = impl.locator.get_cache_path()
            if os.environ.get(BUILD_ENV) and self._shipped is not None:
                path = self._shipped._cache_path  # the build compiles into the shipped folder only
                os.makedirs(path, exist_ok=True)
            self._writable = impl, IndexDataCacheFile(cache_path=path, filename_base=impl.filename_base,
                                                      source_stamp=sources_digest())
        return self._writable

    @property
    def cache_path(self) -> str:
        """Where this kernel's new compiles are saved (numba's location; the shipped folder is only read)."""
        return str(self._writable_cache()[1]._cache_path)

    def flush(self) -> None:
        """Empty the writable index (numba's `Cache.flush`); the shipped folder is never written."""
        self._writable_cache()[1].flush()

    def _save_overload(self, sig: Any, data: Any) -> None:
        """numba's `Cache._save_overload`, into the writable cache."""
        if not self._enabled:
            return
        impl, index = self._writable_cache()
        if not impl.check_cachable(data):
            return
        impl.locator.ensure_cache_path()
        index.save(self._index_key(sig, data.codegen), impl.reduce(data))

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        """The cached compile result for `sig`, shipped first, else None.

        numba refreshes the whole target context (importing and registering every implementation it has, a
        fixed ~0.15 s) before each load; a cached kernel needs at most numba's runtime, and a compile refreshes
        the context itself.
        """
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        data = self._shipped.load(key) if self._shipped is not None else None
        if data is None:
            data = self._writable_cache()[1].load(key)
        if data is None:
            return None
        if _needs_runtime(data[0]):
            from numba.core.runtime import rtsys

            rtsys.initialize(target_context)  # NRT's symbols, for the linker
        return compiler.CompileResult._rebuild(target_context, *data)  # numba's CompileResultCacheImpl.rebuild

    def _index_key(self, sig: Any, codegen: Any) -> tuple[Any, ...]:
        return (*super()._index_key(sig, codegen), self._options, sources_digest())
