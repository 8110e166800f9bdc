"""Bad input raises an error that names what is wrong, and leaves no file and no temporary file behind."""

from __future__ import annotations

import errno
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from unprivileged import reachable_directory, unprivileged

import gpuwrite
from gpuwrite import GpuwriteError, UnsupportedTypeError
from gpuwrite.errors import FileWriteError


def _leftovers(directory: os.PathLike[str] | str) -> list[str]:
    """Everything in the directory (the test's own tmp dir starts empty)."""
    return sorted(os.listdir(directory))


@pytest.mark.parametrize("arrow_type, label", [
    (pa.uint32(), "uint32"),
    (pa.duration("us"), "duration"),
    (pa.month_day_nano_interval(), "month_day_nano_interval"),
    (pa.time64("us"), "time64"),
    (pa.null(), "null"),
    (pa.float16(), "halffloat"),
])
def test_unsupported_type_names_column_and_type(tmp_path, arrow_type, label):
    """An unsupported Arrow type is refused before anything is written."""
    table = pa.table({"ok": pa.array([1], pa.int32()), "bad_col": pa.array([None], arrow_type)})
    with pytest.raises(GpuwriteError) as info:
        gpuwrite.write_table(table, tmp_path / "out.parquet")
    assert "bad_col" in str(info.value) and label in str(info.value)
    assert _leftovers(tmp_path) == []


def test_union_and_nested_types_are_refused(tmp_path):
    """Unions (and, until nested support lands, structs) name the column."""
    union = pa.UnionArray.from_sparse(pa.array([0], pa.int8()), [pa.array([1]), pa.array(["a"])])
    with pytest.raises(GpuwriteError, match="u_col"):
        gpuwrite.write_table(pa.table({"u_col": union}), tmp_path / "u.parquet")
    assert _leftovers(tmp_path) == []


def test_decimal_precision_over_38_refused(tmp_path):
    """Spark's decimals stop at precision 38."""
    table = pa.table({"big": pa.array([1], pa.decimal256(40, 0))})
    with pytest.raises(GpuwriteError, match=r"big.*precision 40"):
        gpuwrite.write_table(table, tmp_path / "d.parquet")


def _temp_files(directory) -> list[str]:
    """The writer's temporary files in a directory."""
    return [n for n in _leftovers(directory) if n.endswith(".gpuwrite-tmp")]


def test_streaming_batch_with_other_schema(tmp_path):
    """A batch whose types differ from the writer's schema is refused; the writer stays usable (issue 12)."""
    path = tmp_path / "s.parquet"
    schema = pa.schema([("a", pa.int32())])
    w = gpuwrite.ParquetWriter(path, schema)
    w.write(pa.table({"a": pa.array([1, 2], pa.int32())}))
    with pytest.raises(GpuwriteError, match=r"'a'.*int64"):
        w.write(pa.table({"a": pa.array([1, 2], pa.int64())}))
    assert not path.exists() and len(_temp_files(tmp_path)) == 1  # still writing
    w.write(pa.table({"a": pa.array([3], pa.int32())}))
    w.close()
    assert pq.read_table(path).column("a").to_pylist() == [1, 2, 3]
    assert _leftovers(tmp_path) == ["s.parquet"]


def test_streaming_batch_with_other_names(tmp_path):
    """A batch with different column names is refused; aborting leaves nothing."""
    w = gpuwrite.ParquetWriter(tmp_path / "s.parquet", pa.schema([("a", pa.int32())]))
    with pytest.raises(GpuwriteError, match="differ"):
        w.write(pa.table({"b": pa.array([1], pa.int32())}))
    w.abort()
    assert _leftovers(tmp_path) == []


def test_nulls_in_non_nullable_column(tmp_path):
    """Nulls where the schema says not-null are refused, naming the column and the first null's row."""
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False)])
    with gpuwrite.ParquetWriter(tmp_path / "n.parquet", schema) as w:
        w.write(pa.table({"k": pa.array([7], pa.int64())}))
        with pytest.raises(GpuwriteError, match=r"'k'.*non-nullable.*row 1 of the batch \(row 2 of the file\)"):
            w.write(pa.table({"k": pa.array([1, None], pa.int64())}))
    assert pq.read_table(tmp_path / "n.parquet").column("k").to_pylist() == [7]


