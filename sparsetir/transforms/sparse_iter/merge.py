"""Co-iteration: ``T.intersect`` / ``T.union`` of sparse axes as a merge over their sorted rows.

A merged entry of a sparse iteration is a level of its own: a block ``<iteration><k>`` with no
iterators, holding a pointer walk over the rows of its axes under the parent row::

    with T.sblock("mul1"):
        mul1_merge = T.sblock_alloc_buffer((3,), "int32", scope="local")  # p_A, p_B, coordinate
        mul1_merge[0] = 0
        mul1_merge[1] = 0
        while mul1_merge[0] < len_A and mul1_merge[1] < len_B:        # union: `or`
            mul1_merge[2] = T.min(JA_indices[vi, p_A], JB_indices[vi, p_B])
            if JA_indices[vi, p_A] == mul1_merge[2] and JB_indices[...] == mul1_merge[2]:
                ...body...                                            # union: always
            if JA_indices[vi, p_A] == mul1_merge[2]:
                mul1_merge[0] = mul1_merge[0] + 1
            ...

Each step takes the smallest coordinate at the pointers (a k-way min; past the end of its row
an axis counts as the largest coordinate of the index type, so a union drains the others) and
advances every pointer that holds it, so each row is read once: ``O(len_A + len_B)`` per row,
no search. A buffer laid out by a merged axis is read at that axis's pointer; in a union, where
the axis does not hold the coordinate, the read is 0 (a store there is refused by the verifier).
Every load of an indices array is behind its pointer's bound (``if_then_else`` evaluates only the
branch it takes), so no access leaves a row.

A merge that *assembles* an axis (``ir/assembly.py``: the output's pattern is the coordinates the
merge visits) keeps one more entry in its state, the output's position in its row: a store into a
buffer over that axis is at that position, and each step that runs the body also writes the
coordinate into the axis's indices and moves the position on. The symbolic kernel
(``runtime/assembling.py``) gave the row pointer those positions count from. The walk is a ``while`` loop: its steps carry the
pointers from one to the next, which no TVM schedule may reorder, while the loops around the
block (the rows) stay ordinary, schedulable loops. The loop, its pointer updates and the block
carry the span of the ``T.intersect(...)`` text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..._tvm import Span, TensorLoad, Var, s_tir, tirx
from ...ir.analysis import contains
from ...ir.assembly import assemblies
from ...ir.axis import Axis, MergedAxis
from ...trace.spans import span_texts
from .context import Context, as_dtype, conjunction, domain, i32, seq
from .regions import block_regions


@dataclass
class Merge:
    """A merge level: the entry, its pointer/coordinate buffer and each axis's row in stage II."""

    entry: MergedAxis
    state: Var  # local: one pointer per merged axis, then the current coordinate
    lengths: list  # the row length of each merged axis under the parent row
    keys: list  # the coordinate at each axis's pointer (an indices load)
    span: Optional[Span]
    outputs: list[Axis]  # the assembled axes the merge writes the pattern of
    room: list  # the row length of each assembled axis under the parent row
    row: list  # the parent row's positions

    @property
    def pointers(self) -> list:
        """The position of each merged axis's pointer in its row."""
        return [tirx.BufferLoad(self.state, [i32(k)]) for k in range(len(self.entry.axes))]

    @property
    def coord(self) -> Any:
        """The coordinate the merge is at."""
        return tirx.BufferLoad(self.state, [i32(len(self.entry.axes))])

    @property
    def written(self) -> Any:
        """The assembled outputs' position in their row: the coordinates written so far."""
        return tirx.BufferLoad(self.state, [i32(len(self.entry.axes) + 1)])

    def live(self, k: int) -> Any:
        """Axis ``k``'s pointer is inside its row."""
        return self.pointers[k] < self.lengths[k]

    def present(self, k: int) -> Any:
        """Axis ``k`` holds the current coordinate (in an intersection, every axis does)."""
        holds = self.keys[k] == self.coord
        return tirx.if_then_else(self.live(k), holds, tirx.const(False, "bool")) if self.entry.is_union else holds


def new_merge(ctx: Context, entry: MergedAxis, block: str, prow: list) -> Merge:
    """The merge of ``entry`` under the parent row ``prow``, its state buffer named after ``block``."""
    dtype = entry.axes[0].idtype
    outputs = [a.axis for a in assemblies(ctx.func) if a.merge.same_as(entry)]
    slots = len(entry.axes) + 1 + (1 if outputs else 0)
    state = tirx.decl_buffer((slots,), dtype, name=f"{block}_merge", scope="local", layout=None)
    lengths = [as_dtype(ctx.header.extent(axis, prow), dtype) for axis in entry.axes]
    pointers = [tirx.BufferLoad(state, [i32(k)]) for k in range(len(entry.axes))]
    keys = [tirx.BufferLoad(ctx.header.axes[axis.name].indices, prow + [p]) for axis, p in zip(entry.axes, pointers)]
    room = [as_dtype(ctx.header.extent(axis, prow), dtype) for axis in outputs]
    return Merge(entry, state, lengths, keys, entry.span, outputs, room, list(prow))


