"""Sparse axes: one dimension of a sparse format, after TACO's per-level formats.

An axis is *dense* or *sparse* (are coordinates stored in an ``indices`` array?) and *fixed* or
*variable* (is the number of stored positions per parent position constant, or read from an
``indptr`` array?). Every axis but a dense fixed one hangs under a parent axis.
"""

from __future__ import annotations

import enum
from typing import Optional

from .._tvm import Expr, Object, Span, Var, field, py_class


class AxisKind(enum.Enum):
    """The four kinds of axis; the value is the script construct that declares one (``T.<value>``)."""

    DENSE_FIXED = "dense_fixed"
    DENSE_VARIABLE = "dense_variable"
    SPARSE_FIXED = "sparse_fixed"
    SPARSE_VARIABLE = "sparse_variable"

    @property
    def is_dense(self) -> bool:
        """Coordinates equal positions: no ``indices`` array."""
        return self in (AxisKind.DENSE_FIXED, AxisKind.DENSE_VARIABLE)

    @property
    def is_variable(self) -> bool:
        """Positions per parent position come from an ``indptr`` array."""
        return self in (AxisKind.DENSE_VARIABLE, AxisKind.SPARSE_VARIABLE)

    @property
    def has_parent(self) -> bool:
        """Every kind but dense fixed hangs under a parent axis."""
        return self is not AxisKind.DENSE_FIXED

    @classmethod
    def of_construct(cls, name: str) -> Optional["AxisKind"]:
        """The kind ``T.<name>`` declares, or None when ``name`` declares no axis."""
        return next((k for k in cls if k.value == name), None)


DENSE_FIXED = AxisKind.DENSE_FIXED
DENSE_VARIABLE = AxisKind.DENSE_VARIABLE
SPARSE_FIXED = AxisKind.SPARSE_FIXED
SPARSE_VARIABLE = AxisKind.SPARSE_VARIABLE

INDEX_DTYPES = ("int32", "int64")


@py_class("sparsetir.Axis", frozen=True)
class Axis(Object):
    """One level of a sparse format.

    ``length`` is the extent of the coordinate space (the maximum row length for a variable
    axis). ``nnz`` is the number of stored positions of this axis in total (variable axes).
    ``nnz_cols`` is the number of stored positions per parent position (sparse fixed axes).
    ``indptr`` and ``indices`` are the handle parameters holding the structure arrays.
    ``assembled`` (sparse variable axes): the kernel computes those arrays (the axis holds the
    coordinates an iteration's co-iteration visits), the caller does not give them
    (``docs/language.md``, "Assembled outputs").
    """

    name: str
    kind_name: str  # an AxisKind's value: the FFI object stores a string; ``kind`` is the enum
    parent: Optional["Axis"]
    length: Expr
    nnz: Optional[Expr]
    nnz_cols: Optional[Expr]
    indptr: Optional[Var]
    indices: Optional[Var]
    idtype: str
    sorted: bool
    span: Optional[Span] = field(default=None, structural_eq="ignore")
    assembled: bool = False

    @property
    def kind(self) -> AxisKind:
        """Which of the four kinds of axis this is."""
        return AxisKind(self.kind_name)

    @property
    def is_dense(self) -> bool:
        """Coordinates equal positions: no ``indices`` array."""
        return self.kind.is_dense

    @property
    def is_variable(self) -> bool:
        """Positions per parent position come from an ``indptr`` array."""
        return self.kind.is_variable

    @property
    def positions(self) -> Expr:
        """The most positions one parent position holds: the position-space extent."""
        return self.nnz_cols if self.kind is AxisKind.SPARSE_FIXED else self.length

    @property
    def is_sparse(self) -> bool:
        """Coordinates are stored in an ``indices`` array."""
        return not self.is_dense

    def ancestors(self) -> list["Axis"]:
        """Parents from the root down, not including this axis."""
        chain = []
        node = self.parent
        while node is not None:
            chain.append(node)
            node = node.parent
        return chain[::-1]

    def __repr__(self) -> str:
        return f"Axis({self.name}, {self.kind.value})"


