"""The rules of assembled axes (``T.sparse_variable(..., assembled=True)``).

An assembled axis is the structure of a sparse output whose pattern no input gives: the kernel
computes its ``indptr`` and ``indices``. Its pattern is defined by one co-iteration: the
coordinates a ``T.union`` / ``T.intersect`` visits under each row are the output row's
coordinates, already in ascending order without repeats. So ``sparsetir.build`` makes two
kernels of such a program (``runtime/assembling.py``): a *symbolic* one that counts the
coordinates per row (the merge with a count for a body), whose running sums are the indptr,
and the *numeric* one, the program itself, whose merge writes each coordinate and the values
of the row at the next position (``transforms/sparse_iter/merge.py``), not at a searched one.

What makes that well-defined, each a ``VerifyError`` at the offending declaration or statement:

- the axis is a sparse variable axis under a ``dense_fixed`` row axis, and no axis is under it;
- it is not iterated (the co-iteration visits its coordinates), and not merged;
- every buffer laid out by it is laid out ``(rows, axis)`` or ``(rows, axis, dense...)``, is
  stored in the one iteration that merges axes of the same rows and coordinate range, at that
  merge's iterator (every position is written exactly once, so nothing initialises it), and is
  never read: its values exist once the kernel has run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .._tvm import Span, TensorLoad, Var, structural_equal, structural_walk, tirx
from .axis import DENSE_FIXED, SPARSE_VARIABLE, AttachedAxis, Axis, FusedAxis, MergedAxis, iter_axes
from .buffer import SparseBuffer
from .function import SparseFunction
from .iteration import SparseIteration


@dataclass(frozen=True)
class Assembly:
    """How an assembled axis gets its pattern: the iteration and its merge entry."""

    axis: Axis
    iteration: SparseIteration
    merge: MergedAxis
    buffers: tuple[SparseBuffer, ...]


def assembled_axes(func: SparseFunction) -> list[Axis]:
    """The function's assembled axes, in declaration order."""
    return [a for a in func.axes if a.assembled]


def assemblies(func: SparseFunction) -> list[Assembly]:
    """Each assembled axis with the iteration that assembles it (``func`` verified)."""
    out = []
    for axis in assembled_axes(func):
        found = _assembling(func, axis)
        if found is not None:
            out.append(Assembly(axis, found[0], found[1], tuple(_buffers_of(func, axis))))
    return out


def assembly_problem(func: SparseFunction) -> Optional[tuple[str, Optional[Span]]]:
    """``(message, span)`` for the first rule of an assembled axis ``func`` breaks, else None."""
    for axis in assembled_axes(func):
        problem = _axis_problem(func, axis)
        if problem is not None:
            return problem
    return None


