"""A stand-in producer of device data, for machines without a GPU (tests, `bench/gpu_model.py --device-input`):
Arrow data copied once into simulated device memory and exported through the Arrow C Device Data Interface
(`__arrow_c_device_array__`, `__arrow_c_device_stream__`) with device type CUDA, as pylibcudf exports its
tables. The writer reads it through `device_input.py` exactly as it reads a GPU producer's data.

Simulated device memory is a buffer object carrying `__cuda_array_interface__` (its address is host memory,
which is what the simulator and the stand-in device read).
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from . import c_device as C


class StandinBuffer:
    """A copy of host bytes in simulated device memory, described by `__cuda_array_interface__`."""

    def __init__(self, host: Any) -> None:
        self.ary = np.array(np.frombuffer(host, dtype=np.uint8), copy=True)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": (self.ary.size,), "typestr": "|u1", "data": (self.ary.ctypes.data, False), "version": 3,
                "strides": None, "stream": None}


def _address(buf: Any) -> int:
    return int(buf.__cuda_array_interface__["data"][0])


_KEEP: dict[int, list[Any]] = {}  # exported trees not released yet: private_data id -> what keeps them alive
_IDS = itertools.count(1)


@C.RELEASE_ARRAY
def _release(arr: Any) -> None:
    """Release callback of every exported ArrowArray: marks it released; the top level frees its tree."""
    a = arr.contents
    key = a.private_data or 0
    a.release = C.RELEASE_ARRAY()
    _KEEP.pop(int(key), None)


class DeviceExport:
    """Arrow data (Table, RecordBatch or Array) placed on the simulated device once, then exported as often as
    asked. `device_id`: the CUDA device the data claims to live on; `sync_event`: export a (stand-in) CUDA
    event the consumer must wait on; `place`: host bytes -> a device buffer with `__cuda_array_interface__`."""

    def __init__(self, data: pa.Table | pa.RecordBatch | pa.Array, *, device_id: int = 0, sync_event: bool = False,
                 place: Callable[[Any], Any] = StandinBuffer) -> None:
        self.device_id, self.sync_event, self.place = device_id, sync_event, place
        self.is_table = not isinstance(data, pa.Array | pa.ChunkedArray)
        if isinstance(data, pa.Table):
            self.schema = data.schema
            self.batches = data.to_batches() or [pa.RecordBatch.from_pylist([], schema=data.schema)]
        elif isinstance(data, pa.RecordBatch):
            self.schema, self.batches = data.schema, [data]
        else:
            self.schema = pa.schema([pa.field("values", data.type)])
            self.batches = [pa.RecordBatch.from_arrays([data], schema=self.schema)]
        self._event = ctypes.c_void_p(0xE7E7)  # a stand-in cudaEvent_t
        self.placed = [self._place(b) for b in self.batches]  # device copies, kept for every export

    def _place(self, arr: Any) -> _Placed:
        """A host array or batch copied to the device (its own buffers, its children's, its dictionary's)."""
        if isinstance(arr, pa.RecordBatch):
            return _Placed(arr.num_rows, 0, 0, [None], [self._place(c) for c in arr.columns], None)
        if pa.types.is_struct(arr.type):  # exported from row 0: the children as pyarrow shifts them
            bits = None if arr.null_count == 0 else \
                self.place(np.packbits(arr.is_valid().to_numpy(zero_copy_only=False), bitorder="little"))
            return _Placed(len(arr), arr.null_count, 0, [bits],
                           [self._place(arr.field(i)) for i in range(arr.type.num_fields)], None)
        own = [None if b is None else self.place(b) for b in self._own_buffers(arr, arr.buffers())]
        children = [self._place(arr.values)] if arr.type.num_fields else []
        dictionary = self._place(arr.dictionary) if pa.types.is_dictionary(arr.type) else None
        return _Placed(len(arr), arr.null_count, arr.offset, own, children, dictionary)

    @staticmethod
    def _own_buffers(arr: pa.Array, bufs: list[Any]) -> list[Any]:
        """The array's own buffers in the C interface's order (children's buffers excluded)."""
        t = arr.type
        if pa.types.is_struct(t) or pa.types.is_fixed_size_list(t):
            return bufs[:1]
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
            return bufs[:2]
        if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or \
                pa.types.is_large_binary(t):
            return bufs[:3]
        return bufs[:2]

    def _struct(self, placed: _Placed, keep: list[Any]) -> C.ArrowArray:
        """A filled ArrowArray for a placed array (its pieces appended to `keep`)."""
        own, children, dictionary = placed.own, placed.children, placed.dictionary
        out = C.ArrowArray()
        out.length, out.null_count, out.offset = placed.length, placed.null_count, placed.offset
        ptrs = (ctypes.c_void_p * max(1, len(own)))(*[None if b is None else _address(b) for b in own])
        out.n_buffers = len(own)
        out.buffers = ctypes.cast(ptrs, ctypes.POINTER(ctypes.c_void_p))
        kids = [self._struct(c, keep) for c in children]
        kid_ptrs = (ctypes.POINTER(C.ArrowArray) * max(1, len(kids)))(*[ctypes.pointer(k) for k in kids])
        out.n_children = len(kids)
        out.children = ctypes.cast(kid_ptrs, ctypes.POINTER(ctypes.POINTER(C.ArrowArray)))
        if dictionary is not None:
            d = self._struct(dictionary, keep)
            out.dictionary = ctypes.pointer(d)
            keep.append(d)
        out.release = _release
        keep += [ptrs, kids, kid_ptrs, own]
        return out

    def _device_array(self, b: int) -> C.ArrowDeviceArray:
        """An exported ArrowDeviceArray of batch b (a struct array, or the array itself)."""
        keep: list[Any] = [self]
        placed = self.placed[b]
        top = self._struct(placed if self.is_table else placed.children[0], keep)
        key = next(_IDS)
        top.private_data = key
        _KEEP[key] = keep
        out = C.ArrowDeviceArray()
        out.array = top
        out.device_id, out.device_type = self.device_id, C.CUDA
        out.sync_event = ctypes.addressof(self._event) if self.sync_event else None
        return out

    def _schema_capsule(self) -> Any:
        return self.schema.__arrow_c_schema__() if self.is_table else self.schema.field(0).__arrow_c_schema__()

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kwargs: Any) -> tuple[Any, Any]:
        if requested_schema is not None:
            raise NotImplementedError("the stand-in producer exports its own schema only")
        if len(self.batches) != 1:
            return DeviceExport(pa.Table.from_batches(self.batches).combine_chunks(), device_id=self.device_id,
                                sync_event=self.sync_event, place=self.place).__arrow_c_device_array__()
        holder = self._device_array(0)
        self._last = holder  # the capsule points into it until the consumer moves it
        return self._schema_capsule(), C.new_capsule(holder, C.ARRAY_CAPSULE)

    def __arrow_c_device_stream__(self, requested_schema: Any = None, **kwargs: Any) -> Any:
        if requested_schema is not None:
            raise NotImplementedError("the stand-in producer exports its own schema only")
        return _Stream(self).capsule()


