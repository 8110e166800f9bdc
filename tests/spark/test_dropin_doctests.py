"""PySpark's own DataFrameWriter doctests (from the installed pyspark/sql/readwriter.py) run in one session with
gpuwrite disabled and then enabled: both pass, and with gpuwrite on the Parquet examples' files are
gpuwrite's (footer created_by) while the other formats and clusterBy fall back to Spark's writer."""

from __future__ import annotations

import doctest
import io
from typing import Any

import pytest
from dropin_harness import Footers, gpuwrite_on

from gpuwrite.spark import dropin

pytestmark = pytest.mark.spark

# doctest of DataFrameWriter.<name> -> whether its writes are gpuwrite's (else a fallback is expected)
PARQUET_EXAMPLES = ["mode", "format", "partitionBy", "bucketBy", "sortBy", "insertInto", "saveAsTable", "parquet"]
FALLBACK_EXAMPLES = ["save", "option", "options", "clusterBy"]


def run_doctest(spark: Any, name: str) -> tuple[int, int, str]:
    """(failures, examples run, report) of the installed pyspark's DataFrameWriter.<name> doctest."""
    import pyspark.sql.readwriter as module

    finder = doctest.DocTestFinder()
    tests = {t.name: t for t in finder.find(module.DataFrameWriter, "DataFrameWriter", module=module,
                                            globs={**module.__dict__, "spark": spark})}
    test = tests[f"DataFrameWriter.{name}"]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    result = runner.run(test, out=out.write)
    return result.failed, result.attempted, out.getvalue()


@pytest.mark.parametrize("name", PARQUET_EXAMPLES + FALLBACK_EXAMPLES)
def test_pyspark_writer_doctest_with_and_without_gpuwrite(spark, name):
    failed, attempted, report = run_doctest(spark, name)
    assert attempted > 0 and failed == 0, f"Spark's own writer:\n{report}"
    footers = Footers()
    with gpuwrite_on(spark, footers):
        failed, attempted, report = run_doctest(spark, name)
        reasons = dropin.fallbacks()
    assert attempted > 0 and failed == 0, f"with gpuwrite:\n{report}"
    if name in PARQUET_EXAMPLES:
        assert footers.all_gpuwrite(), footers.created_by
        assert reasons == [], reasons
    else:
        assert footers.created_by == []
        assert reasons and all(r.reason for r in reasons), reasons
