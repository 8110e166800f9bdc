"""One decorator for every kernel, and the CUDA forms built from the same source.

`jit` compiles a kernel for the CPU with numba. `device` compiles the very same Python source with
numba.cuda as a device function, rebinding the helpers it calls to their device forms; `page_kernel` wraps
a per-page device function into a CUDA kernel with one thread per page. Under numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1) the CUDA forms run as Python, so the CPU tests and the simulator tests exercise the
same logic.
"""

from __future__ import annotations

import os
import tempfile
import types
from collections.abc import Callable
from typing import Any, TypeVar

from numba import njit
from numba.core import config

from ._disk_cache import KernelCache, fallback_cache_dir, sources_digest, use_fallback_cache_dir

__all__ = ["cuda_kernel", "device", "fallback_cache_dir", "jit", "jit_alloc", "jit_inline", "page_kernel", "source",
           "sources_digest", "use_fallback_cache_dir"]

F = TypeVar("F", bound=Callable[..., Any])

_KERNELS: dict[int, Callable[..., Any]] = {}  # id(cpu dispatcher) -> python source function
_DEVICE: dict[int, Any] = {}  # id(python source function) -> cuda device function
_GLOBAL: dict[int, Any] = {}  # id(python source function) -> cuda kernel, one thread per page
# numba's reference counting (NRT) costs an atomic increment and decrement of every array argument at each call
# from one compiled function to another: tens of nanoseconds per call, which per-value helpers pay per value.
# Kernels allocate nothing (the same source is CUDA device code), so they compile without it; a kernel that
# allocates fails to compile so (numba names the allocation) and takes `jit_alloc` instead.
_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False}


def jit(fn: F) -> F:
    """Compile `fn` for the CPU with numba (cached on disk); `device(fn)` gives its CUDA form.

    A kernel loads from the cache shipped in the package (compiled when it was built, see `_disk_cache`); a
    signature missing there is compiled and cached beside the source (`kernels/__pycache__`) when that is
    writable, else under the user's cache directory; `NUMBA_CACHE_DIR` overrides both. When none is writable (a
    read-only install on a host with a read-only home, as on some Spark executors) the kernels cache in a
    per-user temporary directory instead.
    """
    return _compile(fn, _OPTIONS)


def jit_alloc(fn: F) -> F:
    """`jit` for a host kernel that allocates arrays (so it needs numba's reference counting)."""
    return _compile(fn, {**_OPTIONS, "_nrt": True})


def _compile(fn: F, options: dict[str, Any]) -> F:
    """The CPU dispatcher of `fn` (cached on disk, see `jit`), registered for `device`.

    numba's own cache (`cache=True`) resolves its locator, stamps and probes the folder for every kernel when
    its module is imported; `KernelCache` does that on a kernel's first call only (see `_disk_cache`)."""
    dispatcher = njit(**{**options, "cache": False})(fn)
    if options.get("cache"):
        dispatcher._cache = KernelCache(fn, ",".join(f"{k}={v}" for k, v in sorted(options.items())))
    _KERNELS[id(dispatcher)] = fn
    return dispatcher  # type: ignore[return-value]


