"""Rule ``vectorize_inner``: an innermost loop over consecutive elements runs as vectors.

Applies to a block whose innermost loop has a constant extent and is bound to a spatial
iterator that every access uses contiguously in its last dimension (an elementwise update, an
initialisation, a gathered row added into an output row) and that no other rule scheduled. The
loop is split by the widest vector dividing its extent and the inner part vectorized.
"""

from __future__ import annotations

from typing import Optional

from ..._tvm import tirx
from ..schedule import Schedule
from .facts import BlockFacts, Nest, inner_loop
from .register_tile import vector_width
from .rule import Context, Rule


class VectorizeInner(Rule):
    name = "vectorize_inner"

    def apply(self, sch: Schedule, nest: Nest, block: Optional[BlockFacts], context: Context) -> bool:
        inner = inner_loop(block)
        if inner is None or inner.iter.kind != "S" or not inner.contiguous or not block.stores:
            return False
        if inner.loop.kind != tirx.ForKind.SERIAL:
            return False
        lanes = context.choices.lanes(block.stores[0].dtype)
        width = vector_width(inner.extent, lanes) if inner.extent is not None else lanes if inner.divides(lanes) else 1
        if width < 2:
            return False
        _, lanes = sch.split(sch.get_loops(block.name)[-1], [None, width], disable_predication=True)
        sch.vectorize(lanes)
        return True
