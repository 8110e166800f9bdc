"""Checks on a batch before the writer takes it, so a refused batch leaves the writer as it was.

Always checked (cheap): column names and types; nulls in non-nullable fields, nested ones included; byte
values too long for a Parquet page (page sizes are i32), found from the offsets alone, without touching the
values; nanosecond timestamps with sub-microsecond parts and second / millisecond ones outside the
microsecond range; dates and timestamps that a rebase mode of EXCEPTION refuses. With `validate` on (the
default): decimals wider than their declared precision and strings that are not UTF-8, which readers would
misread or refuse later. All of them are vectorised (pyarrow.compute, Arrow's own UTF-8 validation, numba
kernels in `kernels/convert/checks.py` over the Arrow buffers). Errors name the column and the row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from gpuwrite.kernels.convert.checks import ascii_strings, decimal_first_outside, first_longer
from gpuwrite.kernels.convert.rebase import LAST_SWITCH_GREGORIAN_DAY
from gpuwrite.kernels.convert.views import longest_view

from ..backends.workpool import wait_in_order
from ..errors import GpuwriteError, SchemaMismatchError, ValueCheckError
from ..integrations.arrow import ArrowPiece
from ..integrations.device_data import DeviceTable
from ..options.model import INT_MAX, WriteOptions
from ..schema import FileSchema, Leaf
from .columns import ns_loss_advice, validity, widen_decimal
from .rebase import LAST_SWITCH_GREGORIAN_MICROS, RebaseOptions, rebase_dates, rebase_timestamps
from .views import is_view, validity_bits, view_words

if TYPE_CHECKING:
    from ..backends.workpool import WorkPool

THREADED_CHECK_ROWS = 1 << 16  # smaller batches are checked on the calling thread (a hand-off costs more)

# The longest value a page can hold: a page's size is an i32 and holds the value with its framing (a length
# or DELTA_BYTE_ARRAY's two small length blocks) and levels, well under 64 bytes for a page of one value.
MAX_VALUE_BYTES = INT_MAX - 64
_MASK64 = (1 << 64) - 1
_UNIT_FACTOR = {"s": 1_000_000, "ms": 1_000, "us": 1}

Finder = Callable[[pa.Array, int], int]  # (values, start) -> first failing index at or after start, or -1
Describe = Callable[[pa.Array, int], str]  # (values, index) -> what is wrong with that value


@dataclass(frozen=True)
class CheckOptions:
    """The write options the batch checks read: `validate`, and the rebase modes (EXCEPTION refuses old values)."""

    validate: bool
    rebase: RebaseOptions

    @classmethod
    def of(cls, opts: WriteOptions) -> CheckOptions:
        """The projection of `opts`, built once per writer."""
        return cls(opts.validate, RebaseOptions.of(opts))


@dataclass(frozen=True)
class _Where:
    """Where a chunk of a column lies: rows written before the batch, and the chunk's first row in it."""

    written: int
    base: int

    def row(self, i: int) -> str:
        """Row i of the chunk, in the batch and in the file."""
        return f"row {self.base + i} of the batch (row {self.written + self.base + i} of the file)"


def checked_in_conversion(leaf: Leaf) -> bool:
    """Whether the CPU conversion checks the leaf's decimal precision as it compacts its values (flat decimals
    stored as INT32 / INT64: `columns.leaf_data(check_decimals=True)`), reading words it reads anyway."""
    return not leaf.nested and leaf.is_decimal and leaf.kind in ("int32", "int64")


