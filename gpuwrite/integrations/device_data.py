"""Arrow data whose buffers live on the device: `DeviceArray`, `DeviceColumn` and `DeviceTable`, read by the
writer where it reads pyarrow's Array / ChunkedArray / Table (type, length, offset, null count, buffers,
slices), so the GPU backend converts them where they lie (`backends/device/sources.py`).

Buffers are device arrays of uint8 (CuPy on a GPU; NumPy views of the simulated or stand-in device memory
otherwise), each holding the bytes the array's `offset + length` rows need. Slicing never copies. `to_host`
copies buffers to the host (one sync, counted by the `Device` given): for the CPU backend, nested leaves, types
the device does not convert, bloom filters and error messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa


class DeviceArray:
    """One Arrow array on the device (Arrow C Device layout): buffers as the C interface orders them."""

    def __init__(self, type: pa.DataType, length: int, offset: int, null_count: int, buffers: Sequence[Any],
                 *, children: Sequence[DeviceArray] = (), dictionary: DeviceArray | None = None,
                 device: Any = None) -> None:
        self.type = type
        self.device = device  # the backends.device.ops.Device that reads it (counts its launches and copies)
        self.length = int(length)
        self.offset = int(offset)
        self._null_count = int(null_count)  # -1: unknown (counted on the device when asked)
        self.bufs = list(buffers)
        self.children = list(children)
        self.dictionary = dictionary
        self.bounds: tuple[int, int] | None = None  # string / binary: first and end offset of the rows
        self.host: pa.Array | None = None  # a host copy already made (slices share it: copied once)

    def __len__(self) -> int:
        return self.length

    @property
    def null_count(self) -> int:
        """Nulls among the rows (known from the producer, or counted when the array was prepared)."""
        if self._null_count < 0:
            if not self.bufs or self.bufs[0] is None:
                self._null_count = 0
            else:  # one launch and one sync; windows count theirs together (sources.prepare)
                d = self.device
                valid = d.download(d.valid_counts([(self.bufs[0], self.offset, self.length)]))
                self._null_count = self.length - int(valid[0])
        return self._null_count

    @property
    def null_count_known(self) -> bool:
        """Whether the null count is known without reading the device."""
        return self._null_count >= 0 or not self.bufs or self.bufs[0] is None

    def set_null_count(self, n: int) -> None:
        """Record the null count found on the device."""
        self._null_count = int(n)

    def buffers(self) -> list[Any]:
        """The device buffers (uint8 device arrays or None), in the C interface's order."""
        return self.bufs

    def slice(self, start: int, length: int | None = None) -> DeviceArray:
        """Rows start..start + length, sharing the buffers."""
        start = max(0, min(int(start), self.length))
        n = self.length - start if length is None else max(0, min(int(length), self.length - start))
        known = self._null_count if (start == 0 and n == self.length) or self._null_count == 0 else -1
        out = DeviceArray(self.type, n, self.offset + start, known, self.bufs, children=self.children,
                          dictionary=self.dictionary, device=self.device)
        if out.null_count_known and out._null_count < 0:
            out._null_count = 0
        out.bufs = self.bufs  # shared: string data is sized once for every slice
        if start == 0 and n == self.length:
            out.bounds = self.bounds
        if self.host is not None:
            out.host = self.host.slice(start, n)
        return out

    def host_buffers(self) -> list[Any]:
        """Every device buffer of the array and its children (in a fixed order), for one download."""
        out = [b for b in self.bufs if b is not None]
        for child in self.children:
            out += child.host_buffers()
        if self.dictionary is not None:
            out += self.dictionary.host_buffers()
        return out

    def build_host(self, copies: list[np.ndarray]) -> pa.Array:
        """The pyarrow array over host copies (consumed from `copies` in host_buffers' order)."""
        bufs = [None if b is None else pa.py_buffer(copies.pop(0)) for b in self.bufs]
        children = [c.build_host(copies) for c in self.children]
        if pa.types.is_dictionary(self.type):
            assert self.dictionary is not None
            dictionary = self.dictionary.build_host(copies)
            return pa.DictionaryArray.from_buffers(self.type, self.length, bufs, dictionary,  # type: ignore[attr-defined]
                                                   self._null_count, self.offset)
        return pa.Array.from_buffers(self.type, self.length, bufs, self._null_count, self.offset,
                                     children=children)

    def to_host(self, device: Any) -> pa.Array:
        """The array copied to the host (one sync on `device`, a backends.device.ops.Device; once)."""
        if self.host is None:
            self.host = self.build_host(device.download_many(self.host_buffers()) if self.host_buffers() else [])
        return self.host

    def nbytes(self) -> int:
        """Arrow bytes of the rows (as pyarrow counts a slice: whole bitmaps' bytes, values of the rows)."""
        n = self.length
        total = (n + 7) // 8 if self.bufs and self.bufs[0] is not None else 0
        t = self.type
        if pa.types.is_boolean(t):
            return total + (n + 7) // 8
        if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) \
                or pa.types.is_large_binary(t):
            width = 4 if pa.types.is_string(t) or pa.types.is_binary(t) else 8
            data = len(self.bufs[2]) if len(self.bufs) > 2 and self.bufs[2] is not None else 0
            span = self.bounds[1] - self.bounds[0] if self.bounds is not None else data * n // max(1, self.length)
            return total + (n + 1) * width + span
        if self.children:
            return total + sum(c.nbytes() for c in self.children)
        try:
            return total + n * t.byte_width
        except ValueError:
            return total


    def retyped(self, t: pa.DataType) -> DeviceArray:
        """The array read as `t`, a type of the same layout that differs only in field nullability (buffers,
        children and any host copy shared); the caller has checked that the rows fit it."""
        from .arrow import relabel  # arrow.py imports this module

        if t.equals(self.type, check_metadata=True):
            return self
        if pa.types.is_struct(t):
            inner = [t.field(i).type for i in range(t.num_fields)]
        elif pa.types.is_map(t):
            inner = [pa.struct([t.key_field, t.item_field])]
        else:
            inner = [t.value_type] if self.children else []
        out = DeviceArray(t, self.length, self.offset, self._null_count, self.bufs,
                          children=[c.retyped(ct) for c, ct in zip(self.children, inner, strict=True)],
                          dictionary=None if self.dictionary is None else self.dictionary.retyped(t.value_type),
                          device=self.device)
        out.bounds = self.bounds
        out.host = None if self.host is None else relabel(self.host, t)
        return out

    def rebind(self, device: Any) -> None:
        """Read (and count) through `device` from now on, children included."""
        self.device = device
        for child in self.children:
            child.rebind(device)
        if self.dictionary is not None:
            self.dictionary.rebind(device)


