"""Iceberg tests: a SQLite SqlCatalog in a temporary warehouse (helpers in iceberg_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyiceberg", reason="gpuwrite[iceberg] is not installed")

from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402


@pytest.fixture()
def catalog(tmp_path: Path) -> SqlCatalog:
    cat = SqlCatalog("test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")
    cat.create_namespace("db")
    return cat


