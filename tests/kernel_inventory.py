"""The CUDA kernels kernels/ defines, read from the source: what the PTX table (backends/test_ptx.py) and the
kernel cache tests (kernels/test_cuda_cache.py) must each cover."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def global_kernels() -> set[str]:
    """module.name (relative to kernels/) of every CUDA kernel (`@cuda_kernel` or `@cuda.jit`, not a device function) in kernels/."""
    found = set()
    for path in sorted((ROOT / "kernels").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT / "kernels").with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for deco in node.decorator_list:
                call = deco if isinstance(deco, ast.Call) else None
                target = call.func if call else deco
                device = call is not None and any(k.arg == "device" for k in call.keywords)
                if ast.unparse(target) in ("cuda.jit", "cuda_kernel") and not device:
                    found.add(f"{module}.{node.name}")
    return found
