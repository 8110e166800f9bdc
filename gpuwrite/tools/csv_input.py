"""CSV input for `gpuwrite write`: delimiter, column types from a schema string, null markers, and conversion
errors that name the row and the column.

pyarrow's streaming CSV reader does the parsing. It infers a column's type from the first block unless the
schema names it, and its conversion errors give only the column's index; when one happens the file is
scanned again for that column alone to find the first row whose text does not convert. Columns typed as
timestamps with a zone are read as text and converted here: text with an offset (`Z`, `+02:00`) keeps it,
text without one is a local time in the column's zone (Spark reads such text in the session time zone).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as csv

from ..errors import GpuwriteError

CSV_BLOCK_BYTES = 8 << 20
_DELIMITER_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}
_COLUMN_INDEX = re.compile(r"CSV column #(\d+)")
_BAD_VALUE = re.compile(r"(?:invalid value|The string|zone offset in) '(.*)'", re.DOTALL)


class CsvValueError(GpuwriteError, ValueError):
    """A CSV value that does not convert to its column's type (the message names row, column and value)."""


@dataclass(frozen=True)
class CsvSettings:
    """How to read a CSV file: delimiter (None: by extension), column types, null markers."""

    delimiter: str | None = None
    schema: pa.Schema | None = None  # types of the columns it names; the others are inferred
    null_values: tuple[str, ...] | None = None  # None: pyarrow's defaults ('', NA, NULL, null, NaN, ...)


def parse_delimiter(text: str) -> str:
    """One delimiter character; also 'tab' / '\\t', 'comma', 'semicolon', 'pipe', 'space'."""
    value = _DELIMITER_NAMES.get(text.lower(), text)
    if len(value) != 1:
        raise GpuwriteError(f"--delimiter {text!r} must be one character (or tab, comma, semicolon, pipe, space)")
    return value


def parse_null_values(items: Sequence[str]) -> tuple[str, ...]:
    """Null markers from one or more comma-separated lists ('' alone means the empty string)."""
    out: list[str] = []
    for item in items:
        out.extend(item.split(",") if item else [""])
    return tuple(dict.fromkeys(out))