def source(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """The Python function a @jit kernel was compiled from."""
    fn = _KERNELS.get(id(kernel))
    if fn is None:
        raise TypeError(f"{getattr(kernel, '__name__', kernel)!r} is not a gpuwrite @jit kernel")
    return fn


def device(kernel: Callable[..., Any]) -> Any:
    """The CUDA device function compiled from the same source as the @jit `kernel`."""
    fn = source(kernel)
    found = _DEVICE.get(id(fn))
    if found is not None:
        return found
    from numba import cuda

    namespace = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        helper = namespace.get(name)
        if id(helper) in _KERNELS:
            namespace[name] = device(helper)  # type: ignore[arg-type]
    clone = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__qualname__ = fn.__qualname__
    clone.__module__ = fn.__module__
    clone.__doc__ = fn.__doc__
    # Under the simulator a device function is plain Python; calling the clone directly skips the
    # simulator's per-call wrapper, which the per-value helpers would pay millions of times.
    compiled = clone if _simulated() else cuda.jit(device=True)(clone)
    _DEVICE[id(fn)] = compiled
    return compiled


def _simulated() -> bool:
    """Whether numba.cuda is numba's CUDA simulator."""
    from numba.core import config

    return bool(getattr(config, "ENABLE_CUDASIM", False))


def page_kernel(kernel: Callable[..., Any]) -> Any:
    """A CUDA kernel running the per-page @jit `kernel(p, *args)` with thread p handling page p < n.

    Launch as `k[blocks, threads](n, *args)`. The wrapper's source is written to a file of its own (see
    `_wrapper_file`) so that numba-cuda can cache the compiled kernel like the kernels written in kernels/.
    """
    fn = source(kernel)
    found = _GLOBAL.get(id(fn))
    if found is not None:
        return found
    from numba import cuda

    nargs = fn.__code__.co_argcount - 1
    names = ", ".join(f"a{i}" for i in range(nargs))
    text = (f"def run_pages(n, {names}):\n"
            f"    p = cuda.grid(1)\n"
            f"    if p < n:\n"
            f"        body(p, {names})\n")
    namespace: dict[str, Any] = {"cuda": cuda, "body": device(kernel)}
    filename = f"<page kernel {fn.__qualname__}>" if _simulated() else _wrapper_file(fn, text)
    exec(compile(text, filename, "exec"), namespace)
    compiled = cuda_kernel(namespace["run_pages"])
    _GLOBAL[id(fn)] = compiled
    return compiled


def _wrapper_file(fn: Callable[..., Any], text: str) -> str:
    """A file holding a page kernel's wrapper source, with the digest of the source file of `fn` in a comment:
    numba-cuda stamps a cached kernel with its file's time and size, so an edit of the body's file rewrites the
    wrapper and retires the cached kernel. Written atomically and only when its text changes."""
    import hashlib

    body_file = fn.__code__.co_filename
    try:
        with open(body_file, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        digest = "unknown"
    content = f"# page kernel of {fn.__module__}.{fn.__qualname__}; source digest {digest}\n" + text
    folder = os.path.join(cuda_cache_root(), "gpuwrite_page_kernels")
    path = os.path.join(folder, f"{fn.__module__}.{fn.__qualname__}.py".replace("<", "").replace(">", ""))
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == content:
                return path
    except OSError:
        pass
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(content)
    os.replace(tmp, path)
    return path


def cuda_cache_root() -> str:
    """Where generated kernel sources live: numba's cache directory when one is set, else the fallback."""
    from numba.cuda.core import config as cuda_config

    return str(getattr(cuda_config, "CACHE_DIR", "") or getattr(config, "CACHE_DIR", "") or fallback_cache_dir())


def cuda_kernel(fn: F) -> F:
    """`numba.cuda.jit` with numba-cuda's on-disk cache: a kernel compiled once (PTX and cubin for the device's
    compute capability) is loaded by later processes instead of going through NVVM again.

    The cache goes where the CPU kernels' goes (`jit`): NUMBA_CACHE_DIR, else beside the source, else the user's
    cache directory, else the temp-directory fallback (numba-cuda reads its own copy of the setting). Under the
    simulator kernels are Python and nothing is cached.
    """
    from numba import cuda

    if _simulated():
        return cuda.jit(fn)  # type: ignore[no-any-return]
    try:
        return cuda.jit(cache=True)(fn)  # type: ignore[no-any-return]
    except RuntimeError as exc:
        if "no locator available" not in str(exc):
            raise
        use_fallback_cache_dir()  # numba-cuda's setting included: numba.cuda is loaded
        return cuda.jit(cache=True)(fn)  # type: ignore[no-any-return]


def jit_inline(fn: F) -> F:
    """`jit`, and inlined by numba into the @jit functions that call it: numba does not inline one compiled
    function into another, so a per-value helper called in a hot loop costs a call each time otherwise.
    `device(fn)` gives its CUDA form (NVVM inlines device functions itself)."""
    return _compile(fn, {**_OPTIONS, "inline": "always"})
