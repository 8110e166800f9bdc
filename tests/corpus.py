"""The public parquet-testing corpus in ../shared beside the checkout: used in place, never copied."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "parquet-testing"


def corpus_file(name: str) -> Path:
    """A corpus file; without ../shared the test is skipped with the reason (under CI it fails instead)."""
    path = CORPUS / name
    if path.is_file():
        return path
    reason = f"{path} is not available (../shared/data/parquet-testing is not beside this checkout)"
    if os.environ.get("CI"):
        pytest.fail(f"CI is set, so the parquet-testing corpus must be present: {reason}")
    pytest.skip(reason)
