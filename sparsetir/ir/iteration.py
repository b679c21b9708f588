"""Sparse iterations: the stage-I loop nest over a list of axes.

``with T.sp_iter([I, J, K], "SRS", "csrmm") as [i, j, k]:`` binds one iterator per axis; each is
spatial (``S``) or a reduction (``R``), as in TensorIR blocks. Iterators are coordinates, so the
body reads like dense code: ``C[i, k] = C[i, k] + A[i, j] * B[j, k]``.
"""

from __future__ import annotations

from typing import Any, Optional

from .._tvm import Object, Span, Var, field, py_class, tirx
from .axis import Axis, iter_axes

SPATIAL = "S"
REDUCE = "R"
#: TVM's ``IterVar.iter_type`` of a block iterator of each kind (``DataPar`` = 0, ``CommReduce`` = 2)
ITER_TYPE = {SPATIAL: int(tirx.IterVar.DataPar), REDUCE: int(tirx.IterVar.CommReduce)}


@py_class("sparsetir.SparseIteration", frozen=True)
class SparseIteration(Object):
    """A named sparse iteration: axes, iterator kinds, iterators, init and body.

    ``axes`` holds ``Axis``, ``FusedAxis`` or ``AttachedAxis`` entries; ``iter_vars`` has one
    variable per axis they contribute. ``init`` is the ``T.init()`` body (run before the first
    reduction step of each output point), ``attrs`` the ``T.sp_iter_attr`` dictionary. Body
    statements are ``tirx.BufferStore`` on sparse buffers, nested ``SparseIteration`` and
    ``tirx.Evaluate``.
    """

    name: str
    axes: list[Any]
    kinds: str
    iter_vars: list[Var] = field(structural_eq="def")
    init: Optional[list[Any]]
    body: list[Any]
    attrs: dict[str, Any]
    span: Optional[Span] = field(default=None, structural_eq="ignore")

    def flat_axes(self) -> list[Axis]:
        """One axis per iterator, with fused groups expanded."""
        out: list[Axis] = []
        for entry in self.axes:
            out.extend(iter_axes(entry))
        return out

    def reduce_vars(self) -> list[Var]:
        """Iterators of kind ``R``."""
        return [v for v, k in zip(self.iter_vars, self.kinds) if k == REDUCE]

    def __repr__(self) -> str:
        return f"SparseIteration({self.name}, {self.kinds})"
