"""Device-resident input taken where it lies: the Arrow C Device Data Interface (`__arrow_c_device_array__`,
`__arrow_c_device_stream__`: pylibcudf tables and columns), cudf DataFrames and Series (through pylibcudf's
export), and mappings of column name -> array with `__cuda_array_interface__` or DLPack (CuPy) for flat
numeric columns. Each becomes a `device_data.DeviceTable`: device buffers, read without any copy of values
to or from the host; only metadata (lengths, null counts, one end offset per string column) is read.

Buffers on another CUDA device than the writer's are refused with an error naming both; a producer's sync
event (C Device interface) or stream (`__cuda_array_interface__`) is waited on by the writer's stream (a
device-side wait). Producers exporting CPU memory through the device interface are read as host Arrow.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import GpuwriteError, UnsupportedTypeError
from . import c_device as C
from .device_data import DeviceArray, DeviceColumn, DeviceTable

_ON_DEVICE = (C.CUDA, C.CUDA_HOST, C.CUDA_MANAGED)
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


def is_device_input(data: Any) -> bool:
    """Whether `data` is taken as device input (not host Arrow / pandas, which have their own paths)."""
    if isinstance(data, DeviceTable):
        return True
    if isinstance(data, pa.Table | pa.RecordBatch | pa.Array | pa.ChunkedArray | pa.RecordBatchReader):
        return False
    if hasattr(data, "__arrow_c_device_array__") or hasattr(data, "__arrow_c_device_stream__"):
        return True
    if _is_cudf(data):
        return True
    return isinstance(data, Mapping) and len(data) > 0 and all(_is_device_vector(v) for v in data.values())


def _is_cudf(data: Any) -> bool:
    mod = type(data).__module__
    return (mod == "cudf" or mod.startswith("cudf.")) and type(data).__name__ in ("DataFrame", "Series")


def _is_device_vector(v: Any) -> bool:
    if hasattr(v, "__cuda_array_interface__"):
        return True
    if hasattr(v, "__dlpack_device__"):
        return int(v.__dlpack_device__()[0]) in (_DL_CUDA, _DL_CUDA_MANAGED)
    return False


def _device(device: Any) -> Any:
    """The device that reads the input (a fresh one when the caller has none); refuses without a GPU backend."""
    if device is not None:
        return device
    from ..backends.device.ops import Device, gpu_problem

    problem = gpu_problem()
    if problem is not None:
        raise GpuwriteError(f"the input lives on a GPU, but the GPU backend cannot run here: {problem}")
    return Device()


def open_device_input(data: Any, device: Any = None) -> tuple[pa.Schema, Iterator[DeviceTable | pa.Table]]:
    """The schema of device input `data` and its rows as DeviceTables (host pieces where the producer
    exported CPU memory), streams read lazily."""
    if isinstance(data, DeviceTable):
        return data.schema, iter([data])
    if _is_cudf(data):
        table = from_cudf(data, device)
        return table.schema, iter([table])
    if hasattr(data, "__arrow_c_device_stream__"):
        return open_device_stream(data.__arrow_c_device_stream__(), device)
    if hasattr(data, "__arrow_c_device_array__"):
        schema_capsule, array_capsule = data.__arrow_c_device_array__()
        piece = import_device_array(schema_capsule, array_capsule, device)
        return piece.schema, iter([piece])
    if isinstance(data, Mapping):
        table = from_device_vectors(data, device)
        return table.schema, iter([table])
    raise UnsupportedTypeError(f"cannot write {type(data).__name__} as device input")


def as_device_piece(data: Any, device: Any = None) -> DeviceTable | pa.Table:
    """One batch of device input (all of a stream's batches, side by side)."""
    _, pieces = open_device_input(data, device)
    parts = list(pieces)
    if not parts:
        raise GpuwriteError(f"{type(data).__name__} holds no batch")
    if all(isinstance(p, DeviceTable) for p in parts):
        return DeviceTable.concat(parts)  # type: ignore[arg-type]
    return pa.concat_tables([p.to_host() if isinstance(p, DeviceTable) else p for p in parts])


# -- the Arrow C Device Data Interface -----------------------------------------------------------------------

def _import_type(schema_capsule: Any) -> tuple[pa.Schema | None, pa.Field]:
    """(schema, field) of an exported ArrowSchema: a struct gives a schema (a table), anything else a field."""
    field = pa.Field._import_from_c_capsule(schema_capsule)
    if pa.types.is_struct(field.type):
        return pa.schema(list(field.type), metadata=field.metadata), field
    return None, field


def import_device_array(schema_capsule: Any, array_capsule: Any, device: Any = None) -> DeviceTable | pa.Table:
    """An exported (ArrowSchema, ArrowDeviceArray) pair as a table: a struct array's children are its columns,
    another array is one column. CPU memory gives a host pyarrow Table."""
    schema, field = _import_type(schema_capsule)
    owned = C.move_array(array_capsule)
    return _device_array_table(owned, schema, field, device)


def _device_array_table(owned: C.ArrowDeviceArray, schema: pa.Schema | None, field: pa.Field,
                        device: Any) -> DeviceTable | pa.Table:
    """The table of an owned ArrowDeviceArray."""
    kind = int(owned.device_type)
    if kind == C.CPU:
        batch = pa.RecordBatch._import_from_c_device(ctypes.addressof(owned), schema) if schema is not None \
            else None
        if batch is None:
            arr = pa.Array._import_from_c_device(ctypes.addressof(owned), field.type)
            return pa.table({field.name or "values": arr})
        return pa.Table.from_batches([batch])
    if kind not in _ON_DEVICE:
        C.release_array(owned.array)
        raise GpuwriteError(f"cannot read Arrow device data on {C.DEVICE_NAMES.get(kind, kind)} memory: gpuwrite "
                            f"reads CUDA (device, host-pinned or managed) and CPU memory")
    d = _device(device)
    if int(owned.device_id) != d.device_id() and kind == C.CUDA:
        C.release_array(owned.array)
        raise GpuwriteError(f"the input lives on CUDA device {int(owned.device_id)}, but the writer runs on "
                            f"device {d.device_id()}: write under that device (cupy.cuda.Device"
                            f"({int(owned.device_id)})) or copy the data to device {d.device_id()} first")
    if owned.sync_event:
        d.wait_event(owned.sync_event)
    owner = C.Released(owned)
    reader = _Reader(d, owner)
    if schema is not None:
        top = owned.array
        if top.null_count != 0 and top.buffers[0]:
            raise GpuwriteError("the device input is a struct array with null rows; a table's rows cannot be null")
        columns = [reader.parse(top.children[i].contents, f.type, f.name).slice(int(top.offset), int(top.length))
                   for i, f in enumerate(schema)]
    else:
        schema = pa.schema([field.with_name(field.name or "values")])
        columns = [reader.parse(owned.array, field.type, field.name)]
    reader.finish()
    return DeviceTable(schema, [DeviceColumn(f.type, [a]) for f, a in zip(schema, columns, strict=True)], d)


class _Reader:
    """Reads an ArrowArray tree into DeviceArrays; string data sizes (the last offset of each string array,
    on the device) are read together in `finish` (one sync)."""

    def __init__(self, device: Any, owner: Any) -> None:
        self.device, self.owner = device, owner
        self.ends: list[tuple[DeviceArray, Any, Any, int, int]] = []  # (array, first / end offset, data, width)

    def wrap(self, ptr: int | None, nbytes: int) -> Any:
        return None if not ptr else self.device.wrap(ptr, nbytes, self.owner)

    def parse(self, arr: C.ArrowArray, t: pa.DataType, name: str) -> DeviceArray:
        """DeviceArray of `arr` (type t)."""
        length, offset = int(arr.length), int(arr.offset)
        n = offset + length
        ptrs = [arr.buffers[i] for i in range(int(arr.n_buffers))]
        bitmap = (n + 7) // 8
        valid = self.wrap(ptrs[0], bitmap) if ptrs else None
        children: list[DeviceArray] = []
        dictionary = None
        if pa.types.is_boolean(t):
            bufs = [valid, self.wrap(ptrs[1], bitmap)]
        elif pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) \
                or pa.types.is_large_binary(t):
            w = 4 if pa.types.is_string(t) or pa.types.is_binary(t) else 8
            bufs = [valid, self.wrap(ptrs[1], (n + 1) * w), None]
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
            w = 8 if pa.types.is_large_list(t) else 4
            bufs = [valid, self.wrap(ptrs[1], (n + 1) * w)]
            children = [self.parse(arr.children[0].contents, t.value_type if not pa.types.is_map(t)
                                   else pa.struct([t.key_field, t.item_field]), name)]
        elif pa.types.is_fixed_size_list(t):
            bufs = [valid]
            children = [self.parse(arr.children[0].contents, t.value_type, name)]
        elif pa.types.is_struct(t):
            bufs = [valid]
            children = [self.parse(arr.children[i].contents, t.field(i).type, name) for i in range(t.num_fields)]
        elif pa.types.is_dictionary(t):
            bufs = [valid, self.wrap(ptrs[1], n * t.index_type.byte_width)]
            dictionary = self.parse(arr.dictionary.contents, t.value_type, name)
        elif _fixed_width(t):
            bufs = [valid, self.wrap(ptrs[1], n * t.byte_width)]
        else:
            raise UnsupportedTypeError(f"column {name!r}: Arrow type {t} is not read from device memory; cast it "
                                       f"on the device first (e.g. to a string or integer type)")
        out = DeviceArray(t, length, offset, int(arr.null_count), bufs, children=children, dictionary=dictionary,
                          device=self.device)
        if len(bufs) == 3 and bufs[1] is not None:
            w = 4 if pa.types.is_string(t) or pa.types.is_binary(t) else 8
            self.ends.append((out, bufs[1][offset * w:(offset + 1) * w], bufs[1][n * w:(n + 1) * w],
                              int(ptrs[2] or 0), w))
        elif len(bufs) == 3:
            out.bufs[2] = self.device.xp.zeros(0, dtype=np.uint8)
        return out

    def finish(self) -> None:
        """Size the string data buffers from their offsets (one sync for all); the arrays' bounds."""
        if not self.ends:
            return
        got = self.device.download_many([v for e in self.ends for v in e[1:3]])
        for j, (arr, _, _, ptr, w) in enumerate(self.ends):
            dtype = np.int32 if w == 4 else np.int64
            first, end = (int(np.frombuffer(got[2 * j + k].tobytes(), dtype=dtype)[0]) for k in (0, 1))
            arr.bufs[2] = self.wrap(ptr, end) if ptr else self.device.xp.zeros(0, dtype=np.uint8)
            arr.bounds = (first, end)
        self.ends = []