def _axis_problem(func: SparseFunction, axis: Axis) -> Optional[tuple[str, Optional[Span]]]:
    name = axis.name
    if axis.kind is not SPARSE_VARIABLE:
        return f"axis '{name}' is {axis.kind.value}; only a sparse_variable axis can be assembled", axis.span
    if axis.parent.kind is not DENSE_FIXED:
        return (f"assembled axis '{name}' is under '{axis.parent.name}' ({axis.parent.kind.value}); an assembled axis "
                "is the column axis of rows given by a dense_fixed axis"), axis.span
    if not (isinstance(axis.nnz, Var) and any(p.same_as(axis.nnz) for p in func.params)):
        return (f"the nnz of assembled axis '{name}' is {axis.nnz}; it must be a scalar parameter of its own "
                "(the kernel computes it: the number of coordinates the co-iteration visits)"), axis.span
    child = next((a for a in func.axes if a.parent is not None and a.parent.same_as(axis)), None)
    if child is not None:
        return (f"axis '{child.name}' is under assembled axis '{name}'; nothing can be laid out under an axis whose "
                "pattern the kernel computes"), child.span
    buffers = _buffers_of(func, axis)
    if not buffers:
        return (f"axis '{name}' is assembled, but no buffer is laid out by it: its pattern would be computed for "
                "nothing (lay out the output by it, or leave assembled=True out)"), axis.span
    for buf in buffers:
        axes = list(buf.axes)
        if len(axes) < 2 or not axes[0].same_as(axis.parent) or not axes[1].same_as(axis) \
                or any(a.kind is not DENSE_FIXED for a in axes[2:]):
            return (f"buffer '{buf.name}' is laid out by assembled axis '{name}', so it must be laid out "
                    f"({axis.parent.name}, {name}) or ({axis.parent.name}, {name}, dense_fixed axes...)"), buf.span
    for it, _ in _iterations(func.body, []):
        for entry in it.axes:
            inner = list(entry.axes) if isinstance(entry, (FusedAxis, MergedAxis)) else iter_axes(entry)
            if isinstance(entry, AttachedAxis):
                inner.append(entry.new_parent)
            if any(a.same_as(axis) for a in inner):
                return (f"sparse iteration '{it.name}' iterates assembled axis '{name}'; its coordinates are those "
                        "the co-iteration that assembles it visits: iterate that T.union / T.intersect instead"), it.span
    stores: list[tuple[Any, SparseIteration, list]] = []
    for it, enclosing in _iterations(func.body, []):
        for stmt in it.init or []:
            if isinstance(stmt, tirx.BufferStore) and _over(buffers, stmt.buffer) is not None:
                return (f"'{stmt.buffer.name}' is laid out by assembled axis '{name}' and cannot be stored in a "
                        "T.init(): each of its elements is written once, by the iteration that assembles it"), stmt.span
        for stmt in it.body:
            if isinstance(stmt, tirx.BufferStore) and _over(buffers, stmt.buffer) is not None:
                stores.append((stmt, it, enclosing))
        for stmt in list(it.init or []) + list(it.body):
            if isinstance(stmt, tirx.BufferStore):
                load = _load_of(buffers, [stmt.value, *stmt.indices])
                if load is not None:
                    return (f"'{load.source.name}' is laid out by assembled axis '{name}' and cannot be read: its "
                            "elements exist once the kernel has written them"), _span(load, stmt.span)
            elif isinstance(stmt, tirx.Evaluate):
                load = _load_of(buffers, [stmt.value])
                if load is not None:
                    return (f"'{load.source.name}' is laid out by assembled axis '{name}' and cannot be read"), stmt.span
    if not stores:
        return (f"axis '{name}' is assembled, but no iteration stores into "
                f"{', '.join(repr(b.name) for b in buffers)}: the co-iteration that assembles it stores there"), axis.span
    chosen: Optional[tuple[SparseIteration, MergedAxis]] = None
    for stmt, it, enclosing in stores:
        if enclosing:
            return (f"sparse iteration '{it.name}' assembles '{name}' but runs inside '{enclosing[-1].name}': the "
                    "iteration that assembles an axis is not nested in another"), it.span
        found = _store_merge(stmt, it, axis, list(_over(buffers, stmt.buffer).axes))
        if isinstance(found, str):
            return found, stmt.span
        if chosen is not None and not chosen[0].same_as(it):
            return (f"'{stmt.buffer.name}' is stored in sparse iteration '{it.name}', but assembled axis '{name}' is "
                    f"assembled by '{chosen[0].name}': one co-iteration defines its pattern"), stmt.span
        chosen = (it, found)
    stored = {id(_over(buffers, stmt.buffer)) for stmt, _, _ in stores}
    missing = next((b for b in buffers if id(b) not in stored), None)
    if missing is not None:
        return (f"buffer '{missing.name}' is laid out by assembled axis '{name}' but never stored in "
                f"'{chosen[0].name}', which assembles it: its values would be left unwritten"), missing.span
    return None


