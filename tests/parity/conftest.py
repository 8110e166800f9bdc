"""Parity fixtures: RefWriter compiled once per session; no JDK means skip, or failure when CI is set."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

PARITY_TESTS_DIR = Path(__file__).resolve().parent
if str(PARITY_TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(PARITY_TESTS_DIR))

from reference import ReferenceUnavailable, compile_ref_writer  # noqa: E402


@pytest.fixture(scope="session")
def ref_writer_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder holding the compiled RefWriter.class (compiled once per test session)."""
    try:
        return compile_ref_writer(tmp_path_factory.mktemp("refwriter-classes"))
    except ReferenceUnavailable as e:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set, so the parquet-java parity tests must run: {e}")
        pytest.skip(str(e))
