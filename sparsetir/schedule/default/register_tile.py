"""Rule ``register_tile``: a reduction into a row of outputs keeps the row in vector registers.

Applies to a block with ``T.init`` whose innermost loop ``k`` has a constant extent, is bound to
a spatial iterator indexing every access contiguously in its last dimension, and sits right
under one or more reduction loops ``r`` (SpMM ``C[i, k] += A[i, j] * B[J[j], k]``, BSR, ELL,
segment sums). With ``V`` the widest vector dividing the extent and ``U`` vectors per tile::

    for ko:                                          (extent / (U*V) tiles of the output row)
        acc[U*V] = 0
        for r...: for ku in unroll(U): for kv in vectorized(V):
            acc[ku*V + kv] += ...                      (U independent vector FMAs per entry)
        C[.., ko*U*V : +U*V] = acc                     (vector stores)

The accumulator is a ``global``-scope cache that TVM 0.27 keeps on the stack and LLVM in
registers (a ``local`` one becomes a heap workspace: 2x slower); ``U`` up to 8 hides the FMA
latency (U = 1 is 1.3-2x slower). Measured in ``bench/notes/cpu_schedules.md``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ...runtime.build import MAX_EXPANDED_NODES
from ..schedule import Schedule
from ...ir.analysis import vars_of
from .facts import BlockFacts, InnerLoop, Nest, gathered_rows, inner_loop
from .prefetch import TILE
from .rule import Context, Rule


def tile_vectors(extent: int, width: int, max_vectors: int) -> int:
    """Vectors per tile: the largest divisor of ``extent / width`` that is at most ``max_vectors``."""
    vectors = extent // width
    return max((u for u in range(1, min(vectors, max_vectors) + 1) if vectors % u == 0), default=1)


def vector_width(extent: int, lanes: int) -> int:
    """The widest power-of-two vector of at most ``lanes`` that divides ``extent`` (1: scalars)."""
    width = lanes
    while width > 1 and extent % width:
        width //= 2
    return width


def reduction_row(block: BlockFacts) -> Optional[InnerLoop]:
    """The block's innermost loop when the block reduces into a row of outputs along it."""
    inner = inner_loop(block)
    if inner is None or not block.has_init or inner.iter.kind != "S" or not inner.contiguous:
        return None
    if not inner.reductions or len(block.stores) != 1:
        return None
    reduced = [block.iter_of(lp).var for lp in inner.reductions]
    store = block.stores[0]
    if not store.indices or not any(v.same_as(inner.iter.var) for v in vars_of(store.indices[-1])):
        return None
    if any(r.same_as(v) for index in store.indices for v in vars_of(index) for r in reduced):
        return None  # the output moves with a reduction iterator
    return inner


class RegisterTile(Rule):
    name = "register_tile"

    def apply(self, sch: Schedule, nest: Nest, block: Optional[BlockFacts], context: Context) -> bool:
        inner = reduction_row(block)
        if inner is None or block.stores_divided:
            return False
        lanes = context.choices.lanes(block.stores[0].dtype)
        max_vectors = context.choices.max_vectors
        if inner.extent is not None:
            width = vector_width(inner.extent, lanes)
            tile = tile_extent(inner.extent, lanes, max_vectors) // width
        elif inner.divides(lanes):  # a run-time extent that the split_width rule made a multiple of the vector
            width, tile = lanes, max_vectors if inner.divides(lanes * max_vectors) else 1
        else:
            return False
        vectors = (inner.extent or width * tile) // width
        tile = _within_budget(tile, block.size, vectors)
        tile = _within_stack(tile, width * np.dtype(block.stores[0].dtype).itemsize, vectors)
        register_tile(sch, block.name, len(inner.reductions), width, tile)
        gather = gathered_rows(block, context.func, TILE, inner.extent == width * tile)
        if gather is not None:
            context.gathers.append(gather)
        return True


