"""The GPU kernels the tests build once per session: every op configuration in ``OP_KEYS``
and the default-scheduled kernel of every workload (``tests/workloads.py``)."""

from __future__ import annotations

from functools import lru_cache

import sparsetir
from sparsetir.ops.cuda.kernels import build_cuda_kernel
from sparsetir.ops.kernels import KernelKey
from sparsetir.runtime.cuda.simulate import simulate
from workloads import WORKLOADS


def _key(op, dtype, feat=0, block=(0, 0)):
    return KernelKey(op, dtype, feat, block, target="cuda")


#: Op kernels: widths that take one lane per vector, several passes (f32 2048), sub-warp lane
#: groups (5, 16), odd widths (33, 127), one column (SpMV), both dtypes, BSR block shapes.
OP_KEYS = (
    [_key("spmm", "float32", f) for f in (1, 4, 32, 33, 127, 128, 512, 2048)]
    + [_key("spmm", "float64", f) for f in (1, 32, 128, 512)]
    + [_key("split_spmm", "float32", f) for f in (4, 33, 128)] + [_key("split_spmm", "float64", 32)]
    + [_key("sddmm", "float32", f) for f in (5, 16, 32, 33, 128, 512)]
    + [_key("sddmm", "float64", f) for f in (32, 128)]
    + [_key("segment_sum", "float32", f) for f in (1, 32, 100)]
    + [_key("softmax", "float32"), _key("softmax", "float64")]
    + [_key("bsr_spmm", "float32", f, b) for f, b in ((32, (4, 4)), (128, (2, 3)), (5, (3, 1)))]
    + [_key("ell_spmm", "float32", f) for f in (7, 32, 128)]
)


def key_id(key: KernelKey) -> str:
    """A short test id: op, dtype, width and block shape."""
    block = f"_{key.block[0]}x{key.block[1]}" if key.block != (0, 0) else ""
    return f"{key.op}_{key.dtype}_{key.feat}{block}"


@lru_cache(maxsize=None)
def op_kernel(key: KernelKey):
    """The CUDA kernel of an op configuration."""
    return build_cuda_kernel(key)


@lru_cache(maxsize=None)
def simulated_op(key: KernelKey):
    """The op kernel's CPU simulation."""
    return simulate(op_kernel(key))


def workload_function(name: str):
    """A workload's stage-I function."""
    w = WORKLOADS[name]
    f = sparsetir.parse_file(w.path)
    return f[w.function] if isinstance(f, dict) else f


@lru_cache(maxsize=None)
def workload_kernel(name: str):
    """A workload built for CUDA with no schedule: the default GPU schedule's kernel."""
    return sparsetir.build(workload_function(name), target="cuda")