def _fixed_width(t: pa.DataType) -> bool:
    """Types with a validity bitmap and one buffer of fixed-width values."""
    try:
        return t.bit_width % 8 == 0 and t.bit_width > 0 and not pa.types.is_boolean(t)
    except ValueError:
        return False


def open_device_stream(capsule: Any, device: Any = None) -> tuple[pa.Schema, Iterator[DeviceTable | pa.Table]]:
    """An exported ArrowDeviceArrayStream: its schema now, its batches lazily (released at the end)."""
    stream = C.move_stream(capsule)
    raw = C.ArrowSchema()
    code = stream.get_schema(ctypes.pointer(stream), ctypes.pointer(raw))
    if code != 0:
        message = _stream_error(stream, code)
        stream.release(ctypes.pointer(stream))
        raise GpuwriteError(f"the device stream gave no schema: {message}")
    field = pa.Field._import_from_c(ctypes.addressof(raw))
    schema = pa.schema(list(field.type), metadata=field.metadata) if pa.types.is_struct(field.type) else None
    first_schema = schema if schema is not None else pa.schema([field.with_name(field.name or "values")])

    def batches() -> Iterator[DeviceTable | pa.Table]:
        try:
            while True:
                owned = C.ArrowDeviceArray()
                code = stream.get_next(ctypes.pointer(stream), ctypes.pointer(owned))
                if code != 0:
                    raise GpuwriteError(f"the device stream failed: {_stream_error(stream, code)}")
                if not owned.array.release:
                    return
                yield _device_array_table(owned, schema, field, device)
        finally:
            if stream.release:
                stream.release(ctypes.pointer(stream))

    return first_schema, batches()


