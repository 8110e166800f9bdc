"""The narrow projections of WriteOptions handed to code that reads only a few of its fields: each field is the
option of the same name, copied from the options it is built from (a projection never invents a value)."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pytest

from gpuwrite.options.model import WriteOptions
from gpuwrite.pipeline.rebase import RebaseOptions
from gpuwrite.pipeline.validate import CheckOptions
from gpuwrite.schema import FileSchema, SchemaOptions

# every field of each projection set away from its default, so a field copied from the wrong option shows
CHANGED = WriteOptions(datetime_rebase="LEGACY", int96_rebase="EXCEPTION", time_zone="Asia/Kolkata",
                       legacy_format=True, timestamp_type="TIMESTAMP_MILLIS", validate=False)


@pytest.mark.parametrize("projection", [RebaseOptions, SchemaOptions], ids=lambda c: c.__name__)
def test_projection_fields_are_the_options_of_the_same_name(projection: type) -> None:
    """Each field of the projection is a WriteOptions field, with the value of the options it was built from."""
    for opts in (WriteOptions(), CHANGED):
        built = projection.of(opts)
        for field in dataclasses.fields(projection):
            assert getattr(built, field.name) == getattr(opts, field.name), field.name
    assert projection.of(WriteOptions()) != projection.of(CHANGED)


def test_check_options_carry_validate_and_the_rebase() -> None:
    """CheckOptions: the validate option and the options' rebase projection."""
    assert CheckOptions.of(CHANGED) == CheckOptions(False, RebaseOptions("LEGACY", "EXCEPTION", "Asia/Kolkata"))
    assert CheckOptions.of(WriteOptions()) == CheckOptions(True, RebaseOptions("CORRECTED", "CORRECTED", "UTC"))


def test_timestamp_mode_follows_the_physical_type() -> None:
    """INT96 timestamps follow int96_rebase, INT64 ones (and dates) datetime_rebase, as in Spark's writer."""
    rebase = RebaseOptions.of(CHANGED)
    assert (rebase.timestamp_mode(True), rebase.timestamp_mode(False)) == ("EXCEPTION", "LEGACY")


def test_schema_options_shape_the_schema() -> None:
    """The schema built from the options is the one SchemaOptions describes: legacy FLBA decimals, MILLIS."""
    schema = pa.schema([("d", pa.decimal128(5, 2)), ("t", pa.timestamp("us", tz="UTC"))])
    leaves = FileSchema.from_arrow(schema, CHANGED).leaves
    assert [leaf.kind for leaf in leaves] == ["flba", "int64"]
    assert leaves[1].logical is not None and leaves[1].logical.unit == "MILLIS"
    assert [leaf.kind for leaf in FileSchema.from_arrow(schema, WriteOptions()).leaves] == ["int32", "int96"]
