"""Structure constraints: what the indptr/indices arrays of a sparse format must satisfy.

A kernel reads ``indices[indptr[i] + j]`` without bounds checks, so a malformed matrix would
be an out-of-bounds read. ``constraints_from_axes`` turns the sparse axes of a function into
these records; ``validate`` checks them on every call.

A kernel that never reads an indices array (a row sum, an elementwise map of the stored
values, a CSF reduction: their results do not depend on coordinates) is not given that array's
constraint (``used_by``): checking it could only refuse a call whose answer is well defined,
and costs a pass over the array per call (a fifth of a CSF row sum's time on email_enron).
An indptr is always checked: it bounds every loop over its rows.

Sizes are TVM expressions over the scalar parameters (evaluated by name at call time). A count
of stored positions is a product of ``Count`` factors: an expression, or ``LastOf(indptr)`` for
a variable axis that declares no nnz (its total is the last entry of its indptr).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Optional, Union

from ..ir.axis import Axis
from .sizes import SizeLike


@dataclass(frozen=True)
class LastOf:
    """The last entry of an indptr array: the number of positions of its variable axis."""

    array: str


Count = tuple[Union[SizeLike, LastOf], ...]


@dataclass(frozen=True)
class IndptrConstraint:
    """``array`` has ``rows`` + 1 entries, starts at 0, never decreases and ends at ``nnz``.

    ``max_row_length`` bounds each row's length (dense variable axes, whose coordinates are
    their positions).
    """

    array: str
    axis: str
    rows: Count
    nnz: Optional[SizeLike] = None
    max_row_length: Optional[SizeLike] = None


@dataclass(frozen=True)
class IndicesConstraint:
    """``array`` has ``positions`` entries, each a coordinate in ``[0, length)``.

    With ``sorted``, coordinates strictly increase within each row: rows are delimited by the
    ``row_indptr`` array (variable axes) or are ``row_width`` entries long (sparse fixed axes).
    """

    array: str
    axis: str
    positions: Count
    length: SizeLike
    sorted: bool = False
    row_indptr: Optional[str] = None
    row_width: Optional[SizeLike] = None


Constraint = Union[IndptrConstraint, IndicesConstraint]


def positions_of(axis: Axis, array_names: Mapping[str, str] = MappingProxyType({})) -> Count:
    """The number of stored positions of ``axis`` over the whole tensor, as factors."""
    parent = positions_of(axis.parent, array_names) if axis.parent is not None else ()
    if axis.is_variable:
        if axis.nnz is not None:
            return (axis.nnz,)
        return (LastOf(_array(axis.indptr, array_names)),)
    if axis.is_sparse:
        return parent + (axis.nnz_cols,)
    return parent + (axis.length,)


def layout_positions(axes: Sequence[Axis], array_names: Mapping[str, str] = MappingProxyType({})) -> Count:
    """The number of positions of an array laid out by ``axes`` (root first), as factors: the
    total of the last variable axis times the width of each fixed axis after it, or the product
    of all the widths when none is variable (the size ``flatten_sparse_buffers`` gives it)."""
    last = max((k for k, a in enumerate(axes) if a.is_variable), default=-1)
    head = positions_of(axes[last], array_names) if last >= 0 else ()
    return head + tuple(a.positions for a in axes[last + 1:])


def constraints_from_axes(
    axes: list[Axis], uses_binary_search_on: set[str], array_names: Mapping[str, str] = MappingProxyType({}),
    indptr_rows: Mapping[str, Count] = MappingProxyType({}),
) -> list[Constraint]:
    """The structure constraints of ``axes`` and their ancestors, parents first.

    Coordinates must be sorted within rows only for axes in ``uses_binary_search_on``: a binary
    search, or a co-iteration's merge of rows (``T.intersect`` / ``T.union``, which lowering lists
    there too), is the one place a kernel relies on order; SpMM and friends accept unsorted
    (duplicate-free or not) input. ``array_names`` renames structure arrays to the kernel
    parameters that hold them (stage II names them after their axes, ``J_indptr``; the caller
    passes the script's ``indptr``). ``indptr_rows`` gives the row count of an indptr array (by
    its renamed name) where the axes' parents do not tell it: stage II's dense twin of a sparse
    fixed axis is a dense fixed axis without a parent, so an axis under it would count only that
    axis's width, where its indptr has a row per position of the whole chain above.
    """
    found: list[Constraint] = []
    for axis in _with_ancestors(axes):
        found.extend(_axis_constraints(axis, axis.name in uses_binary_search_on, array_names, indptr_rows))
    return found


def _array(var: Any, array_names: Mapping[str, str]) -> str:
    name = str(var.name)
    return array_names.get(name, name)


def _axis_constraints(axis: Axis, needs_sorted: bool, array_names: Mapping[str, str],
                      indptr_rows: Mapping[str, Count]) -> list[Constraint]:
    rows = positions_of(axis.parent, array_names) if axis.parent is not None else ()
    result: list[Constraint] = []
    if axis.is_variable:
        indptr = _array(axis.indptr, array_names)
        result.append(
            IndptrConstraint(
                array=indptr,
                axis=axis.name,
                rows=indptr_rows.get(indptr, rows),
                nnz=axis.nnz,
                max_row_length=None if axis.is_sparse else axis.length,
            )
        )
    if axis.is_sparse and not axis.assembled:  # an assembled axis's indices are the kernel's output
        result.append(
            IndicesConstraint(
                array=_array(axis.indices, array_names),
                axis=axis.name,
                positions=positions_of(axis, array_names),
                length=axis.length,
                sorted=needs_sorted,
                row_indptr=_array(axis.indptr, array_names) if axis.is_variable else None,
                row_width=None if axis.is_variable else axis.nnz_cols,
            )
        )
    return result


def _with_ancestors(axes: list[Axis]) -> list[Axis]:
    """``axes`` plus any parent not listed, each after its parent, first-seen order kept."""
    ordered: list[Axis] = []
    for axis in axes:
        for node in axis.ancestors() + [axis]:
            if not any(node.same_as(seen) for seen in ordered):
                ordered.append(node)
    return ordered


def used_by(constraints: Sequence["Constraint"], func: Any) -> list["Constraint"]:
    """The ``constraints`` a stage-III ``func`` needs: all but those on an indices array that its
    body never mentions (no load, no view, not even an access region)."""
    from .._tvm import structural_walk, tirx  # noqa: PLC0415 - TVM loads on first use

    arrays = {c.array for c in constraints if isinstance(c, IndicesConstraint)}
    if not arrays:
        return list(constraints)
    params = {p: str(p.name) for p in func.params if str(p.name) in arrays}
    mentioned: set[str] = set()

    def visit(node: Any) -> bool:
        if isinstance(node, tirx.Var):
            for p, name in params.items():
                if node.same_as(p):
                    mentioned.add(name)
        return True

    structural_walk(func.body, visit)
    return [c for c in constraints if not isinstance(c, IndicesConstraint) or c.array in mentioned
            or c.array not in params.values()]
