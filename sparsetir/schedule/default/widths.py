"""Which scalar parameters of a script are *widths*: specialized per call value.

A width is the extent of a dense axis that some sparse iteration runs innermost (SpMM's and
SDDMM's feature axis, a hypergraph's features): the loop the rules tile and vectorize, which
they can only do with a constant extent. Matrix dimensions, nnz and the lengths of axes with
children stay symbolic, so one variant still serves every matrix. The kernel ``build`` returns
compiles a variant per value of its widths (``runtime/specialized.py``).
"""

from __future__ import annotations

from ..._tvm import Var
from ...ir.axis import AxisKind
from ...ir.function import SparseFunction
from ...ir.iteration import SparseIteration


def width_params(func: SparseFunction) -> list[str]:
    """The names of ``func``'s width parameters, in signature order."""
    parents = [a.parent for a in func.axes if a.parent is not None]
    other_lengths = set()
    for axis in func.axes:
        if axis.kind is not AxisKind.DENSE_FIXED:
            for expr in (axis.length, axis.nnz, axis.nnz_cols):
                if isinstance(expr, Var):
                    other_lengths.add(str(expr.name))
    found: set[str] = set()
    for it in _iterations(func.body):
        axes = it.flat_axes()
        if not axes:
            continue
        last = axes[-1]
        if last.kind is AxisKind.DENSE_FIXED and isinstance(last.length, Var) \
                and not any(last.same_as(p) for p in parents):
            found.add(str(last.length.name))
    scalars = [str(p.name) for p in func.params if str(p.ty) != "T.handle"]
    return [name for name in scalars if name in found and name not in other_lengths]


def _iterations(stmts) -> list[SparseIteration]:
    out = []
    for s in stmts:
        if isinstance(s, SparseIteration):
            out.append(s)
            out.extend(_iterations(s.body))
    return out
