"""Building and calling kernels: compilation, the kernel cache, argument validation."""

from .build import build_stage3
from .cache import KernelCache, default_cache
from .constraints import (
    Constraint,
    IndicesConstraint,
    IndptrConstraint,
    LastOf,
    constraints_from_axes,
)
from .kernel import Kernel
from .target import as_target, cuda_target, host_target, num_threads

__all__ = [
    "Constraint",
    "IndicesConstraint",
    "IndptrConstraint",
    "Kernel",
    "KernelCache",
    "LastOf",
    "as_target",
    "build_stage3",
    "constraints_from_axes",
    "cuda_target",
    "default_cache",
    "host_target",
    "num_threads",
]
