"""Parity fixtures: RefWriter compiled once per session; no JDK means skip, or failure when CI is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from reference import ReferenceUnavailable, compile_ref_writer


@pytest.fixture(scope="session")
def ref_writer_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder holding the compiled RefWriter.class (compiled once per test session)."""
    try:
        return compile_ref_writer(tmp_path_factory.mktemp("refwriter-classes"))
    except ReferenceUnavailable as e:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set, so the parquet-java parity tests must run: {e}")
        pytest.skip(str(e))