def tile_extent(extent: int, lanes: int, max_vectors: int = 8) -> int:
    """Columns one tile of ``register_tile`` covers (the row takes ``extent / tile_extent`` passes):
    the widest vector dividing ``extent``, times the most of them (up to ``max_vectors``; a tile of
    scalars, for an extent no vector divides, such as a tail of 15 columns, may hold ``lanes`` of
    them: one vector's worth) that divide it."""
    width = vector_width(extent, lanes)
    return width * tile_vectors(extent, width, max_vectors if width > 1 else max(max_vectors, lanes))


#: The most statements and expressions the unrolled copies of one tiled block may add up to: a
#: quarter of what ``build`` compiles at all (``runtime.build.MAX_EXPANDED_NODES``), so a few
#: tiled blocks of one kernel fit together.
UNROLL_BUDGET = MAX_EXPANDED_NODES // 4


def _within_budget(tile: int, size: int, vectors: int) -> int:
    """``tile`` or the largest divisor of ``vectors`` below it whose unrolled copies of a body of
    ``size`` nodes stay within ``UNROLL_BUDGET`` (a sum of hundreds of terms tiles 8 times
    over into more code than LLVM compiles in reasonable time)."""
    return _largest_tile(tile, vectors, lambda u: u * size <= UNROLL_BUDGET)


def _largest_tile(tile: int, vectors: int, fits) -> int:
    """``tile`` when ``fits(tile)``, else the largest divisor of ``vectors`` below it that fits
    (1 at least)."""
    if fits(tile):
        return tile
    return max((u for u in range(1, tile) if vectors % u == 0 and fits(u)), default=1)


#: TVM 0.27 keeps a buffer on the stack only under 1 KiB (``kMaxStackAlloca``); a larger one
#: becomes a workspace allocation, which a kernel's parallel closure cannot make ("Unknown
#: device id in current IR" at compile time): a tile of 16 AVX-512 vectors of float32 (1 KiB)
#: failed to build. A tile stays under it.
STACK_BYTES = 1024


def _within_stack(tile: int, vector_bytes: int, vectors: int) -> int:
    """``tile`` or the largest divisor of ``vectors`` below it whose accumulator (``tile``
    vectors of ``vector_bytes``) TVM keeps on the stack."""
    return _largest_tile(tile, vectors, lambda u: u * vector_bytes < STACK_BYTES)


def register_tile(sch: Schedule, block: str, reductions: int, width: int, tile: int) -> None:
    """The steps of the rule on ``block``, whose last ``reductions + 1`` loops are the reduction
    loops and the output row's loop, with tiles of ``tile`` vectors of ``width`` lanes (``width``
    1: scalars) dividing that loop's extent (``tile_extent``)."""
    loops = sch.get_loops(block)
    reduced = loops[-1 - reductions:-1]
    tile_row(sch, block, loops[-1], reduced, width, tile)
    sch.decompose_reduction(block, reduced[0])


def tile_row(sch: Schedule, block: str, k: Any, inside: Sequence[Any], width: int, tile: int) -> Any:
    """Split the output row's loop ``k`` of ``block`` into tiles of ``tile`` vectors of ``width``
    lanes, run the loops ``inside`` (in that order) within each tile, and keep the tile in a
    ``global``-scope cache, written back vectorized after them; the tile's vectors are unrolled.
    Returns the tile loop (``ko``)."""
    if width > 1:
        ko, ku, kv = sch.split(k, [None, tile, width], disable_predication=True)
        sch.reorder(ko, *inside, ku, kv)
    else:
        ko, ku = sch.split(k, [None, tile], disable_predication=True)
        sch.reorder(ko, *inside, ku)
    cache = sch.cache_write(block, 0, "global")
    sch.reverse_compute_at(cache, ko)
    if width > 1:
        _, wv = sch.split(sch.get_loops(cache)[-1], [None, width], disable_predication=True)
        sch.vectorize(wv)
        sch.vectorize(kv)
    sch.unroll(ku)
    return ko