class CsvSource:
    """A CSV file as a stream of record batches with the schema the settings give."""

    def __init__(self, path: str, settings: CsvSettings, stack: contextlib.ExitStack) -> None:
        self.path = path
        self.settings = settings
        self.delimiter = settings.delimiter or ("\t" if ".tsv" in os.path.basename(path).lower() else ",")
        given = settings.schema or pa.schema([])
        self.zoned = {f.name: f.type for f in given if pa.types.is_timestamp(f.type) and f.type.tz}
        types = {f.name: (pa.string() if f.name in self.zoned else f.type) for f in given}
        failed: pa.ArrowInvalid | None = None
        try:  # pyarrow reads (and converts) the first block here
            self.reader = stack.enter_context(csv.open_csv(
                path, read_options=self._read_options(), parse_options=self._parse_options(),
                convert_options=self._convert_options(types)))
            read = self.reader.schema
        except pa.ArrowInvalid as exc:
            failed = exc
            with csv.open_csv(path, read_options=self._read_options(), parse_options=self._parse_options(),
                              convert_options=self._convert_options({})) as plain:
                read = plain.schema
        missing = [f.name for f in given if f.name not in read.names]
        if missing:
            raise CsvValueError(f"{path}: --schema names column {missing[0]!r}, which the CSV header does not have "
                                f"(its columns: {', '.join(read.names)})")
        by_name = {f.name: f for f in given}
        self.schema = pa.schema([by_name.get(f.name, f) for f in read])
        self.inferred = {f.name for f in read if f.name not in by_name}
        if failed is not None:
            raise self._located(failed, 0)

    @staticmethod
    def _read_options(skip: int = 0) -> csv.ReadOptions:
        """Blocks of CSV_BLOCK_BYTES, optionally skipping data rows."""
        return csv.ReadOptions(block_size=CSV_BLOCK_BYTES, skip_rows_after_names=skip)

    def _parse_options(self) -> csv.ParseOptions:
        """The delimiter."""
        return csv.ParseOptions(delimiter=self.delimiter)

    def _convert_options(self, types: dict[str, pa.DataType]) -> csv.ConvertOptions:
        """Column types and null markers (which then apply to string columns too)."""
        if self.settings.null_values is None:
            return csv.ConvertOptions(column_types=types)
        return csv.ConvertOptions(column_types=types, null_values=list(self.settings.null_values),
                                  strings_can_be_null=True)

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The batches, converted to the schema; a value that does not convert raises CsvValueError."""
        rows = 0
        while True:
            try:
                batch = self.reader.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowInvalid as exc:
                raise self._located(exc, rows) from None
            yield self._convert(batch, rows)
            rows += batch.num_rows

    def _convert(self, batch: pa.RecordBatch, rows: int) -> pa.RecordBatch:
        """Zoned timestamps from text, and the schema's nullability checked with the row named."""
        columns = []
        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            field = self.schema.field(name)
            if name in self.zoned:
                column = self._zoned(column, name, rows)
            if not field.nullable and column.null_count:
                first = pc.index(column.is_null(), True).as_py()
                raise CsvValueError(f"{self.path}: row {rows + first + 1:,}, column {name!r}: empty or null, but "
                                    "the schema says NOT NULL")
            columns.append(column)
        return pa.RecordBatch.from_arrays(columns, schema=self.schema)

    def _zoned(self, text: pa.Array, name: str, rows: int) -> pa.Array:
        """Text -> timestamp with the column's zone: an offset in the text wins, else the time is local."""
        target = self.zoned[name]
        text = pc.if_else(pc.is_in(text, self._null_markers()), None, text)  # as pyarrow does for non-strings
        offset = pc.fill_null(pc.match_substring_regex(text, r"(Z|[+-]\d\d(:?\d\d)?)$"), False)
        try:
            aware = pc.cast(pc.if_else(offset, text, None), target)
            local = pc.cast(pc.if_else(offset, None, text), pa.timestamp(target.unit))
            return pc.if_else(offset, aware, pc.assume_timezone(local, target.tz))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        for i, value in enumerate(text.to_pylist()):  # find the row (a failed batch only)
            try:
                if value is not None:
                    one = pa.array([value])
                    if offset[i].as_py():
                        pc.cast(one, target)
                    else:
                        pc.assume_timezone(pc.cast(one, pa.timestamp(target.unit)), target.tz)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise CsvValueError(f"{self.path}: row {rows + i + 1:,}, column {name!r}: {value!r} is not a "
                                    f"timestamp in {target.tz} ({str(exc).splitlines()[0]})") from None
        raise CsvValueError(f"{self.path}: column {name!r}: timestamps after row {rows:,} do not convert to {target}")

    def _located(self, exc: pa.ArrowInvalid, rows: int) -> CsvValueError:
        """A conversion error with the row and column found, and a hint when the type was inferred."""
        text = str(exc)
        match = _COLUMN_INDEX.search(text)
        names = self.schema.names
        if match is None or int(match.group(1)) >= len(names):
            return CsvValueError(f"{self.path}: after row {rows:,}: {text}")
        name = names[int(match.group(1))]
        target = self.schema.field(name).type
        bad = _BAD_VALUE.search(text)
        found = self._find_row(name, target, rows, bad.group(1) if bad else None)
        where = f"row {found[0]:,}" if found else f"a row after row {rows:,}"
        value = f"{found[1]!r}" if found else (repr(bad.group(1)) if bad else "a value")
        reason = text.split(": ", 1)[1] if text.startswith("In CSV column") and ": " in text else text
        message = f"{self.path}: {where}, column {name!r}: {value} does not convert to {target} ({reason})"
        if name in self.inferred:
            message += (f"; {target} was inferred from the first {CSV_BLOCK_BYTES >> 20} MB of the file: give the "
                        f"column's type with --schema, e.g. --schema '{name} STRING'")
        return CsvValueError(message)

    def _null_markers(self) -> pa.Array:
        """The texts read as null in non-string columns: the settings' or pyarrow's defaults."""
        markers = self.settings.null_values
        return pa.array(list(markers) if markers is not None else csv.ConvertOptions().null_values, pa.string())

    def _find_row(self, name: str, target: pa.DataType, start: int, bad: str | None) -> tuple[int, str] | None:
        """(1-based row, text) of the first value of column `name` from row `start` on that is `bad` or does
        not convert to `target`; None if not found."""
        options = csv.ConvertOptions(include_columns=[name], column_types={name: pa.string()})
        nulls = self._null_markers()
        seen = start
        try:
            with csv.open_csv(self.path, read_options=self._read_options(start), parse_options=self._parse_options(),
                              convert_options=options) as reader:
                for batch in reader:
                    column = batch.column(0)
                    if bad is not None:
                        i = pc.index(column, bad).as_py()
                        if i >= 0:
                            return seen + i + 1, bad
                    i = _first_failing(pc.if_else(pc.is_in(column, nulls), None, column), target)
                    if i is not None:
                        return seen + i + 1, column[i].as_py()
                    seen += batch.num_rows
        except (pa.ArrowException, OSError):
            return None
        return None


def _first_failing(column: pa.Array, target: pa.DataType) -> int | None:
    """Index of the first value that does not cast to `target` (bisecting), or None."""
    def fails(lo: int, hi: int) -> bool:
        try:
            pc.cast(column.slice(lo, hi - lo), target)
            return False
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return True

    lo, hi = 0, len(column)
    if hi == 0 or not fails(lo, hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(lo, mid):
            hi = mid
        else:
            lo = mid
    return lo
