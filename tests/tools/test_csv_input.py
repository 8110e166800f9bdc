"""CSV input of `gpuwrite write`: --delimiter, --schema (Spark DDL or pyarrow text), --null-values, and
conversion errors that name the row and the column."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwrite.tools.cli import CSV_BLOCK_BYTES, main
from gpuwrite.tools.schema_text import SchemaTextError, parse_schema_text


def _write(tmp_path: Path, text: str, name: str = "in.csv") -> Path:
    """A CSV file with `text`."""
    path = tmp_path / name
    path.write_text(text)
    return path


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error the command printed (no traceback)."""
    err = capsys.readouterr().err
    assert err.startswith("gpuwrite: error: ") and "Traceback" not in err, err
    return err


def test_delimiter_schema_and_null_values(tmp_path: Path) -> None:
    """A ';' file typed by a Spark DDL schema: decimals stay exact DECIMAL(10,2), NA is null in every column,
    the unnamed column is inferred, NOT NULL makes the field required."""
    src = _write(tmp_path, "id;price;day;name\n1;1.39;2020-01-01;a\n2;NA;2020-01-02;NA\n3;10.5;2020-01-03;c\n")
    out = tmp_path / "out.parquet"
    argv = ["write", str(src), str(out), "--quiet", "--delimiter", ";", "--schema",
            "id INT NOT NULL, price DECIMAL(10,2), day DATE", "--null-values", "NA"]
    assert main(argv) == 0
    table = pq.read_table(out)
    assert table.schema.field("id").type == pa.int32() and not table.schema.field("id").nullable
    assert table.schema.field("price").type == pa.decimal128(10, 2)
    assert table.column("price").to_pylist() == [Decimal("1.39"), None, Decimal("10.50")]
    assert table.column("day").to_pylist() == [dt.date(2020, 1, d) for d in (1, 2, 3)]
    assert table.column("name").to_pylist() == ["a", None, "c"]
    column = pq.ParquetFile(out).metadata.schema.column(1)
    assert column.physical_type == "INT64" and column.logical_type.type == "DECIMAL"  # Spark's rule for p <= 18


def test_without_schema_decimal_text_is_inferred_as_double(tmp_path: Path) -> None:
    """Without --schema pyarrow's inference decides (DOUBLE for '1.39'); a tab name works as --delimiter."""
    src = _write(tmp_path, "price\tqty\n1.39\t2\n2.50\t3\n", "in.txt.csv")
    out = tmp_path / "out.parquet"
    assert main(["write", str(src), str(out), "--quiet", "--delimiter", "tab"]) == 0
    table = pq.read_table(out)
    assert table.schema.types == [pa.float64(), pa.int64()]
    assert table.column("price").to_pylist() == [1.39, 2.5]


def test_arrow_schema_text(tmp_path: Path) -> None:
    """pyarrow's schema text types the columns too (here a decimal with scale 3 and a string of digits)."""
    src = _write(tmp_path, "zip,amount\n01234,1.5\n98765,2.125\n")
    out = tmp_path / "out.parquet"
    assert main(["write", str(src), str(out), "--quiet", "--schema", "zip: string, amount: decimal128(9, 3)"]) == 0
    table = pq.read_table(out)
    assert table.column("zip").to_pylist() == ["01234", "98765"]
    assert table.column("amount").to_pylist() == [Decimal("1.500"), Decimal("2.125")]


def test_empty_text_as_the_only_null_value(tmp_path: Path) -> None:
    """--null-values '' makes only empty cells null: 'NA' stays text."""
    src = _write(tmp_path, "s,n\nNA,1\n,2\n")
    out = tmp_path / "out.parquet"
    assert main(["write", str(src), str(out), "--quiet", "--null-values", ""]) == 0
    assert pq.read_table(out).column("s").to_pylist() == ["NA", None]


def test_zoned_timestamps_local_text_and_offsets(tmp_path: Path) -> None:
    """Spark's TIMESTAMP: text without an offset is local time in the session zone, an offset wins."""
    src = _write(tmp_path, "i,t\n1,2020-01-01 10:00:00\n2,2020-01-01T10:00:00+02:00\n3,\n4,2020-06-01 00:00:00Z\n")
    out = tmp_path / "out.parquet"
    argv = ["write", str(src), str(out), "--quiet", "--schema", "t TIMESTAMP",
            "--option", "spark.sql.session.timeZone=Europe/Oslo"]
    assert main(argv) == 0
    values = pq.read_table(out).column("t").cast(pa.timestamp("us", tz="UTC")).to_pylist()
    utc = dt.timezone.utc
    assert values == [dt.datetime(2020, 1, 1, 9, tzinfo=utc), dt.datetime(2020, 1, 1, 8, tzinfo=utc), None,
                      dt.datetime(2020, 6, 1, 0, tzinfo=utc)]


def test_bad_decimal_names_row_and_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A value with more decimals than the schema's scale fails with its row, column and text; no file."""
    src = _write(tmp_path, "a,b\n1,1.39\n2,2.5\n3,1.395\n")
    out = tmp_path / "out.parquet"
    assert main(["write", str(src), str(out), "--schema", "b DECIMAL(10,2)"]) == 2
    err = _error(capsys)
    assert "row 3, column 'b'" in err and "'1.395'" in err and "decimal128(10, 2)" in err
    assert not out.exists()


