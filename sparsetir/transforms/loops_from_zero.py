"""Every loop counted from 0, before TVM compiles a function (a stage-III rewrite).

A loop may start anywhere (``for p in range(indptr[i], indptr[i + 1])``, a stage-II script's
loop). TVM 0.27 rewrites such a loop to start at 0 itself (``CanonicalizeLoop``, the first pass
of its pipeline) and shifts its variable in the body, but not in the bounds of the loops nested
in it, so a nested loop whose bounds read through the outer variable runs over the wrong range::

    for p in range(ap[i], ap[i + 1]):
        for q in range(bp[ai[p]], bp[ai[p] + 1]):    # TVM keeps ai[p] here, not ai[p + ap[i]]
            out[i] += bi[q]

(measured: row sums of a two-hop product came out wrong on every row but the first; the
``tests/transforms/test_loops_from_zero.py`` case). Here every loop with a nonzero start is
counted from 0 and its variable replaced by ``start + variable`` everywhere below it, bounds of
nested loops included, so TVM's pass finds nothing to do. Thread-bound loops are left to TVM.
"""

from __future__ import annotations

from typing import Any

from .._tvm import Var, structural_map, tirx
from .sparse_iter.context import substitute


def loops_from_zero(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` with every loop that does not start at 0 rewritten to start at 0."""

    def on_for(loop: Any) -> Any:
        start = loop.min
        if loop.thread_binding is not None or (isinstance(start, tirx.IntImm) and int(start.value) == 0):
            return loop
        var = Var(loop.loop_var.name, str(loop.loop_var.ty.dtype))
        body = substitute(loop.body, [(loop.loop_var, start + var)])
        return tirx.For(var, tirx.const(0, str(start.ty.dtype)), loop.extent, loop.kind, body, loop.thread_binding,
                        loop.annotations, loop.step, loop.span)

    body = structural_map(func.body, [(tirx.For, on_for)], order="post")
    return func if body.same_as(func.body) else func.with_body(body)
