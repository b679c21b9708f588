"""Rule ``register_accumulator``: a value accumulated over a block's loops stays in a register.

Applies to a block without ``T.init`` that adds into one output element its loops never move
(a row sum ``B[i] += A[i, j]``, a softmax's row maximum, RGCN's ``Y[i, fo] += ...`` over the
row's entries and the input features), directly under a row block of spatial iterators only
that sets that element first: ``cache_write`` of the output into a one-element ``global``-scope
cache (which LLVM keeps in a register), initialised where the row block set the output and
written back once after the loops::

    B[i] = 0                                  acc = 0
    for j: B[i] = B[i] + A[i, j]      →       for j: acc = acc + A[i, j]
                                              B[i] = acc

A serial kernel often gets this from LLVM anyway, but not inside a parallel loop, whose body
TVM outlines into a function that reads the arrays through a closure without ``noalias``: every
step then stores and reloads the element (RGCN measured 2x slower per thread than serial).
"""

from __future__ import annotations

from typing import Optional

from ...ir.analysis import same_indices
from ..schedule import Schedule
from .facts import BlockFacts, Nest, vars_of
from .rule import Context, Rule


class RegisterAccumulator(Rule):
    name = "register_accumulator"

    def apply(self, sch: Schedule, nest: Nest, block: Optional[BlockFacts], context: Context) -> bool:
        if not block.is_leaf or block.has_init or len(block.stores) != 1 or not block.loops:
            return False
        store = block.stores[0]
        own = [it.var for it in block.iters if any(it.binding.same_as(lp.var) for lp in block.loops
                                                   if hasattr(it.binding, "same_as"))]
        if not any(it.kind == "R" for it in block.iters):
            return False
        if any(v.same_as(o) for index in store.indices for v in vars_of(index) for o in own):
            return False  # the output moves with the block's own loops: nothing to keep
        if not any(load.buffer == store.buffer for load in block.loads):
            return False  # not an accumulation
        parent = nest.block(block.parent) if block.parent is not None else None
        if parent is None or parent.parent is not None or parent.has_init or any(it.kind != "S" for it in parent.iters):
            return False  # the cache would live in a scope that runs more than once per output
        if store.buffer in parent.allocated or not any(
                s.buffer == store.buffer and same_indices(s.indices, store.indices) for s in parent.stores):
            return False  # a cache already, or the row block does not set the element first
        sch.cache_write(block.name, 0, "global")
        return True

