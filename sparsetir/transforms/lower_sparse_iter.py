"""LowerSparseIter: stage I (sparse iterations, coordinate space) → stage II (loops and blocks).

Each sparse iteration becomes a loop nest in *position space* (stage2.md §1):

- one ``T.sblock`` per *level*; a level ends where the next loop's extent depends on an
  iterator of the current level (``for j in range(J_indptr[vi + 1] - J_indptr[vi])`` starts a
  new block). Blocks are named ``<iteration>0``, ``<iteration>1``...; a block iter var's domain
  is the axis's maximum length (``vj = T.axis.reduce(n, j)``) and its kind is the iterator's.
- a buffer index that *is* the iterator of the buffer's axis becomes the iterator's position;
  a dense axis takes the coordinate as position; a sparse axis indexed by anything else needs
  a *lookup*: a helper block ``<block>_search<k>`` binary-searches the row's indices and writes
  the position (or -1) into a scratch buffer. A read of an unstored coordinate is zero; a write
  to one is dropped (docs/lowering.md).
- ``T.fuse(A, B, ...)`` is one loop over the positions of its last axis below the first axis's
  parent row; the positions of the other axes are found by binary searches over the last axis's
  indptr (helper blocks ``..._search<k>``), so fused loops stay parallel-safe (no carried row
  variable).
- ``T.attach(U, E)``: U's row is the coordinate of E.
- ``T.intersect(X, Y, ...)`` / ``T.union(X, Y, ...)``: a block of its own holding a ``while``
  loop that merges the axes' sorted rows with one pointer each (``sparse_iter/merge.py``).
- the iteration's ``T.sp_iter_attr`` (``annotate_sparse_iter``) become annotations of each of
  its level blocks, so they print at stages II and III.
- ``T.init()`` goes into the outermost block where all its indices are bound; when that block
  has no reduction iterator, it becomes a plain store at the top of the block body (or before the
  loop nest). Inits left under a data-dependent reduction loop are hoisted by
  ``auto_decompose_reduction`` before LowerSparseBuffer.

Every generated statement carries the span of the stage-I construct it comes from, and the
``sparsetir.spans`` attribute maps each block name to its script lines (TVM drops spans on
loops and blocks).
"""

from __future__ import annotations

from typing import Any

from .._tvm import s_tir, tirx
from ..errors import LoweringError
from ..ir.analysis import uses_any
from ..ir.axis import Axis, FusedAxis
from ..ir.function import SparseFunction
from ..ir.iteration import REDUCE, SPATIAL, SparseIteration
from ..ir.stage2 import SEARCHED_ATTR, SPANS_ATTR, STAGE_II_LEVEL, Stage2Function
from ..ir.verifier import verify, verify_lowerable
from ..trace.spans import span_texts
from .inline_views import inline_views
from .sparse_iter.context import Context, Names, seq
from .sparse_iter.header import build_header
from .sparse_iter.levels import Levels, build_level, iteration_levels
from .sparse_iter.positions import lower_store, rewrite_expr
from .sparse_iter.search import Site


def lower_sparse_iter(func: SparseFunction) -> Stage2Function:
    """Lower a stage-I function to stage II (loops and blocks over position-space buffers)."""
    func = inline_views(verify(func))
    verify_lowerable(verify(func))
    # generated axis and structure-buffer names must not take a name the script uses
    names = Names({a.name for a in func.axes} | {b.name for b in func.buffers} | {str(p.name) for p in func.params})
    header = build_header(func, names.fresh)
    ctx = Context(func, header, spans=dict(header.spans))
    allocs: list = []
    stmts = [lower_stmt(ctx, s, {}, allocs) for s in func.body]
    root = s_tir.SBlock([], [], [], "root", seq(stmts or [tirx.Evaluate(0)]), None, header.root_allocs + allocs, span=func.span)
    prim = tirx.PrimFunc(header.params, s_tir.SBlockRealize([], True, root, span=func.span))
    attrs = dict(func.attrs) if func.attrs else {}
    attrs["sparse_tir_level"] = STAGE_II_LEVEL
    attrs.setdefault("global_symbol", func.name)
    for key, value in attrs.items():
        prim = prim.with_attr(key, value)
    prim = prim.with_attr("s_tir", True)
    if func.span is not None:  # a script parsed with ``spans=False`` keeps no block table either
        prim = prim.with_attr(SPANS_ATTR, {k: list(v) for k, v in ctx.spans.items()})
    if ctx.searched:
        prim = prim.with_attr(SEARCHED_ATTR, list(ctx.searched))
    return Stage2Function(prim, header.axes_out, header.metadata, [p.name for p in func.params])


def lower_stmt(ctx: Context, stmt: Any, env: dict, allocs: list, site: Site = None) -> Any:
    """One statement of a body (or of the function) in stage II; scratch it needs goes to ``allocs``."""
    if isinstance(stmt, SparseIteration):
        return lower_iteration(ctx, stmt, env, allocs)
    if isinstance(stmt, tirx.Evaluate):
        return tirx.Evaluate(rewrite_expr(ctx, site, stmt.value, env, stmt.span), span=stmt.span)
    raise LoweringError(f"{type(stmt).__name__} outside a sparse iteration cannot be lowered")


