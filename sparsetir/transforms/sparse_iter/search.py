"""Binary-search helper blocks: a position found at run time, stored in a scratch buffer.

Two things need one: looking a coordinate up in a sorted sparse row (``lookup``), and
recovering the row positions of a fused position from the indptr (``levels.fused_loop``). The
search sits in a block of its own, right below the loops it depends on, and writes its result
into ``<label>_pos<k>`` (scope ``local``) at the current block-var point; the lowered access
reads it back from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..._tvm import Span, TensorLoad, Var, s_tir, structural_equal, tirx
from ...errors import LoweringError
from ...ir.analysis import contains, uses_any
from ...ir.axis import Axis
from ...ir.iteration import SPATIAL, ITER_TYPE
from .context import Context, as_dtype, domain, dtype_of, i32, seq, substitute, where
from .regions import block_regions


@dataclass
class Search:
    """A binary search over ``[lo, hi)``: the first ``mid`` where ``go_right(mid)`` is false.

    The block stores ``result(lo)`` into ``out`` at the block vars of the first ``depth`` loops
    of its level; ``load`` reads it back.
    """

    name: str
    depth: int
    out: Var
    lo: Any
    hi: Any
    go_right: Callable[[Any], Any]
    result: Callable[[Any], Any]
    index: list[Any]
    load: Any
    span: Optional[Span]
    key: Any = None  # a lookup's (row, coordinate): equal lookups share one search


@dataclass(frozen=True)
class Site:
    """Where an access is lowered: the innermost level of an iteration and its block's name."""

    level: Any  # levels.Level
    block: str


def add_search(ctx: Context, label: str, level: Any, depth: int, go_right: Callable[[Any], Any], lo: Any,
               hi: Any, result: Callable[[Any], Any], span: Optional[Span], key: Any = None) -> Any:
    """Register a search in ``level`` (or find an equal one); the load of its result."""
    if key is not None:
        for s in level.searches:
            if s.key is not None and structural_equal(s.key, key, map_free_vars=False):
                return s.load
    k = len(level.searches)
    block_vars = [lp.block_var for lp in level.loops[:depth]]
    doms = [lp.dom for lp in level.loops[:depth]] or [i32(1)]
    # The search runs in the dtype of its bounds (the searched axis's idtype).
    out = tirx.decl_buffer(doms, dtype_of(hi), name=f"{label}_pos{k}", scope="local", layout=None)
    index = block_vars or [i32(0)]
    name = ctx.blocks.fresh(f"{label}_search{k}")
    load = tirx.BufferLoad(out, index)
    level.searches.append(Search(name, depth, out, lo, hi, go_right, result, index, load, span, key))
    level.allocs.append(out)
    return load


def lookup(ctx: Context, site: Site, axis: Axis, row: list, coord: Any, span: Optional[Span],
           row_valid: Optional[Any] = None, at: Optional[Span] = None) -> Any:
    """Position of ``coord`` in ``row`` of sparse ``axis`` (-1 when not stored), via a search.

    ``row_valid`` is the condition under which ``row`` names a row at all (a dense coordinate of
    it may lie past its axis, ``positions._bounds_guard``): otherwise the row is searched as
    empty, without reading its indptr or indices. ``span`` is the statement's (the search block
    gets it); a refusal names ``at``, the access's own place, else ``span``."""
    level = site.level
    block_vars = [lp.block_var for lp in level.loops]
    deps = [i for i, v in enumerate(block_vars) if uses_any(row, [v]) or uses_any(coord, [v])]
    depth = max(deps) + 1 if deps else 0
    dtype = axis.idtype
    length = as_dtype(ctx.header.extent(axis, row) if axis.is_variable else axis.nnz_cols, dtype)
    if row_valid is not None:  # if_then_else evaluates only the branch it takes
        length = tirx.if_then_else(row_valid, length, tirx.const(0, dtype))
    indices = ctx.header.axes[axis.name].indices

    def key_at(mid: Any) -> Any:
        return tirx.BufferLoad(indices, row + [mid])

    if not axis.sorted:
        raise LoweringError(
            f"{where(at or span)}looking a coordinate up in unsorted axis '{axis.name}' is not supported; index it by its "
            "own iterator, or declare it sorted"
        )
    if axis.name not in ctx.searched:
        ctx.searched.append(axis.name)

    def result(lo: Any) -> Any:
        missing = tirx.const(-1, dtype)
        return tirx.if_then_else(lo < length, tirx.if_then_else(key_at(lo) == coord, lo, missing), missing)

    return add_search(ctx, f"{site.block}_{axis.name}", level, depth, lambda mid: key_at(mid) < coord,
                      tirx.const(0, dtype),
                      length, result, span, key=[*row, coord])


def search_block(ctx: Context, s: Search, loops: list, bufs: list) -> Any:
    """The block realize that runs ``s`` under the first ``s.depth`` of ``loops``."""
    used = loops[: s.depth]
    fresh = [Var(lp.block_var.name, dtype_of(lp.block_var)) for lp in used]
    mapping = list(zip([lp.block_var for lp in used], fresh))
    body, lohi = _search_body(s, mapping)
    iter_vars = [tirx.IterVar(domain(lp.dom), v, ITER_TYPE[SPATIAL]) for lp, v in zip(used, fresh)]
    block = s_tir.SBlock(iter_vars, [], [], s.name, body, None, [lohi], None, {"sparse": True}, s.span)
    block = block_regions(block, bufs + ctx.scratch + [lohi, s.out])
    # The probe index depends on the block-local lo/hi buffer, which must not leak into the
    # regions of enclosing blocks: widen such ranges to the whole dimension.
    reads = []
    for region in block.reads:
        if region.source.same_as(lohi):
            continue
        ranges = [
            domain(dim) if uses_any([r.min, r.extent], [lohi]) or contains(
                [r.min, r.extent], lambda n: isinstance(n, TensorLoad) and n.source.same_as(lohi)
            ) else r
            for r, dim in zip(region.region, region.source.ty.shape)
        ]
        reads.append(tirx.BufferRegion(region.source, ranges))
    writes = [w for w in block.writes if not w.source.same_as(lohi)]
    block = s_tir.SBlock(block.iter_vars, reads, writes, block.name_hint, block.body, None,
                         block.alloc_buffers, None, block.annotations, block.span)
    return s_tir.SBlockRealize([lp.loop_var for lp in used], True, block, span=s.span)


def _search_body(s: Search, mapping: list) -> tuple[Any, Var]:
    """The search loop over a block-local ``lohi`` buffer, in the block's own vars."""
    span = s.span
    lohi = tirx.decl_buffer((2,), dtype_of(s.hi), name="lohi", scope="local", layout=None)
    lo = tirx.BufferLoad(lohi, [i32(0)])
    hi = tirx.BufferLoad(lohi, [i32(1)])
    mid = tirx.floordiv(lo + hi, 2)
    loop = tirx.While(
        lo < hi,
        tirx.IfThenElse(
            substitute(s.go_right(mid), mapping),
            tirx.BufferStore(lohi, mid + 1, [i32(0)], span=span),
            tirx.BufferStore(lohi, mid, [i32(1)], span=span),
            span=span,
        ),
        span=span,
    )
    stmts = [
        tirx.BufferStore(lohi, substitute(s.lo, mapping), [i32(0)], span=span),
        tirx.BufferStore(lohi, substitute(s.hi, mapping), [i32(1)], span=span),
        loop,
        tirx.BufferStore(s.out, substitute(s.result(lo), mapping), [substitute(v, mapping) for v in s.index], span=span),
    ]
    return seq(stmts, span), lohi
