"""One leaf's rows as NumPy arrays in the physical representation the encoders take.

Values are compacted (nulls removed); `valid` marks the rows that hold a value. Fixed-width kinds keep a
1-D array (floats as their IEEE bits, booleans as 0/1 bytes); byte kinds (BINARY, FIXED_LEN_BYTE_ARRAY,
INT96) keep `offsets` into `data`. Nested leaves add per-entry levels and the row / value indexes over them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

_BLOCK = 4096


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

    @property
    def value_array(self) -> Array:
        """The compacted values of a fixed-width leaf."""
        assert self.values is not None, "not a fixed-width leaf"
        return self.values

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
        if self._block_prefix is None:
            full = (self.num_rows // _BLOCK) * _BLOCK
            counts = np.count_nonzero(self.valid[:full].reshape(-1, _BLOCK), axis=1)
            self._block_prefix = np.concatenate(([0], np.cumsum(counts)))
        block = row // _BLOCK
        return int(self._block_prefix[block]) + int(np.count_nonzero(self.valid[block * _BLOCK:row]))

    @property
    def def_levels(self) -> np.ndarray:
        """Definition levels: one per entry (0/1 per row for a flat optional column)."""
        if self.dfn is not None:
            return self.dfn  # type: ignore[no-any-return]
        if self._levels is None:
            self._levels = (np.ones(self.num_rows, dtype=np.uint8) if self.valid is None
                            else self.valid.view(np.uint8))
        return self._levels

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
