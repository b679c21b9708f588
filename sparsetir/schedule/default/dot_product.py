"""Rule ``dot_product``: a reduction along the innermost loop becomes vector lanes summed once.

Applies to a block with ``T.init`` whose innermost loop ``k`` has a constant extent, is bound to
a reduction iterator indexing every access contiguously, and sits right under a spatial loop
``j`` (SDDMM ``O[i, j] += X[i, k] * Y[J[j], k]``). With ``V`` the widest vector dividing the
extent::

    for j:
        lanes[V] = 0; for ko: lanes[0:V] += X[i, ko*V:+V] * Y[.., ko*V:+V]     (vector FMAs)
        O[i, j] = lanes[0] + ... + lanes[V-1]                                 (one lane sum)

(``rfactor`` of the lane loop; every intermediate a ``global``-scope buffer kept in registers.)
The kernel is built with reassociation allowed (``REASSOCIATING``), so LLVM sums the lanes as a
shuffle tree: 2x faster than a chain of scalar adds. NaN and infinity semantics are kept.
"""

from __future__ import annotations

from typing import Optional

from ..schedule import Schedule
from ...ir.analysis import vars_of
from .facts import BlockFacts, Nest, gathered_rows, inner_loop
from .prefetch import DOT
from .register_tile import vector_width
from .rule import Context, Rule

#: Target options that let LLVM reassociate floating-point sums (and ignore the sign of zero).
REASSOCIATING = {"fast-math-reassoc": True, "fast-math-nsz": True, "fast-math-contract": True}


class DotProduct(Rule):
    name = "dot_product"

    def apply(self, sch: Schedule, nest: Nest, block: Optional[BlockFacts], context: Context) -> bool:
        inner = inner_loop(block)
        if inner is None or inner.extent is None or not block.has_init or inner.iter.kind != "R" or not inner.contiguous:
            return False
        if len(block.loops) < 2 or len(block.stores) != 1 or block.stores_divided:
            return False
        above = block.iter_of(block.loops[-2])
        if above is None or above.kind != "S":
            return False
        if any(v.same_as(inner.iter.var) for index in block.stores[0].indices for v in vars_of(index)):
            return False
        width = vector_width(inner.extent, context.choices.lanes(block.stores[0].dtype))
        if width < 2:
            return False
        dot_product(sch, block.name, width)
        context.target_options.update(REASSOCIATING)
        gather = gathered_rows(block, context.func, DOT)
        if gather is not None:
            context.gathers.append(gather)
        return True


def dot_product(sch: Schedule, block: str, width: int, split: bool = True) -> None:
    """The steps of the rule on ``block`` (loops ``..., j, k``) with vectors of ``width`` lanes;
    ``split=False``: the block already iterates ``(j, vector, lane)`` over ``width`` lanes (as
    ``ops.scripts.sddmm_overlap_script`` does)."""
    if split:
        _, k = sch.get_loops(block)[-2:]
        _, lane = sch.split(k, [None, width], disable_predication=True)
    else:
        lane = sch.get_loops(block)[-1]
    partial = sch.rfactor(lane, 0)
    j = sch.get_loops(partial)[-3]
    sch.reverse_compute_at(block, j)
    sch.vectorize(sch.get_loops(partial)[-1])
    sch.decompose_reduction(partial, sch.get_loops(partial)[-2])
    out = sch.cache_write(block, 0, "global")
    sch.reverse_compute_at(out, sch.get_loops(block)[-2])
    sch.unroll(sch.get_loops(block)[-1])
    sch.decompose_reduction(block, sch.get_loops(block)[-1])