def check_batch(piece: ArrowPiece, schema: FileSchema, opts: CheckOptions, written: int,
                on_device: Callable[[Leaf], bool] | None = None, pool: WorkPool | None = None, *,
                deferred: Callable[[Leaf], bool] | None = None, background: bool = False) -> list[Future]:
    """Raise a GpuwriteError naming the column (and row) if the writer must refuse `piece`; change nothing.

    `opts`: what the checks read of the write options (`CheckOptions.of`). `written` is the number of rows the
    file holds before this batch (for the row numbers in messages).
    `on_device`: the leaves whose values the backend checks itself where they are converted (the GPU backend:
    decimal precision and UTF-8 in `backends/device/checks.py`, timestamp and rebase refusals in its
    conversion); only their names, types, nulls and value sizes are checked here, which reads no values.
    `pool`: the writer's threads, which check the leaves side by side. `deferred`: leaves whose decimal
    precision the caller has checked where the batch is converted next (`checked_in_conversion`); when
    another check fails, the batch is checked again in full, so the error is the one a full check raises.
    `background` (with a pool): the leaves' value checks are left running on the pool, their futures returned
    in schema order for the caller to wait for (`wait_in_order`; on a failure, check the batch again in full
    for its error), so the batch's encoding need not wait for them; else the list is empty.
    """
    try:
        return _check_batch(piece, schema, opts, written, on_device=on_device, pool=pool, deferred=deferred,
                            background=background)
    except GpuwriteError:
        if deferred is None:
            raise
        _check_batch(piece, schema, opts, written, on_device=on_device, pool=pool, deferred=None)
        raise


def _check_batch(piece: ArrowPiece, schema: FileSchema, opts: CheckOptions, written: int, *,
                 on_device: Callable[[Leaf], bool] | None, pool: WorkPool | None,
                 deferred: Callable[[Leaf], bool] | None, background: bool = False) -> list[Future]:
    """check_batch, without the decimal precision check of the `deferred` leaves."""
    _check_names_and_types(piece, schema)
    if piece.num_rows == 0:
        return []
    if isinstance(piece, DeviceTable):
        _device_batch_checks(piece, schema, written, on_device)
    host_jobs: list[tuple[Leaf, list[tuple[Finder, Describe]]]] = []
    for leaf in schema.leaves:
        if isinstance(piece, DeviceTable) and on_device is not None and on_device(leaf):
            continue  # checked on the device (above, and where it is converted)
        if isinstance(piece, DeviceTable):  # a leaf checked on the host: its column copied there, once
            column = piece.column(leaf.index).to_host(piece.device)
            for base, chunk in _chunks(column):
                where = _Where(written, base)
                values, lists = _present_values(chunk, leaf, where)
                for find, describe in _value_checks(leaf, opts):
                    _run_check(values, lists, leaf, where, find, describe)
            continue
        checks = _value_checks(leaf, opts)
        if on_device is not None and on_device(leaf):
            checks = [c for c in checks if c[0] is _first_too_long]
        if deferred is not None and deferred(leaf):
            checks = [c for c in checks if c[0] is not _first_wide_decimal]
        if isinstance(piece, DeviceTable):
            _check_leaf(piece, leaf, checks, written)
        elif checks or leaf.nested or (not leaf.nullable and piece.column(leaf.index).null_count):
            host_jobs.append((leaf, checks))  # _present_values refuses nulls in non-nullable fields, nested too
        # else a flat leaf with no value check and no refused null: nothing to read
    if pool is None or len(host_jobs) < (1 if background else 2) or piece.num_rows < THREADED_CHECK_ROWS:
        for leaf, checks in host_jobs:
            _check_leaf(piece, leaf, checks, written)
        return []
    # the leaves side by side on the writer's threads (the checks' kernels release the GIL); waited for in
    # schema order, so the error is the first failing leaf's, as when checked one after another
    futures = [pool.submit(_check_leaf, piece, leaf, checks, written) for leaf, checks in host_jobs]
    if background:  # a timeseries' one string column checked while its other columns encode, not before
        return futures
    wait_in_order(futures, pool=pool)
    return []


def _check_leaf(piece: ArrowPiece, leaf: Leaf, checks: list[tuple[Finder, Describe]], written: int) -> None:
    """Run one leaf's value checks over every chunk of its column."""
    for base, chunk in _chunks(piece.column(leaf.index)):
        where = _Where(written, base)
        values, lists = _present_values(chunk, leaf, where)
        for find, describe in checks:
            _run_check(values, lists, leaf, where, find, describe)