def _store_merge(stmt: Any, it: SparseIteration, axis: Axis, layout: list[Axis]) -> "MergedAxis | str":
    """The merge entry of ``it`` whose iterator indexes ``stmt`` (into a buffer laid out by
    ``layout``) at ``axis``, or why there is none."""
    target = stmt.buffer.name
    iterated = [e for entry in it.axes for e in ([entry] if isinstance(entry, MergedAxis) else iter_axes(entry))]

    def entry_of(index: Any) -> Any:
        """The axis (or merge) ``index`` is the iterator of in ``it``, or None."""
        return next((e for v, e in zip(it.iter_vars, iterated) if isinstance(index, Var) and v.same_as(index)), None)

    index = stmt.indices[1]
    entry = entry_of(index)
    if not isinstance(entry, MergedAxis):
        return (f"the store into '{target}' is at '{index}' of assembled axis '{axis.name}', which must be the iterator "
                f"of a T.union or T.intersect in '{it.name}' (the coordinates it visits are the axis's pattern)")
    first = entry.axes[0]
    if not first.parent.same_as(axis.parent) or not structural_equal(first.length, axis.length, map_free_vars=False) \
            or first.idtype != axis.idtype:
        return (f"T.{entry.op}({', '.join(a.name for a in entry.axes)}) cannot assemble '{axis.name}': the merged axes "
                f"and '{axis.name}' must have one parent, one length and one index type")
    row_entry = entry_of(stmt.indices[0])
    if not (isinstance(row_entry, Axis) and row_entry.same_as(axis.parent)):
        return (f"the store into '{target}' must be at the iterator of '{axis.parent.name}' in its first index, "
                f"the row the merge walks")
    for k, index in enumerate(stmt.indices[2:], 2):
        dense = entry_of(index)
        if not (isinstance(dense, Axis) and dense.same_as(layout[k])):
            return (f"the store into '{target}' must index its dense axes by their own iterators in '{it.name}', "
                    "so that every element of the assembled row is written")
    if any(k == "R" for k in it.kinds):
        return (f"'{it.name}' assembles '{axis.name}', so it has no reduction ('R') iterator: each element of "
                f"'{target}' is written once")
    return entry


def _assembling(func: SparseFunction, axis: Axis) -> Optional[tuple[SparseIteration, MergedAxis]]:
    buffers = _buffers_of(func, axis)
    for it, _ in _iterations(func.body, []):
        for stmt in it.body:
            if isinstance(stmt, tirx.BufferStore) and _over(buffers, stmt.buffer) is not None:
                found = _store_merge(stmt, it, axis, list(_over(buffers, stmt.buffer).axes))
                if isinstance(found, MergedAxis):
                    return it, found
    return None


def _buffers_of(func: SparseFunction, axis: Axis) -> list[SparseBuffer]:
    return [b for b in func.buffers if any(a.same_as(axis) for a in b.axes)]


def _over(buffers: list[SparseBuffer], var: Any) -> Optional[SparseBuffer]:
    return next((b for b in buffers if b.buffer.same_as(var)), None)


def _iterations(body: list, enclosing: list) -> list[tuple[SparseIteration, list]]:
    """Every sparse iteration in ``body``, with the iterations around it."""
    out = []
    for stmt in body:
        if isinstance(stmt, SparseIteration):
            out.append((stmt, list(enclosing)))
            out.extend(_iterations(list(stmt.body), enclosing + [stmt]))
    return out


def _load_of(buffers: list[SparseBuffer], exprs: list) -> Optional[Any]:
    found: list[Any] = []

    def visit(node: Any) -> bool:
        if isinstance(node, TensorLoad) and _over(buffers, node.source) is not None:
            found.append(node)
        return True

    for expr in exprs:
        structural_walk(expr, visit)
    return found[0] if found else None


def _span(node: Any, fallback: Optional[Span]) -> Optional[Span]:
    span = getattr(node, "span", None)
    return span if isinstance(span, Span) else fallback
