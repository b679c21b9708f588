"""Rule ``streamed_rows``: a reduction of wide rows read in order adds each input row into the
output row in place, one pass per input row.

Applies where ``register_tile`` would (a block reducing into a row of outputs along its
innermost loop), when the rows it reads are not gathered through an indices array (a segment
sum, ``OUT[i, k] += X[i, j, k]``) and are at least ``Choices.streamed_row_bytes`` wide::

    OUT[i, :] = 0
    for j: for ko: for kv in vectorized(V): OUT[i, ko*V + kv] += X[i, j, ko*V + kv]

Each input row is read once, front to back; a register tile would read it in ``extent / (U*V)``
strided passes. The output row stays in L1. For 2 KB rows streamed from memory this is
1.5-2x faster; narrower rows are faster register-tiled (``bench/notes/cpu_schedules.md`` 0c).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..schedule import Schedule
from .facts import BlockFacts, Nest
from .register_tile import reduction_row, vector_width
from .rule import Context, Rule


class StreamedRows(Rule):
    name = "streamed_rows"

    def apply(self, sch: Schedule, nest: Nest, block: Optional[BlockFacts], context: Context) -> bool:
        inner = reduction_row(block)
        if inner is None or inner.gathered or inner.extent is None:
            return False
        dtype = block.stores[0].dtype
        if inner.extent * np.dtype(dtype).itemsize < context.choices.streamed_row_bytes:
            return False
        width = vector_width(inner.extent, context.choices.lanes(dtype))
        loops = sch.get_loops(block.name)
        if width > 1:
            _, kv = sch.split(loops[-1], [None, width], disable_predication=True)
            sch.vectorize(kv)
        sch.decompose_reduction(block.name, loops[-1 - len(inner.reductions)])
        return True