def _device_batch_checks(piece: DeviceTable, schema: FileSchema, written: int,
                         on_device: Callable[[Leaf], bool] | None) -> None:
    """Checks of device leaves reading no values: nulls in non-nullable flat columns from the null counts,
    values too long from the data buffer's size (an upper bound of any value's). Leaves the device does not
    check (nested) are checked on a host copy of their column (check_batch)."""
    for leaf in schema.leaves:
        if on_device is None or not on_device(leaf):
            continue
        column = piece.column(leaf.index)
        base = 0
        for chunk in column.chunks:
            if not leaf.nullable and chunk.null_count:
                host = chunk.to_host(piece.device)
                raise SchemaMismatchError(f"column {leaf.name!r} is declared non-nullable but the batch holds "
                                          f"{chunk.null_count} null(s), the first at "
                                          f"{_Where(written, base).row(_first_null(host))}")
            bufs = chunk.buffers()
            if len(bufs) == 3 and bufs[2] is not None and len(bufs[2]) > MAX_VALUE_BYTES:
                host = chunk.to_host(piece.device)
                _run_check(host, [], leaf, _Where(written, base), _first_too_long, _describe_too_long)
            base += len(chunk)


def _check_names_and_types(piece: ArrowPiece, schema: FileSchema) -> None:
    """Refuse a batch whose columns differ from the schema by name or type."""
    expected, got = schema.arrow, piece.schema
    if got.equals(expected):  # one comparison in Arrow for the usual batch; else find what differs (names, types)
        return
    if got.names != expected.names:
        raise SchemaMismatchError(f"batch columns {got.names} differ from the writer's schema {expected.names}")
    for f_exp, f_got in zip(expected, got, strict=True):
        if f_got.type != f_exp.type:
            raise SchemaMismatchError(f"column {f_exp.name!r}: batch has type {f_got.type}, the writer's schema "
                                      f"has {f_exp.type}")


def _chunks(column: pa.ChunkedArray | pa.Array) -> Iterator[tuple[int, pa.Array]]:
    """(first row, chunk) of a column."""
    if isinstance(column, pa.Array):
        yield 0, column
        return
    base = 0
    for chunk in column.chunks:
        yield base, chunk
        base += len(chunk)


# -- nulls in non-nullable fields, and the present values of a leaf ------------------------------------------

def _present_values(arr: pa.Array, leaf: Leaf, where: _Where) -> tuple[pa.Array, list[pa.Array]]:
    """The leaf's values where it has one (null elsewhere) and the list arrays passed on the way; refuses a
    null in a non-nullable field where its parent is present."""
    if not leaf.nested:
        if not leaf.nullable and arr.null_count:
            raise SchemaMismatchError(f"column {leaf.name!r} is declared non-nullable but the batch holds "
                                      f"{arr.null_count} null(s), the first at {where.row(_first_null(arr))}")
        return arr, []
    import pyarrow.compute as pc  # on first use: a fresh process's write need not load it
    cur, parent = arr, None
    lists: list[pa.Array] = []
    names = [leaf.path[0]]  # the field's path as the Arrow schema names it (the leaf's is Parquet's)
    for step in leaf.steps:
        kind = step[0]
        if kind == "node":
            if not step[1] and cur.null_count:
                bad = pc.is_null(cur) if parent is None else pc.and_(pc.is_null(cur), pc.is_valid(parent))
                i = pc.index(bad, True).as_py()
                if i >= 0:
                    raise SchemaMismatchError(
                        f"column {leaf.dotted!r}: the non-nullable field {'.'.join(names)!r} holds a null at "
                        f"{where.row(_row_of(lists, i))}; declare the field nullable or fill the nulls")
        elif kind == "field":
            names.append(cur.type.field(step[1]).name)
            parent, cur = cur, pc.struct_field(cur, [step[1]])
        else:
            if kind != "map":  # a map's key or value is named by the field step that follows
                names.append(cur.type.value_field.name)
            lists.append(cur)
            cur, parent = _flatten(cur), None
    return cur, lists


def _first_null(arr: pa.Array) -> int:
    """Index of the first null of an array that has one."""
    import pyarrow.compute as pc  # on first use: a fresh process's write need not load it
    return int(pc.index(pc.is_null(arr), True).as_py())


