"""The Arrow C Device Data Interface as ctypes structs: ArrowArray, ArrowDeviceArray, ArrowDeviceArrayStream,
and the PyCapsule calls that move them between producer and consumer (the interface's "move" semantics: the
consumer copies the struct and marks the producer's released).

See https://arrow.apache.org/docs/format/CDeviceDataInterface.html. Only layout lives here; reading buffers is
`device_input.py`'s job, producing them `device_export.py`'s.
"""

from __future__ import annotations

import ctypes
from typing import Any

# ArrowDeviceType (dlpack's DLDeviceType values)
CPU, CUDA, CUDA_HOST, OPENCL, VULKAN, METAL, VPI, ROCM, ROCM_HOST, EXT_DEV, CUDA_MANAGED, ONEAPI, WEBGPU, HEXAGON = (
    1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
DEVICE_NAMES = {CPU: "CPU", CUDA: "CUDA", CUDA_HOST: "CUDA_HOST", OPENCL: "OPENCL", VULKAN: "VULKAN",
                METAL: "METAL", VPI: "VPI", ROCM: "ROCM", ROCM_HOST: "ROCM_HOST", EXT_DEV: "EXT_DEV",
                CUDA_MANAGED: "CUDA_MANAGED", ONEAPI: "ONEAPI", WEBGPU: "WEBGPU", HEXAGON: "HEXAGON"}

ARRAY_CAPSULE = b"arrow_device_array"
STREAM_CAPSULE = b"arrow_device_array_stream"
SCHEMA_CAPSULE = b"arrow_schema"


class ArrowSchema(ctypes.Structure):
    """struct ArrowSchema (read and written by pyarrow's _import_from_c / _export_to_c)."""


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))), ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


class ArrowArray(ctypes.Structure):
    """struct ArrowArray."""


RELEASE_ARRAY = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)), ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)), ("release", RELEASE_ARRAY), ("private_data", ctypes.c_void_p)]


class ArrowDeviceArray(ctypes.Structure):
    """struct ArrowDeviceArray: an ArrowArray whose buffers live on (device_type, device_id); `sync_event`
    points to the event (a cudaEvent_t for CUDA) the consumer waits on before reading, or is NULL."""

    _fields_ = [("array", ArrowArray), ("device_id", ctypes.c_int64), ("device_type", ctypes.c_int32),
                ("sync_event", ctypes.c_void_p), ("reserved", ctypes.c_int64 * 3)]


class ArrowDeviceArrayStream(ctypes.Structure):
    """struct ArrowDeviceArrayStream."""


GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowDeviceArrayStream), ctypes.POINTER(ArrowSchema))
GET_NEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowDeviceArrayStream), ctypes.POINTER(ArrowDeviceArray))
GET_LAST_ERROR = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(ArrowDeviceArrayStream))
RELEASE_STREAM = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowDeviceArrayStream))
ArrowDeviceArrayStream._fields_ = [
    ("device_type", ctypes.c_int32), ("get_schema", GET_SCHEMA), ("get_next", GET_NEXT),
    ("get_last_error", GET_LAST_ERROR), ("release", RELEASE_STREAM), ("private_data", ctypes.c_void_p)]

_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, CAPSULE_DESTRUCTOR]


def capsule_pointer(capsule: Any, name: bytes) -> int:
    """The address a PyCapsule named `name` holds; a TypeError for anything else."""
    if not _api.PyCapsule_IsValid(capsule, name):
        raise TypeError(f"expected a PyCapsule named {name.decode()!r}, got {type(capsule).__name__}")
    return int(_api.PyCapsule_GetPointer(capsule, name))


def move_array(capsule: Any) -> ArrowDeviceArray:
    """Take ownership of the ArrowDeviceArray in `capsule`: a copy of the struct, the producer's marked
    released (so the capsule's destructor leaves it alone); the caller releases the copy (`release_array`)."""
    src = ArrowDeviceArray.from_address(capsule_pointer(capsule, ARRAY_CAPSULE))
    if not src.array.release:
        raise ValueError("the ArrowDeviceArray was already released (consumed)")
    out = ArrowDeviceArray()
    ctypes.memmove(ctypes.addressof(out), ctypes.addressof(src), ctypes.sizeof(ArrowDeviceArray))
    src.array.release = RELEASE_ARRAY()
    return out


def move_stream(capsule: Any) -> ArrowDeviceArrayStream:
    """Take ownership of the ArrowDeviceArrayStream in `capsule` (as move_array)."""
    src = ArrowDeviceArrayStream.from_address(capsule_pointer(capsule, STREAM_CAPSULE))
    if not src.release:
        raise ValueError("the ArrowDeviceArrayStream was already released (consumed)")
    out = ArrowDeviceArrayStream()
    ctypes.memmove(ctypes.addressof(out), ctypes.addressof(src), ctypes.sizeof(ArrowDeviceArrayStream))
    src.release = RELEASE_STREAM()
    return out


def release_array(arr: ArrowArray) -> None:
    """Call the producer's release callback of a moved array, once."""
    if arr.release:
        arr.release(ctypes.pointer(arr))


class Released:
    """Releases an owned ArrowDeviceArray when the last buffer view of it goes away (the views keep this
    object alive)."""

    def __init__(self, owned: ArrowDeviceArray) -> None:
        self.owned = owned

    def __del__(self) -> None:
        release_array(self.owned.array)


def new_capsule(struct: ctypes.Structure, name: bytes) -> Any:
    """A PyCapsule named `name` holding `struct`'s address, without a destructor: the producer keeps the struct
    and releases what no consumer took when it goes away."""
    return _api.PyCapsule_New(ctypes.addressof(struct), name, CAPSULE_DESTRUCTOR())
