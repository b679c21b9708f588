"""Compilation targets: the host CPU as LLVM sees it, and CUDA GPUs.

TVM 0.27 quietly turns ``mcpu: native`` into ``generic`` (SSE2, no FMA), so the host target
names the CPU LLVM detects. The thread count comes from ``TVM_NUM_THREADS``, which
``sparsetir._tvm`` sets to all cores before TVM starts.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from .._tvm import tvm
from .parallel import num_threads as launcher_threads

TargetLike = Union[str, dict, "tvm.target.Target"]

# The lent GPU machines are H100/H200; used when no GPU is visible to pick the arch from.
DEFAULT_CUDA_ARCH = "sm_90"


def host_target(**options: Any) -> "tvm.target.Target":
    """The LLVM target for this machine's CPU, with any extra target options."""
    config = {"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu()}
    config.update(options)
    return tvm.target.Target(config)


def cuda_target(arch: Optional[str] = None, **options: Any) -> "tvm.target.Target":
    """A CUDA target for ``arch`` (``"sm_90"``...); defaults to the visible GPU, else sm_90."""
    if arch is None:
        arch = _visible_cuda_arch() or DEFAULT_CUDA_ARCH
    config = {"kind": "cuda", "arch": arch}
    config.update(options)
    return tvm.target.Target(config)


def as_target(target: TargetLike) -> "tvm.target.Target":
    """Normalize a target: ``"llvm"`` means the host CPU and ``"cuda"`` the default GPU."""
    if isinstance(target, tvm.target.Target):
        return target
    if target == "llvm":
        return host_target()
    if target == "cuda":
        return cuda_target()
    if isinstance(target, (str, dict)):
        return tvm.target.Target(target)
    raise TypeError(f"target must be a str, dict or tvm.target.Target, got {type(target).__name__}")


def is_gpu(target: "tvm.target.Target") -> bool:
    """Whether kernels for ``target`` take device (not host) arrays."""
    return "gpu" in [str(key) for key in target.keys]


def num_threads() -> int:
    """The number of CPU threads a parallel kernel uses (``parallel.num_threads``)."""
    return launcher_threads()


def tvm_num_threads() -> int:
    """The number of CPU threads TVM's own pool uses for parallel loops."""
    return int(tvm.runtime.num_threads())


def _visible_cuda_arch() -> Optional[str]:
    if not tvm.runtime.enabled("cuda"):
        return None
    device = tvm.runtime.cuda(0)
    if not device.exist:
        return None
    return "sm_" + device.compute_version.replace(".", "")