def _flatten(arr: pa.Array) -> pa.Array:
    """The elements of a list, fixed-size list or map array's present (non-null) entries, in order."""
    import pyarrow.compute as pc  # on first use: a fresh process's write need not load it
    if pa.types.is_map(arr.type):
        offsets = pa.array(np.asarray(arr.offsets))  # a fresh array: a mask cannot go with sliced offsets
        arr = pa.ListArray.from_arrays(offsets, arr.values, mask=arr.is_null() if arr.null_count else None)
    return pc.list_flatten(arr)


def _parent_index(arr: pa.Array, i: int) -> int:
    """Index of the entry of list-like `arr` that holds element i of its flattened present entries."""
    if pa.types.is_fixed_size_list(arr.type):
        lengths: np.ndarray = np.full(len(arr), arr.type.list_size, dtype=np.int64)
    else:
        lengths = np.diff(np.asarray(arr.offsets, dtype=np.int64))
    if arr.null_count:
        lengths[np.asarray(arr.is_null())] = 0
    return int(np.searchsorted(np.cumsum(lengths), i, side="right"))


def _row_of(lists: list[pa.Array], i: int) -> int:
    """The top-level row of value i of the innermost level (struct fields keep indices; lists map them)."""
    for arr in reversed(lists):
        i = _parent_index(arr, i)
    return i


# -- value checks --------------------------------------------------------------------------------------------

def _value_checks(leaf: Leaf, opts: CheckOptions) -> list[tuple[Finder, Describe]]:
    """The checks that apply to the leaf's values under these options."""
    t = leaf.arrow_type
    checks: list[tuple[Finder, Describe]] = []
    if leaf.kind == "bytes":
        checks.append((_first_too_long, _describe_too_long))
    if opts.validate and leaf.is_decimal:
        checks.append((_first_wide_decimal, describe_wide_decimal))
    if opts.validate and (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)):
        checks.append((_first_bad_utf8, describe_bad_utf8))
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            checks.append((_first_sub_micro, _describe_sub_micro(leaf)))
        elif t.unit != "us":
            checks.append((_first_outside_micros, _describe_outside_micros))
        if t.tz is not None and opts.rebase.timestamp_mode(leaf.kind == "int96") == "EXCEPTION":
            checks.append((_first_before_switch_ts, _rebase_message(leaf, opts.rebase.time_zone)))
    if pa.types.is_date32(t) and opts.rebase.datetime_rebase == "EXCEPTION":
        checks.append((_first_before_switch_date, _rebase_message(leaf, opts.rebase.time_zone)))
    return checks


def _run_check(values: pa.Array, lists: list[pa.Array], leaf: Leaf, where: _Where, find: Finder,
               describe: Describe) -> None:
    """Raise a ValueCheckError for the first present value `find` refuses (by value for dictionaries)."""
    if len(values) == 0 or values.null_count == len(values):
        return
    if pa.types.is_dictionary(values.type):
        dictionary = values.dictionary
        bad: list[int] = []
        j = find(dictionary, 0)
        while j >= 0:
            bad.append(j)
            j = find(dictionary, j + 1)
        if not bad:
            return
        import pyarrow.compute as pc  # on first use: a fresh process's write need not load it
        used = pc.is_in(values.indices, value_set=pa.array(bad, values.indices.type))
        i = pc.index(used, True).as_py()
        if i < 0:
            return  # only unused dictionary entries are bad: nothing of them is written
        what = describe(dictionary, int(values.indices[i].as_py()))
    else:
        i = find(values, 0)
        if i < 0:
            return
        what = describe(values, i)
    raise ValueCheckError(f"column {leaf.dotted!r}, {where.row(_row_of(lists, i))}: {what}")


def _bits(arr: pa.Array) -> np.ndarray:
    """Arrow's validity bitmap as bytes (empty when every value is valid)."""
    buf = arr.buffers()[0]
    if buf is None or arr.null_count == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.frombuffer(buf, dtype=np.uint8)


