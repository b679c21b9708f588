"""Array arguments: numpy arrays, torch tensors and other DLPack producers, seen uniformly.

Torch is optional and never imported here: a tensor is recognized by its type's module and
used through its own methods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .._tvm import tvm_ffi

# DLPack device type codes (dlpack.h).
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cpu", 4: "opencl", 8: "metal", 10: "rocm", 13: "cuda"}


@dataclass(slots=True)
class ArrayInfo:
    """What validation needs to know about one array argument (made on every checked call:
    a plain slotted record, which is several times cheaper to make than a frozen one)."""

    value: Any
    dtype: str
    shape: tuple[int, ...]
    device: str
    c_contiguous: bool
    writeable: bool
    aligned: bool
    host: Optional[np.ndarray]
    #: data on a 16-byte boundary (GPU kernels load up to 16 bytes at once)
    device_aligned: bool = True

    def host_array(self) -> np.ndarray:
        """The contents as a numpy array (a view on CPU, a copy from a device)."""
        if self.host is not None:
            return self.host
        if _is_torch(self.value):
            return self.value.detach().cpu().numpy()
        return np.from_dlpack(self.value, device="cpu", copy=True)


def kernel_view(array: np.ndarray) -> Any:
    """A TVM tensor over ``array``'s memory, for an argument passed to many calls: a compiled
    kernel takes it as it is, where a numpy array is converted on every call (~0.7 us each).
    An empty array becomes one with the strides TVM calls compact (NumPy's are refused at the
    call); ``array`` itself when TVM refuses it (read-only), and calls then adapt it."""
    if array.size == 0:
        from .validate import _empty_like  # the strides TVM takes for an array of no elements

        return _empty_like(array)
    try:
        return tvm_ffi.from_dlpack(array)
    except (BufferError, ValueError, TypeError, RuntimeError):
        return array


def is_array(value: Any) -> bool:
    """Whether ``value`` is an array we can pass to a kernel."""
    return isinstance(value, np.ndarray) or _is_torch(value) or hasattr(value, "__dlpack__")


def inspect_array(value: Any) -> ArrayInfo:
    """Describe ``value`` (an ``is_array`` object) without copying it when it is on the CPU."""
    if isinstance(value, np.ndarray):
        return _numpy_info(value, value)
    if _is_torch(value):
        return _torch_info(value.detach())
    device = _DEVICE_NAMES.get(int(value.__dlpack_device__()[0]), "device")
    if device == "cpu":
        return _numpy_info(value, np.from_dlpack(value))
    raise TypeError(f"arrays on {device} are supported as numpy or torch objects only")


def _numpy_info(value: Any, array: np.ndarray) -> ArrayInfo:
    flags = array.flags
    return ArrayInfo(
        value=value,
        dtype=_numpy_dtype_name(array.dtype),
        shape=tuple(int(d) for d in array.shape),
        device="cpu",
        c_contiguous=bool(flags.c_contiguous),
        writeable=bool(flags.writeable),
        aligned=bool(flags.aligned),
        host=array,
    )


def _torch_info(tensor: Any) -> ArrayInfo:
    on_cpu = tensor.device.type == "cpu"
    dtype = str(tensor.dtype).removeprefix("torch.")
    return ArrayInfo(
        value=tensor,
        dtype=dtype,
        shape=tuple(int(d) for d in tensor.shape),
        device=str(tensor.device),
        c_contiguous=bool(tensor.is_contiguous()),
        writeable=True,
        aligned=tensor.data_ptr() % max(tensor.element_size(), 1) == 0,
        host=tensor.numpy() if on_cpu and dtype != "bfloat16" else None,
        device_aligned=tensor.data_ptr() % 16 == 0,
    )


_DTYPE_NAMES: dict[np.dtype, str] = {}


def _numpy_dtype_name(dtype: np.dtype) -> str:
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = dtype.name if dtype.isnative else f"{dtype.name} (non-native byte order)"
        _DTYPE_NAMES[dtype] = name
    return name


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")