def lower_iteration(ctx: Context, it: SparseIteration, outer_env: dict, enclosing_allocs: list) -> Any:
    """One sparse iteration as a loop nest of blocks, one per level, from the innermost out."""
    levels = iteration_levels(ctx, it, outer_env)
    names = [ctx.blocks.fresh(f"{it.name}{k}") for k in range(len(levels.levels))]
    for name in names:
        ctx.spans[name] = span_texts(it.span)
    inner_allocs: list = []
    body = _lower_body(ctx, it, levels, Site(levels.levels[-1], names[-1]), inner_allocs)
    # Decided after the body is lowered (the names it took stay taken), as the output always was.
    if _init_needs_own_nest(it, levels):
        without_init = SparseIteration(it.name, it.axes, it.kinds, it.iter_vars, None, it.body, it.attrs, it.span)
        return seq([_separate_init(ctx, it, outer_env, enclosing_allocs),
                    lower_iteration(ctx, without_init, outer_env, enclosing_allocs)], it.span)
    before = _place_init(ctx, it, levels, names)
    stmt = seq(body, it.span)
    own_allocs = inner_allocs
    for level, name in reversed(list(zip(levels.levels, names))):
        # the scratch of a level is allocated in the block of the level around it
        stmt, own_allocs = build_level(ctx, level, name, seq(level.explicit_init + [stmt]), own_allocs, it.span,
                                       it.attrs)
    enclosing_allocs.extend(own_allocs)
    return seq(before + [stmt], it.span)


def _lower_body(ctx: Context, it: SparseIteration, levels: Levels, site: Site, allocs: list) -> list:
    """The body statements in the innermost level; store lines join that block's spans."""
    out = []
    for stmt in it.body:
        if isinstance(stmt, tirx.BufferStore):
            out.append(lower_store(ctx, site, stmt, levels.env))
            table = ctx.spans[site.block]
            table.extend(x for x in span_texts(stmt.span) if x not in table)
        else:
            out.append(lower_stmt(ctx, stmt, levels.env, allocs, site))
    return out


def _init_level(it: SparseIteration, levels: Levels) -> int:
    """The outermost level where every iterator the init uses is bound (-1: it uses none).

    Its values count as well as its indices: ``C[0] = A[i]`` needs ``i``.
    """
    level = -1
    for store in it.init or []:
        for expr in [*store.indices, store.value]:
            for var, k in levels.level_of.items():
                if uses_any(expr, [var]):
                    level = max(level, k)
    return level


def _init_needs_own_nest(it: SparseIteration, levels: Levels) -> bool:
    """A reduction loop encloses some init index: the init needs a loop nest of its own."""
    if not it.init:
        return False
    init_level = _init_level(it, levels)
    reduce_levels = [levels.level_of[v] for v, k in zip(it.iter_vars, it.kinds) if k == REDUCE and v in levels.level_of]
    return init_level >= 0 and any(r < init_level for r in reduce_levels)


def _place_init(ctx: Context, it: SparseIteration, levels: Levels, names: list[str]) -> list:
    """Put ``T.init()`` in its level (block init, or plain stores on top); the stores to run before."""
    if not it.init:
        return []
    init_level = _init_level(it, levels)
    stores = [lower_store(ctx, None, s, levels.env) for s in it.init]
    if init_level < 0:
        return stores
    level = levels.levels[init_level]
    ctx.spans[f"{names[init_level]}_init"] = span_texts(it.span) + [x for s in it.init for x in span_texts(s.span)]
    if any(lp.kind == REDUCE for lp in level.loops):
        level.init = seq(stores)
    else:
        level.explicit_init = stores
    return []


def _separate_init(ctx: Context, it: SparseIteration, outer_env: dict, allocs: list) -> Any:
    """The init as an iteration ``<name>_init`` over the spatial axes of ``it``."""
    entries, kinds, iter_vars = [], "", []
    flat = iter(zip(it.kinds, it.iter_vars))
    for entry in it.axes:
        group = [next(flat) for _ in (entry.axes if isinstance(entry, FusedAxis) else [entry])]
        if isinstance(entry, Axis) and group[0][0] != REDUCE:
            entries.append(entry)
            kinds += SPATIAL
            iter_vars.append(group[0][1])
    visible = {a.name for a in entries} | {k for k in outer_env if isinstance(k, str)}
    for a in entries:
        if a.parent is not None and a.parent.name not in visible:
            raise LoweringError(f"sparse iteration '{it.name}': cannot hoist its T.init() (axis '{a.name}' needs '{a.parent.name}')")
    sub = SparseIteration(f"{it.name}_init", entries, kinds, iter_vars, None, list(it.init), dict(it.attrs), it.span)
    return lower_iteration(ctx, sub, outer_env, allocs)
