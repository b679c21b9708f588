"""Running a GPU-scheduled program on the CPU, to check its schedule without a GPU.

A thread binding does not change what a TensorIR program computes: a loop bound to
``threadIdx.x`` means the same iterations as the serial loop it was, run at once (which the
schedule's checks, TVM's and ``thread_binding.py``'s, allow only where the iterations are
independent, or reduce through TVM's cross-thread reduction). So the program a GPU kernel is
compiled from, with every thread-bound loop made serial again, computes what the kernel
computes, and can be compiled for the CPU and compared with a reference. That checks
everything the schedule decides: the splits and their predicates, the caches and where they
are written back, where reductions are initialised, every index expression.

What it cannot check: the parallel execution itself (a race the checks missed), TVM's lowering
of cross-thread reductions to warp shuffles and its CUDA code generation (nvcc compiles that
code in CI, nothing runs it), and the launcher's driver calls.

The serial program differs from the GPU one in two places, each computing the same values:

- ``tirx.cuda.atomic_add(&X[i], v)`` is ``X[i] = X[i] + v`` (one thread cannot race itself);
- a reduction whose loop over a row was bound to threads had its ``T.init`` kept in the block
  (TVM's cross-thread reduction starts each thread's partial value at the init value, for empty
  rows too); run serially, the init is hoisted out of the row loop as ``auto_decompose_reduction``
  does on the CPU, so an empty row is initialised here as well.
"""

from __future__ import annotations

import copy
from typing import Any

from ..._tvm import Schedule, TensorLoad, s_tir, structural_map, structural_walk, tirx, tvm
from ...errors import LoweringError
from ...transforms.auto_decompose_reduction import reduction_inits_to_hoist
from ..build import build_stage3
from ..cache import KernelCache
from ..kernel import Kernel
from ..target import host_target

def serial_program(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` (stage III, thread-bound) with every GPU loop serial, atomic adds plain stores and
    reduction inits hoisted out of data-dependent loops (module docs)."""

    def on_for(loop: Any) -> Any:
        if loop.kind != tirx.ForKind.THREAD_BINDING:
            return loop
        return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.SERIAL, loop.body, None,
                        loop.annotations, loop.step, loop.span)

    def on_evaluate(stmt: Any) -> Any:
        call = stmt.value
        if not (isinstance(call, tvm.ir.Call) and str(call.op.name) == "tirx.cuda.atomic_add"):
            return stmt
        address = call.args[0]
        if not (isinstance(address, tvm.ir.Call) and str(address.op.name) == "tirx.address_of"
                and isinstance(address.args[0], TensorLoad)):
            raise LoweringError(f"cannot run {call} on the CPU: the atomic add does not name an element")
        load = address.args[0]
        return tirx.BufferStore(load.source, load + call.args[1], list(load.indices), span=stmt.span)

    serial = func.with_body(structural_map(func.body, [(tirx.For, on_for), (tirx.Evaluate, on_evaluate)]))
    _refuse_gpu_scopes(serial)
    return _hoist_inits(serial)


def _refuse_gpu_scopes(func: "tirx.PrimFunc") -> None:
    scopes: set[str] = set()

    def on_block(block: Any) -> None:
        scopes.update(str(b.scope()) for b in block.alloc_buffers)

    structural_walk(func.body, [(s_tir.SBlock, on_block)])
    unsupported = sorted(s for s in scopes if s.startswith(("shared", "warp")))
    if unsupported:
        raise LoweringError(f"the CPU simulation does not model {', '.join(unsupported)} memory")


def _hoist_inits(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    targets = reduction_inits_to_hoist(func)
    if not targets:
        return func
    sch = Schedule(copy.deepcopy(func))
    for name, loop_var in targets:
        block = sch.get_sblock(name)
        loop = [lp for lp in sch.get_loops(block) if sch.get(lp).loop_var.name == loop_var.name][-1]
        sch.decompose_reduction(block, loop)
    return sch.mod["main"]


def simulate(kernel: Kernel) -> Kernel:
    """A CPU kernel computing what the GPU ``kernel`` computes (module docs), with the same
    parameters and argument checks; numpy arrays in and out."""
    if kernel.compiled.program is None:
        raise LoweringError(f"{kernel.name} is not a GPU kernel")
    serial = serial_program(kernel.func)
    return build_stage3(serial, kernel._validator.constraints, target=host_target(), name=kernel.name,
                        cache=KernelCache(disk=None))


__all__ = ["serial_program", "simulate"]
