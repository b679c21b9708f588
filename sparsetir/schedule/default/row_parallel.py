"""Rule ``row_parallel``: the rows of a nest run in parallel, in chunks of equal work.

Applies to a nest whose outermost loop that runs more than once (the row loop) is serial and
whose iterations provably touch disjoint elements (``thread_binding.independent_iterations``).
When the loops under a row run to ``indptr[row + 1] - indptr[row]`` for a 1-D ``indptr``, the
row loop is split into ``P`` chunks whose boundaries a kernel's caller computes from that
``indptr`` at run time (``partition_rows``; ``runtime.partition.row_partition``), so each thread
gets the same number of nonzeros however skewed the rows are (1.4x over equal row counts on a
power-law graph, ``../shared/notes/tvm027.md`` §2.3). Other row loops (ELL rows, batches, dense
rows) run as a plain ``parallel`` loop of equal row counts.

A second nest over the same rows and ``indptr`` reuses the first one's boundaries. When the row
loop itself is not independent (it is a reduction, as RGCN's loop over relations), the first loop
inside the row block is tried instead.
"""

from __future__ import annotations

from typing import Optional

from ..._tvm import tirx
from ...errors import ScheduleError
from ...ir.stage2 import partitions_of
from ..schedule import Schedule
from .facts import BlockFacts, LoopFacts, Nest, row_extent_indptr
from .rule import Context, Rule

#: The chunk-count parameter every partition of a default-scheduled kernel shares.
COUNT = "P"


class RowParallel(Rule):
    name = "row_parallel"
    scope = "nest"

    def apply(self, sch: Schedule, nest: Nest, block: Optional[BlockFacts], context: Context) -> bool:
        row = nest.row_block
        if any(lp.kind != tirx.ForKind.SERIAL for b in nest.blocks for lp in b.loops):
            return False  # scheduled already
        row_loop = _row_loop(row.loops)
        if row_loop is None:
            return False
        weights = row_extent_indptr(nest, row_loop)
        if weights is not None:  # by the name the script gives the indptr parameter
            names = {str(p.name): n for p, n in zip(sch.func.prim.params, sch.func.param_names)}
            weights = names.get(weights)
        if weights is not None and isinstance(row_loop.extent, (tirx.IntImm, tirx.Var)):
            try:
                sch.partition_rows(row.name, _parts_name(sch, row_loop, weights), COUNT, parallel=True, weights=weights)
                return True
            except ScheduleError:
                pass  # e.g. the row block is not the end of a perfect nest: equal row counts below
        loop = next(lp for lp, facts in zip(sch.get_loops(sch.get_sblock(row.name)), row.loops) if facts is row_loop)
        try:
            sch.parallel(loop)
            return True
        except ScheduleError:
            if not _inner_parallel(sch, nest):
                raise
            return True


def _inner_parallel(sch: Schedule, nest: Nest) -> bool:
    """Run the first loop inside the row block in parallel, when the rows themselves cannot be
    (RGCN over relations: each relation's rows are written by that relation alone, one after the
    other, but the rows of one relation are distinct coordinates). True when it did."""
    row = nest.row_block
    for child in (nest.block(name) for name in row.children):
        if child.loops and child.loops[0].kind == tirx.ForKind.SERIAL and child.loops[0].constant != 1:
            try:
                sch.parallel(sch.get_loops(sch.get_sblock(child.name))[0])
                return True
            except ScheduleError:
                continue
    return False


def _row_loop(loops: tuple[LoopFacts, ...]) -> Optional[LoopFacts]:
    """The first loop that runs more than once (a unit loop may come first, as ELL's), when
    its extent is not a constant under 2."""
    for loop in loops:
        if loop.constant == 1:
            continue
        return None if loop.constant is not None and loop.constant < 2 else loop
    return None


def _parts_name(sch: Schedule, row_loop: LoopFacts, weights: str) -> str:
    """The boundaries' parameter: an earlier partition's of the same extent and weights, else a new name."""
    extent = str(row_loop.extent.value) if isinstance(row_loop.extent, tirx.IntImm) else str(row_loop.extent.name)
    earlier = partitions_of(sch.func.prim.attrs)
    for p in earlier:
        if p.extent == extent and p.weights == weights:
            return p.parts
    taken = {str(p.name) for p in sch.func.prim.params} | set(sch.func.param_names)
    name, n = "part", 1
    while name in taken:
        n += 1
        name = f"part{n}"
    return name
