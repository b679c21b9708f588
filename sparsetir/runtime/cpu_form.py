"""The form of a stage-III function that TVM's CPU code generation is given.

Rewrites that matter only to the machine code, applied to every CPU compilation (the
kernel's own and the ones that print its listing), so the listing shows the code that runs while
``Kernel.func`` stays the program as lowered and scheduled:

- ``loops_from_zero`` (``transforms/loops_from_zero.py``): every loop counted from 0, around a
  TVM 0.27 pass that shifts a loop's variable in its body but not in nested loops' bounds;
- ``relax_param_alignment`` (``alignment.py``): array parameters aligned to their element size;
- ``scratch_on_stack`` (``stack_scratch.py``): per-iteration scratch on the stack, not in a
  workspace allocated on every iteration;
- ``hoist_invariant_loads`` (``transforms/hoist_invariant_loads.py``): loads of read-only arrays
  out of the loops they do not depend on;
- and, making the function a module (``cpu_module``), ``outline_parallel_loops``
  (``transforms/outline_parallel.py``): each parallel loop's body as a private ``tir.noalias``
  function, so that its arrays keep alias classes of their own inside TVM's parallel closure.

Measured with ``sparsetir bench --scripts`` on the seven shared matrices (2-core VM, each call
after a torch op), before and after the last two: every example's default build ran 1.26x
faster (geomean of 107 cases) and its serial build 1.48x; the most, where a sorted row is
searched or a fused iteration recovers its row (RGCN over relations 3.1x, the fused SDDMM
2.3x, the ragged reduction 2.0x, CSR-to-BSR 1.5x). ``sparsetir.ops``' SpMM and SDDMM were
unchanged in a paired comparison (bcsstk16 width 512: 4.06-4.09 vs 4.12-4.13 ms; pubmed SDDMM
width 32: 0.33 vs 0.33 ms).
"""

from __future__ import annotations

from .._tvm import s_tir, tirx, tvm
from ..ir.analysis import contains
from ..transforms.hoist_invariant_loads import hoist_invariant_loads
from ..transforms.loops_from_zero import loops_from_zero
from ..transforms.outline_parallel import outline_parallel_loops, stack_only
from .alignment import relax_param_alignment
from .stack_scratch import scratch_on_stack
from .target import is_gpu


def cpu_form(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` as TVM's CPU code generation is given it (before its parallel loops' bodies are
    outlined: ``cpu_module``)."""
    return hoist_invariant_loads(scratch_on_stack(relax_param_alignment(loops_from_zero(func))))


def cpu_module(func: "tirx.PrimFunc", symbol: str) -> "tvm.IRModule":
    """The module TVM compiles for ``func`` on the CPU: ``cpu_form(func)`` as ``symbol``, each
    parallel loop's body outlined into a private function of its own."""
    main, outlined = outline_parallel_loops(_compacted(cpu_form(func)), symbol)
    return tvm.IRModule({tvm.ir.GlobalVar(symbol): main, **outlined})


def _compacted(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` with its blocks' buffers shrunk to the regions they use (TVM's own
    ``CompactBufferAllocation``, which ``tvm.compile`` runs anyway, and the passes it needs
    first), when a parallel loop's body allocates a buffer of a size known only at run time:
    a lookup's result per entry of a row (``csr_to_bsr1_JO_pos0``, ``(n,)``) is one element per
    iteration, a stack slot, and the body can then be outlined (``outline_parallel_loops``).
    Measured on the 2-core VM, email_enron: ``docs/lowering.md`` (CPU code generation, step 4)."""
    if not contains(func.body, lambda n: isinstance(n, tirx.For) and n.kind == tirx.ForKind.PARALLEL
                    and not stack_only(n.body)):
        return func
    passes = tvm.transform.Sequential([
        s_tir.transform.LowerInitBlock(), s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(), s_tir.transform.CompactBufferAllocation()])
    return passes(tvm.IRModule({"main": func}))["main"]



def module_for(func: "tirx.PrimFunc", symbol: str, target: "tvm.target.Target") -> "tvm.IRModule":
    """The module TVM compiles for ``func`` on ``target``: ``cpu_module``'s on the CPU, the
    function as it is for a GPU (whose listing the CUDA build prints from it)."""
    return tvm.IRModule({symbol: func}) if is_gpu(target) else cpu_module(func, symbol)
