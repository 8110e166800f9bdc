"""FileSchema.from_arrow's memo: a schema written again is mapped once, and only an identical schema (types,
nullability, field and schema metadata) under the same shaping options shares a mapping."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest

import gpuwrite.schema as schema_module
from gpuwrite.errors import UnsupportedTypeError
from gpuwrite.options.model import WriteOptions
from gpuwrite.schema import FileSchema


def _schema(**meta: str) -> pa.Schema:
    return pa.schema([pa.field("a", pa.int64()), pa.field("b", pa.list_(pa.string()))], metadata=meta or None)


def _mapping_calls(monkeypatch: pytest.MonkeyPatch) -> list[pa.Schema]:
    """Record every schema actually mapped (the memo's misses)."""
    calls: list[pa.Schema] = []
    original = FileSchema._map.__func__  # type: ignore[attr-defined]

    def counted(cls: type[FileSchema], schema: pa.Schema, shape: schema_module.SchemaOptions) -> FileSchema:
        calls.append(schema)
        return original(cls, schema, shape)

    monkeypatch.setattr(FileSchema, "_map", classmethod(counted))
    monkeypatch.setattr(schema_module, "_MAPPED", type(schema_module._MAPPED)())
    return calls


def test_an_equal_schema_is_mapped_once(monkeypatch):
    calls = _mapping_calls(monkeypatch)
    opts = WriteOptions()
    first = FileSchema.from_arrow(_schema(), opts)
    again = FileSchema.from_arrow(_schema(), opts)  # another object, the same schema
    assert again is first and len(calls) == 1
    assert again.spark_row_metadata() == first.spark_row_metadata()


def test_metadata_types_nullability_and_shaping_options_each_map_anew(monkeypatch):
    calls = _mapping_calls(monkeypatch)
    base = FileSchema.from_arrow(_schema(), WriteOptions())
    others = [
        FileSchema.from_arrow(_schema(origin="x"), WriteOptions()),  # schema metadata
        FileSchema.from_arrow(_schema().set(0, pa.field("a", pa.int64(), metadata={"k": "v"})), WriteOptions()),
        FileSchema.from_arrow(_schema().set(0, pa.field("a", pa.int32())), WriteOptions()),
        FileSchema.from_arrow(_schema().set(0, pa.field("a", pa.int64(), nullable=False)), WriteOptions()),
        FileSchema.from_arrow(_schema(), WriteOptions(legacy_format=True)),  # Spark's legacy list layout
    ]
    assert len(calls) == 6 and all(o is not base for o in others)
    assert others[0].arrow.metadata == {b"origin": b"x"}
    assert others[1].arrow.field("a").metadata == {b"k": b"v"}
    assert others[2].leaves[0].kind == "int32" and base.leaves[0].kind == "int64"
    assert others[3].leaves[0].max_def == 0 and base.leaves[0].max_def == 1
    assert others[4].roots[1] != base.roots[1]  # the list's groups follow the legacy layout


def test_the_memo_keeps_the_latest_schemas_only(monkeypatch):
    calls = _mapping_calls(monkeypatch)
    monkeypatch.setattr(schema_module, "SCHEMA_MEMO", 2)
    opts = WriteOptions()
    for name in ("x", "y", "z"):
        FileSchema.from_arrow(pa.schema([pa.field(name, pa.int64())]), opts)
    assert len(schema_module._MAPPED) == 2
    FileSchema.from_arrow(pa.schema([pa.field("z", pa.int64())]), opts)  # kept
    FileSchema.from_arrow(pa.schema([pa.field("x", pa.int64())]), opts)  # dropped: mapped again
    assert [s.names[0] for s in calls] == ["x", "y", "z", "x"]


def test_an_unsupported_schema_raises_every_time_and_is_not_kept(monkeypatch):
    _mapping_calls(monkeypatch)
    bad = pa.schema([pa.field("when", pa.time64("ns"))])
    for _ in range(2):
        with pytest.raises(UnsupportedTypeError, match="when"):
            FileSchema.from_arrow(bad, WriteOptions())
    assert len(schema_module._MAPPED) == 0


def test_threads_mapping_one_schema_all_get_a_correct_mapping(monkeypatch):
    _mapping_calls(monkeypatch)
    monkeypatch.setattr(schema_module, "SCHEMA_MEMO", 3)
    found: list[FileSchema] = []
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(50):
                s = pa.schema([pa.field(f"c{(i + j) % 5}", pa.int64())])
                mapped = FileSchema.from_arrow(s, WriteOptions())
                assert mapped.arrow.equals(s, check_metadata=True)
                found.append(mapped)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(found) == 200 and len(schema_module._MAPPED) <= 3