def _copy_chunks(device: Any, chunks: list[DeviceArray]) -> None:
    """Host copies of the chunks that have none yet, after one sync (`DeviceArray.host`)."""
    todo = [c for c in chunks if c.host is None]
    lists = [c.host_buffers() for c in todo]
    copies = device.download_many([b for bl in lists for b in bl]) if any(lists) else []
    for c in todo:
        c.host = c.build_host(copies)


class DeviceColumn:
    """A column of device arrays (pyarrow ChunkedArray's role)."""

    def __init__(self, type: pa.DataType, chunks: Sequence[DeviceArray]) -> None:
        self.type = type
        self.chunks = list(chunks)

    def __len__(self) -> int:
        return sum(len(c) for c in self.chunks)

    @property
    def num_chunks(self) -> int:
        """Chunks of the column."""
        return len(self.chunks)

    @property
    def null_count(self) -> int:
        """Nulls of the column."""
        return sum(c.null_count for c in self.chunks)

    def slice(self, start: int, length: int | None = None) -> DeviceColumn:
        """Rows start..start + length, sharing the buffers."""
        total = len(self)
        start = max(0, min(int(start), total))
        end = total if length is None else min(total, start + max(0, int(length)))
        out, pos = [], 0
        for chunk in self.chunks:
            a, b = max(start, pos), min(end, pos + len(chunk))
            if a < b:
                out.append(chunk.slice(a - pos, b - a))
            pos += len(chunk)
        return DeviceColumn(self.type, out)

    def to_host(self, device: Any) -> pa.ChunkedArray:
        """The column copied to the host (one sync for the chunks not copied before)."""
        _copy_chunks(device, self.chunks)
        return pa.chunked_array([c.host for c in self.chunks], type=self.type)