def _first_marked(arr: pa.Array, dtype: type, marks: Callable[[np.ndarray], np.ndarray], start: int) -> int:
    """First index at or after `start` of a present value that `marks` flags (on the values of a fixed-width
    array read as `dtype`: NumPy, so a write need not load pyarrow.compute), or -1."""
    part = arr.slice(start)
    n, off = len(part), part.offset
    if n == 0:
        return -1
    flagged = marks(np.frombuffer(part.buffers()[1], dtype=dtype)[off:off + n])
    valid = validity(part)
    if valid is not None:
        flagged &= valid
    i = int(np.argmax(flagged))
    return start + i if flagged[i] else -1


def _first_wide_decimal(arr: pa.Array, start: int) -> int:
    """First value with more digits than the decimal type's precision."""
    arr = widen_decimal(arr)
    width = arr.type.byte_width // 8
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=(arr.offset + len(arr)) * width)
    limits = decimal_bound(arr.type.precision)
    return int(decimal_first_outside(words[arr.offset * width:], width, _bits(arr), arr.offset, start, limits))


def decimal_bound(precision: int) -> np.ndarray:
    """The bound B = 10**precision - 1 as kernels/convert/checks.py reads it: uint64 [B_hi, B_lo, (2B)_hi, (2B)_lo]."""
    bound = 10 ** precision - 1
    return np.array([bound >> 64, bound & _MASK64, (2 * bound) >> 64, (2 * bound) & _MASK64], dtype=np.uint64)


def describe_wide_decimal(arr: pa.Array, i: int) -> str:
    return (f"the decimal {arr[i].as_py()} has more digits than {arr.type} allows (precision "
            f"{arr.type.precision}), so readers would get a different number; fix the value or declare a wider "
            "decimal (validate=False skips this check)")


def _valid_utf8(arr: pa.Array, a: int, b: int) -> bool:
    """Whether the strings a..b are valid UTF-8 (Arrow's own validation of that range)."""
    try:
        arr.slice(a, b - a).validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _all_ascii(arr: pa.Array, start: int) -> bool:
    """Whether strings start.. of a string / large_string array hold only ASCII bytes (so are valid UTF-8):
    one vectorised pass over their bytes instead of Arrow's per-string validation; False when unsure."""
    t = arr.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return False
    bufs = arr.buffers()
    if bufs[1] is None:
        return False
    dtype = np.int32 if pa.types.is_string(t) else np.int64
    offsets = np.frombuffer(bufs[1], dtype=dtype)[arr.offset:arr.offset + len(arr) + 1]
    if len(offsets) != len(arr) + 1:
        return False
    data = np.zeros(0, dtype=np.uint8) if bufs[2] is None else np.frombuffer(bufs[2], dtype=np.uint8)
    return bool(ascii_strings(offsets, data, start))


def _first_bad_utf8(arr: pa.Array, start: int) -> int:
    """First string that is not valid UTF-8: one pass over the range (a byte scan when it is all ASCII),
    then bisection to find it."""
    lo, hi = start, len(arr)
    if lo >= hi or _all_ascii(arr, lo) or _valid_utf8(arr, lo, hi):
        return -1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _valid_utf8(arr, lo, mid):
            lo = mid
        else:
            hi = mid
    return lo


def _raw_bytes(arr: pa.Array, i: int) -> bytes:
    """The bytes of value i of a string or binary array, whatever they hold."""
    t = arr.type
    if pa.types.is_string(t):
        arr = arr.view(pa.binary())
    elif pa.types.is_large_string(t):
        arr = arr.view(pa.large_binary())
    elif pa.types.is_string_view(t):
        arr = arr.view(pa.binary_view())
    return bytes(arr[i].as_py())


def describe_bad_utf8(arr: pa.Array, i: int) -> str:
    raw = _raw_bytes(arr, i)
    shown = repr(raw[:40]) + ("..." if len(raw) > 40 else "")
    return (f"the string {shown} is not valid UTF-8 (readers such as DuckDB refuse the file); store it as binary "
            "or fix the bytes (validate=False skips this check)")