@dataclass
class _Placed:
    """An array's device copy: C interface fields, own buffers, children, dictionary."""

    length: int
    null_count: int
    offset: int
    own: list[Any]
    children: list[_Placed]
    dictionary: _Placed | None


class _Stream:
    """An exported ArrowDeviceArrayStream over the producer's batches.

    Its callbacks are module-level functions that find the stream through `private_data` (a key of `_KEEP`),
    not bound methods: a bound method held by the struct the object owns would be a reference cycle, keeping
    the producer's device copies alive after `release` until the cyclic collector runs (which gpuwrite pauses
    while it writes)."""

    def __init__(self, producer: DeviceExport) -> None:
        self.producer = producer
        self.next = 0
        self.struct = C.ArrowDeviceArrayStream()
        self.struct.device_type = C.CUDA
        self.struct.get_schema = _stream_get_schema
        self.struct.get_next = _stream_get_next
        self.struct.get_last_error = _stream_last_error
        self.struct.release = _stream_release
        self.key = next(_IDS)
        _KEEP[self.key] = [self]
        self.struct.private_data = self.key

    def capsule(self) -> Any:
        return C.new_capsule(self.struct, C.STREAM_CAPSULE)

    def get_schema(self, out: Any) -> int:
        self.producer.schema._export_to_c(ctypes.addressof(out.contents))
        return 0

    def get_next(self, out: Any) -> int:
        if self.next >= len(self.producer.batches):
            out.contents.array.release = C.RELEASE_ARRAY()
            return 0
        arr = self.producer._device_array(self.next)
        self.next += 1
        ctypes.memmove(ctypes.addressof(out.contents), ctypes.addressof(arr), ctypes.sizeof(C.ArrowDeviceArray))
        return 0


def _stream_of(stream: Any) -> _Stream:
    """The exported stream a C callback was called on (by its `private_data` key)."""
    found: _Stream = _KEEP[int(stream.contents.private_data)][0]
    return found


@C.GET_SCHEMA
def _stream_get_schema(stream: Any, out: Any) -> int:
    return _stream_of(stream).get_schema(out)


@C.GET_NEXT
def _stream_get_next(stream: Any, out: Any) -> int:
    return _stream_of(stream).get_next(out)


@C.GET_LAST_ERROR
def _stream_last_error(stream: Any) -> None:
    return None


@C.RELEASE_STREAM
def _stream_release(stream: Any) -> None:
    """Marks the stream released and drops the exporter's hold on it (freed by refcount, no cycle left)."""
    key = int(stream.contents.private_data or 0)
    stream.contents.release = C.RELEASE_STREAM()
    _KEEP.pop(key, None)
