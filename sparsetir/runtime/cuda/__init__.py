"""The CUDA back end: compiling thread-bound kernels and launching them on torch CUDA tensors.

- ``lowering.compile_program``: TVM compiles a stage-III function for CUDA; its host code is
  read into a ``CudaProgram`` (``program.py``: source, kernels, launch steps as plain data).
- ``nvcc``: CUDA C to device code with nvcc (no GPU needed), for CI and for the first call.
- ``launch.Launcher``: runs a program through the CUDA driver (``libcuda``) on the current
  torch stream.
- ``simulate``: the same thread-bound program run on the CPU, its GPU loops made serial: the
  schedule's index arithmetic checked against a reference without a GPU.

``program.py`` and ``launch.py`` import neither TVM nor the rest of sparsetir: they run on a GPU
machine that has only torch and the NVIDIA driver (``docs/gpu.md``).
"""

from .launch import CudaError, Driver, Launcher, as_cuda_tensor
from .lowering import compile_program
from .nvcc import CI_ARCHS, NvccError, cached_image, compile_sources, find_nvcc
from .program import CudaProgram, KernelSpec, Launch, Param, ProgramError

__all__ = [
    "CI_ARCHS",
    "CudaError",
    "CudaProgram",
    "Driver",
    "KernelSpec",
    "Launch",
    "Launcher",
    "NvccError",
    "Param",
    "ProgramError",
    "as_cuda_tensor",
    "cached_image",
    "compile_program",
    "compile_sources",
    "find_nvcc",
]
