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

from typing import Optional

from ...errors import ScheduleError
from ...ir.function import SparseFunction
from ..schedule import Schedule
from ..stage1 import find_iteration
from .register_tile import tile_extent
from .rule import Choices


def split_points(extent: int, lanes: int, max_vectors: int) -> list[int]:
    """Where to split a row of ``extent`` columns (ascending, none when one tiling is as good):
    after the whole tiles of ``max_vectors`` vectors, then after the whole vectors."""
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


def split_width(sch: Schedule, iteration: str, choices: Choices) -> bool:
    """Split ``iteration`` of the stage-I program of ``sch`` by ``split_points`` (True when it did)."""
    it = find_iteration(sch.func, iteration)
    axes = it.flat_axes()
    if not axes or it.kinds[len(axes) - 1] != "S" or it.init is None:
        return False
    axis = axes[-1]
    if axis.kind.value != "dense_fixed" or not hasattr(axis.length, "value"):
        return False
    dtype = _stored_dtype(it)
    if dtype is None:
        return False
    points = split_points(int(axis.length.value), choices.lanes(dtype), choices.max_vectors)
    name, start = iteration, 0
    for point in points:
        sch.sparse_split(name, find_iteration(sch.func, name).flat_axes()[-1].name, point - start)
        name, start = f"{name}_tail", point
        if not _has(sch.func, name):
            raise ScheduleError(f"split_width: the tail of '{iteration}' is not named '{name}'")
    return bool(points)


def _stored_dtype(it) -> Optional[str]:
    stores = [st for st in it.body if hasattr(st, "buffer")]
    return str(stores[0].buffer.ty.dtype) if stores else None


def _has(func: SparseFunction, name: str) -> bool:
    try:
        find_iteration(func, name)
        return True
    except ScheduleError:
        return False
