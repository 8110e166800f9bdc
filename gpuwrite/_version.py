"""gpuwrite's version, alone in a module so the footer writer (`created_by`) and the CLI read it without
importing the package root; kept equal to pyproject.toml's `version` (tests/test_package_root.py checks it)."""

from __future__ import annotations

__version__ = "0.1.0"