def test_late_bad_value_names_row_and_suggests_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A value past the first block that does not fit the inferred type: its exact row, and a --schema hint."""
    rows = CSV_BLOCK_BYTES // 2 + 1_000
    src = tmp_path / "late.csv"
    src.write_bytes(b"n\n" + b"7\n" * rows + b"not a number\n" + b"8\n" * 10)
    out = tmp_path / "out.parquet"
    assert main(["write", str(src), str(out)]) == 2
    err = _error(capsys)
    assert f"row {rows + 1:,}, column 'n'" in err and "'not a number'" in err
    assert "inferred" in err and "--schema 'n STRING'" in err
    assert not out.exists()


def test_not_null_violation_names_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty cell in a NOT NULL column fails with its row."""
    src = _write(tmp_path, "a,b\n1,x\n2,y\n,z\n")
    assert main(["write", str(src), str(tmp_path / "o.parquet"), "--schema", "a BIGINT NOT NULL"]) == 2
    assert "row 3, column 'a'" in _error(capsys)


def test_schema_naming_a_missing_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A schema column the header lacks is an error listing the file's columns."""
    src = _write(tmp_path, "a,b\n1,2\n")
    assert main(["write", str(src), str(tmp_path / "o.parquet"), "--schema", "c INT"]) == 2
    err = _error(capsys)
    assert "'c'" in err and "a, b" in err


def test_csv_flags_on_parquet_input_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--delimiter on a Parquet input is a usage error, not silently ignored."""
    src = tmp_path / "in.parquet"
    pq.write_table(pa.table({"a": [1]}), src)
    assert main(["write", str(src), str(tmp_path / "o.parquet"), "--delimiter", ";"]) == 2
    assert "apply to CSV input" in _error(capsys)


def test_bad_delimiter_and_bad_schema_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two-character delimiters and unknown types are usage errors naming what was wrong."""
    src = _write(tmp_path, "a\n1\n")
    assert main(["write", str(src), str(tmp_path / "o.parquet"), "--delimiter", ";;"]) == 2
    assert "one character" in capsys.readouterr().err
    assert main(["write", str(src), str(tmp_path / "o.parquet"), "--schema", "a WIDGET"]) == 2
    assert "unknown type 'WIDGET'" in _error(capsys)


# -- schema text ------------------------------------------------------------------------------------------


def test_spark_ddl_vocabulary() -> None:
    """Spark's type names, NOT NULL, COMMENT, backquoted names and the session zone for TIMESTAMP."""
    schema = parse_schema_text("a TINYINT, b SMALLINT, c INT, d BIGINT NOT NULL, e FLOAT, f DOUBLE, "
                               "g DECIMAL(38, 10), h DECIMAL, i STRING COMMENT 'a, b', j VARCHAR(10), "
                               "k BINARY, l DATE, m TIMESTAMP, n TIMESTAMP_NTZ, `odd name` BOOLEAN",
                               time_zone="Asia/Tokyo")
    assert schema.types == [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64(),
                            pa.decimal128(38, 10), pa.decimal128(10, 0), pa.string(), pa.string(), pa.binary(),
                            pa.date32(), pa.timestamp("us", tz="Asia/Tokyo"), pa.timestamp("us"), pa.bool_()]
    assert schema.names[-1] == "odd name"
    assert [f.nullable for f in schema].count(False) == 1 and not schema.field("d").nullable


def test_pyarrow_schema_text_round_trips() -> None:
    """What pyarrow prints for a schema parses back to the same schema."""
    original = pa.schema([pa.field("a", pa.int64(), nullable=False), ("b", pa.decimal128(12, 4)),
                          ("c", pa.timestamp("ms", tz="UTC")), ("d", pa.large_string()), ("e", pa.date32())])
    assert parse_schema_text(str(original)).equals(original)


def test_nested_and_malformed_schema_text() -> None:
    """Nested types cannot come from CSV; a bare name, a duplicate or an impossible decimal are errors."""
    with pytest.raises(SchemaTextError, match="nested type"):
        parse_schema_text("a ARRAY<INT>")
    with pytest.raises(SchemaTextError, match="is not 'name TYPE'"):
        parse_schema_text("a")
    with pytest.raises(SchemaTextError, match="more than once"):
        parse_schema_text("a INT, a STRING")
    with pytest.raises(SchemaTextError, match="precision"):
        parse_schema_text("a DECIMAL(5, 7)")


FLAT_TYPES = {"BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
              "BIGINT": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "STRING": pa.string(),
              "BINARY": pa.binary(), "DATE": pa.date32(), "TIMESTAMP_NTZ": pa.timestamp("us")}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
                          st.one_of(st.sampled_from(sorted(FLAT_TYPES)),
                                    st.tuples(st.integers(1, 38), st.integers(0, 38)).filter(lambda ps: ps[1] <= ps[0])),
                          st.booleans(), st.sampled_from([" ", "  ", "\t"])),
                min_size=1, max_size=8, unique_by=lambda t: t[0]))
def test_ddl_property(columns: list[tuple[str, object, bool, str]]) -> None:
    """Any list of flat Spark DDL columns, in any case and spacing, parses to the types and nullability it says."""
    parts, expected = [], []
    for name, kind, required, space in columns:
        if isinstance(kind, tuple):
            text, arrow = f"decimal({kind[0]},{space}{kind[1]})", pa.decimal128(kind[0], kind[1])
        else:
            text, arrow = str(kind).lower() if len(name) % 2 else str(kind), FLAT_TYPES[str(kind)]
        parts.append(f"{name}{space}{text}" + (f"{space}NOT NULL" if required else ""))
        expected.append(pa.field(name, arrow, nullable=not required))
    assert parse_schema_text(",".join(parts)).equals(pa.schema(expected))
