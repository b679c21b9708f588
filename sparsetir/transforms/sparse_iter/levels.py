"""An iteration's loops, grouped into levels (one block each), and the blocks built from them.

A level ends where the next loop's extent depends on an iterator of the current level
(``for j in range(J_indptr[vi + 1] - J_indptr[vi])`` starts a new block). Each iterator is
bound to a ``Position``: its axis, its position (a block var, or a search result for fused
axes), its coordinate and its row (the position vector down to it). A ``T.intersect`` /
``T.union`` entry is a level of its own, a merge over its axes' rows (``merge.py``).
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, field
from typing import Any, Optional

from ..._tvm import Var, s_tir, tirx
from ...errors import LoweringError
from ...ir.analysis import uses_any
from ...ir.axis import AttachedAxis, Axis, FusedAxis, MergedAxis
from ...ir.iteration import ITER_TYPE, SparseIteration
from ...trace.spans import span_texts
from .context import Context, as_dtype, domain, i32, seq
from .merge import Merge, merge_block, merged_positions, new_merge
from .regions import block_regions
from .search import add_search, search_block


@dataclass
class Position:
    """An iterator during lowering: its axis, position, coordinate and row in stage-II terms."""

    axis: Axis
    pos: Any
    coord: Any
    row: list  # position vector: the parent's row + [pos]
    #: a merged iterator's position in each merged axis (``merge.merged_positions``)
    merged: Optional[dict] = None


@dataclass
class Loop:
    """One loop of a level and the block var it binds."""

    name: str
    loop_var: Var
    block_var: Var
    extent: Any
    dom: Any  # the block var's domain: the axis's maximum length
    kind: str  # SPATIAL or REDUCE


@dataclass
class Level:
    """The loops of one block, the searches below them and what the block initialises."""

    loops: list[Loop] = field(default_factory=list)
    searches: list = field(default_factory=list)  # search.Search
    explicit_init: list = field(default_factory=list)  # init stores at the top of the body
    init: Any = None  # the block's T.init()
    allocs: list = field(default_factory=list)  # search results allocated in the enclosing block
    merge: Optional[Merge] = None  # a co-iteration's level: a merge instead of loops


@dataclass
class Levels:
    """An iteration's levels and its iterators: by axis name and by stage-I var (``env``)."""

    levels: list[Level]
    env: dict  # axis name or stage-I iterator var -> Position (outer iterations' too)
    level_of: dict  # stage-I iterator var -> index of its level


def iteration_levels(ctx: Context, it: SparseIteration, outer_env: dict) -> Levels:
    """The levels of ``it`` under the iterators of the enclosing iterations (``outer_env``)."""
    out = Levels([Level()], dict(outer_env), {})
    iterators = iter(zip(it.kinds, it.iter_vars))
    for entry in it.axes:
        if isinstance(entry, FusedAxis):
            group = [next(iterators) for _ in entry.axes]
            _fused_loop(ctx, it, list(entry.axes), group, out)
            continue
        if isinstance(entry, MergedAxis):
            _merged_level(ctx, it, entry, next(iterators)[1], out)
            continue
        attach = entry.new_parent if isinstance(entry, AttachedAxis) else None
        axis = entry.axis if isinstance(entry, AttachedAxis) else entry
        kind, var = next(iterators)
        prow = parent_row(axis, out.env, attach)
        dtype = axis.idtype  # the stage-I iterator's dtype, so its position's too
        extent = as_dtype(ctx.header.extent(axis, prow), dtype)
        _new_level_if(out.levels, extent)
        block_var = Var("v" + var.name, dtype)
        loop = Loop(var.name, Var(var.name, dtype), block_var, extent, as_dtype(axis.positions, dtype), kind)
        out.levels[-1].loops.append(loop)
        row = prow + [block_var]
        _bind(out, var, Position(axis, block_var, ctx.header.coord(axis, row), row))
    return out


def parent_row(axis: Axis, env: dict, attach_parent: Optional[Axis] = None) -> list:
    """The position vector of ``axis``'s parent (for ``T.attach``: the new parent's coordinate)."""
    if attach_parent is not None:
        if axis.parent is None or axis.parent.parent is not None:
            raise LoweringError(f"T.attach({axis.name}, ...) needs {axis.name}'s parent to be a dense fixed axis")
        return [env[attach_parent.name].coord]
    if axis.parent is None:
        return []
    parent = env.get(axis.parent.name)
    if parent is None:
        raise LoweringError(f"axis {axis.name} is iterated before its parent {axis.parent.name}")
    return list(parent.row)