def merged_positions(merge: Merge) -> dict[str, tuple[Any, Optional[Any]]]:
    """Axis name → (its position at the merge, the condition that it holds the coordinate, or
    None where it always does): how an access of a buffer over a merged axis is lowered."""
    union = merge.entry.is_union
    merged = {axis.name: (p, merge.present(k) if union else None)
              for k, (axis, p) in enumerate(zip(merge.entry.axes, merge.pointers))}
    # An assembled axis holds every coordinate; its row pointer (the symbolic kernel's) has room for
    # them, and the guard keeps a numeric kernel called with another one inside its rows.
    merged.update({axis.name: (merge.written, merge.written < room)
                   for axis, room in zip(merge.outputs, merge.room)})
    return merged


def merge_block(ctx: Context, merge: Merge, name: str, body: Any, searches: list, own_allocs: list, span: Any,
                attrs: Optional[dict]) -> tuple[Any, list]:
    """The block of a merge level around ``body`` (what runs at each coordinate, after the
    level's ``searches``, which read the coordinate); (statement, scratch for the enclosing block)."""
    entry, state = merge.entry, merge.state
    at = merge.span or span
    count = len(entry.axes)
    dtype = entry.axes[0].idtype
    written = []
    if merge.outputs:  # the coordinate goes into each assembled axis's row, and the position moves on
        written = [tirx.IfThenElse(merge.written < room, tirx.BufferStore(
            ctx.header.axes[axis.name].indices, merge.coord, merge.row + [merge.written], span=at), None, span=at)
            for axis, room in zip(merge.outputs, merge.room)]
        written.append(tirx.BufferStore(state, merge.written + 1, [i32(count + 1)], span=at))
    if entry.is_union:
        largest = tirx.max_value(dtype)
        keys = [tirx.if_then_else(merge.live(k), merge.keys[k], largest) for k in range(count)]
        running = _any([merge.live(k) for k in range(count)])
        step = seq(searches + [body] + written, at)
    else:
        keys = list(merge.keys)
        running = conjunction([merge.live(k) for k in range(count)])
        step = tirx.IfThenElse(conjunction([merge.present(k) for k in range(count)]),
                               seq(searches + [body] + written, at), None, span=at)
    smallest = keys[0]
    for key in keys[1:]:
        smallest = tirx.Min(smallest, key)
    advance = [tirx.IfThenElse(merge.present(k), tirx.BufferStore(state, p + 1, [i32(k)], span=at), None, span=at)
               for k, p in enumerate(merge.pointers)]
    walk = tirx.While(running, seq([tirx.BufferStore(state, smallest, [i32(count)], span=at), step, *advance], at),
                      span=at)
    # every pointer, and the outputs' position (the slot after the coordinate), start at 0
    zeroed = list(range(count)) + ([count + 1] if merge.outputs else [])
    start = [tirx.BufferStore(state, tirx.const(0, dtype), [i32(k)], span=at) for k in zeroed]
    annotations = {**dict(attrs or {}), "sparse": True}
    allocs = [state] + list(own_allocs)
    ctx.spans[state.name] = span_texts(at)
    block = s_tir.SBlock([], [], [], name, seq(start + [walk], at), None, allocs, None, annotations, at)
    block = _widened(block_regions(block, ctx.header.buffers + list(ctx.scratch) + allocs), allocs)
    return s_tir.SBlockRealize([], True, block, span=at), []


def _any(conditions: list) -> Any:
    out = conditions[0]
    for c in conditions[1:]:
        out = tirx.Or(out, c)
    return out


def _widened(block: Any, own: list) -> Any:
    """The block with every region that indexes through its own buffers (the pointers, the
    searches' results) widened to the whole dimension: those buffers do not exist outside it,
    and TVM's analysis of the enclosing blocks reads these regions."""
    def uses_own(expr: Any) -> bool:
        return contains(expr, lambda n: isinstance(n, TensorLoad) and any(n.source.same_as(b) for b in own))

    def widen(regions: list) -> list:
        out = []
        for region in regions:
            ranges = [domain(dim) if uses_own(r.min) or uses_own(r.extent) else r
                      for r, dim in zip(region.region, region.source.ty.shape)]
            out.append(tirx.BufferRegion(region.source, ranges))
        return out

    return s_tir.SBlock(block.iter_vars, widen(block.reads), widen(block.writes), block.name_hint, block.body,
                        block.init, block.alloc_buffers, block.match_buffers, block.annotations, block.span)
