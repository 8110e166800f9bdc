"""One leaf's rows as NumPy arrays in the physical representation the encoders take.

Values are compacted (nulls removed); `valid` marks the rows that hold a value. Fixed-width kinds keep a
1-D array (floats as their IEEE bits, booleans as 0/1 bytes); byte kinds (BINARY, FIXED_LEN_BYTE_ARRAY,
INT96) keep `offsets` into `data`. Nested leaves add per-entry levels and the row / value indexes over them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..kernels.convert.levels import bit_block_counts, block_counts
from . import buffers

Array = npt.NDArray[Any]

_BLOCK = 4096
NO_ROWS = np.zeros(0, dtype=np.uint8)  # the validity kernels take for rows that all hold a value


def _extended_prefix(blocks: int, known: Array | None, count: Callable[[int, Array], None]) -> Array:
    """Non-null rows before each of `blocks` full blocks, plus one entry: `known` (an earlier, shorter state's
    prefix) kept, and `count(done, out)` filling the counts of blocks done.. into `out`."""
    done = 0 if known is None else len(known) - 1
    if known is not None and done >= blocks:
        return known[:blocks + 1]
    prefix = np.zeros(blocks + 1, dtype=np.int64)
    if known is not None:
        prefix[:done + 1] = known
    count(done, prefix[done + 1:])
    np.cumsum(prefix[done:], out=prefix[done:])
    return prefix


def bits_block_prefix(packed: Array, rows: int, known: Array | None) -> Array:
    """`block_prefix` of `rows` rows from their validity packed as little-endian bits (at least rows // 8
    bytes), counting only the blocks after those `known` covers."""
    blocks = rows // _BLOCK
    return _extended_prefix(blocks, known, lambda done, out: bit_block_counts(
        packed[done * _BLOCK // 8:blocks * _BLOCK // 8].view(np.uint64), _BLOCK // 64, out))


def block_prefix(valid: Array, known: Array | None) -> Array:
    """Non-null rows before each full block of `_BLOCK` rows (one entry per full block, plus one), extending
    `known` (the prefix of an earlier, shorter state of the same validity array) rather than counting again."""
    return _extended_prefix(len(valid) // _BLOCK, known,
                            lambda done, out: block_counts(valid[done * _BLOCK:].view(np.uint8), _BLOCK, out))


@dataclass
class LeafData:
    """A window of rows of one leaf, ready for the encoders."""

    num_rows: int
    valid: Array | None  # bool per row; None when every row holds a value
    values: Array | None = None  # fixed kinds: compacted values
    offsets: Array | None = None  # byte kinds: int64 offsets of compacted values into data
    data: Array | None = None  # byte kinds: uint8

    # Nested leaves: levels per entry, the entry where each row starts (num_rows + 1 values) and the number
    # of values before each entry (num_entries + 1 values).
    rep: Array | None = None
    dfn: Array | None = None
    row_entry: Array | None = None
    values_before: Array | None = None

    def __post_init__(self) -> None:
        self._levels: np.ndarray | None = None
        self._block_prefix: np.ndarray | None = None
        self._packed: np.ndarray | None = None  # the first len * 8 rows' validity packed (LeafBuffer keeps it)
        self._read_only: tuple[np.ndarray, np.ndarray] | None = None  # (values, their read-only view)
        self._last_index = (-1, 0)  # value_index's last (row, index): a page starts where the last one ended

    @property
    def value_array(self) -> Array:
        """The compacted values of a fixed-width leaf, read-only: the kernels then see one array type whether
        the values were converted or are borrowed from Arrow (read-only), so a write loads one compiled
        signature per kernel and width, not two (`int_page`, `delta_encode`: issue 31's first write)."""
        values = self.values
        assert values is not None, "not a fixed-width leaf"
        if not values.flags.writeable:
            return values
        seen = self._read_only
        if seen is None or seen[0] is not values:
            view = values.view()
            view.flags.writeable = False
            seen = self._read_only = (values, view)
        return seen[1]

    @property
    def byte_offsets(self) -> Array:
        """Offsets of the compacted values of a byte leaf into `byte_data` (num_values + 1)."""
        assert self.offsets is not None, "not a byte leaf"
        return self.offsets

    @property
    def byte_data(self) -> Array:
        """The bytes of a byte leaf's compacted values."""
        assert self.data is not None, "not a byte leaf"
        return self.data

    @property
    def nested(self) -> bool:
        """Whether the leaf has explicit levels (entries differ from rows)."""
        return self.row_entry is not None

    @property
    def num_entries(self) -> int:
        """Level entries: one per row for flat leaves; per value, null or empty container when nested."""
        return int(self.row_entry[-1]) if self.row_entry is not None else self.num_rows

    def entry_index(self, row: int) -> int:
        """Index of the first level entry of `row`."""
        return int(self.row_entry[row]) if self.row_entry is not None else row

    @property
    def num_values(self) -> int:
        """Number of non-null values."""
        if self.offsets is not None:
            return len(self.offsets) - 1
        assert self.values is not None
        return len(self.values)

    def value_index(self, row: int) -> int:
        """Index of the first value at or after `row`: the number of non-null rows before it."""
        if self.row_entry is not None:
            assert self.values_before is not None
            return int(self.values_before[self.row_entry[row]])
        if self.valid is None:
            return row
        last = self._last_index
        if last[0] == row:
            return last[1]
        if self._block_prefix is None:
            self._block_prefix = block_prefix(self.valid, None)
        block = row // _BLOCK
        index = int(self._block_prefix[block]) + int(np.count_nonzero(self.valid[block * _BLOCK:row]))
        self._last_index = (row, index)
        return index

    def packed_valid(self) -> Array:
        """Validity of a flat leaf as little-endian bits (ceil(rows / 8) bytes, the last one zero-padded): the
        bytes its buffer packed as rows arrived, and only the rows after them packed here."""
        assert self.valid is not None
        done = self._packed if self._packed is not None else np.zeros(0, dtype=np.uint8)
        rest = np.packbits(self.valid[8 * len(done):], bitorder="little")
        return np.concatenate((done, rest)) if len(done) else rest

    @property
    def def_levels(self) -> np.ndarray:
        """Definition levels: one per entry (0/1 per row for a flat optional column)."""
        if self.dfn is not None:
            return self.dfn  # type: ignore[no-any-return]
        if self._levels is None:
            self._levels = (np.ones(self.num_rows, dtype=np.uint8) if self.valid is None
                            else self.valid.view(np.uint8))
        return self._levels

    def rows_from(self, row: int) -> LeafData:
        """Rows `row`.. as LeafData over the same arrays (levels and indexes of nested leaves rebased)."""
        va, ea = self.value_index(row), self.entry_index(row)
        values = None if self.values is None else self.values[va:]
        offsets = None if self.offsets is None else self.offsets[va:]
        if not self.nested:
            valid = None if self.valid is None else self.valid[row:]
            return LeafData(self.num_rows - row, valid, values=values, offsets=offsets, data=self.data)
        assert self.row_entry is not None and self.values_before is not None and self.dfn is not None
        return LeafData(self.num_rows - row, None, values=values, offsets=offsets, data=self.data,
                        rep=None if self.rep is None else self.rep[ea:], dfn=self.dfn[ea:],
                        row_entry=self.row_entry[row:] - np.int64(ea),
                        values_before=self.values_before[ea:] - np.int64(va))

    @staticmethod
    def concat(parts: list[LeafData]) -> LeafData:
        """Rows of several windows one after the other (byte offsets rebased)."""
        if len(parts) == 1:
            return parts[0]
        if parts[0].nested:
            return _concat_nested(parts)
        rows = sum(p.num_rows for p in parts)
        valid = None
        if any(p.valid is not None for p in parts):
            valid = np.concatenate([p.valid if p.valid is not None else np.ones(p.num_rows, dtype=bool)
                                    for p in parts])
        if parts[0].offsets is None:
            return LeafData(rows, valid, values=np.concatenate([p.values for p in parts]))
        datas, offsets, base = [], [np.zeros(1, dtype=np.int64)], 0
        for p in parts:
            assert p.offsets is not None and p.data is not None
            datas.append(p.data[p.offsets[0]:p.offsets[-1]])
            offsets.append(p.offsets[1:] - p.offsets[0] + base)
            base += int(p.offsets[-1] - p.offsets[0])
        return LeafData(rows, valid, offsets=np.concatenate(offsets), data=np.concatenate(datas))


def _concat_nested(parts: list[LeafData]) -> LeafData:
    """LeafData.concat for nested leaves: values as for flat leaves, levels and row / value indexes shifted."""
    flat = LeafData.concat([LeafData(p.num_values, None, values=p.values, offsets=p.offsets, data=p.data)
                            for p in parts])
    rows = sum(p.num_rows for p in parts)
    row_entry, values_before = [np.zeros(1, dtype=np.int64)], [np.zeros(1, dtype=np.int64)]
    entries = values = 0
    for p in parts:
        assert p.row_entry is not None and p.values_before is not None
        row_entry.append(p.row_entry[1:] + entries)
        values_before.append(p.values_before[1:] + values)
        entries += p.num_entries
        values += p.num_values
    rep = None if parts[0].rep is None else np.concatenate([p.rep for p in parts])
    return LeafData(rows, None, values=flat.values, offsets=flat.offsets, data=flat.data, rep=rep,
                    dfn=np.concatenate([p.dfn for p in parts]), row_entry=np.concatenate(row_entry),
                    values_before=np.concatenate(values_before))


class _Grow:
    """A 1-D array filled from the front: the first part is adopted without a copy (borrowed), later parts are
    copied into spare capacity, which at least doubles when full. `view` is the filled part, never copied;
    earlier views stay valid (appends write past them, growth copies into a new array).

    Byte data borrowed from an Arrow buffer keeps being borrowed while the parts come from that same buffer,
    each starting where the last ended (slices of one large array): large values are then never copied."""

    def __init__(self, dtype: Any) -> None:
        self.dtype = np.dtype(dtype)
        self.buf: Array = np.empty(0, dtype=self.dtype)
        self.first = 0  # the filled part is buf[first:first + n]
        self.n = 0
        self.owned = False

    def append(self, src: Array, a: int, b: int, expected: int) -> None:
        """Append src[a:b]; `expected` is the length this array is likely to reach (a capacity hint)."""
        count = b - a
        if count == 0:
            return
        need = self.n + count
        # converted in place (see `slot`), the first part too: adopting the slot as a borrowed part instead
        # made the next part copy it into a second array of the whole capacity (two per leaf and row group)
        if self.owned and need <= self.buf.size and src.dtype == self.dtype \
                and src[a:].ctypes.data == self.buf[self.n:].ctypes.data:
            self.n = need
            return
        if self.n == 0:
            self.buf, self.first, self.n, self.owned = src, a, count, False
            return
        if not self.owned and src.size == self.buf.size and src.ctypes.data == self.buf.ctypes.data \
                and a == self.first + self.n:
            self.n += count
            return
        if not self.owned and a == 0 and self._borrow_on(src, count):
            return
        self._own(need, expected)
        self.buf[self.n:need] = src[a:b]
        self.n = need

    def _borrow_on(self, src: Array, count: int) -> bool:
        """Go on borrowing when `src` starts where the borrowed part ends, inside one array that holds both
        (values of an Arrow column without nulls, converted a slice at a time: each slice a view of the
        buffer from its start); whether it did. The column's values are then never copied (they were copied
        into an array of the row group's size from the second step on)."""
        base = src.base
        if not isinstance(base, np.ndarray) or base.ndim != 1 or base.dtype != self.dtype \
                or not base.flags.c_contiguous or not src.flags.c_contiguous or src.dtype != self.dtype:
            return False
        size = self.dtype.itemsize
        start = self.buf.ctypes.data + self.first * size  # the borrowed part's first element
        lead, rest = divmod(start - base.ctypes.data, size)
        if rest or lead < 0 or src.ctypes.data != start + self.n * size \
                or src.ctypes.data + count * size > base.ctypes.data + base.nbytes:
            return False
        self.buf, self.first = base, lead
        self.n += count
        return True

    def _own(self, need: int, expected: int) -> None:
        """Hold the filled part in an array of this buffer's own with room for `need` elements."""
        if not self.owned or need > self.buf.size:
            cap = max(need, expected, 2 * self.n if self.owned else need)
            grown = buffers.empty(cap, self.dtype)  # large ones reused from earlier row groups and writes
            grown[:self.n] = self.buf[self.first:self.first + self.n]
            self.buf, self.first, self.owned = grown, 0, True

    def slot(self, count: int, expected: int) -> Array:
        """The writable `count` elements right after the filled part: a conversion writes its output there
        and appends that output, which then only advances the filled part (no copy)."""
        self._own(self.n + count, expected)
        return self.buf[self.n:self.n + count]

    def view(self) -> Array:
        """The filled part."""
        return self.buf[self.first:self.first + self.n]


class LeafBuffer:
    """One leaf's converted rows of the open row group, grown as windows are converted.

    Appending copies only the new rows (nothing at all for the first part of a window, nor for byte data
    that continues in the same Arrow buffer); `view()` is a LeafData over the filled parts without a copy,
    and stays valid while more rows are appended. Replaces concatenating each window with the last, which
    copied every converted row again at each extension.
    """

    def __init__(self, rows_hint: int = 0) -> None:
        self.rows_hint = rows_hint  # rows the row group is expected to reach
        self.num_rows = 0
        self.valid: _Grow | None = None  # bool per row; None while every row holds a value
        self.values: _Grow | None = None
        self.offsets: _Grow | None = None  # int64, starts with 0
        self.data = _Grow(np.uint8)
        self.rep: _Grow | None = None
        self.dfn: _Grow | None = None
        self.row_entry: _Grow | None = None
        self.values_before: _Grow | None = None
        # kept as rows are appended (on the thread that converts them, off the planner's path): block_prefix
        # of `valid`, and its whole bytes packed as bits
        self._prefix: Array | None = None
        self.packed: _Grow | None = None

    def _expect(self, g: _Grow | None, count: int, rows: int) -> int:
        """Capacity hint: the array's length per row so far, scaled to the expected rows."""
        have = (g.n if g is not None else 0) + count
        total_rows = self.num_rows + rows
        if total_rows == 0 or self.rows_hint <= total_rows:
            return have
        return int(have * self.rows_hint / total_rows * 1.0625) + 64  # slack: later rows may hold more per row

    def values_slot(self, dtype: Any, count: int, rows: int) -> Array:
        """Room for `count` values of the next `rows` rows (converted there, then appended without a copy);
        a fresh array when the values held so far have another type."""
        if self.values is None:
            self.values = _Grow(dtype)
        if self.values.dtype != np.dtype(dtype):
            return np.empty(count, dtype=dtype)
        return self.values.slot(count, self._expect(self.values, count, rows))

    def _add(self, name: str, arr: Array, a: int, b: int, rows: int) -> None:
        """Append arr[a:b] to the named array (created with arr's dtype on first use)."""
        g = getattr(self, name)
        if g is None:
            g = _Grow(arr.dtype)
            setattr(self, name, g)
        g.append(arr, a, b, self._expect(g, b - a, rows))

    def append(self, part: LeafData) -> None:
        """Add the rows of `part` after the rows held."""
        rows = part.num_rows
        if part.nested:
            assert part.row_entry is not None and part.values_before is not None and part.dfn is not None
            entries, values = self._entries(), self._values()
            if part.rep is not None:
                self._add("rep", part.rep, 0, len(part.rep), rows)
            self._add("dfn", part.dfn, 0, len(part.dfn), rows)
            self._add_shifted("row_entry", part.row_entry, entries, rows)
            self._add_shifted("values_before", part.values_before, values, rows)
        else:
            self._append_valid(part)
        if part.offsets is None:
            assert part.values is not None
            self._add("values", part.values, 0, len(part.values), rows)
        else:
            assert part.data is not None
            lo, hi = int(part.offsets[0]), int(part.offsets[-1])
            self._add_shifted("offsets", part.offsets, self.data.n - lo, rows)
            self.data.append(part.data, lo, hi, self._expect(self.data, hi - lo, rows))
        self.num_rows += rows

    def _add_shifted(self, name: str, index: Array, shift: int, rows: int) -> None:
        """Append an index array (n + 1 entries starting at its base) moved by `shift`; the first array keeps
        its leading entry."""
        g = getattr(self, name)
        lead = 0 if g is None else 1
        moved = index[lead:] + np.int64(shift) if shift else index[lead:]
        self._add(name, np.asarray(moved, dtype=np.int64), 0, len(moved), rows)

    def _append_valid(self, part: LeafData) -> None:
        """Validity of a flat leaf: materialised (all True before) once some row is null."""
        if part.valid is None and self.valid is None:
            return
        if self.valid is None:
            self.valid = _Grow(np.bool_)
            if self.num_rows:
                ones = np.ones(self.num_rows, dtype=np.bool_)
                self.valid.append(ones, 0, self.num_rows, self._expect(None, self.num_rows, 0))
        src = part.valid if part.valid is not None else np.ones(part.num_rows, dtype=np.bool_)
        self.valid.append(src, 0, part.num_rows, self._expect(self.valid, part.num_rows, part.num_rows))
        valid = self.valid.view()
        if self.packed is None:
            self.packed = _Grow(np.uint8)
        done = 8 * self.packed.n  # whole bytes only: a byte once packed never changes under an earlier view
        bits = np.packbits(valid[done:len(valid) // 8 * 8], bitorder="little")
        self.packed.append(bits, 0, len(bits), self._expect(self.packed, len(bits), part.num_rows))
        self._prefix = bits_block_prefix(self.packed.view(), len(valid), self._prefix)

    def _entries(self) -> int:
        return 0 if self.row_entry is None else int(self.row_entry.view()[-1])

    def _values(self) -> int:
        return 0 if self.values_before is None else int(self.values_before.view()[-1])

    def view(self) -> LeafData:
        """The rows held, as LeafData over the buffers (no copy)."""
        def v(g: _Grow | None) -> Array | None:
            return None if g is None else g.view()

        data = self.data.view() if self.offsets is not None else None
        offsets = v(self.offsets)
        if offsets is not None and len(offsets) == 0:
            offsets = np.zeros(1, dtype=np.int64)
        out = LeafData(self.num_rows, v(self.valid), values=v(self.values), offsets=offsets, data=data,
                       rep=v(self.rep), dfn=v(self.dfn), row_entry=v(self.row_entry),
                       values_before=v(self.values_before))
        if out.valid is not None and out.row_entry is None:  # flat: block counts and bits kept as rows came
            out._block_prefix = self._prefix
            out._packed = v(self.packed)
        return out

    def tail(self, row: int, rows_hint: int) -> LeafBuffer:
        """A new buffer holding rows `row`.. of this one (borrowed until more rows arrive, then copied)."""
        out = LeafBuffer(rows_hint)
        if row < self.num_rows:
            out.append(self.view().rows_from(row))
        return out