class DeviceTable:
    """Rows whose columns live on the device (pyarrow Table's role in the writer), with the `Device` that
    imported them (its counters go to the writer's device when the writer takes the table)."""

    def __init__(self, schema: pa.Schema, columns: Sequence[DeviceColumn], device: Any) -> None:
        self.schema = schema
        self.columns = list(columns)
        self.device = device

    @property
    def num_rows(self) -> int:
        """Rows of the table."""
        return len(self.columns[0]) if self.columns else 0

    @property
    def num_columns(self) -> int:
        """Columns of the table."""
        return len(self.columns)

    @property
    def column_names(self) -> list[str]:
        """Column names."""
        return list(self.schema.names)

    @property
    def nbytes(self) -> int:
        """Arrow bytes of the rows (as pyarrow's Table.nbytes counts them)."""
        return sum(a.nbytes() for col in self.columns for a in col.chunks)

    def column(self, i: int | str) -> DeviceColumn:
        """A column by position or name."""
        return self.columns[self.schema.get_field_index(i) if isinstance(i, str) else i]

    def slice(self, start: int = 0, length: int | None = None) -> DeviceTable:
        """Rows start..start + length, sharing the buffers."""
        return DeviceTable(self.schema, [c.slice(start, length) for c in self.columns], self.device)

    def select(self, names: Sequence[str]) -> DeviceTable:
        """The named columns, in that order."""
        fields = [self.schema.field(n) for n in names]
        return DeviceTable(pa.schema(fields, metadata=self.schema.metadata), [self.column(n) for n in names],
                           self.device)

    def rename(self, names: Sequence[str]) -> DeviceTable:
        """The table with its columns renamed."""
        fields = [f.with_name(n) for f, n in zip(self.schema, names, strict=True)]
        return DeviceTable(pa.schema(fields, metadata=self.schema.metadata), self.columns, self.device)

    def adopt(self, device: Any) -> None:
        """The writer's device takes the table: the import's counts go to it and reads count there."""
        if device is self.device:
            return
        device.counters.absorb(self.device.counters)
        self.device = device
        for col in self.columns:
            for a in col.chunks:
                a.rebind(device)

    def to_host(self, device: Any = None) -> pa.Table:
        """The table copied to the host (one sync, counted on `device`, else the importing device)."""
        device = device if device is not None else self.device
        _copy_chunks(device, [c for col in self.columns for c in col.chunks])
        arrays = [pa.chunked_array([c.host for c in col.chunks], type=f.type)
                  for col, f in zip(self.columns, self.schema, strict=True)]
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def retyped(self, schema: pa.Schema) -> DeviceTable:
        """The table read with `schema`, whose types differ from its own only in field nullability."""
        columns = [DeviceColumn(f.type, [c.retyped(f.type) for c in col.chunks])
                   for col, f in zip(self.columns, schema, strict=True)]
        return DeviceTable(schema, columns, self.device)

    @staticmethod
    def concat(tables: Sequence[DeviceTable]) -> DeviceTable:
        """Tables of one schema as one, chunks side by side (no copy)."""
        first = tables[0]
        if len(tables) == 1:
            return first
        columns = [DeviceColumn(f.type, [a for t in tables for a in t.columns[i].chunks])
                   for i, f in enumerate(first.schema)]
        return DeviceTable(first.schema, columns, first.device)
