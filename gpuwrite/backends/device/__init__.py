"""The GPU backend: numba.cuda kernels, CuPy arrays and nvCOMP codecs (NumPy stand-ins under the simulator)."""

from .arrays import DeviceArrays, gpu_problem, simulated
from .builder import DeviceBackend, DeviceEncoders
from .codecs import page_codec

__all__ = ["DeviceArrays", "DeviceBackend", "DeviceEncoders", "gpu_problem", "page_codec", "simulated"]
