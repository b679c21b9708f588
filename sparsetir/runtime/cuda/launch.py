"""Launching a ``CudaProgram`` on torch CUDA tensors through the CUDA driver.

The driver API is reached with ``ctypes`` from ``libcuda.so.1``, which comes with the NVIDIA
driver: no CUDA toolkit, TVM runtime or Python binding is needed where kernels run. A call:

1. takes the arrays as torch tensors on one CUDA device (any DLPack producer is wrapped by
   ``torch.from_dlpack``, without a copy) and the scalars as numbers;
2. evaluates the program's steps (``program.py``) into launches;
3. loads the program's device code into the device's primary context (torch's; once per
   device) and launches each kernel on torch's *current stream* of that device, so the
   kernels are ordered with the torch work around them and nothing synchronises.

Like ``program.py`` this module imports nothing from TVM or sparsetir (torch is used only
through the tensors it is given and imported when a tensor must be made), so that it can be
carried to a GPU machine without TVM.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any, Callable, Optional, Sequence

from .program import POINTER, CudaProgram, Launch, ProgramError

_CTYPES = {
    POINTER: ctypes.c_void_p,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "bool": ctypes.c_bool,
}


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's reason."""


class Driver:
    """The few CUDA driver calls a launch needs, from ``libcuda.so.1`` (the NVIDIA driver's)."""

    def __init__(self, library: str = "libcuda.so.1") -> None:
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as err:
            raise CudaError(f"cannot load the CUDA driver library {library}: {err} (no NVIDIA driver here?)") from err
        self._check("cuInit", self._lib.cuInit(0))

    def _check(self, call: str, result: int) -> None:
        if result != 0:
            text = ctypes.c_char_p()
            self._lib.cuGetErrorString(result, ctypes.byref(text))
            reason = text.value.decode() if text.value else f"error {result}"
            raise CudaError(f"{call} failed: {reason}")

    def use_device(self, ordinal: int) -> None:
        """Make the device's primary context (the one torch uses) current on this thread."""
        device, context = ctypes.c_int(), ctypes.c_void_p()
        self._check("cuDeviceGet", self._lib.cuDeviceGet(ctypes.byref(device), ordinal))
        self._check("cuDevicePrimaryCtxRetain", self._lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device))
        self._check("cuCtxSetCurrent", self._lib.cuCtxSetCurrent(context))

    def load(self, image: bytes) -> int:
        """Load device code (cubin or fatbinary) into the current context; the module handle."""
        module = ctypes.c_void_p()
        self._check("cuModuleLoadData", self._lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)))
        return int(module.value or 0)

    def function(self, module: int, name: str) -> int:
        """The handle of kernel ``name`` in ``module``."""
        func = ctypes.c_void_p()
        self._check(f"cuModuleGetFunction({name})",
                    self._lib.cuModuleGetFunction(ctypes.byref(func), ctypes.c_void_p(module), name.encode()))
        return int(func.value or 0)

    def launch(self, function: int, launch: Launch, kinds: Sequence[str], stream: int) -> None:
        """Launch ``function`` with ``launch``'s dimensions and arguments (of ``kinds``) on ``stream``."""
        values = [_CTYPES[kind](value) for kind, value in zip(kinds, launch.args)]
        pointers = (ctypes.c_void_p * max(len(values), 1))(*[ctypes.addressof(v) for v in values])
        self._check(f"cuLaunchKernel({launch.kernel})", self._lib.cuLaunchKernel(
            ctypes.c_void_p(function), *[ctypes.c_uint(d) for d in launch.grid], *[ctypes.c_uint(d) for d in launch.block],
            ctypes.c_uint(launch.shared), ctypes.c_void_p(stream), pointers, None))


class Launcher:
    """Runs one ``CudaProgram``: ``launcher(args)`` with one value per parameter, in order.

    ``image(arch)`` gives the device code for an architecture (``"sm_90"``): compiled by nvcc
    where sparsetir runs, read from a file in a bundle. ``driver`` is made on the first call.
    """

    def __init__(self, program: CudaProgram, image: Callable[[str], bytes],
                 driver: Optional[Callable[[], Any]] = None) -> None:
        self.program = program
        self._image = image
        self._make_driver = driver or Driver
        self._driver: Any = None
        self._functions: dict[int, dict[str, int]] = {}  # device ordinal -> kernel name -> handle
        self._lock = threading.Lock()

    def __call__(self, args: Sequence[Any]) -> None:
        if len(args) != len(self.program.params):
            raise ProgramError(f"{self.program.name} takes {len(self.program.params)} arguments, got {len(args)}")
        scalars, arrays, device = {}, {}, None
        for param, value in zip(self.program.params, args):
            if param.kind == "scalar":
                scalars[param.name] = value
                continue
            tensor = as_cuda_tensor(value, param.name)
            if device is None:
                device = tensor.device
            elif tensor.device != device:
                raise ProgramError(f"{self.program.name}: argument '{param.name}' is on {tensor.device}, "
                                   f"the others on {device}")
            arrays[param.name] = (tensor.data_ptr(), tuple(int(d) for d in tensor.shape))
        launches = self.program.launches(scalars, arrays)
        if not launches:
            return
        if device is None:
            raise ProgramError(f"{self.program.name}: no array argument says which device to run on")
        torch = sys.modules["torch"]
        stream = int(torch.cuda.current_stream(device).cuda_stream)
        functions = self._functions_on(device, torch)
        for launch in launches:
            self._driver.launch(functions[launch.kernel], launch, self.program.kernel(launch.kernel).params, stream)

    def _functions_on(self, device: Any, torch: Any) -> dict[str, int]:
        ordinal = int(device.index if device.index is not None else torch.cuda.current_device())
        with self._lock:
            if self._driver is None:
                self._driver = self._make_driver()
            self._driver.use_device(ordinal)
            found = self._functions.get(ordinal)
            if found is None:
                major, minor = torch.cuda.get_device_capability(ordinal)
                module = self._driver.load(self._image(f"sm_{major}{minor}"))
                found = {k.name: self._driver.function(module, k.name) for k in self.program.kernels}
                self._functions[ordinal] = found
            return found


def as_cuda_tensor(value: Any, name: str = "argument") -> Any:
    """``value`` as a torch tensor on a CUDA device: a tensor as it is, any other DLPack producer
    wrapped by ``torch.from_dlpack`` (no copy); ``ProgramError`` for anything else."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        tensor = value
    elif hasattr(value, "__dlpack__"):
        import torch  # noqa: F811 - only a GPU array from another library brings us here

        tensor = torch.from_dlpack(value)
    else:
        raise ProgramError(f"argument '{name}': expected a CUDA array (a torch tensor or a DLPack producer), "
                           f"got {type(value).__name__}")
    if tensor.device.type != "cuda":
        raise ProgramError(f"argument '{name}' is on {tensor.device}, but the kernel runs on a CUDA device")
    return tensor


__all__ = ["CudaError", "Driver", "Launcher", "as_cuda_tensor"]