def _fused_loop(ctx: Context, it: SparseIteration, axes: list[Axis], group: list, out: Levels) -> None:
    """``T.fuse(A0, A1, ..., An)``: one loop over the positions of An below A0's parent row.

    The loop runs over the absolute positions ``t = base + p`` of the last axis. Each earlier
    axis's position is recovered by a binary search over the last axis's indptr (upper bound
    − 1, so empty rows are skipped): ``A0``'s row is the last ``r`` whose subtree starts at or
    before ``t``, then ``A1``'s within it, and so on; the last position is ``t`` minus the start
    of its row. No row variable is carried from one iteration to the next, so the fused loop
    stays parallel-safe.
    """
    for parent, child in zip(axes, axes[1:]):
        if child.parent is None or not child.parent.same_as(parent):
            raise LoweringError(f"sparse iteration '{it.name}': T.fuse needs each axis under the one before "
                                f"('{child.name}' is not under '{parent.name}')")
    fixed = [child for child in axes[1:] if not child.is_variable]
    if fixed and len(fixed) != len(axes) - 1:
        variable = next(child for child in axes[1:] if child.is_variable)
        raise LoweringError(f"sparse iteration '{it.name}': T.fuse needs the axes under the first to be all "
                            f"variable or all fixed ('{variable.name}' is variable, '{fixed[0].name}' fixed)")
    kinds = {kind for kind, _ in group}
    if len(kinds) != 1:
        raise LoweringError(f"sparse iteration '{it.name}': the iterators of one T.fuse must have the same kind")
    if fixed:
        _fused_fixed_loop(ctx, axes, group, out)
        return
    first, last = axes[0], axes[-1]
    top_row = parent_row(first, out.env)
    first_len = ctx.header.extent(first, top_row) if first.parent is not None else first.length
    last_indptr = ctx.header.axes[last.name].indptr

    def start(row: list) -> Any:
        """Where the last axis's positions under the position vector ``row`` begin."""
        return tirx.BufferLoad(last_indptr, row + [i32(0)] * (len(top_row) + len(axes) - 1 - len(row)))

    if first.parent is None and last.nnz is not None:
        extent, base = last.nnz, i32(0)
    else:
        base = start(top_row + [i32(0)])
        extent = start(top_row + [first_len]) - base
    dtype = last.idtype  # the fused loop counts positions of the last axis
    extent, base = as_dtype(extent, dtype), as_dtype(base, dtype)
    _new_level_if(out.levels, extent)
    level = out.levels[-1]
    name = "".join(var.name for _, var in group)
    block_var = Var("v" + name, dtype)
    dom = as_dtype(last.nnz, dtype) if last.nnz is not None else extent
    level.loops.append(Loop(name, Var(name, dtype), block_var, extent, dom, group[0][0]))
    depth = len(level.loops)
    target = block_var + base
    row = list(top_row)
    for k, (axis, (_, var)) in enumerate(zip(axes[:-1], group)):
        length = as_dtype(first_len if k == 0 else ctx.header.extent(axis, row), axis.idtype)
        pos = add_search(
            ctx, f"{it.name}_{name}", level, depth, lambda mid, prefix=list(row): start(prefix + [mid]) <= target,
            tirx.const(0, axis.idtype), length, lambda lo: lo - 1, it.span,
        )
        row = row + [pos]
        _bind(out, var, Position(axis, pos, ctx.header.coord(axis, row), row))
    pos = block_var + base - start(row)
    row = row + [pos]
    _bind(out, group[-1][1], Position(last, pos, ctx.header.coord(last, row), row))


def _fused_fixed_loop(ctx: Context, axes: list[Axis], group: list, out: Levels) -> None:
    """``T.fuse(A0, A1, ..., An)`` over axes with a fixed number of positions under each parent
    position (``T.sparse_fixed``, as ELL's columns): one loop over ``t`` in ``[0, extent(A0) *
    n1 * ... * nn)``, each axis's position ``t`` divided by the positions under it, modulo its
    own count (TACO's ``collapse`` of fixed dimensions)."""
    first, last = axes[0], axes[-1]
    top_row = parent_row(first, out.env)
    dtype = last.idtype
    counts = [as_dtype(ctx.header.extent(first, top_row) if first.parent is not None else first.length, dtype)]
    counts += [as_dtype(axis.positions, dtype) for axis in axes[1:]]
    extent = functools.reduce(operator.mul, counts)
    _new_level_if(out.levels, extent)
    level = out.levels[-1]
    name = "".join(var.name for _, var in group)
    block_var = Var("v" + name, dtype)
    level.loops.append(Loop(name, Var(name, dtype), block_var, extent, extent, group[0][0]))
    row = list(top_row)
    for k, (axis, (_, var)) in enumerate(zip(axes, group)):
        below = counts[k + 1:]
        pos = tirx.floordiv(block_var, functools.reduce(operator.mul, below)) if below else block_var
        if k:
            pos = tirx.floormod(pos, counts[k])
        pos = as_dtype(pos, axis.idtype)
        row = row + [pos]
        _bind(out, var, Position(axis, pos, ctx.header.coord(axis, row), row))