def _first_too_long(arr: pa.Array, start: int) -> int:
    """First value longer than a page can hold, from the offsets (or view lengths) alone."""
    t = arr.type
    if is_view(t):  # the lengths in the views: the data buffers' sizes say nothing (they may be shared)
        bufs = arr.buffers()
        return int(longest_view(view_words(arr, bufs[1]), validity_bits(arr, bufs[0]), arr.offset, start,
                                MAX_VALUE_BYTES))
    dtype = np.int64 if (pa.types.is_large_binary(t) or pa.types.is_large_string(t)) else np.int32
    offsets = np.frombuffer(arr.buffers()[1], dtype=dtype, count=arr.offset + len(arr) + 1)[arr.offset:]
    if start >= len(arr) or int(offsets[-1]) - int(offsets[start]) <= MAX_VALUE_BYTES:
        return -1
    return int(first_longer(offsets, _bits(arr), arr.offset, start, np.int64(MAX_VALUE_BYTES)))


def _describe_too_long(arr: pa.Array, i: int) -> str:
    import pyarrow.compute as pc  # on first use: a fresh process's write need not load it
    if is_view(arr.type):
        size = int(view_words(arr.slice(i, 1), arr.buffers()[1])[0])
    else:
        size = int(pc.binary_length(arr.slice(i, 1))[0].as_py())
    return (f"a value of {size:,} bytes is larger than a Parquet page can hold (page sizes are 32-bit: at most "
            f"{MAX_VALUE_BYTES:,} bytes for one value); split it or store it outside the table")


def _first_sub_micro(arr: pa.Array, start: int) -> int:
    """First nanosecond timestamp with a sub-microsecond part."""
    return _first_marked(arr, np.int64, lambda v: v % 1000 != 0, start)


def _describe_sub_micro(leaf: Leaf) -> Describe:
    """The refusal of a timestamp[ns] value with a sub-microsecond part, and how to write it anyway."""
    def describe(arr: pa.Array, i: int) -> str:
        return (f"timestamp[ns] value {arr.view(pa.int64())[i].as_py()} (pandas' datetime64[ns]) has a "
                "sub-microsecond part and cannot be written without loss (Spark stores microseconds); "
                f"{ns_loss_advice(leaf.dotted)}")
    return describe


def _first_outside_micros(arr: pa.Array, start: int) -> int:
    """First second / millisecond timestamp outside the int64 microsecond range."""
    limit = np.iinfo(np.int64).max // _UNIT_FACTOR[arr.type.unit]
    return _first_marked(arr, np.int64, lambda v: (v < -limit) | (v > limit), start)


def _describe_outside_micros(arr: pa.Array, i: int) -> str:
    return (f"timestamp[{arr.type.unit}] value {arr.view(pa.int64())[i].as_py()} is out of the microsecond range "
            "Spark stores")


def _switch_in_unit(unit: str) -> int:
    """1900-01-01T00:00:00Z (the last calendar switch) in `unit` since the epoch (exact in every unit)."""
    if unit == "ns":
        return LAST_SWITCH_GREGORIAN_MICROS * 1000
    return LAST_SWITCH_GREGORIAN_MICROS // _UNIT_FACTOR[unit]


def _first_before_switch_ts(arr: pa.Array, start: int) -> int:
    switch = _switch_in_unit(arr.type.unit)
    return _first_marked(arr, np.int64, lambda v: v < switch, start)


def _first_before_switch_date(arr: pa.Array, start: int) -> int:
    return _first_marked(arr, np.int32, lambda v: v < LAST_SWITCH_GREGORIAN_DAY, start)


def _rebase_message(leaf: Leaf, time_zone: str) -> Describe:
    """The rebase module's own EXCEPTION message for one value (so the wording lives in one place)."""
    def describe(arr: pa.Array, i: int) -> str:
        try:
            if pa.types.is_date32(arr.type):
                rebase_dates(np.array([arr.view(pa.int32())[i].as_py()], dtype=np.int32), "EXCEPTION", leaf.dotted)
            else:
                raw = int(arr.view(pa.int64())[i].as_py())
                unit = arr.type.unit
                micros = raw // 1000 if unit == "ns" else raw * _UNIT_FACTOR[unit]
                rebase_timestamps(np.array([micros], dtype=np.int64), "EXCEPTION", time_zone, leaf.dotted)
        except GpuwriteError as e:
            return str(e).split(": ", 1)[-1]
        return "the value is before the calendar switch"
    return describe
