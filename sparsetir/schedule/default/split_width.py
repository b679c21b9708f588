"""Rule ``split_width`` (stage I): an awkward feature width runs as whole tiles plus a tail.

A register tile (``register_tile``) covers a row with tiles of ``U`` vectors of ``V`` lanes, ``U``
dividing the number of vectors, and every tile is one more pass over the row's nonzeros. At a
width that no good tile divides, that is many passes: 500 columns (31 vectors and 4 left) take
125 passes of one 4-lane vector; 176 (11 vectors) take 11 passes of one vector. Split into
iterations over whole tiles of ``max_vectors`` vectors, then the vectors left, then the scalars
left (``Schedule.sparse_split``), each part gets its own tile: 500 = 384 + 112 + 4 is 3 + 1 + 1
passes. Measured on cora SpMM (the ops' former hand-split scripts): 127 columns 0.79 -> 0.08 ms,
100 0.083 -> 0.053, 33 0.110 -> 0.031.

Applies to a sparse iteration whose innermost axis is a spatial dense axis of constant extent
(after width specialization) when the split takes fewer passes; ``sparse_split`` itself checks
that the columns are computed independently.
"""

from __future__ import annotations

from typing import Any, Optional

from ..._tvm import tirx
from ..schedule import Schedule
from ..stage1 import find_iteration, iteration_names
from .register_tile import tile_extent
from .rule import Choices, Context, Rule


def split_points(extent: int, lanes: int, max_vectors: int) -> list[int]:
    """Where to split a row of ``extent`` columns (ascending, none when one tiling is as good):
    after the whole tiles of ``max_vectors`` vectors, then after the whole vectors."""
    if extent < 1:
        return []
    full = lanes * max_vectors
    tiles, rest = divmod(extent, full)
    vectors, scalars = divmod(rest, lanes)
    points = []
    if tiles and rest:
        points.append(tiles * full)
    if vectors and scalars:
        points.append(tiles * full + vectors * lanes)
    passes = tiles + (vectors > 0) + (scalars > 0)
    return points if passes < -(-extent // tile_extent(extent, lanes, max_vectors)) else []


class SplitWidth(Rule):
    name = "split_width"
    scope = "iteration"  # a stage-I rule: ``apply`` gets an iteration's name as ``block``

    def apply(self, sch: Schedule, nest: Any, block: Any, context: Context) -> bool:
        return split_width(sch, block, context.choices)


def split_width(sch: Schedule, iteration: str, choices: Choices) -> bool:
    """Split ``iteration`` of the stage-I program of ``sch`` after the whole tiles, then after the
    whole vectors (True when it did): when that takes fewer passes for a constant extent
    (``split_points``), and always for an extent known only at run time (the generic variant of
    a kernel, whose parts then tile and vectorize with their extents proven multiples)."""
    it = find_iteration(sch.func, iteration)
    axes = it.flat_axes()
    if not axes or it.kinds[len(axes) - 1] != "S" or it.init is None:
        return False
    axis = axes[-1]
    dtype = _stored_dtype(it)
    if axis.kind.value != "dense_fixed" or dtype is None:
        return False
    lanes = choices.lanes(dtype)
    if isinstance(axis.length, tirx.IntImm):
        extent = int(axis.length.value)
        points = split_points(extent, lanes, choices.max_vectors)
        multiples = [m for m in (lanes * choices.max_vectors, lanes) if points and extent % m and extent > m]
    else:
        multiples = [lanes * choices.max_vectors, lanes]
    name, done = iteration, False
    for multiple in multiples:
        tail = find_iteration(sch.func, name).flat_axes()[-1]
        if isinstance(tail.length, tirx.IntImm) and (int(tail.length.value) % multiple == 0
                                                     or int(tail.length.value) < multiple):
            continue  # nothing to split off at this multiple
        before = set(iteration_names(sch.func))
        sch.sparse_split(name, tail.name, multiple_of=multiple)
        name = next(n for n in iteration_names(sch.func) if n not in before)  # the new tail iteration
        done = True
    return done


def _stored_dtype(it) -> Optional[str]:
    stores = [st for st in it.body if hasattr(st, "buffer")]
    return str(stores[0].buffer.ty.dtype) if stores else None