def _merged_level(ctx: Context, it: SparseIteration, entry: MergedAxis, var: Var, out: Levels) -> None:
    """``T.intersect`` / ``T.union``: a level of its own whose block walks the merged rows; the
    iterator's coordinate is the merge's, and each merged axis is at its own pointer."""
    if out.levels[-1].loops or out.levels[-1].merge is not None:
        out.levels.append(Level())
    prow = parent_row(entry.axes[0], out.env)
    # the state buffer's name is reserved in the block namespace, so two merges never share it
    merge = new_merge(ctx, entry, ctx.blocks.fresh(f"{it.name}_{var.name}"), prow)
    out.levels[-1].merge = merge
    for axis in entry.axes:  # the walk relies on sorted rows, which the call then checks
        if axis.name not in ctx.searched:
            ctx.searched.append(axis.name)
    merged = merged_positions(merge)
    for axis in entry.axes:
        pos = merged[axis.name][0]
        out.env[axis.name] = Position(axis, pos, merge.coord, prow + [pos])
    first = entry.axes[0]
    position = Position(first, merged[first.name][0], merge.coord, prow + [merged[first.name][0]], merged)
    out.env[var] = position
    out.level_of[var] = len(out.levels) - 1


def _new_level_if(levels: list[Level], extent: Any) -> None:
    """Start a new level when ``extent`` depends on an iterator of the current one (always
    after a merge: what follows runs at each of its coordinates)."""
    if levels[-1].merge is not None or (levels[-1].loops and uses_any(extent, [lp.block_var for lp in levels[-1].loops])):
        levels.append(Level())


def _bind(out: Levels, var: Var, position: Position) -> None:
    out.env[position.axis.name] = position
    out.env[var] = position
    out.level_of[var] = len(out.levels) - 1


def build_level(ctx: Context, level: Level, name: str, body: Any, own_allocs: list, span: Any,
                attrs: Optional[dict] = None) -> tuple[Any, list]:
    """The loops and block of one level around ``body``; (statement, scratch for the enclosing block).

    ``attrs`` (the iteration's ``T.sp_iter_attr``) become the block's annotations, as TVM's
    ``sch.annotate`` would set them, so an ``annotate_sparse_iter`` survives lowering.
    """
    loops = level.loops
    bufs = ctx.header.buffers + own_allocs + level.allocs
    if level.merge is not None:
        ctx.scratch.extend([level.merge.state, *level.allocs])
        searches = [search_block(ctx, s, [], bufs + [level.merge.state]) for s in level.searches]
        for s in level.searches:
            ctx.spans[s.name] = span_texts(s.span) or span_texts(span)
            ctx.spans[s.out.name] = ctx.spans[s.name]
        return merge_block(ctx, level.merge, name, body, searches, list(own_allocs) + list(level.allocs), span, attrs)
    iter_vars = [tirx.IterVar(domain(lp.dom), lp.block_var, ITER_TYPE[lp.kind]) for lp in loops]
    annotations = {**dict(attrs or {}), "sparse": True}
    block = s_tir.SBlock(iter_vars, [], [], name, body, level.init, list(own_allocs), None, annotations, span)
    block = block_regions(block, ctx.header.buffers + list(ctx.scratch) + own_allocs + level.allocs)
    stmt = s_tir.SBlockRealize([lp.loop_var for lp in loops], True, block, span=span)
    by_depth: dict[int, list] = {}
    for s in level.searches:
        by_depth.setdefault(s.depth, []).append(search_block(ctx, s, loops, bufs))
        ctx.spans[s.name] = span_texts(s.span) or span_texts(span)
        ctx.spans[s.out.name] = ctx.spans[s.name]
    for d in range(len(loops), 0, -1):
        stmt = seq(by_depth.get(d, []) + [stmt])
        lp = loops[d - 1]
        stmt = tirx.For(lp.loop_var, tirx.const(0, str(lp.loop_var.ty.dtype)), lp.extent, tirx.ForKind.SERIAL, stmt, span=span)
    stmt = seq(by_depth.get(0, []) + [stmt])
    ctx.scratch.extend(level.allocs)
    return stmt, list(level.allocs)
