"""horizontal_fusion: several iterations of one function as one parallel loop (RFC D3).

A decomposed function computes one iteration per format (an ELL bucket per row length, a BSR
per block size...), each a loop nest of its own. Run one after another, every one of them is a
parallel launch, and a thread that finishes its share of a small bucket waits for the others.
This stage-II transform gives each iteration's outer loop run-time chunk boundaries
(``partition_rows(separate=True)``: a parameter ``<parts>_<block>`` of ``P + 1`` entries per
iteration, ``P`` shared) and merges the chunk loops into one with TVM's ``merge``::

    for t in range(P):                                 for t in T.parallel(P):
        for i in range(Part_a[t+1] - Part_a[t]):           for i in range(Part_a[t+1] - Part_a[t]):
            with T.sblock("a0"): ...                           with T.sblock("a0"): ...
    for t in range(P):                        →            for i in range(Part_b[t+1] - Part_b[t]):
        for i in range(Part_b[t+1] - Part_b[t]):               with T.sblock("b0"): ...
            with T.sblock("b0"): ...

Chunk ``t`` of the fused loop runs chunk ``t`` of every iteration, in the listed order, so the
boundaries decide both the balance (the work of all iterations in chunk ``t`` together) and
who writes what.

Two chunks write the same output element only if the boundaries let them. On CPU they must
not: TVM's LLVM backend has no atomic add, so the caller gives *owner* boundaries, chunk ``t``
of every iteration covering only output rows of one row range (``sparsetir.formats`` builds
them: ``Hybrid.row_bounds``), and the writes of one row then happen in one thread, in order. On
a GPU, where the threads of one chunk also split a row's work, ``lower_atomic_updates`` turns
the accumulations of the blocks that may collide into atomic adds.
"""

from __future__ import annotations

from typing import Sequence

from .._tvm import s_tir, structural_map, tirx
from ..errors import LoweringError
from ..ir.stage2 import Stage2Function
from .partition import partition_rows


def horizontal_fusion(f2: Stage2Function, blocks: Sequence[str], parts_param_name: str = "part",
                      count_param_name: str = "P", parallel: bool = True) -> Stage2Function:
    """``f2`` with the outer loops of ``blocks`` (each the outermost block of one iteration, in
    program order) chunked at run-time boundaries and merged into one loop over ``P`` chunks,
    parallel unless ``parallel=False``. The new parameters follow ``f2``'s: one boundary array
    per block, then ``P``."""
    blocks = list(blocks)
    if len(blocks) < 2:
        raise LoweringError("horizontal_fusion needs two or more blocks to fuse")
    chunked = partition_rows(f2, blocks, parts_param_name, count_param_name, parallel=False, separate=True)
    sch = s_tir.Schedule(chunked.prim)
    try:
        loops = [sch.get_loops(sch.get_sblock(name))[0] for name in blocks]
        merged = sch.merge(*loops)
    except Exception as err:  # TVM's ScheduleError: names the rule merge needs
        detail = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), type(err).__name__)
        raise LoweringError(f"horizontal_fusion of {', '.join(blocks)} failed: {detail}") from err
    prim = sch.mod["main"]
    if parallel:
        prim = _parallel(prim, sch.get(merged).loop_var)
    return Stage2Function(prim, list(chunked.axes), list(chunked.buffers), list(chunked.param_names))


def _parallel(prim: "tirx.PrimFunc", loop_var: "tirx.Var") -> "tirx.PrimFunc":
    """``prim`` with the loop over ``loop_var`` parallel. Not ``sch.parallel``: its dataflow check
    refuses blocks that read what they write (an accumulation), which the owner boundaries make
    safe (see the module documentation)."""

    def on_for(loop: "tirx.For") -> "tirx.For":
        if not loop.loop_var.same_as(loop_var):
            return loop
        return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.PARALLEL, loop.body, loop.thread_binding,
                        loop.annotations, loop.step, loop.span)

    return prim.with_body(structural_map(prim.body, [(tirx.For, on_for)]))


__all__ = ["horizontal_fusion"]