def _stream_error(stream: C.ArrowDeviceArrayStream, code: int) -> str:
    message = stream.get_last_error(ctypes.pointer(stream)) if stream.get_last_error else None
    return message.decode(errors="replace") if message else f"error code {code}"


# -- cudf ----------------------------------------------------------------------------------------------------

def from_cudf(frame: Any, device: Any = None) -> DeviceTable:
    """A cudf DataFrame (or Series) as a DeviceTable: each column exported by pylibcudf through the Arrow C
    Device interface, zero-copy; the index is not written (as `to_arrow(preserve_index=False)`)."""
    if type(frame).__name__ == "Series":
        frame = frame.to_frame(name=frame.name if frame.name is not None else "values")
    names = [str(n) for n in frame.columns]
    columns = list(frame._columns)
    tables = []
    for name, col in zip(names, columns, strict=True):
        plc = col.to_pylibcudf(mode="read")
        schema_capsule, array_capsule = plc.__arrow_c_device_array__()
        piece = import_device_array(schema_capsule, array_capsule, device)
        if not isinstance(piece, DeviceTable):
            raise GpuwriteError(f"column {name!r}: pylibcudf exported host memory")
        tables.append(piece.rename([name]))
        device = piece.device
    fields = [t.schema.field(0) for t in tables]
    return DeviceTable(pa.schema(fields), [t.columns[0] for t in tables], _device(device))