@pytest.mark.parametrize("options, needle", [
    ({"parquet.no.such.key": "1"}, "parquet.no.such.key"),
    ({"parquet.page.size": "big"}, "parquet.page.size"),
    ({"parquet.page.size": "-5"}, r"parquet\.page\.size.*positive"),
    ({"parquet.enable.dictionary": "maybe"}, "parquet.enable.dictionary"),
    ({"parquet.writer.version": "v1"}, "parquet.writer.version"),
    ({"parquet.writer.version": "PARQUET_1_0"}, "v2"),
    ({"spark.sql.parquet.outputTimestampType": "INT64"}, "outputTimestampType"),
    ({"compression": "lzo"}, "lzo"),
    ({"spark.sql.parquet.compression.codec": "nope"}, "nope"),
    ({"parquet.bloom.filter.fpp#a": "2"}, "parquet.bloom.filter.fpp#a"),
])
def test_bad_options(tmp_path, options, needle):
    """Unknown keys and bad values name the option; nothing is written."""
    with pytest.raises(GpuwriteError, match=needle):
        gpuwrite.write_table(pa.table({"a": [1]}), tmp_path / "o.parquet", options=options)
    assert _leftovers(tmp_path) == []


def test_bad_keyword(tmp_path):
    """A misspelt keyword is an error naming it."""
    with pytest.raises(GpuwriteError, match="compresion"):
        gpuwrite.write_table(pa.table({"a": [1]}), tmp_path / "o.parquet", compresion="zstd")
    with pytest.raises(GpuwriteError, match="compression"):
        gpuwrite.write_table(pa.table({"a": [1]}), tmp_path / "o.parquet", compression="brotli2")


def test_missing_directory():
    """A path in a directory that does not exist is refused, naming the directory."""
    with pytest.raises(GpuwriteError, match="does not exist"):
        gpuwrite.write_table(pa.table({"a": [1]}), "/nonexistent-dir-gpuwrite/x.parquet")


def test_unsearchable_directory_is_permission_denied_not_missing():
    """Reproducer: a directory under one the user cannot search (no x permission) was reported as "does not
    exist". Now a FileWriteError (EACCES) says permission denied and names the directory that cannot be
    searched; "does not exist" is kept for directories that do not exist."""
    with reachable_directory() as top:
        locked = os.path.join(top, "locked")
        os.makedirs(os.path.join(locked, "inner"))
        os.chmod(locked, 0o600)  # readable, not searchable
        with unprivileged():
            with pytest.raises(FileWriteError, match=rf"permission denied: directory '{locked}' cannot be "
                                                     r"searched") as info:
                gpuwrite.write_table(pa.table({"a": [1]}), os.path.join(locked, "inner", "x.parquet"))
        assert "does not exist" not in str(info.value) and info.value.errno == errno.EACCES
        os.chmod(locked, 0o700)
        assert os.listdir(os.path.join(locked, "inner")) == []
        with pytest.raises(FileWriteError, match=r"directory '[^']*missing' does not exist") as info:
            gpuwrite.write_table(pa.table({"a": [1]}), os.path.join(top, "missing", "x.parquet"))
        assert info.value.errno == errno.ENOENT


def test_polars_int128_names_the_column_and_what_to_cast_to(tmp_path):
    """Reproducer: a polars Int128 column raised pyarrow's bare `ArrowInvalid: ... format string: '_pli128'`.
    Now an UnsupportedTypeError names the column (nested ones by path), says Int128 is not supported and what
    to cast to; ParquetWriter.write says the same; nothing is written."""
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"ok": [1, 2], "big": pl.Series([1, 2], dtype=pl.Int128)})
    with pytest.raises(UnsupportedTypeError, match=r"column 'big': polars Int128 is not supported.*"
                                                   r"Decimal\(38, 0\)"):
        gpuwrite.write_table(df, tmp_path / "x.parquet")
    nested = df.select(pl.struct(pl.col("big").alias("inner"), pl.col("ok")).alias("st"))
    with pytest.raises(UnsupportedTypeError, match=r"column 'st\.inner': polars Int128"):
        gpuwrite.write_table(nested, tmp_path / "x.parquet")
    writer = gpuwrite.ParquetWriter(tmp_path / "w.parquet", pa.schema([("ok", pa.int64())]))
    with pytest.raises(UnsupportedTypeError, match="column 'big': polars Int128"):
        writer.write(df)
    writer.abort()
    assert _leftovers(tmp_path) == []
    assert gpuwrite.write_table(df.with_columns(pl.col("big").cast(pl.Decimal(38, 0))),
                                tmp_path / "cast.parquet").num_rows == 2


