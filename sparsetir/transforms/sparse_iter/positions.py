"""Buffer accesses from coordinates (stage I) to positions (stage II).

An index that *is* the iterator of the buffer's axis (in the same row) becomes the iterator's
position (for a merged iterator, the merge's pointer into that axis, guarded in a union); a
dense axis takes the coordinate as position; a sparse axis indexed by anything else needs a
lookup (``search.lookup``), guarded: a read of an unstored coordinate is zero, a write to one
is dropped.
"""

from __future__ import annotations

from typing import Any, Optional

from ..._tvm import Span, TensorLoad, Var, structural_equal, structural_map, tirx, tvm
from ...errors import LoweringError
from ...ir.analysis import contains
from ...ir.buffer import SparseBuffer
from .context import Context, conjunction, dtype_of, substitute, where
from .search import Site, lookup


def lower_store(ctx: Context, site: Optional[Site], store: Any, env: dict) -> Any:
    """A stage-I store as a stage-II store (under ``if found >= 0`` when it needs lookups).

    ``site`` is None where lookups are not allowed (``T.init()``).
    """
    sb = stage1_buffer(ctx, store.buffer)
    if sb is None:
        raise LoweringError(f"store into '{store.buffer.name}', which is not a sparse buffer")
    value = rewrite_expr(ctx, site, store.value, env, store.span)
    indices = [
        rewrite_expr(ctx, site, i, env, store.span) if contains(i, lambda n: isinstance(n, TensorLoad)) else i
        for i in store.indices
    ]
    pos, guards = positions(ctx, site, sb, indices, env, store.span)
    new = tirx.BufferStore(ctx.header.value_of(sb.buffer).buffer, value, pos, span=store.span)
    if guards:
        new = tirx.IfThenElse(conjunction(guards), new, None, span=store.span)
    return new


def rewrite_expr(ctx: Context, site: Optional[Site], expr: Any, env: dict, span: Optional[Span]) -> Any:
    """``expr`` with sparse-buffer loads in positions and iterators replaced by their coordinates."""
    refused: list[LoweringError] = []

    def on_load(load: Any) -> Any:
        sb = stage1_buffer(ctx, load.source)
        if sb is None or refused:
            return load
        value = ctx.header.value_of(sb.buffer)
        try:
            pos, guards = positions(ctx, site, sb, list(load.indices), env, span, at=_own_span(load, span))
        except LoweringError as err:  # raised through TVM's callback it would reach us as a RuntimeError
            refused.append(err)
            return load
        new = tirx.BufferLoad(value.buffer, pos, span=load.span)
        if guards:
            new = tirx.if_then_else(conjunction(guards), new, tirx.const(0, value.dtype))
        return new

    new = structural_map(expr, [(TensorLoad, on_load)])
    if refused:
        raise refused[0]
    return coordinates(new, env)


def _own_span(node: Any, fallback: Optional[Span]) -> Optional[Span]:
    """The span of an expression (a load's, from the parser), else ``fallback`` (its statement's)."""
    span = getattr(node, "span", None)
    return span if isinstance(span, Span) else fallback


def positions(ctx: Context, site: Optional[Site], sb: SparseBuffer, indices: list, env: dict,
              span: Optional[Span], at: Optional[Span] = None) -> tuple[list, list]:
    """Stage-II indices of an access ``sb[indices]`` (coordinate space) and its guards.
    ``span`` is the statement's (the searches made for the access get it); a refusal names
    ``at``, the access's own place (a load inside the statement), else ``span``."""
    pos: list = []
    guards: list = []
    for axis, index in zip(sb.axes, indices):
        bound = env.get(index) if isinstance(index, Var) else None
        merged = bound.merged.get(axis.name) if bound is not None and bound.merged is not None else None
        if merged is not None and _rows_equal(bound.row[:-1], pos):  # at the merge's pointer into the axis
            pos.append(merged[0])
            if merged[1] is not None:  # a union: the axis may not hold the coordinate
                guards.append(merged[1])
            continue
        if bound is not None and bound.axis.same_as(axis) and (axis.parent is None or _rows_equal(bound.row[:-1], pos)):
            pos.append(bound.pos)
            continue
        coord = coordinates(index, env)
        if axis.is_dense:
            pos.append(coord)
            guard = _bounds_guard(index, coord, axis, env)
            if guard is not None:
                guards.append(guard)
            continue
        if site is None:
            raise LoweringError(
                f"{where(at or span)}an access to '{sb.name}' in T.init() would need a coordinate lookup in axis '{axis.name}'; "
                "index it by the iterator of that axis"
            )
        found = lookup(ctx, site, axis, list(pos), coord, span, conjunction(guards) if guards else None, at=at)
        pos.append(found)
        guards.append(found >= 0)
    return pos, guards


def _bounds_guard(index: Any, coord: Any, axis: Any, env: dict) -> Optional[Any]:
    """``0 <= coord < length`` for a dense-axis access whose index is not provably inside the
    axis (an index map's ``io * 4 + ii`` past the last row, a coordinate read from data), or
    None when it is: every iterator lies in ``[0, length)`` of its own axis (sparse coordinates
    are checked against that at the call), and the analyzer proves the rest. A read outside the
    axis is then zero and a write is dropped, as for an unstored sparse coordinate."""
    analyzer = tvm.sym.Analyzer()
    for var, bound in env.items():
        if isinstance(var, Var):
            analyzer.bind(var, tvm.ir.Range.from_min_extent(tirx.const(0, dtype_of(bound.axis.length)),
                                                            bound.axis.length))
    length = axis.length if dtype_of(axis.length) == dtype_of(index) else tirx.Cast(dtype_of(index), axis.length)
    low = analyzer.can_prove(index >= 0)
    high = analyzer.can_prove(index < length)
    if not (low and high):  # the interval of the index, with symbolic ends: (m - 1) * 4 + 3 < m * 4
        interval = analyzer.int_set(index)
        low = low or _proves(analyzer, lambda: interval.min_value >= 0)
        high = high or _proves(analyzer, lambda: interval.max_value < length)
    if low and high:
        return None
    length = axis.length if dtype_of(axis.length) == dtype_of(coord) else tirx.Cast(dtype_of(coord), axis.length)
    conditions = ([] if low else [coord >= tirx.const(0, dtype_of(coord))]) + ([] if high else [coord < length])
    return conjunction(conditions)


def _proves(analyzer: Any, condition: Any) -> bool:
    """Whether the analyzer proves ``condition()`` (False when an interval end is unbounded)."""
    try:
        return bool(analyzer.can_prove(condition()))
    except Exception:  # an infinite interval end does not form a comparison
        return False


def coordinates(expr: Any, env: dict) -> Any:
    """``expr`` with every stage-I iterator replaced by its coordinate."""
    return substitute(expr, [(k, v.coord) for k, v in env.items() if isinstance(k, Var)])


def stage1_buffer(ctx: Context, var: Any) -> Optional[SparseBuffer]:
    """The stage-I sparse buffer whose buffer var is ``var``, if any."""
    for sb in ctx.func.buffers:
        if sb.buffer.same_as(var):
            return sb
    return None


def _rows_equal(a: list, b: list) -> bool:
    return len(a) == len(b) and all(structural_equal(x, y, map_free_vars=False) for x, y in zip(a, b))
