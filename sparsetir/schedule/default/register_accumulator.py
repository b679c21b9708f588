"""Rule ``register_accumulator``: a value accumulated over a block's loops stays in a register.

Applies to a block without ``T.init`` directly under a row block of spatial iterators only, when
the block and the blocks nested in it store into one output element only, which none of their
loops moves, and read it (a row sum ``B[i] += A[i, j]``, a softmax's row maximum, RGCN's
``Y[i, fo] += ...`` over the row's entries and the input features, a CSF tensor's
``out[i] += A[i, j, k]`` over two levels, a co-iteration's merge ``out[i] += A[i, j] * B[i, j]``
over the intersection of two rows, whose loop is a ``while`` and whose merge pointers, the
block's own scratch, do not count as outputs), and the row block sets that element first:
``cache_write`` of the output into a one-element ``global``-scope cache (which LLVM keeps in a
register), initialised where the row block set the output and written back once after the
loops::

    B[i] = 0                                  acc = 0
    for j: B[i] = B[i] + A[i, j]      →       for j: acc = acc + A[i, j]
                                              B[i] = acc

A serial kernel often gets this from LLVM anyway, but not inside a parallel loop, whose body
TVM outlines into a function that reads the arrays through a closure without ``noalias``: every
step then stores and reloads the element (RGCN measured 2x slower per thread than serial; the
CSF reduction 1.4x, before the rule looked past the first level).
"""

from __future__ import annotations

from typing import Optional

from ..._tvm import Var
from ...ir.analysis import reads_data, same_indices, vars_of
from ..schedule import Schedule
from .facts import BlockFacts, Nest
from .rule import Context, Rule


class RegisterAccumulator(Rule):
    name = "register_accumulator"

    def apply(self, sch: Schedule, nest: Nest, block: Optional[BlockFacts], context: Context) -> bool:
        merge = bool(block.walk_bounds) and not block.iters  # a co-iteration's merge: its loop is a while
        if block.has_init or block.stores_divided or not (merge or (block.loops and any(it.kind == "R" for it in block.iters))):
            return False
        parent = nest.block(block.parent) if block.parent is not None else None
        if parent is None or parent.parent is not None or parent.has_init or any(it.kind != "S" for it in parent.iters):
            return False  # the cache would live in a scope that runs more than once per output
        subtree = _subtree(nest, block)
        if any(b.has_init for b in subtree):
            return False
        scratch = {name for b in subtree for name in b.allocated}  # a merge's pointers
        stores = [s for b in subtree for s in b.stores if s.buffer not in scratch]
        if not stores:
            return False
        store = stores[0]
        if any(s.buffer != store.buffer or not same_indices(s.indices, store.indices) for s in stores):
            return False  # more than one element (or buffer) written: not one accumulator
        moving = _moving_vars(subtree)
        if any(reads_data(i) or any(v.same_as(o) for v in vars_of(i) for o in moving) for i in store.indices):
            return False  # the output moves with the loops: nothing to keep
        if not any(load.buffer == store.buffer for b in subtree for load in b.loads):
            return False  # not an accumulation
        if store.buffer in parent.allocated or not any(
                s.buffer == store.buffer and same_indices(s.indices, store.indices) for s in parent.stores):
            return False  # a cache already, or the row block does not set the element first
        sch.cache_write(block.name, 0, "global")
        return True


def _subtree(nest: Nest, block: BlockFacts) -> list[BlockFacts]:
    """``block`` and the blocks nested in it."""
    found, todo = [], [block]
    while todo:
        b = todo.pop()
        found.append(b)
        todo.extend(nest.block(c) for c in b.children)
    return found


def _moving_vars(blocks: list[BlockFacts]) -> list[Var]:
    """The loop variables of ``blocks`` and those of their iterators bound to an expression of
    one: what changes from one iteration of the blocks' loops to the next."""
    loops = [lp.var for b in blocks for lp in b.loops]
    moving = list(loops)
    for b in blocks:
        for it in b.iters:
            if any(v.same_as(lp) for v in vars_of(it.binding) for lp in loops) or reads_data(it.binding):
                moving.append(it.var)
    return moving
