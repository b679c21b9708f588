"""Hoist ``T.init()`` out of data-dependent reduction loops (stage2.md condition 2).

TVM runs a block's init when all its reduction iterators are at their minimum. A reduction
loop whose extent is a row length can be empty (an empty row), and then the output is never
initialised. For each block with an init whose reduction loops include a data-dependent one,
apply ``decompose_reduction`` at the outermost reduction loop of the block: the init then runs
over the block's spatial loops before any reduction step, whatever the row lengths.
"""

from __future__ import annotations

import copy
from typing import Any

from .._tvm import Schedule, Var, s_tir, tirx
from ..ir.analysis import reads_data, uses_var
from ..ir.iteration import ITER_TYPE, REDUCE
from ..ir.stage2 import Stage2Function


def _targets(stmt: Any, loops: list, out: list) -> None:
    if isinstance(stmt, s_tir.SBlockRealize):
        block = stmt.block
        if block.init is not None:
            reduce_values = [
                value for iv, value in zip(block.iter_vars, stmt.iter_values) if int(iv.iter_type) == ITER_TYPE[REDUCE]
            ]
            reduce_loops = [lp for lp in loops if any(uses_var(v, lp.loop_var) for v in reduce_values)]
            # A reduction over GPU threads keeps its init: TVM's cross-thread reduction starts
            # every thread's partial value at it, whatever the row lengths.
            threads = any(lp.thread_binding is not None for lp in reduce_loops)
            if any(reads_data(lp.extent) for lp in reduce_loops) and not threads:
                out.append((block.name_hint, reduce_loops[0].loop_var))
        _targets(block.body, [], out)
    elif isinstance(stmt, tirx.For):
        _targets(stmt.body, loops + [stmt], out)
    elif isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            _targets(s, loops, out)
    elif isinstance(stmt, tirx.IfThenElse):
        _targets(stmt.then_case, loops, out)
        if stmt.else_case is not None:
            _targets(stmt.else_case, loops, out)
    elif hasattr(stmt, "body") and isinstance(getattr(stmt, "body"), tirx.Stmt):
        _targets(stmt.body, loops, out)


def reduction_inits_to_hoist(func: tirx.PrimFunc) -> list[tuple[str, Var]]:
    """(block name, loop var) for every init that an empty data-dependent loop would skip."""
    out: list = []
    _targets(func.body, [], out)
    return out


def auto_decompose_reduction(f2: Stage2Function) -> Stage2Function:
    """``decompose_reduction`` every init left under a data-dependent reduction loop."""
    targets = reduction_inits_to_hoist(f2.prim)
    if not targets:
        return f2
    # TVM's Schedule rewrites the function it is given in place; work on a copy so that the
    # caller's stage-II function stays as it was.
    sch = Schedule(copy.deepcopy(f2.func))
    for name, loop_var in targets:
        block = sch.get_sblock(name)
        # The copy has fresh variables: find the loop by name, innermost match first.
        loop = [lp for lp in sch.get_loops(block) if sch.get(lp).loop_var.name == loop_var.name][-1]
        sch.decompose_reduction(block, loop)
    return Stage2Function.from_func(sch.mod["main"])