# -- __cuda_array_interface__ / DLPack columns ---------------------------------------------------------------

_NUMERIC = {"i1": pa.int8(), "i2": pa.int16(), "i4": pa.int32(), "i8": pa.int64(), "f4": pa.float32(),
            "f8": pa.float64(), "b1": pa.bool_()}


def from_device_vectors(columns: Mapping[str, Any], device: Any = None) -> DeviceTable:
    """Columns given as 1-D device arrays (`__cuda_array_interface__`, or DLPack on a CUDA device): flat
    numeric or boolean columns, nullable through the interface's byte `mask` (nonzero: present)."""
    d = _device(device)
    fields, cols = [], []
    rows = None
    for name, v in columns.items():
        arr, mask, t = _vector(d, str(name), v)
        n = int(arr.size)
        if rows is not None and n != rows:
            raise GpuwriteError(f"column {name!r} has {n} rows, the columns before it {rows}")
        rows = n
        valid, nulls = None, 0
        if mask is not None:
            valid = d.pack_mask(mask)
            nulls = -1
        if t == pa.bool_():
            values = d.pack_mask(arr)
        else:
            values = arr.view(np.uint8)
        fields.append(pa.field(str(name), t, nullable=True))
        cols.append(DeviceColumn(t, [DeviceArray(t, n, 0, nulls, [valid, values], device=d)]))
    return DeviceTable(pa.schema(fields), cols, d)


def _vector(d: Any, name: str, v: Any) -> tuple[Any, Any, pa.DataType]:
    """(contiguous 1-D device array, byte mask or None, Arrow type) of a column given as a device array."""
    if hasattr(v, "__cuda_array_interface__"):
        cai = v.__cuda_array_interface__
        stream = cai.get("stream")
        if stream is not None:
            d.wait_stream(int(stream))
        arr = _from_cai(d, name, cai, v)
        mask = cai.get("mask")
        mask_arr = None
        if mask is not None:
            mask_arr = _from_cai(d, name, mask.__cuda_array_interface__, mask)
    else:
        kind, dev_id = (int(x) for x in v.__dlpack_device__())
        if dev_id != d.device_id():
            raise GpuwriteError(f"column {name!r} lives on CUDA device {dev_id}, the writer runs on device "
                                f"{d.device_id()}")
        if d.mode != "cuda":
            raise GpuwriteError(f"column {name!r}: DLPack CUDA arrays need a GPU (use __cuda_array_interface__)")
        arr = d.xp.from_dlpack(v)
        mask_arr = None
    typestr = np.dtype(arr.dtype).str[1:]
    if typestr not in _NUMERIC:
        raise UnsupportedTypeError(f"column {name!r}: device arrays of dtype {arr.dtype} are not written; "
                                   f"expected int8/16/32/64, float32/64 or bool")
    return arr, mask_arr, _NUMERIC[typestr]


def _from_cai(d: Any, name: str, cai: Mapping[str, Any], owner: Any) -> Any:
    """The device array an interface dict describes (1-D, contiguous), without a copy."""
    shape = tuple(cai["shape"])
    if len(shape) != 1:
        raise GpuwriteError(f"column {name!r}: expected a 1-D device array, got shape {shape}")
    dtype = np.dtype(cai["typestr"])
    strides = cai.get("strides")
    if strides is not None and shape[0] > 1 and strides[0] != dtype.itemsize:
        raise GpuwriteError(f"column {name!r}: the device array is not contiguous (stride {strides[0]})")
    ptr = int(cai["data"][0])
    if d.mode == "cuda":
        import cupy

        ptr_dev = cupy.cuda.runtime.pointerGetAttributes(ptr).device if ptr else d.device_id()
        if ptr_dev != d.device_id():
            raise GpuwriteError(f"column {name!r} lives on CUDA device {ptr_dev}, the writer runs on device "
                                f"{d.device_id()}")
    raw = d.wrap(ptr, shape[0] * dtype.itemsize, owner)
    return raw.view(dtype)
