"""Shared fixtures: one local SparkSession per test session, and a Parquet path in a per-test folder.

The helper modules beside this file (corpus.py, readers.py, reference.py, ...) import by their plain names from
every test folder: pytest's default import mode ("prepend", no __init__.py in tests/) puts this folder on the
import path when it loads this conftest, and each test's own folder when it loads that test (the helpers beside
it, such as iceberg/iceberg_helpers.py). Tests never edit the import path (test_architecture.py checks)."""

from __future__ import annotations

import os
import shutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from gpuwrite.pipeline.buffers import Slabs

# Helpers that hold the assertions of tests moved out of test modules: rewritten as pytest rewrites a test's own.
pytest.register_assert_rewrite("encoder_pages", "identity_corpus", "staged_jobs")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local[2] SparkSession in UTC, shared by all tests; skipped only when no `java` is on PATH."""
    if shutil.which("java") is None:
        pytest.skip("no `java` on PATH: PySpark needs a JVM to read files back")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("gpuwrite-tests")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.warehouse.dir", str(warehouse))
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


@pytest.fixture
def tmp_parquet(tmp_path: Path) -> Iterator[Path]:
    """Path of a not-yet-written Parquet file inside the test's tmp_path."""
    yield tmp_path / "data.parquet"


@pytest.fixture(scope="module")
def probe() -> Any:
    """Ask parquet-java (RefWriter --bloom) a batch of probes; skip without a JDK unless CI is set."""
    from reference import ReferenceUnavailable, bloom_probes

    def ask(lines: list[str]) -> list[str]:
        try:
            return bloom_probes(lines)
        except ReferenceUnavailable as e:
            if os.environ.get("CI"):
                pytest.fail(f"CI is set, so the parquet-java bloom probes must run: {e}")
            pytest.skip(str(e))
    return ask


@pytest.fixture
def memfs() -> Iterator[Any]:
    """fsspec's process-wide in-memory filesystem, emptied before and after the test."""
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.store.clear()
    fs.pseudo_dirs[:] = [""]
    yield fs
    fs.store.clear()
    fs.pseudo_dirs[:] = [""]


@pytest.fixture
def _fresh() -> Iterator[Slabs]:
    """A private set of the conversion buffers' slabs (gpuwrite.pipeline.buffers.Slabs, yielded) and of the page
    buffers' for one test, the process's own put back afterwards: modules whose tests count slabs take it for every
    test (`pytestmark = pytest.mark.usefixtures("_fresh")`)."""
    from gpuwrite.pipeline import buffers

    saved, saved_pages = buffers._SLABS, buffers._PAGE_SLABS
    buffers._SLABS, buffers._PAGE_SLABS = buffers.Slabs(), buffers.Slabs()
    yield buffers._SLABS
    buffers._SLABS.release()
    buffers._PAGE_SLABS.release()
    buffers._SLABS, buffers._PAGE_SLABS = saved, saved_pages