def test_not_a_table(tmp_path):
    """Data of an unknown kind is a TypeError naming what was given."""
    with pytest.raises(TypeError, match="dict"):
        gpuwrite.write_table({"a": [1]}, tmp_path / "x.parquet")


def test_gpu_device_without_backend(tmp_path):
    """device='gpu' says the GPU backend is not available rather than silently using the CPU."""
    with pytest.raises(GpuwriteError, match="gpu"):
        gpuwrite.write_table(pa.table({"a": [1]}), tmp_path / "x.parquet", device="gpu")
    assert _leftovers(tmp_path) == []


def test_source_failing_half_way_leaves_nothing(tmp_path):
    """A RecordBatchReader that raises after some batches: the error propagates, no file remains."""
    schema = pa.schema([("a", pa.int64())])

    def batches():
        for i in range(5):
            if i == 3:
                raise RuntimeError("source broke at batch 3")
            yield pa.record_batch([pa.array(range(i * 100_000, (i + 1) * 100_000), pa.int64())], schema=schema)

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    path = tmp_path / "half.parquet"
    with pytest.raises(Exception, match="source broke"):
        gpuwrite.write_table(reader, path, block_size=64 * 1024)
    assert _leftovers(tmp_path) == []


def test_exception_inside_with_block_leaves_nothing(tmp_path):
    """An exception in the caller's `with` body aborts the write."""
    path = tmp_path / "w.parquet"
    with pytest.raises(KeyError):
        with gpuwrite.ParquetWriter(path, pa.schema([("a", pa.int64())])) as w:
            w.write(pa.table({"a": pa.array(range(1000), pa.int64())}))
            raise KeyError("caller failed")
    assert _leftovers(tmp_path) == []


def test_existing_file_is_untouched_on_failure(tmp_path):
    """A failed write over an existing file leaves the old file as it was."""
    path = tmp_path / "keep.parquet"
    path.write_bytes(b"old contents")
    with pytest.raises(GpuwriteError):
        gpuwrite.write_table(pa.table({"a": pa.array([1], pa.uint8())}), path)
    assert path.read_bytes() == b"old contents"
    assert _leftovers(tmp_path) == ["keep.parquet"]


def test_nanosecond_timestamps_with_sub_micro_parts(tmp_path):
    """Spark stores microseconds: nanoseconds that would be lost are refused, not truncated."""
    table = pa.table({"t": pa.array([1_000_000_001], pa.timestamp("ns", "UTC"))})
    with pytest.raises(GpuwriteError, match="'t'.*sub-microsecond"):
        gpuwrite.write_table(table, tmp_path / "t.parquet")
    ok = pa.table({"t": pa.array([1_000_000_000], pa.timestamp("ns", "UTC"))})
    assert gpuwrite.write_table(ok, tmp_path / "t.parquet").num_rows == 1


def test_table_without_columns_is_refused(tmp_path):
    with pytest.raises(gpuwrite.UnsupportedTypeError, match="no columns"):
        gpuwrite.write_table(pa.table({}), tmp_path / "x.parquet")
    assert not list(tmp_path.iterdir())


def test_duplicate_column_names_are_refused_naming_the_first(tmp_path):
    """A schema with a name twice is refused naming it (the first in order when several repeat), also among
    20,000 columns (the check is one pass over the names, not a count per name); nothing is left behind."""
    schema = pa.schema([pa.field(f"c{i}", pa.int32()) for i in range(20_000)] + [pa.field("c7", pa.int32()),
                                                                                  pa.field("c19999", pa.int64())])
    table = pa.Table.from_arrays([pa.array([1], t.type) for t in schema], schema=schema)
    with pytest.raises(gpuwrite.UnsupportedTypeError, match="duplicate column name 'c19999'"):
        gpuwrite.write_table(table, tmp_path / "x.parquet")
    assert list(tmp_path.iterdir()) == []
