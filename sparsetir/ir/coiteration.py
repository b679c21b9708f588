"""The rules of co-iteration (``T.intersect`` / ``T.union`` in a sparse iteration's axes).

A merge walks the rows of its axes with one pointer each, in ascending coordinate order, so the
merged axes must share what a pointer walk needs: one parent (the same rows), one coordinate
range and index type (the same coordinates), and sorted rows without repeats. The parser reports
a broken rule at the offending argument, the verifier at the construct (for IR built by code).
"""

from __future__ import annotations

from typing import Any, Optional

from .._tvm import Var, structural_equal
from .axis import Axis, MergedAxis


def merge_problem(op: str, axes: list[Axis]) -> Optional[tuple[int, str]]:
    """``(argument index, message)`` for the first rule ``T.<op>(axes)`` breaks (index -1: the
    construct as a whole), or None when the merge is well-formed."""
    if len(axes) < 2:
        return -1, f"T.{op}() merges two or more sparse axes; with one axis, iterate that axis directly"
    for k, axis in enumerate(axes):
        if any(axis.same_as(a) for a in axes[:k]):
            return k, f"axis '{axis.name}' appears twice in T.{op}(...); merge each axis once"
        if axis.is_dense:
            return k, (f"T.{op} merges sparse axes, but '{axis.name}' is {axis.kind.value}: its coordinates are its "
                       "positions, so there is nothing to merge (index it by the merged iterator instead)")
        if not axis.sorted:
            return k, (f"axis '{axis.name}' is declared sorted=False; T.{op} walks each row in ascending coordinate "
                       "order, which needs its indices sorted without repeats")
    first = axes[0]
    for k, axis in enumerate(axes[1:], 1):
        if not axis.parent.same_as(first.parent):
            return k, (f"T.{op} merges axes under one parent: '{axis.name}' is under '{axis.parent.name}' but "
                       f"'{first.name}' is under '{first.parent.name}'")
        if not structural_equal(axis.length, first.length, map_free_vars=False):
            return k, (f"T.{op} merges axes of one coordinate range: '{axis.name}' has length {axis.length} but "
                       f"'{first.name}' has length {first.length}")
        if axis.idtype != first.idtype:
            return k, (f"T.{op} merges axes of one index type: '{axis.name}' is {axis.idtype} but '{first.name}' "
                       f"is {first.idtype}")
    return None


def union_store_problem(buffer_name: str, buffer_axes: list[Axis], indices: list[Any],
                        unions: list[tuple[Var, MergedAxis]]) -> Optional[str]:
    """Why a store may not be lowered, or None: it is into a buffer laid out by an axis that an
    enclosing ``T.union`` merges, at that union's iterator. The union visits coordinates that
    axis may not store, where the buffer has no element to write (``unions``: each enclosing
    union's iterator and entry)."""
    for axis, index in zip(buffer_axes, indices):
        if not isinstance(index, Var):
            continue
        for var, entry in unions:
            if index.same_as(var) and entry.holds(axis):
                merged = ", ".join(a.name for a in entry.axes)
                return (f"the store into '{buffer_name}' at '{var.name}' of T.union({merged}) is refused: '{buffer_name}' "
                        f"is laid out by '{axis.name}', which does not hold every coordinate of the union, so the "
                        "element may not exist; store into a buffer over another axis (a dense one, or a sparse one "
                        "holding the union's pattern)")
    return None


def child_of_union_problem(axis: Axis, entry: MergedAxis) -> str:
    """The message for iterating ``axis`` under an axis that a ``T.union`` merges."""
    return (f"axis '{axis.name}' is under '{axis.parent.name}', which T.{entry.op}(...) merges: '{axis.parent.name}' "
            "may not hold the union's coordinate, so there is no row of "
            f"'{axis.name}' to iterate; co-iterate with T.intersect, or iterate '{axis.name}' in its own iteration")