def make_axis(name: str, kind: AxisKind, parent: Optional[Axis] = None, *, length: Expr,
              nnz: Optional[Expr] = None, nnz_cols: Optional[Expr] = None, indptr: Optional[Var] = None,
              indices: Optional[Var] = None, idtype: str = "int32", sorted: bool = True,
              span: Optional[Span] = None, assembled: bool = False) -> Axis:
    """An axis of ``kind``; the fields a kind does not use stay None."""
    return Axis(name, kind.value, parent, length, nnz, nnz_cols, indptr, indices, idtype, sorted, span, assembled)


def dense_fixed(name: str, length: Expr, idtype: str = "int32", span: Span | None = None) -> Axis:
    """A dense axis of constant extent: a plain array dimension."""
    return make_axis(name, DENSE_FIXED, length=length, idtype=idtype, span=span)


@py_class("sparsetir.FusedAxis", frozen=True)
class FusedAxis(Object):
    """``T.fuse(I, J, ...)`` in a sparse iteration: several axes iterated by one loop."""

    axes: list[Axis]
    span: Optional[Span] = field(default=None, structural_eq="ignore")


@py_class("sparsetir.AttachedAxis", frozen=True)
class AttachedAxis(Object):
    """``T.attach(axis, new_parent)`` in a sparse iteration.

    The attached axis is iterated under ``new_parent`` instead of its own parent: the row of
    ``axis`` that is visited is the *coordinate* of ``new_parent`` (for example the hyperedges
    that a vertex belongs to, then the vertices of each such hyperedge).
    """

    axis: Axis
    new_parent: Axis
    span: Optional[Span] = field(default=None, structural_eq="ignore")


#: The two ways ``MergedAxis`` combines the stored coordinates of its axes (the script construct).
INTERSECT = "intersect"
UNION = "union"
MERGE_OPS = (INTERSECT, UNION)


@py_class("sparsetir.MergedAxis", frozen=True)
class MergedAxis(Object):
    """``T.intersect(X, Y, ...)`` or ``T.union(X, Y, ...)`` in a sparse iteration: co-iteration.

    One iterator walks, in ascending order, the coordinates stored in every (``intersect``) or
    any (``union``) of the merged sparse axes under the current parent row; a buffer laid out by
    one of them is read at the position the merge is at (``ir/coiteration.py`` states the rules).
    """

    op: str  # INTERSECT or UNION
    axes: list[Axis]
    span: Optional[Span] = field(default=None, structural_eq="ignore")

    @property
    def is_union(self) -> bool:
        """Coordinates stored in any of the axes (else: in all of them)."""
        return self.op == UNION

    def holds(self, axis: Axis) -> bool:
        """Whether ``axis`` is one of the merged axes."""
        return any(a.same_as(axis) for a in self.axes)


def after_sibling(axes: list[Axis], k: int) -> bool:
    """Whether ``axes[k]``, in a buffer's layout, comes after a *sibling*: a dense variable axis
    right after another variable axis of the same parent, which comes right before that one
    (a batch of matrices ``(B, I, IJ)``: ``I`` and ``IJ`` both under ``B``).

    Such a buffer stores, for each position of the parent, the block of the later axis's
    positions there (its indptr gives the block's start: the batch's offset), split evenly among
    the sibling's positions in row-major order: each of ``I``'s rows holds
    ``(block length) // (I's row length)`` of them.
    """
    if k < 2:
        return False
    axis, sibling = axes[k], axes[k - 1]
    return (axis.kind is AxisKind.DENSE_VARIABLE and sibling.is_variable and axis.parent is not None
            and sibling.parent is not None and axis.parent.same_as(sibling.parent)
            and axes[k - 2].same_as(axis.parent))


def iter_axes(entry: Object) -> list[Axis]:
    """The axes an entry of a sparse iteration's axis list contributes, one per iterator."""
    if isinstance(entry, FusedAxis):
        return list(entry.axes)
    if isinstance(entry, AttachedAxis):
        return [entry.axis]
    if isinstance(entry, MergedAxis):  # one iterator; every merged axis has its parent and length
        return [entry.axes[0]]
    return [entry]
